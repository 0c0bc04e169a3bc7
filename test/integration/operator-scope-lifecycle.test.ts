// The Scope reconciler driven pass by pass against a cluster, with a provisioner the test
// controls: which lifecycle values and Events a scope goes through when provisioning takes one
// pass or several, what a scope the facade accepted itself keeps, and what each pass costs in
// requests (the reconciler has a connection of its own, so its requests are counted exactly).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  ApplicationSpec,
  ApplicationStatus,
  ScopeSpec,
  ScopeStatus,
} from '../../src/api/index.js';
import { ScopeClassSpec } from '../../src/api/index.js';
import type {
  Progress,
  ScopeProvisioner,
  ScopeTarget,
} from '../../src/controllers/provisioners/scope-provisioner.js';
import { SCOPE_FINALIZER, ScopeReconciler } from '../../src/controllers/scope/reconciler.js';
import { RolloutLimiter } from '../../src/controllers/scope/rollout.js';
import { indexApplications } from '../../src/domain/applications.js';
import { EventRecorder } from '../../src/domain/event-recorder.js';
import { ClassCatalog, type ScopeClassObject } from '../../src/domain/scope-classes/catalog.js';
import { IdAllocator } from '../../src/domain/scopes/id-allocator.js';
import { indexScopes } from '../../src/domain/scopes/index.js';
import {
  Applications,
  connect,
  Events,
  type Informer,
  type Kube,
  leanObject,
  Namespaces,
  Scopes,
} from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import { Stalled } from '../../src/runtime/index.js';
import { kubectl, type StartedCluster, startCluster, uniqueName } from '../support/cluster.js';
import { sleep } from '../support/wait.js';

const log = silentLogger();
const APP_ID = 31;

/** Ready after `slowPasses` passes that report in_progress. */
/** The class every scope here gets: a bare namespace, provisioned by the stub below. */
const STUB_CLASS: ScopeClassObject = {
  apiVersion: 'platform.nrn.dev/v1alpha1',
  kind: 'ScopeClass',
  metadata: { name: 'stub', uid: 'stub-uid', generation: 1 },
  spec: ScopeClassSpec.parse({ scope_type: 'web_pool', default: true }),
};

class StubProvisioner implements ScopeProvisioner {
  readonly type = 'stub';
  private readonly passes = new Map<string, number>();

  constructor(private readonly slowPasses: number) {}

  async ensure(target: ScopeTarget): Promise<Progress> {
    const done = this.passes.get(target.key) ?? 0;
    this.passes.set(target.key, done + 1);
    if (done < this.slowPasses) {
      return { state: 'in_progress', message: 'stub is working', retryAfterMs: 10 };
    }
    return { state: 'ready', outputs: { namespace: `stub-${target.id}` } };
  }

  peek(target: ScopeTarget): Progress | undefined {
    const done = this.passes.get(target.key) ?? 0;
    return done > this.slowPasses
      ? { state: 'ready', outputs: { namespace: `stub-${target.id}` } }
      : undefined;
  }

  async remove(): Promise<Progress> {
    return { state: 'ready' };
  }
}

/** Refuses the first `refusals` calls of ensure (as a provider answering 4xx would), then works. */
class RefusingProvisioner implements ScopeProvisioner {
  readonly type = 'refusing';
  calls = 0;

  constructor(private readonly refusals: number) {}

  async ensure(target: ScopeTarget): Promise<Progress> {
    this.calls++;
    if (this.calls <= this.refusals) {
      return { state: 'failed', reason: 'ProvisionRefused', message: 'quota exhausted' };
    }
    return { state: 'ready', outputs: { namespace: `refusing-${target.id}` } };
  }

  peek(target: ScopeTarget): Progress | undefined {
    return this.calls > this.refusals
      ? { state: 'ready', outputs: { namespace: `refusing-${target.id}` } }
      : undefined;
  }

  async remove(): Promise<Progress> {
    return { state: 'ready' };
  }
}

describe('scope lifecycle, pass by pass', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  /** The reconciler's own connection: its stats are its requests only. */
  let own: Kube;
  let ns: string;
  let opNs: string;
  let scopes: Informer<ScopeSpec, ScopeStatus>;
  let applications: Informer<ApplicationSpec, ApplicationStatus>;
  let ids: IdAllocator;

  let recorder: EventRecorder;
  const reconcilerWith = (provisioner: ScopeProvisioner) =>
    new ScopeReconciler({
      kube: own,
      log,
      scopes,
      applications,
      events: recorder,
      ids,
      classes: new ClassCatalog({
        list: () => [STUB_CLASS],
        get: (_namespace, name) => (name === STUB_CLASS.metadata.name ? STUB_CLASS : undefined),
      }),
      provisioners: { namespace: provisioner },
      rollout: new RolloutLimiter(),
    });
  const createScope = (name: string) =>
    kube.resource(Scopes).create({
      metadata: { name, namespace: ns },
      spec: {
        name,
        type: 'web_pool',
        application_id: APP_ID,
        requested_spec: { memory_in_gb: 1, cpu_profile: 'standard', local_storage_in_gb: 5 },
      },
    });
  const read = (name: string) => kube.resource(Scopes).get({ namespace: ns, name });
  /** One pass, and the requests it made. */
  const pass = async (reconciler: ScopeReconciler, name: string) => {
    const before = own.stats.requests;
    // A failure ends the pass with Stalled (the key is not retried): the test reads status.
    const result = await reconciler.reconcile(`${ns}/${name}`, { log }).catch((error: unknown) => {
      if (error instanceof Stalled) return { stalled: error.reason, requeueAfter: undefined };
      throw error;
    });
    // Its Events are written in the background: counted with the pass that recorded them.
    await recorder.flush();
    return { result, requests: own.stats.requests - before };
  };
  const eventReasons = async (name: string) => {
    const list = await kube
      .resource(Events)
      .list({ namespace: ns, fieldSelector: `involvedObject.name=${name}` });
    return list.items
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))
      .map((e) => (e as unknown as { reason: string }).reason);
  };
  /** Until the scope informer holds the scope as it is on the server. */
  const cached = async (name: string) => {
    const current = await read(name);
    const deadline = Date.now() + 10_000;
    while (
      scopes.cache.get(ns, name)?.metadata.resourceVersion !== current.metadata.resourceVersion
    ) {
      if (Date.now() > deadline) throw new Error(`${name} not cached in time`);
      await sleep(10);
    }
  };

  beforeAll(async () => {
    opNs = uniqueName('scope-lifecycle-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await kubectl(cluster, ['apply', '-f', join(import.meta.dirname, '../../crds')]);
    await kubectl(cluster, ['wait', '--for=condition=Established', 'crd/scopes.platform.nrn.dev']);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    // As the operator: deploy/'s ServiceAccount, with the rights of deploy/rbac.yaml.
    own = await connect({ kubeconfigPath: cluster.operatorKubeconfigPath, log });
    ns = uniqueName('scope-lifecycle');
    await kube.resource(Namespaces).create({ metadata: { name: ns } });
    ids = new IdAllocator(own, { namespace: opNs });
    recorder = new EventRecorder(own, 'nrn-operator', 'test-instance', log);
    scopes = kube.informer(Scopes, { namespace: ns, transform: leanObject });
    applications = kube.informer(Applications, { namespace: ns });
    indexScopes(scopes);
    indexApplications(applications);
    await Promise.all([scopes.start(), applications.start()]);
    await kube.resource(Applications).create({
      metadata: { name: 'lifecycle', namespace: ns },
      spec: {
        id: APP_ID,
        name: 'lifecycle',
        nrn: `organization=1:account=2:namespace=3:application=${APP_ID}`,
      },
    });
    while (applications.cache.size === 0) await sleep(10);
  });
  afterAll(async () => {
    await scopes?.stop();
    await applications?.stop();
    if (cluster !== undefined && cluster.kind !== 'local') {
      await kubectl(cluster, ['delete', 'namespace', ns, opNs, '--wait=false']);
    }
    kube?.close();
    own?.close();
    await cluster?.close();
  });

  it('provisioned in one pass: pending, then active, with one Event for each', async () => {
    const reconciler = reconcilerWith(new StubProvisioner(0));
    await createScope('quick');
    const first = await pass(reconciler, 'quick');
    expect(first.result).toBeUndefined();
    // GET, the counter (none yet: GET 404, create), pending, its Event, label + finalizer in
    // one patch, active, its Event.
    expect(first.requests).toBe(8);
    const scope = await read('quick');
    expect(scope.status?.status).toBe('active');
    expect(scope.status?.observedGeneration).toBe(scope.metadata.generation);
    expect(scope.metadata.labels?.['platform.nrn.dev/scope-id']).toBe(String(scope.status?.id));
    expect(scope.metadata.finalizers).toContain(SCOPE_FINALIZER);
    expect(await eventReasons('quick')).toEqual(['Accepted', 'Provisioned']);

    // Settled, and the cache shows it: another pass reads and writes nothing.
    await cached('quick');
    expect((await pass(reconciler, 'quick')).requests).toBe(0);
  });

  it('provisioning over several passes writes creating in between', async () => {
    const reconciler = reconcilerWith(new StubProvisioner(2));
    await createScope('slow');
    const first = await pass(reconciler, 'slow');
    expect(first.result?.requeueAfter).toBe(10);
    const creating = await read('slow');
    expect(creating.status?.status).toBe('creating');
    expect(creating.status?.conditions?.find((c) => c.type === 'Reconciling')).toMatchObject({
      status: 'True',
      reason: 'Provisioning',
    });
    // Still in progress: nothing changed, so nothing is written, only read.
    const second = await pass(reconciler, 'slow');
    expect(second.result?.requeueAfter).toBe(10);
    expect(second.requests).toBe(1);
    await pass(reconciler, 'slow');
    expect((await read('slow')).status?.status).toBe('active');
    expect(await eventReasons('slow')).toEqual(['Accepted', 'Provisioning', 'Provisioned']);
  });

  it('keeps the identity the facade wrote into status, and allocates none', async () => {
    const reconciler = reconcilerWith(new StubProvisioner(0));
    const created = await kube.resource(Scopes).create({
      metadata: {
        name: 'by-facade',
        namespace: ns,
        labels: { 'platform.nrn.dev/scope-id': '900001' },
      },
      spec: {
        name: 'by-facade',
        type: 'web_pool',
        application_id: APP_ID,
        requested_spec: { memory_in_gb: 1 },
      },
    });
    const identity = {
      id: 900001,
      slug: 'by-facade',
      domain: 'lifecycle-by-facade-abcde.nrn.local',
      nrn: `organization=1:account=2:namespace=3:application=${APP_ID}:scope=900001`,
    };
    await kube.resource(Scopes).patchStatus(
      { namespace: ns, name: 'by-facade' },
      {
        metadata: { resourceVersion: created.metadata.resourceVersion },
        status: { status: 'pending', ...identity },
      },
    );
    const { requests } = await pass(reconciler, 'by-facade');
    // GET, finalizer (the label is there already), active, its Event: no id allocated.
    expect(requests).toBe(4);
    const scope = await read('by-facade');
    expect(scope.status).toMatchObject({ status: 'active', ...identity });
    expect(scope.metadata.labels?.['platform.nrn.dev/scope-id']).toBe('900001');
    expect(scope.metadata.finalizers).toContain(SCOPE_FINALIZER);
  });

  it('ids handed to scopes reconciled side by side are distinct', async () => {
    const reconciler = reconcilerWith(new StubProvisioner(0));
    const names = Array.from({ length: 12 }, (_, i) => `side-${i}`);
    await Promise.all(names.map(createScope));
    await Promise.all(names.map((name) => pass(reconciler, name)));
    const got = await Promise.all(names.map(read));
    const assigned = got.map((s) => s.status?.id);
    expect(got.every((s) => s.status?.status === 'active')).toBe(true);
    expect(new Set(assigned).size).toBe(names.length);
  });

  it('a refused scope stands until a retry annotation; each value is acted on once', async () => {
    const provisioner = new RefusingProvisioner(2);
    const reconciler = reconcilerWith(provisioner);
    const annotate = async (...pairs: string[]) => {
      const result = await kubectl(cluster, [
        'annotate',
        'scope',
        'refused',
        '-n',
        ns,
        '--overwrite',
        ...pairs,
      ]);
      expect(result.code, result.stderr).toBe(0);
      await cached('refused');
    };
    await createScope('refused');
    await pass(reconciler, 'refused');
    const failed = await read('refused');
    expect(failed.status?.status).toBe('failed');
    expect(failed.status?.messages?.[0]?.message).toBe('quota exhausted');
    // Sticky: more passes neither provision nor write.
    await pass(reconciler, 'refused');
    expect(provisioner.calls).toBe(1);
    expect((await read('refused')).metadata.resourceVersion).toBe(failed.metadata.resourceVersion);

    // A retry the provisioner refuses again: failed with the same message, and it stays so.
    await annotate('platform.nrn.dev/retry=1');
    await pass(reconciler, 'refused');
    expect(provisioner.calls).toBe(2);
    const again = await read('refused');
    expect(again.status).toMatchObject({ status: 'failed', observedRetry: '1' });
    expect(again.status?.messages?.[0]?.message).toBe('quota exhausted');
    await pass(reconciler, 'refused');
    await pass(reconciler, 'refused');
    expect(provisioner.calls).toBe(2);
    expect((await read('refused')).metadata.resourceVersion).toBe(again.metadata.resourceVersion);

    // A new value: provisioned.
    await annotate('platform.nrn.dev/retry=2');
    await pass(reconciler, 'refused');
    expect(provisioner.calls).toBe(3);
    const active = await read('refused');
    expect(active.status).toMatchObject({ status: 'active', observedRetry: '2' });
    expect(await eventReasons('refused')).toEqual([
      'Accepted',
      'ProvisionRefused',
      'Retrying',
      'ProvisionRefused',
      'Retrying',
      'Provisioned',
    ]);

    // The same value left in place, or applied again with other changes: nothing more.
    await annotate('platform.nrn.dev/retry=2', 'example.com/note=unrelated');
    expect((await pass(reconciler, 'refused')).requests).toBe(0);
    expect(provisioner.calls).toBe(3);

    // A new value on an active scope is only recorded: one status write, no provisioning.
    await annotate('platform.nrn.dev/retry=3');
    expect((await pass(reconciler, 'refused')).requests).toBe(1);
    expect(provisioner.calls).toBe(3);
    const recorded = await read('refused');
    expect(recorded.status).toMatchObject({ status: 'active', observedRetry: '3' });
    expect((await eventReasons('refused')).length).toBe(6);
    await cached('refused');
    expect((await pass(reconciler, 'refused')).requests).toBe(0);
  });
});
