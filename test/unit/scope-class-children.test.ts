// What a ScopeClass makes for a scope: the default classes of deploy/scopeclasses/ render the
// envelope the namespace provisioner made before classes (same names, quota, limits, account),
// plus Pod Security and the default-deny NetworkPolicy; resources render per scope with their
// placeholders; selection picks the most specific class; and a class that cannot render says
// where.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ScopeClassSpec, type ScopeSpec } from '../../src/api/index.js';
import {
  type Child,
  CompiledClass,
  type ScopeFacts,
} from '../../src/domain/scope-classes/children.js';
import { selectClass } from '../../src/domain/scope-classes/selection.js';

const ROOT = join(import.meta.dirname, '../..');

async function classFile(path: string): Promise<ScopeClassSpec> {
  const doc = parse(await readFile(join(ROOT, path), 'utf8')) as { spec: unknown };
  return ScopeClassSpec.parse(doc.spec);
}

function compiled(spec: ScopeClassSpec): CompiledClass {
  const result = CompiledClass.compile(spec);
  if ('problems' in result) throw new Error(JSON.stringify(result.problems));
  return result;
}

const facts = (spec: Partial<ScopeSpec> = {}): ScopeFacts => ({
  key: 'team/web',
  namespace: 'team',
  name: 'web',
  uid: 'u-1',
  identity: {
    id: 5,
    slug: 'web',
    domain: 'shop-web-abcde.nrn.local',
    nrn: 'organization=1:application=2:scope=5',
  },
  spec: {
    name: 'web',
    type: 'web_pool',
    application_id: 2,
    requested_spec: { memory_in_gb: 1.5, cpu_profile: 'intensive', local_storage_in_gb: 4 },
    ...spec,
  },
  labels: { team: 'payments' },
  application: { id: 2, name: 'Shop', slug: 'shop', nrn: 'organization=1:application=2' },
});

function rendered(result: ReturnType<CompiledClass['render']>): readonly Child[] {
  if (!result.ok) throw new Error(`${result.problem.path}: ${result.problem.message}`);
  return result.children;
}

const byKind = (children: readonly Child[], kind: string) =>
  children.find((c) => c.manifest.kind === kind)?.manifest;

describe('the default classes', () => {
  it('render the envelope of before: namespace, quota and limits from requested_spec, account', async () => {
    const children = rendered(
      compiled(await classFile('deploy/scopeclasses/web-pool.yaml')).render(facts()),
    );
    expect(children.map((c) => c.manifest.kind)).toEqual([
      'Namespace',
      'ResourceQuota',
      'LimitRange',
      'NetworkPolicy',
      'ServiceAccount',
    ]);
    expect(byKind(children, 'Namespace')?.metadata).toMatchObject({
      name: 'nrn-scope-5',
      labels: {
        'platform.nrn.dev/scope-id': '5',
        'platform.nrn.dev/scope-uid': 'u-1',
        'app.kubernetes.io/managed-by': 'nrn-operator',
        'pod-security.kubernetes.io/enforce': 'baseline',
      },
      annotations: { 'platform.nrn.dev/scope': 'team/web' },
    });
    expect(byKind(children, 'ResourceQuota')).toMatchObject({
      metadata: { name: 'scope-quota', namespace: 'nrn-scope-5' },
      spec: {
        hard: {
          'limits.memory': '1536Mi',
          'requests.memory': '1536Mi',
          'limits.cpu': '8',
          'requests.cpu': '4',
          'limits.ephemeral-storage': '4096Mi',
          'requests.ephemeral-storage': '4096Mi',
        },
      },
    });
    expect(byKind(children, 'LimitRange')?.spec).toEqual({
      limits: [
        {
          type: 'Container',
          max: { cpu: '8', memory: '1536Mi', 'ephemeral-storage': '4096Mi' },
          default: { cpu: '2', memory: '512Mi' },
          defaultRequest: { cpu: '500m', memory: '256Mi' },
        },
      ],
    });
    expect(byKind(children, 'ServiceAccount')?.metadata).toMatchObject({
      name: 'scope-runtime',
      namespace: 'nrn-scope-5',
    });
  });

  it('set only what is requested, and a changed request changes the quota', async () => {
    const web = compiled(await classFile('deploy/scopeclasses/web-pool.yaml'));
    const quota = (requested_spec: Record<string, number>) =>
      byKind(rendered(web.render(facts({ requested_spec }))), 'ResourceQuota');
    expect(quota({})?.spec).toEqual({ hard: {} });
    expect(quota({ memory_in_gb: 1 })).toEqual(quota({ memory_in_gb: 1 }));
    expect(quota({ memory_in_gb: 1 })?.spec).not.toEqual(quota({ memory_in_gb: 2 })?.spec);
    // What the operator stamps is the scope's, never a digest of the content (the drift check
    // compares content: ADR 0022).
    expect(Object.keys(quota({ memory_in_gb: 1 })?.metadata.annotations ?? {}).sort()).toEqual([
      'platform.nrn.dev/nrn',
      'platform.nrn.dev/scope',
    ]);
  });

  it('one per type is the default, and each compiles', async () => {
    const types = [];
    for (const file of ['web-pool', 'scheduled-tasks', 'serverless']) {
      const spec = await classFile(`deploy/scopeclasses/${file}.yaml`);
      compiled(spec);
      expect(spec.default).toBe(true);
      types.push(spec.scope_type);
    }
    expect(types.sort()).toEqual(['scheduled_tasks', 'serverless', 'web_pool']);
  });
});

describe('resources', () => {
  it('render per scope: a whole placeholder keeps its type, an embedded one is text', () => {
    const spec = ScopeClassSpec.parse({
      scope_type: 'web_pool',
      namespace: { name: 'app-${scope.slug}-${scope.id}' },
      resources: [
        {
          name: 'web',
          manifest: {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: '${scope.slug}', labels: { team: '${scope.labels.team}' } },
            spec: {
              replicas: '${int(scope.requested_spec.memory_in_gb * 2.0)}',
              template: { metadata: { annotations: { ns: 'in ${scope.namespace}' } } },
            },
          },
          wait_for: true,
        },
      ],
    });
    const children = rendered(compiled(spec).render(facts()));
    expect(children.map((c) => c.manifest.kind)).toEqual(['Namespace', 'Deployment']);
    const deployment = children[1];
    expect(deployment?.waitFor).toBe(true);
    expect(deployment?.inScopeNamespace).toBe(true);
    expect(deployment?.manifest).toMatchObject({
      metadata: { name: 'web', labels: { team: 'payments', 'platform.nrn.dev/scope-id': '5' } },
      spec: { replicas: 3, template: { metadata: { annotations: { ns: 'in app-web-5' } } } },
    });
  });

  it('a placeholder naming what a scope lacks fails that scope, naming the path', () => {
    const spec = ScopeClassSpec.parse({
      scope_type: 'web_pool',
      resources: [
        {
          name: 'cm',
          manifest: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'region' },
            data: { region: '${scope.dimensions.region}' },
          },
        },
      ],
    });
    const result = compiled(spec).render(facts());
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.problem.path).toBe('spec.resources[0].manifest.data.region');
      expect(result.problem.message).toMatch(/region/);
    }
    expect(
      rendered(compiled(spec).render(facts({ dimensions: { region: 'eu' } })))[1]?.manifest.data,
    ).toEqual({
      region: 'eu',
    });
  });

  it('a class naming an unknown variable or without a kind does not compile, every path named', () => {
    const result = CompiledClass.compile(
      ScopeClassSpec.parse({
        scope_type: 'web_pool',
        namespace: { name: 'x-${scop.id}' },
        resources: [{ name: 'a', manifest: { apiVersion: 'v1', metadata: { name: 'a' } } }],
      }),
    );
    expect('problems' in result && result.problems.map((p) => p.path).sort()).toEqual([
      'spec.namespace.name',
      'spec.resources[0].manifest.kind',
    ]);
  });

  it('a placeholder selecting a field the scope or application never has does not compile, naming path and field', () => {
    const result = CompiledClass.compile(
      ScopeClassSpec.parse({
        scope_type: 'web_pool',
        namespace: { name: 'x-${scope.namespace}' },
        resources: [
          {
            name: 'cm',
            manifest: {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: 'c' },
              data: {
                memory: '${string(scope.requested_spec.memroy)}',
                owner: '${application.owner}',
                deep: '${scope.slug.first}',
                tested: '${has(scope.teir) ? "t" : "f"}',
              },
            },
          },
        ],
      }),
    );
    expect('problems' in result).toBe(true);
    if (!('problems' in result)) return;
    expect(result.problems.map((p) => [p.path, p.message])).toEqual([
      [
        'spec.namespace.name',
        expect.stringMatching(/unknown field 'namespace' of scope \(known: /),
      ],
      [
        'spec.resources[0].manifest.data.memory',
        expect.stringMatching(
          /unknown field 'memroy' of scope\.requested_spec \(known: memory_in_gb, cpu_profile, local_storage_in_gb\)/,
        ),
      ],
      [
        'spec.resources[0].manifest.data.owner',
        expect.stringMatching(
          /unknown field 'owner' of application \(known: id, name, slug, nrn\)/,
        ),
      ],
      [
        'spec.resources[0].manifest.data.deep',
        expect.stringMatching(/scope\.slug has no fields: 'first' cannot be selected/),
      ],
      [
        'spec.resources[0].manifest.data.tested',
        expect.stringMatching(/unknown field 'teir' of scope/),
      ],
    ]);
  });

  it('every field the shapes name is there to render, and maps take any key', () => {
    const spec = ScopeClassSpec.parse({
      scope_type: 'web_pool',
      resources: [
        {
          name: 'cm',
          manifest: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'all' },
            data: {
              scope:
                '${[scope.id, scope.name, scope.slug, scope.nrn, scope.domain, scope.type, scope.tier, scope.namespace].map(v, string(v)).join(",")}',
              spec: '${string(scope.requested_spec.memory_in_gb) + scope.requested_spec.cpu_profile + string(scope.requested_spec.local_storage_in_gb)}',
              maps: '${scope.dimensions.region + scope.labels.team}',
              application:
                '${[application.id, application.name, application.slug, application.nrn].map(v, string(v)).join(",")}',
            },
          },
        },
      ],
    });
    const children = rendered(
      compiled(spec).render(facts({ tier: 'critical', dimensions: { region: 'eu' } })),
    );
    expect(children[1]?.manifest.data).toEqual({
      scope:
        '5,web,web,organization=1:application=2:scope=5,shop-web-abcde.nrn.local,web_pool,critical,nrn-scope-5',
      spec: '1.5intensive4',
      maps: 'eupayments',
      application: '2,Shop,shop,organization=1:application=2',
    });
  });

  it('a namespace pattern that renders to no DNS label is a problem at its path', () => {
    const spec = ScopeClassSpec.parse({
      scope_type: 'web_pool',
      namespace: { name: '${scope.name}_X' },
    });
    const result = compiled(spec).render(facts());
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problem.path).toBe('spec.namespace.name');
  });
});

describe('selection', () => {
  const cls = (name: string, spec: Record<string, unknown>) => ({
    metadata: { name },
    spec: ScopeClassSpec.parse({ scope_type: 'web_pool', ...spec }),
  });
  const classes = [
    cls('b-default', { default: true }),
    cls('a-plain', {}),
    cls('critical', { match: { tiers: ['critical'] } }),
    cls('critical-eu', { match: { tiers: ['critical'], dimensions: { region: 'eu' } } }),
    cls('gold', { match: { labels: { plan: 'gold' } } }),
    cls('jobs', { scope_type: 'scheduled_tasks', default: true }),
  ];
  const pick = (spec: Partial<ScopeSpec>, labels: Record<string, string> = {}) =>
    selectClass(classes, {
      spec: { type: 'web_pool', ...spec } as ScopeSpec,
      labels,
    })?.metadata.name;

  it('the most specific matching class wins; a tie goes to the default, then to the first name', () => {
    expect(pick({})).toBe('b-default');
    expect(pick({ tier: 'critical' })).toBe('critical');
    expect(pick({ tier: 'critical', dimensions: { region: 'eu' } })).toBe('critical-eu');
    expect(pick({ tier: 'critical', dimensions: { region: 'us' } })).toBe('critical');
    expect(pick({ tier: 'important' }, { plan: 'gold' })).toBe('gold');
    // critical (1) and gold (1) tie; neither is a default: the first name.
    expect(pick({ tier: 'critical' }, { plan: 'gold' })).toBe('critical');
    expect(pick({ type: 'scheduled_tasks' })).toBe('jobs');
    expect(pick({ type: 'serverless' })).toBeUndefined();
  });
});
