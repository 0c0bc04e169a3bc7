// Scope classes from the outside (issue 9): a platform team applies ScopeClasses with kubectl,
// scopes get the most specific one, and what a class says is what each scope becomes — the
// envelope, templated resources, drift put right, a paused scope left alone, a changed class
// rolled out at its pace and pruned, a broken class or a missing right reported on the class,
// a webhook class handing the scope to an agent, a `none` class, and resources waited for.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kindAllowlist } from '../../src/domain/scope-classes/kinds.js';
import { connect, type Kube, Namespaces } from '../../src/kube/index.js';
import { type Operator, startOperator } from '../../src/operator.js';
import {
  installCrdsAndClasses,
  type StartedCluster,
  startCluster,
  uniqueName,
} from '../support/cluster.js';
import { applicationYaml, scopeYaml } from '../support/manifests.js';
import { refusalLog } from '../support/operator-identity.js';
import { conditionOf, kubectlViews, type View, waitFor } from '../support/resource-views.js';
import { readUntil, sleep } from '../support/wait.js';

const ROOT = join(import.meta.dirname, '../..');
const operatorLog = refusalLog();
/** Slow enough to see: four scopes take at least 1.5 s to reach. */
const ROLLOUT_RATE = 2;

describe('scope classes', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  let operator: Operator;
  let ns: string;
  let opNs: string;

  const { k, get } = kubectlViews(() => cluster);
  const getScope = async (name: string) => (await get(`scope/${name}`, ns)) as View;
  const waitScope = (name: string, check: (s: View) => boolean, timeoutMs = 20_000) =>
    readUntil(`scope ${name}`, () => getScope(name), check, { timeoutMs });
  const scope = (name: string, app: number, extra = '') =>
    scopeYaml(ns, name, app, { memoryGb: 2, storageGb: 10, extra });
  /** A serverless scope with these dimensions (`lane: fast`). */
  const serverless = (name: string, dimensions: string) =>
    scope(name, 40)
      .replace('type: web_pool', 'type: serverless')
      .concat(`  dimensions: {${dimensions}}\n`);
  const active = (s: View) => s.status?.status === 'active';
  const scopeNamespace = (s: View) => `nrn-scope-${s.status?.id}`;

  beforeAll(async () => {
    opNs = uniqueName('operator-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await installCrdsAndClasses(cluster);
    // The example class's kinds, granted to the operator through the aggregated role.
    await k(['apply', '-f', join(ROOT, 'deploy/scope-class-kinds.yaml')]);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log: operatorLog.log });
    const operatorKube = await connect({
      kubeconfigPath: cluster.operatorKubeconfigPath,
      log: operatorLog.log,
    });
    ns = uniqueName('scope-classes');
    await kube.resource(Namespaces).create({ metadata: { name: ns } });
    await k(['apply', '-f', '-'], applicationYaml(ns, 'shop', 40));
    operator = await startOperator({
      kube: operatorKube,
      log: operatorLog.log,
      namespace: opNs,
      leaderElection: false,
      scopeClassRolloutRate: ROLLOUT_RATE,
      // This platform team lets its classes make Roles (ADR 0029: not by default).
      scopeClassKinds: kindAllowlist('*/*'),
    });
  });
  afterAll(async () => {
    expect(await operator?.stop()).toBe(true);
    kube?.close();
    await cluster?.close();
  });

  it('the default class serves a scope: recorded, shown by kubectl get, and its envelope made', async () => {
    await k(['apply', '-f', '-'], scope('plain', 40));
    const made = await waitScope('plain', active);
    expect(made.status?.scopeClass).toBe('web-pool-default');
    const table = await k(['get', 'scopes', 'plain', '-n', ns]);
    expect(table.split('\n')[0]).toMatch(/\bCLASS\b/);
    expect(table).toContain('web-pool-default');
    const namespace = (await get(`namespace/${scopeNamespace(made)}`)) as View;
    expect(namespace.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('baseline');
    const policy = await get('networkpolicy/scope-default-deny', scopeNamespace(made));
    expect(policy?.spec).toMatchObject({ podSelector: {}, policyTypes: ['Ingress'] });
    expect(made.status?.inventory?.map((i) => i.kind).sort()).toEqual([
      'LimitRange',
      'Namespace',
      'NetworkPolicy',
      'ResourceQuota',
      'ServiceAccount',
    ]);
    const classes = await k(['get', 'scopeclasses']);
    expect(classes.split('\n')[0]).toMatch(
      /SCOPE-TYPE\s+DEFAULT\s+PROVISIONER\s+SCOPES\s+UP-TO-DATE/,
    );
    const served = await waitFor(
      'the default class to count its scope',
      async () => (await get('scopeclass/web-pool-default')) as View,
      (c) => (c.status?.scopes ?? 0) >= 1 && c.status?.upToDate === c.status?.scopes,
    );
    expect(conditionOf(served, 'Ready')?.status).toBe('True');
  });

  it('a more specific class wins, and renders its resources per scope', async () => {
    await k(['apply', '-f', join(ROOT, 'examples/scopeclass-web-pool-critical.yaml')]);
    await k(['apply', '-f', '-'], scope('pay', 40, '  tier: critical'));
    const made = await waitScope('pay', active);
    expect(made.status?.scopeClass).toBe('web-pool-critical');
    const where = scopeNamespace(made);
    const deployment = (await get('deployment/pay', where)) as View;
    const container = (
      deployment.spec as {
        template: { spec: { containers: { resources: { limits: Record<string, string> } }[] } };
      }
    ).template.spec.containers[0];
    expect(container?.resources.limits).toEqual({ memory: '512Mi', cpu: '500m' });
    expect(deployment.metadata.labels).toMatchObject({
      'app.kubernetes.io/part-of': 'shop',
      'app.kubernetes.io/managed-by': 'nrn-operator',
      'platform.nrn.dev/scope-id': String(made.status?.id),
    });
    // memory_in_gb 2: a whole-value placeholder, a number.
    const hpa = (await get('horizontalpodautoscaler/pay', where)) as View;
    expect(hpa.spec).toMatchObject({ minReplicas: 2, maxReplicas: 4 });
    expect(await get('service/pay', where)).toBeDefined();
    const namespace = (await get(`namespace/${where}`)) as View;
    expect(namespace.metadata.annotations?.['platform.nrn.dev/application']).toBe(
      'organization=1:account=2:namespace=3:application=40',
    );
    // The plain scope keeps the default: it is not critical.
    expect((await getScope('plain')).status?.scopeClass).toBe('web-pool-default');
  });

  it('drift: a child edited or deleted by hand is put back; paused, it is left alone', async () => {
    const made = await waitScope('plain', active);
    const where = scopeNamespace(made);
    const hardMemory = async () =>
      ((await get('resourcequota/scope-quota', where))?.spec as { hard?: Record<string, string> })
        ?.hard?.['limits.memory'];
    await k(['delete', 'resourcequota', 'scope-quota', '-n', where]);
    await waitFor('the quota back', hardMemory, (m) => m === '2048Mi');
    await k([
      'patch',
      'resourcequota',
      'scope-quota',
      '-n',
      where,
      '--type=merge',
      '-p',
      '{"spec":{"hard":{"limits.memory":"64Gi"}}}',
    ]);
    await waitFor('the quota edit undone', hardMemory, (m) => m === '2048Mi');

    await k(['annotate', 'scope', 'plain', '-n', ns, 'platform.nrn.dev/reconcile=disabled']);
    const paused = await waitScope('plain', (s) => conditionOf(s, 'Paused')?.status === 'True');
    expect(paused.status?.status).toBe('active');
    await k([
      'patch',
      'resourcequota',
      'scope-quota',
      '-n',
      where,
      '--type=merge',
      '-p',
      '{"spec":{"hard":{"limits.memory":"64Gi"}}}',
    ]);
    // Given the time a repair takes above, twice over: nothing comes.
    await sleep(1500);
    expect(await hardMemory()).toBe('64Gi');

    await k(['annotate', 'scope', 'plain', '-n', ns, 'platform.nrn.dev/reconcile-']);
    await waitFor('the quota repaired once resumed', hardMemory, (m) => m === '2048Mi');
    const resumed = await waitScope('plain', (s) => conditionOf(s, 'Paused') === undefined);
    expect(resumed.status?.status).toBe('active');
  });

  it('a changed class rolls out at its pace, counted on the class, and prunes what it no longer makes', async () => {
    for (const name of ['r1', 'r2', 'r3']) await k(['apply', '-f', '-'], scope(name, 40));
    const names = ['plain', 'r1', 'r2', 'r3'];
    const before = await Promise.all(names.map((n) => waitScope(n, active)));
    const generation = (await get('scopeclass/web-pool-default'))?.metadata.generation ?? 0;
    // A new label on the namespace, and no default-deny policy any more.
    await k([
      'patch',
      'scopeclass',
      'web-pool-default',
      '--type=merge',
      '-p',
      `{"spec":{"namespace":{"labels":{"cost-center":"\${has(scope.dimensions.cc) ? scope.dimensions.cc : 'none'}"},"network_policy":"none"}}}`,
    ]);
    const reached = await waitFor(
      'every scope at the new generation',
      () => Promise.all(names.map((n) => getScope(n))),
      (views) =>
        views.every((v) => active(v) && (v.status?.scopeClassGeneration ?? 0) > generation),
      30_000,
    );
    // When each was Ready again (updating sets Ready False), as the operator stamped it: a
    // poll sees them only when it looks, which under load can be all four at once. Stamps are
    // whole seconds; four scopes at two a second are at least 1.5 s apart, so the stamps are at
    // least one second apart.
    const times = reached.map((v) => Date.parse(conditionOf(v, 'Ready')?.lastTransitionTime ?? ''));
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(1000);
    for (const view of before) {
      const where = scopeNamespace(view);
      const namespace = (await get(`namespace/${where}`)) as View;
      expect(namespace.metadata.labels?.['cost-center']).toBe('none');
      expect(await get('networkpolicy/scope-default-deny', where)).toBeUndefined();
    }
    const counted = await waitFor(
      'the class to count them up to date',
      async () => (await get('scopeclass/web-pool-default')) as View,
      (c) => c.status?.upToDate === c.status?.scopes && (c.status?.scopes ?? 0) >= 4,
    );
    expect(counted.status?.observedGeneration).toBe(counted.metadata.generation);
    const table = await k(['get', 'scopeclass', 'web-pool-default']);
    expect(table).toMatch(/web_pool\s+true\s+namespace\s+4\s+4\s+True/);
  });

  it('a class that does not compile is Stalled naming the path; its new scopes fail until it is fixed', async () => {
    await k(
      ['apply', '-f', '-'],
      `apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: broken-serverless}
spec:
  scope_type: serverless
  namespace: {name: 'fn-\${scop.id}'}
`,
    );
    const stalled = await waitFor(
      'the class Stalled',
      async () => (await get('scopeclass/broken-serverless')) as View,
      (c) => conditionOf(c, 'Stalled')?.status === 'True',
    );
    expect(conditionOf(stalled, 'Stalled')?.message).toContain('spec.namespace.name');
    expect(conditionOf(stalled, 'Ready')?.status).toBe('False');
    await k(['apply', '-f', '-'], serverless('fn', 'lane: fast'));
    // broken-serverless and serverless-default both match at zero: the default wins the tie.
    expect((await waitScope('fn', active)).status?.scopeClass).toBe('serverless-default');
    // More specific than the default, and broken: the scope fails, saying why.
    await k([
      'patch',
      'scopeclass',
      'broken-serverless',
      '--type=merge',
      '-p',
      '{"spec":{"match":{"dimensions":{"lane":"fast"}}}}',
    ]);
    await k(['apply', '-f', '-'], serverless('fn2', 'lane: fast'));
    const failed = await waitScope('fn2', (s) => s.status?.status === 'failed');
    expect(conditionOf(failed, 'Stalled')).toMatchObject({
      status: 'True',
      reason: 'ScopeClassInvalid',
    });
    expect(conditionOf(failed, 'Stalled')?.message).toContain('spec.namespace.name');
    // The active scope the class now matches is left as it was.
    expect((await getScope('fn')).status?.status).toBe('active');
    await k([
      'patch',
      'scopeclass',
      'broken-serverless',
      '--type=merge',
      '-p',
      `{"spec":{"namespace":{"name":"fn-\${scope.id}"}}}`,
    ]);
    const fixed = await waitScope('fn2', active);
    expect(fixed.status?.scopeClass).toBe('broken-serverless');
    expect(await get(`namespace/fn-${fixed.status?.id}`)).toBeDefined();
  });

  it('a placeholder that fails for one scope fails it, and the class names scope and path', async () => {
    await k(
      ['apply', '-f', '-'],
      `apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: regional}
spec:
  scope_type: web_pool
  match: {labels: {regional: "yes"}}
  resources:
    - name: region
      manifest:
        apiVersion: v1
        kind: Service
        metadata: {name: web, annotations: {region: "\${scope.dimensions.region}"}}
        spec: {ports: [{port: 80}]}
`,
    );
    await sleep(300);
    const regional = (name: string, extra = '') =>
      scope(name, 40, extra).replace(
        `metadata: {name: ${name},`,
        `metadata: {labels: {regional: "yes"}, name: ${name},`,
      );
    await k(['apply', '-f', '-'], regional('nowhere'));
    const failed = await waitScope('nowhere', (s) => s.status?.status === 'failed');
    expect(conditionOf(failed, 'Stalled')).toMatchObject({ reason: 'RenderFailed' });
    expect(conditionOf(failed, 'Stalled')?.message).toContain(
      'spec.resources[0].manifest.metadata.annotations.region',
    );
    const cls = await waitFor(
      'the class to say where',
      async () => (await get('scopeclass/regional')) as View,
      (c) => conditionOf(c, 'Stalled')?.reason === 'RenderFailed',
    );
    expect(conditionOf(cls, 'Stalled')?.message).toContain(`${ns}/nowhere`);
    // Given the dimension, the scope renders, and the class is Ready again.
    await k(['apply', '-f', '-'], regional('nowhere', '  dimensions: {region: eu}'));
    const made = await waitScope('nowhere', active);
    const service = await get('service/web', scopeNamespace(made));
    expect(service?.metadata.annotations?.region).toBe('eu');
    await waitFor(
      'the class Ready again',
      async () => (await get('scopeclass/regional')) as View,
      (c) => conditionOf(c, 'Ready')?.status === 'True',
    );
  });

  it('a kind the operator has no right on: the scope fails, the class names verb and resource', async () => {
    await k(
      ['apply', '-f', '-'],
      `apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: jobs-with-role}
spec:
  scope_type: scheduled_tasks
  match: {labels: {needs: role}}
  resources:
    - name: role
      manifest:
        apiVersion: rbac.authorization.k8s.io/v1
        kind: Role
        metadata: {name: runner}
        rules: [{apiGroups: [''], resources: [pods], verbs: [get]}]
`,
    );
    await k(
      ['apply', '-f', '-'],
      scope('cron', 40)
        .replace('type: web_pool', 'type: scheduled_tasks')
        .replace('metadata: {name: cron,', 'metadata: {labels: {needs: role}, name: cron,'),
    );
    const failed = await waitScope('cron', (s) => s.status?.status === 'failed');
    expect(conditionOf(failed, 'Stalled')?.reason).toBe('Forbidden');
    expect(conditionOf(failed, 'Stalled')?.message).toContain('resources.role');
    const cls = await waitFor(
      'the class to say which right',
      async () => (await get('scopeclass/jobs-with-role')) as View,
      (c) => conditionOf(c, 'Stalled')?.reason === 'Forbidden',
    );
    expect(conditionOf(cls, 'Stalled')?.message).toMatch(
      /may not (list|patch) roles\.rbac\.authorization\.k8s\.io/,
    );
    // Granted through the aggregated role; the retry annotation need not wait for the slow look.
    await k(
      ['apply', '-f', '-'],
      `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: test-scope-class-roles
  labels: {platform.nrn.dev/aggregate-to-operator: "true"}
rules:
  - apiGroups: [rbac.authorization.k8s.io]
    resources: [roles]
    verbs: [get, list, watch, create, patch, delete, bind, escalate]
`,
    );
    await sleep(500);
    await k(['annotate', 'scope', 'cron', '-n', ns, 'platform.nrn.dev/retry=1']);
    const made = await waitScope('cron', active);
    expect(await get('role/runner', scopeNamespace(made))).toBeDefined();
    await waitFor(
      'the class Ready again',
      async () => (await get('scopeclass/jobs-with-role')) as View,
      (c) => conditionOf(c, 'Ready')?.status === 'True',
    );
  });

  it('a webhook class hands the scope to an agent (signed, asynchronous); a none class to nobody', async () => {
    const calls: { action: string; identity: { id: number } }[] = [];
    let creates = 0;
    const agent: Server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => {
        raw += c.toString('utf8');
      });
      req.on('end', () => {
        const body = JSON.parse(raw) as { action: string; identity: { id: number } };
        calls.push(body);
        if (body.action === 'create') creates += 1;
        // The first call is taken in; the next says it is done.
        const status = body.action === 'delete' ? 'deleted' : creates === 1 ? 'creating' : 'active';
        res.writeHead(200, { 'content-type': 'application/json', 'retry-after': '0' });
        res.end(JSON.stringify({ status }));
      });
    });
    await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', () => resolve()));
    const port = (agent.address() as AddressInfo).port;
    try {
      await k(
        ['apply', '-f', '-'],
        `apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: lambda-agent}
spec:
  scope_type: serverless
  match: {dimensions: {runtime: lambda}}
  provisioner: {type: webhook, url: "http://127.0.0.1:${port}/scopes", deadline_seconds: 60}
---
apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: outside}
spec:
  scope_type: serverless
  match: {dimensions: {runtime: outside}}
  provisioner: {type: none}
`,
      );
      await k(['apply', '-f', '-'], serverless('fn-agent', 'runtime: lambda'));
      const made = await waitScope('fn-agent', active);
      expect(made.status?.scopeClass).toBe('lambda-agent');
      expect(calls.filter((c) => c.action === 'create').length).toBeGreaterThanOrEqual(2);
      expect(calls[0]?.identity.id).toBe(made.status?.id);
      expect(await get(`namespace/nrn-scope-${made.status?.id}`)).toBeUndefined();
      await k(['delete', 'scope', 'fn-agent', '-n', ns, '--wait=true', '--timeout=20s']);
      expect(calls.some((c) => c.action === 'delete')).toBe(true);

      await k(['apply', '-f', '-'], serverless('fn-outside', 'runtime: outside'));
      const outside = await waitScope('fn-outside', active);
      expect(outside.status?.scopeClass).toBe('outside');
      expect(conditionOf(outside, 'Ready')?.reason).toBe('ExternallyProvisioned');
    } finally {
      agent.closeAllConnections();
      await new Promise<void>((resolve) => agent.close(() => resolve()));
    }
  });

  it('a scope whose class comes to provision otherwise lets go of what the earlier class made, and takes it back', async () => {
    await k(['apply', '-f', '-'], serverless('fn-moving', 'runtime: moving'));
    const made = await waitScope(
      'fn-moving',
      (s) => active(s) && s.status?.scopeClass === 'serverless-default',
    );
    const envelope = scopeNamespace(made);
    expect(await get(`namespace/${envelope}`)).toBeDefined();

    // A more specific class that provisions nothing: the scope lets go of the namespace the
    // default class made, but not while it is paused for maintenance.
    await k(['annotate', 'scope', 'fn-moving', '-n', ns, 'platform.nrn.dev/reconcile=disabled']);
    await waitScope('fn-moving', (s) => conditionOf(s, 'Paused')?.status === 'True');
    await k(
      ['apply', '-f', '-'],
      `apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: moving-outside}
spec:
  scope_type: serverless
  match: {dimensions: {runtime: moving}}
  provisioner: {type: none}
`,
    );
    await sleep(1500);
    expect(await get(`namespace/${envelope}`)).toBeDefined();
    await k(['annotate', 'scope', 'fn-moving', '-n', ns, 'platform.nrn.dev/reconcile-']);
    const moved = await waitScope(
      'fn-moving',
      (s) => active(s) && s.status?.scopeClass === 'moving-outside',
    );
    expect(moved.status?.inventory ?? []).toEqual([]);
    expect(conditionOf(moved, 'Paused')).toBeUndefined();
    expect(conditionOf(moved, 'Ready')?.reason).toBe('ExternallyProvisioned');
    // A class change never deletes a namespace (it may hold what the operator did not make):
    // the scope lets go of it, unmarked and labelled with whose it was (ADR 0028).
    const orphaned = await waitFor(
      `namespace ${envelope} let go of`,
      async () => (await get(`namespace/${envelope}`)) as View,
      (n) => n.metadata.labels?.['platform.nrn.dev/orphaned-from-scope'] !== undefined,
    );
    expect(orphaned.metadata.labels?.['platform.nrn.dev/scope-uid']).toBeUndefined();
    // What the operator made in it is deleted one by one; the namespace and the rest stay.
    await waitFor(
      'the quota in it deleted',
      () => get('resourcequota/scope-quota', envelope),
      (q) => q === undefined,
    );

    // The class gone, the default one serves the scope again and takes its envelope back.
    await k(['delete', 'scopeclass', 'moving-outside']);
    const back = await waitScope(
      'fn-moving',
      (s) => active(s) && s.status?.scopeClass === 'serverless-default',
    );
    expect(back.status?.inventory?.some((ref) => ref.kind === 'Namespace')).toBe(true);
    const taken = (await get(`namespace/${envelope}`)) as View;
    expect(taken.metadata.labels?.['platform.nrn.dev/orphaned-from-scope']).toBeUndefined();
    expect(taken.metadata.labels?.['platform.nrn.dev/scope-uid']).toBeDefined();
    await k(['delete', 'scope', 'fn-moving', '-n', ns, '--wait=true', '--timeout=20s']);
  });

  it('a resource waited for keeps the scope from active until it is Current (kstatus)', async () => {
    await k(
      ['apply', '-f', '-'],
      `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: test-scope-class-claims
  labels: {platform.nrn.dev/aggregate-to-operator: "true"}
rules:
  - apiGroups: ['']
    resources: [persistentvolumeclaims]
    verbs: [get, list, watch, create, patch, delete]
---
apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: with-volume}
spec:
  scope_type: web_pool
  match: {labels: {volume: "yes"}}
  resources:
    - name: data
      wait_for: true
      manifest:
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {name: data}
        spec:
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: "\${string(scope.requested_spec.local_storage_in_gb) + 'Gi'}"}}
`,
    );
    await sleep(300);
    await k(
      ['apply', '-f', '-'],
      scope('vol', 40).replace(
        'metadata: {name: vol,',
        'metadata: {labels: {volume: "yes"}, name: vol,',
      ),
    );
    // kstatus: a claim is Current once Bound; nothing binds it here.
    const waiting = await waitScope(
      'vol',
      (s) => conditionOf(s, 'Reconciling')?.message.includes('resources.data') === true,
    );
    expect(waiting.status?.status).not.toBe('active');
    const where = scopeNamespace(waiting);
    const claim = (await get('persistentvolumeclaim/data', where)) as View;
    expect(claim.spec).toMatchObject({ resources: { requests: { storage: '10Gi' } } });
    await k([
      'patch',
      'persistentvolumeclaim',
      'data',
      '-n',
      where,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Bound"}}',
    ]);
    expect((await waitScope('vol', active)).status?.scopeClass).toBe('with-volume');
  });

  it('delete removes everything the class made, and only that', async () => {
    const pay = await waitScope('pay', active);
    const where = scopeNamespace(pay);
    // Someone else's object beside the scope's, outside its namespace: it stays.
    await k(['create', 'configmap', 'keep-me', '-n', ns, '--from-literal=a=b']);
    await k(['delete', 'scope', 'pay', '-n', ns, '--wait=true', '--timeout=30s']);
    await waitFor(
      'the namespace gone',
      () => get(`namespace/${where}`),
      (n) => n === undefined,
      30_000,
    );
    expect(await get('configmap/keep-me', ns)).toBeDefined();
    // The only refusals: the Role the operator had no right on, until it was granted.
    expect(operatorLog.refusals().filter((r) => !/roles|"reason":"Forbidden"/.test(r))).toEqual([]);
  });
});
