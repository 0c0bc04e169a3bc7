// The ScopeClasses the repository ships: deploy/scopeclasses/ (one default class per scope type,
// making what the namespace provisioner made before classes, plus Pod Security and a
// default-deny NetworkPolicy), found where the npm package puts them, and the example class of
// examples/ (valid, every manifest named, every kind covered by an RBAC role of deploy/).
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  DEFAULT_SCOPE_NAMESPACE_PATTERN,
  KINDS,
  ScopeClassSpec,
  ScopeType,
} from '../../src/api/index.js';

/** The namespace provisioner's table before classes (ADR 0004): the defaults must keep it. */
const CPU_PROFILES = {
  standard: { limit: '2', request: '1', defaultLimit: '500m', defaultRequest: '100m' },
  intensive: { limit: '8', request: '4', defaultLimit: '2', defaultRequest: '500m' },
} as const;
const SERVICE_ACCOUNT_NAME = 'scope-runtime';

import {
  DEFAULT_SCOPE_CLASSES_DIR,
  loadDefaultScopeClasses,
} from '../../src/scope-classes-install.js';

const ROOT = join(import.meta.dirname, '../..');
const DIR = join(ROOT, 'deploy/scopeclasses');
const EXAMPLE = join(ROOT, 'examples/scopeclass-web-pool-critical.yaml');

const readYaml = async (path: string) => parse(await readFile(path, 'utf8'));

const classes = await loadDefaultScopeClasses(DIR);
const example = (await readYaml(EXAMPLE)) as { apiVersion: string; kind: string; spec: unknown };
const specs = classes.map((c) => ({ name: c.metadata.name, spec: ScopeClassSpec.parse(c.spec) }));

describe('deploy/scopeclasses/', () => {
  it('is where the install module looks, and ships in the npm package', async () => {
    expect(join(DEFAULT_SCOPE_CLASSES_DIR)).toBe(join(DIR, '/'));
    const pkg = (await readYaml(join(ROOT, 'package.json'))) as { files: string[] };
    expect(pkg.files).toContain('deploy/scopeclasses');
  });

  it('lists every file of the folder in its kustomization.yaml', async () => {
    const kustomization = (await readYaml(join(DIR, 'kustomization.yaml'))) as {
      resources: string[];
    };
    const files = (await readdir(DIR)).filter(
      (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml',
    );
    expect([...kustomization.resources].sort()).toEqual(files.sort());
  });

  it('holds one default class per scope type, named <type>-default', () => {
    expect(specs.map((c) => c.spec.scope_type).sort()).toEqual([...ScopeType.options].sort());
    for (const { name, spec } of specs) {
      expect(spec.default, name).toBe(true);
      expect(spec.match, name).toBeUndefined();
      expect(name).toBe(`${spec.scope_type.replaceAll('_', '-')}-default`);
    }
  });

  it('makes the envelope the namespace provisioner made, plus baseline Pod Security and default-deny', () => {
    // CPU_PROFILES in the model's spelling.
    const profiles = Object.fromEntries(
      Object.entries(CPU_PROFILES).map(([profile, cpu]) => [
        profile,
        {
          limit: cpu.limit,
          request: cpu.request,
          default_limit: cpu.defaultLimit,
          default_request: cpu.defaultRequest,
        },
      ]),
    );
    for (const { name, spec } of specs) {
      expect(spec.provisioner.type, name).toBe('namespace');
      expect(spec.resources, name).toBeUndefined();
      expect(spec.namespace, name).toEqual({
        name: DEFAULT_SCOPE_NAMESPACE_PATTERN,
        cpu_profiles: profiles,
        quota: { memory: true, cpu: true, local_storage: true },
        // provisioner.ts limitsOf: min(memory_in_gb, 0.5) and min(memory_in_gb, 0.25).
        limit_range: { default_memory_gb: 0.5, default_request_memory_gb: 0.25 },
        service_account: SERVICE_ACCOUNT_NAME,
        pod_security: 'baseline',
        network_policy: 'default_deny',
        on_rename: 'keep',
      });
    }
  });

  it('refuses a class the model refuses, naming the file and the field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nrn-scopeclasses-'));
    try {
      await writeFile(join(dir, 'kustomization.yaml'), 'resources: [bad.yaml]\n');
      const bad = (await readFile(join(DIR, 'web-pool.yaml'), 'utf8')).replace(
        'pod_security: baseline',
        'pod_security: lenient',
      );
      await writeFile(join(dir, 'bad.yaml'), bad);
      await expect(loadDefaultScopeClasses(dir)).rejects.toThrow(
        /bad\.yaml \(document 1\): \.spec\.namespace\.pod_security: /,
      );
      await writeFile(join(dir, 'kustomization.yaml'), 'resources: [../web-pool.yaml]\n');
      await expect(loadDefaultScopeClasses(dir)).rejects.toThrow(
        /\.resources\[0\] must name a \.yaml file of the folder/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('examples/scopeclass-web-pool-critical.yaml', () => {
  it('is a valid ScopeClass for critical web pools, with a Deployment, a Service and an HPA', async () => {
    const { apiVersion, kind, spec } = example;
    expect(`${apiVersion}/${kind}`).toBe('platform.nrn.dev/v1alpha1/ScopeClass');
    expect(kind).toBe(KINDS.ScopeClass.kind);
    const parsed = ScopeClassSpec.parse(spec);
    expect(parsed.scope_type).toBe('web_pool');
    expect(parsed.default).toBe(false);
    expect(parsed.match).toEqual({ tiers: ['critical'] });
    const manifests = (parsed.resources ?? []).map((r) => r.manifest);
    for (const manifest of manifests) {
      expect(manifest).toMatchObject({
        apiVersion: expect.any(String),
        kind: expect.any(String),
        metadata: { name: expect.any(String) },
      });
    }
    expect(manifests.map((m) => `${m.apiVersion} ${m.kind}`)).toEqual(
      expect.arrayContaining([
        'apps/v1 Deployment',
        'v1 Service',
        'autoscaling/v2 HorizontalPodAutoscaler',
      ]),
    );
  });

  it('names only kinds a ClusterRole of deploy/ aggregated to the operator may write', async () => {
    const parsed = ScopeClassSpec.parse(example.spec);
    const roles: { rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[] }[] = [];
    for (const file of (await readdir(join(ROOT, 'deploy'))).filter((f) => f.endsWith('.yaml'))) {
      for (const doc of parseAllDocuments(await readFile(join(ROOT, 'deploy', file), 'utf8'))) {
        const object = doc.toJS() as {
          kind?: string;
          metadata?: { labels?: Record<string, string> };
        } | null;
        if (
          object?.kind === 'ClusterRole' &&
          object.metadata?.labels?.['platform.nrn.dev/aggregate-to-operator'] === 'true'
        ) {
          roles.push(object as (typeof roles)[number]);
        }
      }
    }
    // What the operator does to a class's resource: applies, watches, prunes.
    const needed = ['get', 'list', 'watch', 'create', 'patch', 'delete'];
    const plural: Record<string, string> = {
      Deployment: 'deployments',
      Service: 'services',
      HorizontalPodAutoscaler: 'horizontalpodautoscalers',
      NetworkPolicy: 'networkpolicies',
    };
    for (const { manifest } of parsed.resources ?? []) {
      const group = String(manifest.apiVersion).includes('/')
        ? String(manifest.apiVersion).split('/')[0]
        : '';
      const resource = plural[String(manifest.kind)];
      expect(resource, String(manifest.kind)).toBeDefined();
      const verbs = roles
        .flatMap((role) => role.rules ?? [])
        .filter((r) => r.apiGroups.includes(group ?? '') && r.resources.includes(resource ?? ''))
        .flatMap((r) => r.verbs);
      // NetworkPolicies: get is not needed, the default-deny policy's informer lists them.
      const wanted = manifest.kind === 'NetworkPolicy' ? needed.slice(1) : needed;
      expect(verbs, `${manifest.kind}`).toEqual(expect.arrayContaining(wanted));
    }
  });
});

describe('examples/scope-critical.yaml', () => {
  it('is a critical web pool, which the example class matches', async () => {
    const scope = (await readYaml(join(ROOT, 'examples/scope-critical.yaml'))) as {
      spec: { type: string; tier: string };
    };
    const result = KINDS.Scope.spec.safeParse(scope.spec);
    expect(result.error).toBeUndefined();
    const parsed = ScopeClassSpec.parse(example.spec);
    expect(scope.spec.type).toBe(parsed.scope_type);
    expect(parsed.match?.tiers).toContain(scope.spec.tier);
  });
});
