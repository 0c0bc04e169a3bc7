// Scope classes on a shared cluster (issue 13, ADR 0028), tried as hostile tenants would: each
// tenant a ServiceAccount with rights to Scopes in its own namespace only, driving kubectl with
// its token. A scope never takes an object that is not its own (another tenant's child, a
// hand-made object): it fails ChildTaken naming the holder, the holder's object untouched, and
// its delete touches nothing of theirs. A scope's namespace is fixed once assigned: a class
// edit does not move it unless the class says `on_rename: move`, and then the old namespace is
// let go of, never deleted. A class's deletion policy decides what a scope's delete does, and
// every delete and orphaning is an Event on the scope.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Kube, Namespaces } from '../../src/kube/index.js';
import { type Operator, startOperator } from '../../src/operator.js';
import {
  installCrdsAndClasses,
  kubectl,
  type StartedCluster,
  startCluster,
  uniqueName,
} from '../support/cluster.js';
import { applicationYaml } from '../support/manifests.js';
import { conditionOf, kubectlViews, type View, waitFor } from '../support/resource-views.js';
import { readUntil } from '../support/wait.js';

/** The operator's WARN lines and worse, as written (bounded). */
const warnings: string[] = [];
const log = pino(
  { level: 'warn' },
  {
    write: (line: string) => {
      if (warnings.length < 10_000) warnings.push(line);
    },
  },
);

interface EventView {
  reason: string;
  type: string;
  message: string;
}

const active = (s: View) => s.status?.status === 'active';

describe('scope classes on a shared cluster', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  let operator: Operator;
  let shared: string;
  const tenants: Record<'a' | 'b', { ns: string; token: string; app: number }> = {
    a: { ns: '', token: '', app: 610 },
    b: { ns: '', token: '', app: 611 },
  };

  const run = (args: string[], input?: string) =>
    kubectl(cluster, args, input !== undefined ? { input } : {});
  const { k, get } = kubectlViews(() => cluster);
  /** kubectl as a tenant: its ServiceAccount's token, no admin credentials. */
  const as = async (tenant: 'a' | 'b', args: string[], input?: string) => {
    const result = await run([...args, '--token', tenants[tenant].token, '--user', ''], input);
    if (result.code !== 0)
      throw new Error(`kubectl as ${tenant} ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const waitScope = (ns: string, name: string, check: (s: View) => boolean, timeoutMs = 20_000) =>
    readUntil(`scope ${ns}/${name}`, async () => (await get(`scope/${name}`, ns)) as View, check, {
      timeoutMs,
    });
  const waitGone = (what: string, ns?: string) =>
    waitFor(
      what,
      () => get(what, ns),
      (v) => v === undefined,
      30_000,
    );
  const eventsOf = async (ns: string, name: string): Promise<EventView[]> => {
    const out = await k([
      'get',
      'events',
      '-n',
      ns,
      '--field-selector',
      `involvedObject.kind=Scope,involvedObject.name=${name}`,
      '-o',
      'json',
    ]);
    return (JSON.parse(out) as { items: EventView[] }).items;
  };
  const waitEvent = (ns: string, name: string, check: (e: EventView) => boolean) =>
    waitFor(
      `an Event on scope ${ns}/${name}`,
      () => eventsOf(ns, name),
      (events) => events.some(check),
    );
  /** A web_pool scope labelled for the class `klass`. */
  const scopeOf = (ns: string, name: string, app: number, klass: string) => `
apiVersion: platform.nrn.dev/v1alpha1
kind: Scope
metadata: {name: ${name}, namespace: ${ns}, labels: {safety: ${klass}}}
spec:
  name: ${name}
  type: web_pool
  application_id: ${app}
  requested_spec: {memory_in_gb: 1, cpu_profile: standard, local_storage_in_gb: 1}
`;

  beforeAll(async () => {
    const opNs = uniqueName('operator-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await installCrdsAndClasses(cluster);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log: log });
    shared = uniqueName('shared');
    await kube.resource(Namespaces).create({ metadata: { name: shared } });
    // The platform team grants the operator the kind its classes here make, as README says.
    await k(
      ['apply', '-f', '-'],
      `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: test-safety-configmaps
  labels: {platform.nrn.dev/aggregate-to-operator: "true"}
rules:
  - apiGroups: ['']
    resources: [configmaps]
    verbs: [list, watch, create, patch, delete]
`,
    );
    // Each tenant: a namespace, its Application (made by the platform team), and a
    // ServiceAccount that may do what it likes with Scopes there, and nothing else.
    for (const [key, tenant] of Object.entries(tenants)) {
      tenant.ns = uniqueName(`tenant-${key}`);
      await kube.resource(Namespaces).create({ metadata: { name: tenant.ns } });
      await k(['apply', '-f', '-'], applicationYaml(tenant.ns, `app-${key}`, tenant.app));
      await k(['create', 'serviceaccount', 'tenant', '-n', tenant.ns]);
      await k([
        'create',
        'role',
        'scopes',
        '--verb=get,list,watch,create,update,patch,delete',
        '--resource=scopes.platform.nrn.dev',
        '-n',
        tenant.ns,
      ]);
      await k([
        'create',
        'rolebinding',
        'scopes',
        '--role=scopes',
        `--serviceaccount=${tenant.ns}:tenant`,
        '-n',
        tenant.ns,
      ]);
      tenant.token = (await k(['create', 'token', 'tenant', '-n', tenant.ns])).trim();
    }
    const operatorKube = await connect({
      kubeconfigPath: cluster.operatorKubeconfigPath,
      log: log,
    });
    operator = await startOperator({
      kube: operatorKube,
      log: log,
      namespace: opNs,
      leaderElection: false,
      scopeClassRolloutRate: 100,
    });
  });
  afterAll(async () => {
    expect(await operator?.stop()).toBe(true);
    kube?.close();
    await cluster?.close();
  });

  it('a scope takes no other tenant’s child: it fails naming the holder, whose object stays exactly as it was, through the intruder’s delete', async () => {
    // A class whose child name is not unique per scope: `${scope.slug}` in a fixed namespace.
    await k(
      ['apply', '-f', '-'],
      `apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: safety-shared-name}
spec:
  scope_type: web_pool
  match: {labels: {safety: shared-name}}
  resources:
    - name: settings
      manifest:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "\${scope.slug}", namespace: ${shared}}
        data: {owner: "\${application.name}"}
`,
    );
    const { a, b } = tenants;
    await as('a', ['apply', '-f', '-'], scopeOf(a.ns, 'web', a.app, 'shared-name'));
    const victim = await waitScope(a.ns, 'web', active);
    const before = (await get('configmap/web', shared)) as View;
    expect(before.data).toEqual({ owner: 'app-a' });

    await as('b', ['apply', '-f', '-'], scopeOf(b.ns, 'web', b.app, 'shared-name'));
    const intruder = await waitScope(b.ns, 'web', (s) => s.status?.status === 'failed');
    const stalled = conditionOf(intruder, 'Stalled');
    expect(stalled?.reason).toBe('ChildTaken');
    expect(stalled?.message).toContain(`ConfigMap ${shared}/web`);
    expect(stalled?.message).toContain(`belongs to scope ${a.ns}/web`);
    // Not in its inventory: nothing of the intruder's will ever delete it.
    expect(intruder.status?.inventory?.some((r) => r.kind === 'ConfigMap') ?? false).toBe(false);
    const after = (await get('configmap/web', shared)) as View;
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.data).toEqual({ owner: 'app-a' });

    await as('b', ['delete', 'scope', 'web', '-n', b.ns, '--wait=true', '--timeout=30s']);
    const kept = (await get('configmap/web', shared)) as View;
    expect(kept.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    const still = (await get('scope/web', a.ns)) as View;
    expect(still.status?.status).toBe('active');
    expect(still.status?.id).toBe(victim.status?.id);
  });

  it('a hand-made object of the name a class renders is not taken either', async () => {
    await k(['create', 'configmap', 'api', '-n', shared, '--from-literal=hand=made']);
    const before = (await get('configmap/api', shared)) as View;
    const { a } = tenants;
    await as('a', ['apply', '-f', '-'], scopeOf(a.ns, 'api', a.app, 'shared-name'));
    const refused = await waitScope(a.ns, 'api', (s) => s.status?.status === 'failed');
    expect(conditionOf(refused, 'Stalled')?.reason).toBe('ChildTaken');
    expect(conditionOf(refused, 'Stalled')?.message).toContain(
      'it was not made by nrn-operator for a scope',
    );
    const after = (await get('configmap/api', shared)) as View;
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.metadata.labels).toBeUndefined();
    await as('a', ['delete', 'scope', 'api', '-n', a.ns, '--wait=true', '--timeout=30s']);
    expect(((await get('configmap/api', shared)) as View).data).toEqual({ hand: 'made' });
  });

  it('a class edit never moves a scope’s namespace unless the class says move; the old one is then kept, not deleted', async () => {
    const klass = (prefix: string, onRename?: string) => `apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: safety-fixed-namespace}
spec:
  scope_type: web_pool
  match: {labels: {safety: fixed}}
  namespace:
    name: "${prefix}-\${scope.id}"${onRename !== undefined ? `\n    on_rename: ${onRename}` : ''}
    quota: {memory: true}
`;
    await k(['apply', '-f', '-'], klass('first'));
    const { a } = tenants;
    await as('a', ['apply', '-f', '-'], scopeOf(a.ns, 'fixed', a.app, 'fixed'));
    const made = await waitScope(a.ns, 'fixed', active);
    const id = made.status?.id;
    const first = `first-${id}`;
    // What the team put in its namespace: the operator never made it.
    await k(['create', 'configmap', 'team-data', '-n', first, '--from-literal=keep=me']);

    // The pattern changes: the scope keeps its namespace, and nothing is made or deleted.
    const generation = (await get('scopeclass/safety-fixed-namespace')) as View & {
      metadata: { generation: number };
    };
    await k(['apply', '-f', '-'], klass('second'));
    const kept = await waitScope(
      a.ns,
      'fixed',
      (s) => active(s) && (s.status?.scopeClassGeneration ?? 0) > generation.metadata.generation,
    );
    expect(kept.status?.inventory?.find((r) => r.kind === 'Namespace')?.name).toBe(first);
    expect(await get(`namespace/second-${id}`)).toBeUndefined();
    expect(await get('configmap/team-data', first)).toBeDefined();

    // The class says move: the scope moves, and the old namespace is let go of, with what the
    // team put there; the operator's own quota in it is deleted, and both are Events.
    await k(['apply', '-f', '-'], klass('second', 'move'));
    const moved = await waitScope(
      a.ns,
      'fixed',
      (s) =>
        active(s) &&
        s.status?.inventory?.find((r) => r.kind === 'Namespace')?.name === `second-${id}`,
    );
    expect(moved.status?.inventory?.some((r) => r.namespace === first)).toBe(false);
    const old = (await get(`namespace/${first}`)) as View;
    expect(old.metadata.labels?.['platform.nrn.dev/orphaned-from-scope']).toBeDefined();
    expect(old.metadata.labels?.['platform.nrn.dev/scope-uid']).toBeUndefined();
    expect(old.metadata.annotations?.['platform.nrn.dev/orphaned']).toContain(`${a.ns}/fixed`);
    expect(((await get('configmap/team-data', first)) as View).data).toEqual({ keep: 'me' });
    await waitEvent(
      a.ns,
      'fixed',
      (e) => e.reason === 'ChildOrphaned' && e.type === 'Warning' && e.message.includes(first),
    );
    await waitEvent(
      a.ns,
      'fixed',
      (e) => e.reason === 'ChildDeleted' && e.message.includes(`ResourceQuota ${first}/`),
    );

    // Deleted (policy delete, the default): its namespace goes, and says so.
    await as('a', ['delete', 'scope', 'fixed', '-n', a.ns, '--wait=true', '--timeout=30s']);
    await waitGone(`namespace/second-${id}`);
    await waitEvent(
      a.ns,
      'fixed',
      (e) =>
        e.reason === 'ChildDeleted' &&
        e.type === 'Normal' &&
        e.message.includes(`Namespace second-${id}`),
    );
    // The namespace it let go of is nobody's to delete.
    expect(await get(`namespace/${first}`)).toBeDefined();
  });

  it('a namespace a scope found taken is not its own: once the class is fixed, it goes where the class says', async () => {
    const klass = (prefix: string) => `apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: safety-taken-namespace}
spec:
  scope_type: web_pool
  match: {labels: {safety: taken-namespace}}
  namespace: {name: "${prefix}-\${scope.slug}"}
`;
    await k(['apply', '-f', '-'], klass('squat'));
    // Someone's namespace of the name the class renders for the scope.
    const squat = 'squat-lodger';
    await k(['create', 'namespace', squat]);
    const { a } = tenants;
    await as('a', ['apply', '-f', '-'], scopeOf(a.ns, 'lodger', a.app, 'taken-namespace'));
    const taken = await waitScope(a.ns, 'lodger', (s) => s.status?.status === 'failed');
    expect(conditionOf(taken, 'Stalled')?.reason).toBe('NamespaceTaken');
    expect(taken.status?.inventory?.some((r) => r.kind === 'Namespace') ?? false).toBe(false);
    // The platform team fixes the pattern: the scope tries again by itself (ADR 0032) and gets
    // the new name; the namespace it found taken is untouched.
    await k(['apply', '-f', '-'], klass('room'));
    const moved = await waitScope(a.ns, 'lodger', active);
    expect(moved.status?.inventory?.find((r) => r.kind === 'Namespace')?.name).toBe('room-lodger');
    expect((await get(`namespace/${squat}`))?.metadata.labels?.['platform.nrn.dev/scope-uid']).toBe(
      undefined,
    );
    await as('a', ['delete', 'scope', 'lodger', '-n', a.ns, '--wait=true', '--timeout=30s']);
    expect(await get(`namespace/${squat}`)).toBeDefined();
  });

  it('a class whose deletion policy is orphan keeps the scope’s objects when it is deleted', async () => {
    await k(
      ['apply', '-f', '-'],
      `apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: safety-orphan}
spec:
  scope_type: web_pool
  match: {labels: {safety: orphan}}
  deletion_policy: orphan
  namespace: {name: "kept-\${scope.id}", quota: {memory: true}}
`,
    );
    const { b } = tenants;
    await as('b', ['apply', '-f', '-'], scopeOf(b.ns, 'keeper', b.app, 'orphan'));
    const made = await waitScope(b.ns, 'keeper', active);
    const where = `kept-${made.status?.id}`;
    await as('b', ['delete', 'scope', 'keeper', '-n', b.ns, '--wait=true', '--timeout=30s']);
    const kept = (await get(`namespace/${where}`)) as View;
    expect(kept.metadata.labels?.['platform.nrn.dev/orphaned-from-scope']).toBeDefined();
    expect(kept.metadata.labels?.['app.kubernetes.io/managed-by']).toBeUndefined();
    // What was in it is let go of too: nothing is left marked as a scope's that is gone.
    const quota = (await get('resourcequota/scope-quota', where)) as View;
    expect(quota.metadata.labels?.['platform.nrn.dev/scope-uid']).toBeUndefined();
    expect(quota.metadata.labels?.['platform.nrn.dev/orphaned-from-scope']).toBeDefined();
    await waitEvent(
      b.ns,
      'keeper',
      (e) => e.reason === 'ChildOrphaned' && e.message.includes(where),
    );
    // Every delete and orphaning was a WARN line naming the object.
    expect(
      warnings.some((line) => line.includes('scope child orphaned') && line.includes(where)),
    ).toBe(true);
  });
});
