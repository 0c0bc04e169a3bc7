// Lease-based leader election against a cluster: one leader among racing candidates, a quick
// hand-over on release, a take-over only after expiry when the leader vanishes, leadership
// dropped at once when another holder appears or renewals fail, and the manager halting its
// controllers the moment leadership goes, then campaigning again and, leader once more,
// starting them afresh. The last tests run a separate process and signal it.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigMaps,
  type Kube,
  KubeTransportError,
  Leases,
  type ResourceClient,
} from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import {
  Controller,
  type LeaderElectionOptions,
  LeaderElector,
  leaseSpecOf,
  Manager,
  type StoppedReason,
} from '../../src/runtime/index.js';
import { type ClusterWithNamespace, startClusterWithNamespace } from '../support/cluster.js';

const log = silentLogger();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fast = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 300 };

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

interface Candidate {
  readonly elector: LeaderElector;
  readonly started: number[];
  readonly stopped: { at: number; reason: StoppedReason }[];
}

describe('runtime leader election', () => {
  let fixture: ClusterWithNamespace;
  let kube: Kube;
  let ns: string;
  const candidates: Candidate[] = [];

  const candidate = (
    name: string,
    identity: string,
    extra: Partial<LeaderElectionOptions> = {},
  ): Candidate => {
    const started: number[] = [];
    const stopped: { at: number; reason: StoppedReason }[] = [];
    const elector = new LeaderElector({
      kube,
      namespace: ns,
      name,
      identity,
      log,
      ...fast,
      onStartedLeading: () => started.push(Date.now()),
      onStoppedLeading: (reason) => stopped.push({ at: Date.now(), reason }),
      ...extra,
    });
    const c = { elector, started, stopped };
    candidates.push(c);
    return c;
  };
  const lease = (name: string) => kube.resource(Leases).get({ namespace: ns, name });

  beforeAll(async () => {
    fixture = await startClusterWithNamespace('runtime-leader', log);
    ({ kube, ns } = fixture);
  });
  afterAll(async () => {
    await Promise.all(candidates.map((c) => c.elector.stop({ release: false })));
    await fixture?.close();
  });

  it('elects exactly one of racing candidates; the other takes over quickly on release', async () => {
    const racers = [candidate('race', 'a'), candidate('race', 'b'), candidate('race', 'c')];
    for (const r of racers) r.elector.start();
    await until(() => racers.some((r) => r.elector.isLeader()));
    // Several renew periods: never two leaders, and the lease names the one that leads.
    for (let i = 0; i < 10; i++) {
      expect(racers.filter((r) => r.elector.isLeader())).toHaveLength(1);
      await sleep(100);
    }
    expect(racers.reduce((n, r) => n + r.started.length, 0)).toBe(1);
    const leader = racers.find((r) => r.elector.isLeader()) as Candidate;
    const spec = leaseSpecOf(await lease('race'));
    expect(spec).toMatchObject({
      holderIdentity: leader.elector.identity,
      leaseDurationSeconds: 2,
      leaseTransitions: 0,
    });
    expect(spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    const released = Date.now();
    await leader.elector.stop();
    expect(leader.stopped).toEqual([{ at: expect.any(Number), reason: 'stopped' }]);
    expect(leaseSpecOf(await lease('race'))).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
    });
    await until(() => racers.some((r) => r.elector.isLeader()));
    const successor = racers.find((r) => r.elector.isLeader()) as Candidate;
    const tookMs = (successor.started[0] ?? Infinity) - released;
    // A free lease is taken on the next attempt (<= 2.2 retry periods), within the 2 s lease.
    expect(tookMs).toBeLessThan(1_500);
    expect(leaseSpecOf(await lease('race'))).toMatchObject({
      holderIdentity: successor.elector.identity,
      leaseTransitions: 1,
    });
    for (const r of racers) await r.elector.stop();
  });

  it('takes over from a leader that vanished without releasing, after the lease expires', async () => {
    const first = candidate('crash', 'first');
    first.elector.start();
    await first.elector.elected();
    const second = candidate('crash', 'second');
    second.elector.start();
    await sleep(500);
    expect(second.elector.isLeader()).toBe(false);
    expect(second.elector.leader).toBe('first');

    const crashed = Date.now();
    await first.elector.stop({ release: false }); // no more renewals, lease left as it was
    await second.elector.elected();
    const tookMs = Date.now() - crashed;
    // Not before the last renewal's record has gone unchanged for the lease duration ...
    expect(tookMs).toBeGreaterThan(2_000 - fast.retryPeriodMs - 200);
    // ... and soon after: the next attempt, 1 to 2.2 retry periods later.
    expect(tookMs).toBeLessThan(2_000 + 2.2 * fast.retryPeriodMs + 500);
    expect(leaseSpecOf(await lease('crash'))).toMatchObject({
      holderIdentity: 'second',
      leaseTransitions: 1,
    });
    await second.elector.stop();
  });

  it('stops leading at once when another holder writes the lease', async () => {
    const leader = candidate('stolen', 'victim');
    leader.elector.start();
    await leader.elector.elected();
    const current = await lease('stolen');
    const stolen = Date.now();
    await kube.resource(Leases).replace({
      ...current,
      spec: { ...leaseSpecOf(current), holderIdentity: 'intruder', leaseDurationSeconds: 60 },
    });
    await until(() => leader.stopped.length > 0);
    const tookMs = (leader.stopped[0]?.at ?? Infinity) - stolen;
    expect(leader.stopped[0]?.reason).toBe('lost');
    // Seen on the next renew (one retry period), not at the renew deadline.
    expect(tookMs).toBeLessThan(fast.retryPeriodMs + 600);
    expect(leader.elector.isLeader()).toBe(false);
    await leader.elector.stop();
    expect(leaseSpecOf(await lease('stolen')).holderIdentity).toBe('intruder'); // not released
  });

  it('stops leading at the renew deadline when renewals keep failing', async () => {
    let failing = false;
    const real = kube.resource(Leases);
    const down = () => Promise.reject(new KubeTransportError('unreachable', 'ECONNREFUSED'));
    const flaky: ResourceClient<unknown, unknown> = Object.create(real);
    Object.assign(flaky, {
      get: (...args: Parameters<typeof real.get>) => (failing ? down() : real.get(...args)),
      replace: (...args: Parameters<typeof real.replace>) =>
        failing ? down() : real.replace(...args),
    });
    const leader = candidate('flaky', 'flaky', {
      kube: { resource: <S, T>() => flaky as unknown as ResourceClient<S, T> },
    });
    leader.elector.start();
    await leader.elector.elected();
    await sleep(400);
    const cut = Date.now();
    failing = true;
    await until(() => leader.stopped.length > 0);
    const tookMs = (leader.stopped[0]?.at ?? Infinity) - cut;
    expect(leader.stopped[0]?.reason).toBe('renew-deadline');
    // The deadline counts from the last renewal that worked, at most one period before the cut.
    expect(tookMs).toBeGreaterThan(fast.renewDeadlineMs - fast.retryPeriodMs - 100);
    expect(tookMs).toBeLessThan(fast.renewDeadlineMs + 400);
    failing = false;
    await leader.elector.stop({ release: false });
  });

  it('the manager halts its controllers the moment leadership is lost', async () => {
    const configMaps = kube.resource(ConfigMaps);
    const reconciled: string[] = [];
    const informer = kube.informer(ConfigMaps, { namespace: ns, resyncMs: 0 });
    const controller = new Controller({
      name: 'configmaps',
      log,
      reconciler: async (key) => {
        reconciled.push(key);
      },
    }).watch(informer);
    const manager = new Manager({
      log,
      informers: [informer],
      runnables: [controller],
      leaderElection: { kube, namespace: ns, name: 'managed', identity: 'manager', ...fast },
    });
    await manager.start();
    await manager.elector?.elected();
    await configMaps.create({ metadata: { name: 'before', namespace: ns } });
    await until(() => reconciled.includes(`${ns}/before`));

    const current = await lease('managed');
    await kube.resource(Leases).replace({
      ...current,
      spec: { ...leaseSpecOf(current), holderIdentity: 'someone-else', leaseDurationSeconds: 60 },
    });
    await until(() => !controller.running);
    expect(manager.leading).toBe(false);
    await configMaps.create({ metadata: { name: 'after', namespace: ns } });
    await sleep(300);
    expect(reconciled).not.toContain(`${ns}/after`);
    expect(await manager.stop()).toBe(true);
    expect(leaseSpecOf(await lease('managed')).holderIdentity).toBe('someone-else');
  });

  it('a manager whose Lease was taken while it was cut off halts, campaigns again, and leads afresh once it is free', async () => {
    const configMaps = kube.resource(ConfigMaps);
    const reconciled: string[] = [];
    let signals: AbortSignal[] = [];
    const informer = kube.informer(ConfigMaps, { namespace: ns, resyncMs: 0 });
    const controller = new Controller({
      name: 'configmaps',
      log,
      reconciler: async (key, { signal }) => {
        signals.push(signal);
        reconciled.push(key);
      },
    }).watch(informer);
    // A partition between this manager and the Lease: its renewals fail, its informer does not.
    let cut = false;
    const real = kube.resource(Leases);
    const down = () => Promise.reject(new KubeTransportError('unreachable', 'ECONNREFUSED'));
    const partitioned: ResourceClient<unknown, unknown> = Object.create(real);
    Object.assign(partitioned, {
      get: (...args: Parameters<typeof real.get>) => (cut ? down() : real.get(...args)),
      replace: (...args: Parameters<typeof real.replace>) => (cut ? down() : real.replace(...args)),
      create: (...args: Parameters<typeof real.create>) => (cut ? down() : real.create(...args)),
    });
    const manager = new Manager({
      log,
      informers: [informer],
      runnables: [controller],
      leaderElection: {
        kube: { resource: <S, T>() => partitioned as unknown as ResourceClient<S, T> },
        namespace: ns,
        name: 'retaken',
        identity: 'comeback',
        ...fast,
      },
    });
    const key = (name: string) => `${ns}/${name}`;
    const times = (name: string) => reconciled.filter((k) => k === key(name)).length;
    try {
      await manager.start();
      await manager.elector?.elected();
      await configMaps.create({ metadata: { name: 'retaken-before', namespace: ns } });
      await until(() => times('retaken-before') === 1);

      cut = true;
      // Another identity takes the Lease once it has gone unrenewed for a lease duration.
      const other = candidate('retaken', 'usurper');
      other.elector.start();
      await other.elector.elected();
      // The manager gave up at its renew deadline, before the usurper could take over.
      expect(manager.elector?.isLeader()).toBe(false);
      expect(controller.running).toBe(false);
      expect(signals.every((signal) => signal.aborted)).toBe(true);
      cut = false;

      // While the usurper leads, the manager (alive, informer current) reconciles nothing.
      await configMaps.create({ metadata: { name: 'retaken-during', namespace: ns } });
      await until(() => informer.cache.get(ns, 'retaken-during') !== undefined);
      await sleep(4 * fast.retryPeriodMs);
      expect(times('retaken-during')).toBe(0);
      expect(manager.elector?.leader).toBe('usurper');

      // The usurper goes away without a word; the manager's new campaign takes the Lease once
      // it expires, and its controller starts again from the informer's cache.
      signals = [];
      await other.elector.stop({ release: false });
      await manager.elector?.elected();
      expect(manager.elector?.isLeader()).toBe(true);
      await until(() => times('retaken-during') === 1 && times('retaken-before') === 2);
      expect(controller.running).toBe(true);
      expect(signals.every((signal) => !signal.aborted)).toBe(true);
      await configMaps.create({ metadata: { name: 'retaken-after', namespace: ns } });
      await until(() => times('retaken-after') === 1);
      expect(leaseSpecOf(await lease('retaken'))).toMatchObject({
        holderIdentity: 'comeback',
        leaseTransitions: 2,
      });
    } finally {
      cut = false;
      expect(await manager.stop()).toBe(true);
    }
    expect(leaseSpecOf(await lease('retaken')).holderIdentity).toBe('');
  });

  describe('a separate process', () => {
    const children: ChildProcess[] = [];
    // Both start at once: loading the code takes a child seconds.
    let graceful: ReturnType<typeof start>;
    let doomed: ReturnType<typeof start>;
    beforeAll(() => {
      graceful = start('graceful', 'child', 800);
      doomed = start('killed', 'doomed', 100);
    });
    afterAll(() => {
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    });

    /** Starts test/support/runtime-child.ts; `lines` fills as it prints. */
    const start = (leaseName: string, identity: string, reconcileMs: number) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          join(import.meta.dirname, '../support/runtime-child.ts'),
          fixture.cluster.kubeconfigPath,
          ns,
          leaseName,
          identity,
          String(reconcileMs),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      children.push(child);
      const lines: string[] = [];
      let buffered = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const parts = buffered.split('\n');
        buffered = parts.pop() ?? '';
        lines.push(...parts);
      });
      const exited = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => resolve(code)),
      );
      return { child, lines, exited };
    };

    it('on SIGTERM finishes the reconcile in flight, releases the lease and exits 0', async () => {
      const proc = graceful;
      await until(() => proc.lines.includes('leading'), 15_000);
      const key = `${ns}/graceful-cm`;
      await kube.resource(ConfigMaps).create({ metadata: { name: 'graceful-cm', namespace: ns } });
      await until(() => proc.lines.includes(`reconciling ${key}`));
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
      expect(proc.lines).toContain(`reconciled ${key} aborted=false`);
      expect(proc.lines.at(-1)).toBe('stopped clean=true');
      expect(leaseSpecOf(await lease('graceful'))).toMatchObject({
        holderIdentity: '',
        leaseDurationSeconds: 1,
      });
    });

    it('after kill -9 of the leader, another candidate takes over once the lease expires', async () => {
      const proc = doomed;
      await until(() => proc.lines.includes('leading'), 15_000);
      const heir = candidate('killed', 'heir');
      heir.elector.start();
      await sleep(400);
      expect(heir.elector.leader).toBe('doomed');
      const killed = Date.now();
      proc.child.kill('SIGKILL');
      await proc.exited;
      await heir.elector.elected();
      const tookMs = Date.now() - killed;
      expect(tookMs).toBeGreaterThan(2_000 - fast.retryPeriodMs - 200);
      expect(tookMs).toBeLessThan(2_000 + 2.2 * fast.retryPeriodMs + 500);
      await heir.elector.stop();
    });
  });
});
