// The operator from the outside: kubectl applies Applications and Scopes against a cluster
// with the operator running in-process, and reads back what a platform team would see.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Kube, Namespaces, Scopes } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import { type Operator, startOperator } from '../../src/operator.js';
import {
  installCrdsAndClasses,
  kubectl,
  type StartedCluster,
  startCluster,
  uniqueName,
} from '../support/cluster.js';
import { applicationYaml, scopeYaml } from '../support/manifests.js';
import { refusalLog } from '../support/operator-identity.js';
import { lifecycle, readUntil, sleep, untilCount } from '../support/wait.js';

const log = silentLogger();
const operatorLog = refusalLog();

interface ScopeView {
  metadata: {
    generation?: number;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
  };
  status?: {
    status?: string;
    observedRetry?: string;
    id?: number;
    slug?: string;
    domain?: string;
    nrn?: string;
    observedGeneration?: number;
    messages?: { level: string; message: string }[];
    conditions?: { type: string; status: string; reason: string }[];
  };
}

describe('operator: scopes', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  /** The operator's own client: deploy/'s ServiceAccount, with the rights of deploy/rbac.yaml. */
  let operatorKube: Kube;
  let operator: Operator;
  let ns: string;
  let opNs: string;

  const k = async (args: string[], input?: string) => {
    const result = await kubectl(cluster, args, input !== undefined ? { input } : {});
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const getScope = async (name: string): Promise<ScopeView> =>
    JSON.parse(await k(['get', 'scope', name, '-n', ns, '-o', 'json'])) as ScopeView;
  /** Polls the scope until `check` holds, recording every lifecycle value seen on the way. */
  const waitScope = (
    name: string,
    check: (s: ScopeView) => boolean,
    seen: string[] = [],
    timeoutMs = 15_000,
  ): Promise<ScopeView> =>
    readUntil(`scope ${name}`, () => getScope(name), check, { seen, timeoutMs });
  /**
   * Reasons of the Events about scope `name`, oldest first, once there are `count` (Events
   * are written in the background, shortly after the status that caused them).
   */
  const eventReasons = (name: string, count: number): Promise<string[]> =>
    untilCount(() => readEventReasons(name), count);
  const readEventReasons = async (name: string): Promise<string[]> => {
    const list = JSON.parse(
      await k([
        'get',
        'events',
        '-n',
        ns,
        '--field-selector',
        `involvedObject.name=${name}`,
        '-o',
        'json',
      ]),
    ) as { items: { reason: string; metadata: { name: string } }[] };
    // Names end in a hex timestamp and a random part: sorting them orders by time.
    return list.items
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))
      .map((e) => e.reason);
  };
  const application = (name: string, id: number) => applicationYaml(ns, name, id);
  const scope = (name: string, app: number, memory = 2, extra = '') =>
    scopeYaml(ns, name, app, { memoryGb: memory, storageGb: 10, extra });

  beforeAll(async () => {
    opNs = uniqueName('operator-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await installCrdsAndClasses(cluster);
    await kubectl(cluster, ['wait', '--for=condition=Established', 'crd/scopes.platform.nrn.dev']);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    operatorKube = await connect({
      kubeconfigPath: cluster.operatorKubeconfigPath,
      log: operatorLog.log,
    });
    ns = uniqueName('operator-scope');
    await kube.resource(Namespaces).create({ metadata: { name: ns } });
    operator = await startOperator({
      kube: operatorKube,
      log: operatorLog.log,
      namespace: opNs,
      leaderElection: { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 },
    });
    await operator.manager.elector?.elected();
  });
  afterAll(async () => {
    expect(await operator?.stop()).toBe(true);
    // Whatever the operator did, deploy/rbac.yaml allowed.
    expect(operatorLog.refusals()).toEqual([]);
    if (cluster !== undefined && cluster.kind !== 'local') {
      await kubectl(cluster, ['delete', 'namespace', ns, opNs, '--wait=false']);
    }
    operatorKube?.close();
    kube?.close();
    await cluster?.close();
  });

  it('provisions a scope: active, namespace, quota, limit range, service account, Ready', async () => {
    await k(['apply', '-f', '-'], `${application('checkout', 10)}---${scope('web', 10)}`);
    const seen: string[] = [];
    const active = await waitScope('web', (s) => s.status?.status === 'active', seen);
    expect(seen).toContain('active');
    const status = active.status ?? {};
    expect(status.id).toBeGreaterThan(0);
    expect(status.slug).toBe('web');
    expect(status.nrn).toBe(
      `organization=1:account=2:namespace=3:application=10:scope=${status.id}`,
    );
    expect(status.domain).toMatch(/^checkout-web-[0-9a-f]{5}\.nrn\.local$/);
    expect(active.metadata.labels?.['platform.nrn.dev/scope-id']).toBe(String(status.id));
    expect(status.observedGeneration).toBe(active.metadata.generation);

    const wait = await kubectl(cluster, [
      'wait',
      '--for=condition=Ready',
      `scope/web`,
      '-n',
      ns,
      '--timeout=10s',
    ]);
    expect(wait.code).toBe(0);

    const child = `nrn-scope-${status.id}`;
    const nsObject = JSON.parse(await k(['get', 'namespace', child, '-o', 'json'])) as ScopeView;
    expect(nsObject.metadata.labels?.['platform.nrn.dev/scope-id']).toBe(String(status.id));
    expect(nsObject.metadata.labels?.['platform.nrn.dev/nrn']).toBe(
      `organization-1.account-2.namespace-3.application-10.scope-${status.id}`,
    );
    const quota = JSON.parse(
      await k(['get', 'resourcequota', 'scope-quota', '-n', child, '-o', 'json']),
    ) as { spec: { hard: Record<string, string> } };
    expect(quota.spec.hard).toMatchObject({
      'limits.memory': '2048Mi',
      'limits.cpu': '2',
      'limits.ephemeral-storage': '10240Mi',
    });
    // Each child is the scope's: written by the operator's field manager, server-side apply
    // for all but the new Namespace (created: a 409 tells whether another's has the name),
    // and labelled with the scope's uid (a namespace cannot have a namespaced owner, ADR 0004).
    for (const [kind, name, namespace] of [
      ['namespace', child, undefined],
      ['resourcequota', 'scope-quota', child],
      ['limitrange', 'scope-limits', child],
      ['serviceaccount', 'scope-runtime', child],
    ] as const) {
      const object = JSON.parse(
        await k([
          'get',
          kind,
          name,
          ...(namespace !== undefined ? ['-n', namespace] : []),
          '-o',
          'json',
          '--show-managed-fields',
        ]),
      ) as {
        metadata: {
          labels?: Record<string, string>;
          managedFields?: { manager: string; operation: string }[];
        };
      };
      expect(object.metadata.labels?.['platform.nrn.dev/scope-uid']).toBe(active.metadata.uid);
      expect(object.metadata.managedFields).toContainEqual(
        expect.objectContaining({
          manager: 'nrn-operator',
          operation: kind === 'namespace' ? 'Update' : 'Apply',
        }),
      );
    }

    const table = await k(['get', 'scopes', '-n', ns]);
    const header = table.split('\n')[0] ?? '';
    expect(header).toMatch(/NAME\s+ID\s+TYPE\s+STATUS\s+READY/);
    expect(table).toMatch(new RegExp(`web\\s+${status.id}\\s+web_pool\\s+active\\s+True`));

    // One Event per transition: accepted (pending), provisioned (active). The namespace
    // provisioner is done in one pass, so `creating` (and its Provisioning Event) is skipped:
    // it is written only while provisioning takes longer (operator-scope-lifecycle.test.ts).
    expect(await eventReasons('web', 2)).toEqual(['Accepted', 'Provisioned']);
  });

  it('a spec change goes through updating back to active, at the new generation', async () => {
    const before = await waitScope('web', (s) => s.status?.status === 'active');
    await k(['apply', '-f', '-'], scope('web', 10, 4));
    const seen: string[] = [];
    const after = await waitScope(
      'web',
      (s) =>
        s.status?.status === 'active' &&
        s.status.observedGeneration === s.metadata.generation &&
        (s.metadata.generation ?? 0) > (before.metadata.generation ?? 0),
      seen,
    );
    expect(after.status?.id).toBe(before.status?.id);
    const child = `nrn-scope-${after.status?.id}`;
    const quota = JSON.parse(
      await k(['get', 'resourcequota', 'scope-quota', '-n', child, '-o', 'json']),
    ) as { spec: { hard: Record<string, string> } };
    expect(quota.spec.hard['limits.memory']).toBe('4096Mi');
    // The poll may miss a short `updating`; the event stream does not.
    expect((await eventReasons('web', 4)).slice(2)).toEqual(['Updating', 'Provisioned']);
  });

  it('waits pending for a missing application, then becomes active once it appears', async () => {
    await k(['apply', '-f', '-'], scope('early', 20));
    const pending = await waitScope('early', (s) => s.status?.status === 'pending');
    expect(pending.status?.messages?.[0]?.message).toContain('application 20 does not exist');
    const ready = pending.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'WaitingForApplication' });
    expect(pending.status?.conditions?.find((c) => c.type === 'Reconciling')?.status).toBe('True');
    await k(['apply', '-f', '-'], application('late', 20));
    await waitScope('early', (s) => s.status?.status === 'active');
  });

  it('gives scopes distinct ids and refuses a duplicate slug in one application', async () => {
    await k(['apply', '-f', '-'], `${scope('api', 10)}---${scope('worker', 10)}`);
    const a = await waitScope('api', (s) => s.status?.status === 'active');
    const b = await waitScope('worker', (s) => s.status?.status === 'active');
    const web = await getScope('web');
    const ids = new Set([a.status?.id, b.status?.id, web.status?.id]);
    expect(ids.size).toBe(3);

    // "Api" slugs to "api", which the older scope "api" of application 10 has.
    await sleep(1100); // creationTimestamp has whole seconds: make this one strictly newer
    await k(
      ['apply', '-f', '-'],
      scope('api-copy', 10).replace('name: api-copy\n  type', 'name: Api\n  type'),
    );
    const dup = await waitScope('api-copy', (s) => s.status?.status === 'failed');
    expect(dup.status?.messages?.[0]?.message).toMatch(
      new RegExp(`slug api is already used by scope ${ns}/api \\(id \\d+\\) of application 10$`),
    );

    // The slug is unique within its application only: another application may use it.
    await k(
      ['apply', '-f', '-'],
      `${application('catalog', 12)}---${scope('api-catalog', 12).replace(
        'name: api-catalog\n  type',
        'name: api\n  type',
      )}`,
    );
    const other = await waitScope('api-catalog', (s) => s.status?.status === 'active');
    expect(other.status?.slug).toBe('api');
  });

  it('an externally created scope is active with no namespace of its own', async () => {
    await k(['apply', '-f', '-'], scope('ext', 10, 1, '  external_created: true\n'));
    const ext = await waitScope('ext', (s) => s.status?.status === 'active');
    const got = await kubectl(cluster, ['get', 'namespace', `nrn-scope-${ext.status?.id}`]);
    expect(got.code).not.toBe(0);
  });

  it('a child deleted by hand is applied again', async () => {
    const api = await waitScope('api', (s) => s.status?.status === 'active');
    const child = `nrn-scope-${api.status?.id}`;
    await k(['delete', 'serviceaccount', 'scope-runtime', '-n', child]);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const got = await kubectl(cluster, ['get', 'serviceaccount', 'scope-runtime', '-n', child]);
      if (got.code === 0) break;
      if (Date.now() > deadline) throw new Error('the service account was not applied again');
      await sleep(50);
    }
    expect((await getScope('api')).status?.status).toBe('active');
  });

  it('a failed scope is tried again when kubectl annotates it with a new retry value', async () => {
    // The next id is the counter's: a namespace of that name, made by hand first, is taken.
    const next = await k([
      'get',
      'configmap',
      'nrn-scope-ids',
      '-n',
      opNs,
      '-o',
      'jsonpath={.data.next}',
    ]);
    const child = `nrn-scope-${next}`;
    await k(['create', 'namespace', child]);
    await k(['apply', '-f', '-'], scope('taken', 10));
    const failed = await waitScope('taken', (s) => s.status?.status === 'failed');
    expect(failed.status?.id).toBe(Number(next));
    const message = `namespace ${child} exists and does not belong to this scope: it was not made by nrn-operator for a scope`;
    expect(failed.status?.messages?.[0]?.message).toBe(message);
    const retry = (value: string) =>
      k(['annotate', 'scope', 'taken', '-n', ns, `platform.nrn.dev/retry=${value}`, '--overwrite']);

    // Still taken: the retry fails as before, once, and it stays so (no loop).
    await retry('first');
    const again = await waitScope('taken', (s) => s.status?.observedRetry === 'first');
    expect(again.status?.status).toBe('failed');
    expect(again.status?.messages?.[0]?.message).toBe(message);
    await sleep(1000);
    const still = await getScope('taken');
    expect(still.metadata.resourceVersion).toBe(again.metadata.resourceVersion);
    expect(await eventReasons('taken', 4)).toEqual([
      'Accepted',
      'NamespaceTaken',
      'Retrying',
      'NamespaceTaken',
    ]);

    // The namespace goes; nothing tells the scope (not the operator's), a retry does.
    await k(['delete', 'namespace', child, '--timeout=20s']);
    await sleep(300);
    expect((await getScope('taken')).status?.status).toBe('failed');
    await retry('second');
    const seen: string[] = [];
    const active = await waitScope('taken', (s) => s.status?.status === 'active', seen);
    expect(active.status?.observedRetry).toBe('second');
    expect(seen).not.toContain('pending');
    const made = JSON.parse(await k(['get', 'namespace', child, '-o', 'json'])) as ScopeView;
    expect(made.metadata.labels?.['platform.nrn.dev/scope-uid']).toBe(active.metadata.uid);
    expect((await eventReasons('taken', 6)).slice(4)).toEqual(['Retrying', 'Provisioned']);

    // Left in place (a GitOps tool re-applying it), the value is not acted on again.
    await retry('second');
    await k(['annotate', 'scope', 'taken', '-n', ns, 'example.com/synced=1']);
    await sleep(1000);
    const after = await getScope('taken');
    expect(after.status).toEqual(active.status);
    expect(await eventReasons('taken', 6)).toHaveLength(6);
    const unchanged = JSON.parse(await k(['get', 'namespace', child, '-o', 'json'])) as ScopeView;
    expect(unchanged.metadata.resourceVersion).toBe(made.metadata.resourceVersion);

    // A duplicate slug still holds on a retry: failed again, with the same message.
    const dup = await getScope('api-copy');
    const dupEvents = (await readEventReasons('api-copy')).length;
    await k(['annotate', 'scope', 'api-copy', '-n', ns, 'platform.nrn.dev/retry=x']);
    const dupAgain = await waitScope('api-copy', (s) => s.status?.observedRetry === 'x');
    expect(dupAgain.status?.status).toBe('failed');
    expect(dupAgain.status?.messages).toEqual(dup.status?.messages);
    expect((await eventReasons('api-copy', dupEvents + 2)).slice(-2)).toEqual([
      'Retrying',
      'DuplicateSlug',
    ]);
  });

  it('delete removes the children, then the scope, through deleting and deleted', async () => {
    const web = await getScope('web');
    const child = `nrn-scope-${web.status?.id}`;
    const before = (await readEventReasons('web')).length;
    // Every status written on the way, as a watch of a client of its own sees it.
    const watcher = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    const watched = watcher.informer(Scopes, { namespace: ns, fieldSelector: 'metadata.name=web' });
    const seen = lifecycle(watched);
    await watched.start();
    const del = await kubectl(cluster, ['delete', 'scope', 'web', '-n', ns, '--timeout=20s']);
    await watched.stop();
    watcher.close();
    expect(del.code).toBe(0);
    // The first change is the API server's (deletionTimestamp on the active scope).
    expect(seen).toEqual(['active', 'deleting', 'deleted']);
    const gone = await kubectl(cluster, ['get', 'scope', 'web', '-n', ns]);
    expect(gone.stderr).toContain('NotFound');
    const nsGone = await kubectl(cluster, ['get', 'namespace', child]);
    expect(nsGone.stderr).toContain('NotFound');
    // The Events outlive the scope: one for each lifecycle value of its deletion, and one for
    // what was deleted with it (its namespace, which takes the rest along: ADR 0028).
    expect((await eventReasons('web', before + 3)).slice(before)).toEqual([
      'Deleting',
      'ChildDeleted',
      'Deleted',
    ]);
  });
});
