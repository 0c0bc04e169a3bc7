// Reliability: the operator process (`nrn-operator run`) behind an API server whose watches
// fail (test/support/faulty-proxy.ts in front of `nrn-operator local --no-operator`): streams
// cut again and again, every watch answered 500, a 410 storm (HTTP 410 and in-stream ERROR
// events of 410, each watch after each relist), and the whole server stalled. Scopes are
// created and deleted straight at the plane (kubectl) during each fault; once it ends, every
// scope created is active and every one deleted is gone, with nobody restarting anything. While
// every watch fails, the watch requests of each informer stay within what its backoff allows.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, DEFAULT_BACKOFF, type Kube, Scopes } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import { applyCrds } from '../../src/operator.js';
import { DEFAULT_RENEW_DEADLINE_MS } from '../../src/runtime/leader.js';
import { installDefaultScopeClasses } from '../../src/scope-classes-install.js';
import { kubectl, type TestCluster } from '../support/cluster.js';
import { FaultyProxy, type SeenRequest } from '../support/faulty-proxy.js';
import { applicationYaml, namespaceYaml, scopeYaml } from '../support/manifests.js';
import {
  createOperatorIdentity,
  DEPLOY_NAMESPACE,
  refusalsIn,
} from '../support/operator-identity.js';
import {
  type ControlPlaneProcess,
  crash,
  type OperatorProcess,
  startControlPlaneProcess,
  startOperatorProcess,
} from '../support/operator-processes.js';
import { sleep } from '../support/wait.js';
import { report, size } from './support/scenario.js';

const log = silentLogger();
const NS = 'watch-faults';
const APP_ID = 31;
/** Scopes created, and as many deleted, during each fault. */
const PER_FAULT = size(6, 24);
/** How long every watch fails (500, then 410): the "per 10 s", or longer. */
const WINDOW_MS = size(10_000, 30_000);
/** The 30 s stall; shorter in the bounded form. */
const STALL_MS = size(8_000, 30_000);
const DROP_PHASE_MS = size(5_000, 20_000);
const DROP_EVERY_MS = 400;
/**
 * After a fault ends, an informer retries after the backoff delay it had reached (at most
 * DEFAULT_BACKOFF.maxMs), lists or re-watches, and the controllers reconcile what it brings:
 * the bound for "recovers alone", with a margin for the reconciles on a shared machine.
 */
const RECOVERY_MS = DEFAULT_BACKOFF.maxMs + 20_000;

/**
 * The most watch requests one informer can make in `windowMs` when every one fails at once: the
 * first, then one after each of its backoff delays at their shortest (the jitter taking off all
 * it may), plus `free` retries made without waiting. A loop without backoff makes hundreds.
 */
function mostAttempts(windowMs: number, free: number): number {
  const { initialMs, maxMs, jitter } = DEFAULT_BACKOFF;
  let attempts = 1;
  let elapsed = 0;
  for (let k = 0; ; k++) {
    elapsed += Math.min(maxMs, initialMs * 2 ** k) * (1 - jitter);
    if (elapsed > windowMs) return attempts + free;
    attempts++;
  }
}

const isWatch = (path: string) => /[?&]watch=(true|1)(&|$)/.test(path);
/** An informer's list: a page of a collection (the operator's other reads are by name). */
const isList = (path: string) => !isWatch(path) && /[?&]limit=/.test(path);
/** One informer's requests: its collection and its selectors (resourceVersion aside). */
function informerOf(path: string): string {
  const url = new URL(path, 'https://proxy');
  const selectors = ['labelSelector', 'fieldSelector']
    .map((key) => url.searchParams.get(key))
    .filter((value) => value !== null);
  return [url.pathname, ...selectors].join(' ');
}
function perInformer(requests: readonly Pick<SeenRequest, 'path'>[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { path } of requests) {
    const key = informerOf(path);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

interface FaultOutcome {
  readonly created: number;
  readonly deleted: number;
  /** From the end of the fault until every scope stood as asked. */
  readonly recoveredMs: number;
}

describe('reliability: watch faults (operator process behind a faulty API server)', () => {
  let dataDir: string;
  let plane: ControlPlaneProcess;
  let cluster: TestCluster;
  let kube: Kube;
  let proxy: FaultyProxy;
  let operator: OperatorProcess;
  /** Scopes that must exist and be active / must be gone, over every fault so far. */
  const alive = new Set<string>();
  const removed = new Set<string>();
  const found: string[] = [];
  const figures: Record<string, number> = {};
  const startedAt = Date.now();

  const applyScopes = async (names: readonly string[]) => {
    if (names.length === 0) return;
    const input = names.map((name) => scopeYaml(NS, name, APP_ID)).join('---');
    const applied = await kubectl(cluster, ['apply', '-f', '-'], { input });
    expect(applied.code, applied.stderr).toBe(0);
    for (const name of names) alive.add(name);
  };
  const deleteScopes = async (names: readonly string[]) => {
    if (names.length === 0) return;
    const deleted = await kubectl(cluster, ['delete', 'scope', '-n', NS, '--wait=false', ...names]);
    expect(deleted.code, deleted.stderr).toBe(0);
    for (const name of names) {
      alive.delete(name);
      removed.add(name);
    }
  };
  /** Waits until every scope of `alive` is active and none of `removed` exists; how long it took. */
  const settled = async (timeoutMs: number): Promise<number> => {
    const from = Date.now();
    for (;;) {
      const items = (await kube.resource(Scopes).list({ namespace: NS })).items;
      const byName = new Map(items.map((s) => [s.metadata.name, s]));
      const notActive = [...alive].filter((n) => byName.get(n)?.status?.status !== 'active');
      const notGone = [...removed].filter((n) => byName.has(n));
      if (notActive.length === 0 && notGone.length === 0) return Date.now() - from;
      if (Date.now() - from > timeoutMs) {
        const show = (names: string[]) =>
          names.slice(0, 3).map((n) => [n, byName.get(n)?.status?.status ?? 'missing']);
        throw new Error(
          `after ${timeoutMs} ms: ${notActive.length} not active ${JSON.stringify(show(notActive))}, ` +
            `${notGone.length} deleted but still there ${JSON.stringify(show(notGone))}`,
        );
      }
      await sleep(200);
    }
  };
  const expectOperatorAlive = () => {
    expect(operator.child.exitCode, 'the operator process exited').toBeNull();
    expect(operator.child.signalCode).toBeNull();
  };
  /**
   * How many informers watch each collection (with its selectors), as the watches open in
   * steady state show: two may share one (the operator's and the facade's Services, ADR 0011).
   */
  let watchers = new Map<string, number>();
  const watchersOf = (key: string) => watchers.get(key) ?? 1;
  const allWatching = async () => {
    const deadline = Date.now() + RECOVERY_MS;
    for (;;) {
      const open = perInformer(proxy.openWatches().map((path) => ({ path })));
      if ([...watchers].every(([key, count]) => (open.get(key) ?? 0) >= count)) return;
      if (Date.now() > deadline) {
        throw new Error(`informers not watching again: ${JSON.stringify([...open])}`);
      }
      await sleep(100);
    }
  };
  const names = (prefix: string) => Array.from({ length: PER_FAULT }, (_, i) => `${prefix}-${i}`);

  /**
   * Scopes to delete are made (and reconciled) first; then, during `durationMs` after
   * `begin()`, half of the new ones are applied and half of the old ones deleted at its start
   * and the rest at its middle; `end()` lifts the fault and the clock for recovery starts.
   */
  const underFault = async (
    prefix: string,
    durationMs: number,
    begin: () => void,
    end: () => void,
  ): Promise<FaultOutcome & { readonly from: number; readonly to: number }> => {
    const doomed = names(`${prefix}-old`);
    await applyScopes(doomed);
    await settled(RECOVERY_MS);
    const fresh = names(`${prefix}-new`);
    const half = Math.ceil(PER_FAULT / 2);
    // A fault starts on a steady operator: every informer watching again, past the backoff
    // the previous fault left it in (scopes can settle while an informer of Secrets sleeps).
    await allWatching();
    const from = Date.now();
    begin();
    await applyScopes(fresh.slice(0, half));
    await deleteScopes(doomed.slice(0, half));
    await sleep(from + durationMs / 2 - Date.now());
    await applyScopes(fresh.slice(half));
    await deleteScopes(doomed.slice(half));
    await sleep(from + durationMs - Date.now());
    end();
    const to = Date.now();
    const recoveredMs = await settled(RECOVERY_MS);
    expectOperatorAlive();
    return { created: fresh.length, deleted: doomed.length, recoveredMs, from, to };
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'nrn-rel-watch-'));
    plane = await startControlPlaneProcess(dataDir);
    cluster = {
      kind: 'local',
      kubeconfigPath: plane.kubeconfigPath,
      settle: async () => {},
      close: async () => {},
    };
    kube = await connect({ kubeconfigPath: plane.kubeconfigPath, log });
    await applyCrds(kube);
    // A scope waits for its class: the defaults, as `nrn-operator local` installs them.
    await installDefaultScopeClasses(kube, { fieldManager: 'test' });
    const setup = await kubectl(cluster, ['apply', '-f', '-'], {
      input: `${namespaceYaml(NS)}---${applicationYaml(NS, 'shop', APP_ID)}`,
    });
    expect(setup.code, setup.stderr).toBe(0);
    // The operator as deployed (deploy/'s ServiceAccount and rights), through the proxy.
    const identity = await createOperatorIdentity(
      plane.kubeconfigPath,
      DEPLOY_NAMESPACE,
      join(dataDir, 'operator-kubeconfig'),
    );
    proxy = await FaultyProxy.start(plane.kubeconfigPath);
    const through = await proxy.kubeconfig(identity.kubeconfigPath, join(dataDir, 'through-proxy'));
    // Leader election on, as deployed: the stall below also stalls its Lease renewals.
    operator = startOperatorProcess(through);
    await operator.waitForLog((line) => line.msg === 'leadership acquired', 60_000);
    // Steady: the same watches open over two seconds.
    for (let previous = ''; ; await sleep(2_000)) {
      const open = JSON.stringify(proxy.openWatches().map(informerOf).sort());
      if (open === previous) break;
      previous = open;
    }
    watchers = perInformer(proxy.openWatches().map((path) => ({ path })));
    figures.informers = [...watchers.values()].reduce((a, b) => a + b, 0);
  });
  afterAll(async () => {
    const failures = operator?.logs.filter((l) => l.msg === 'informer failed; retrying').length;
    figures.informer_retries_logged = failures ?? 0;
    figures.duration_s = Math.round((Date.now() - startedAt) / 1000);
    await report({
      scenario: 'watch-faults',
      tried:
        `operator process behind a fault proxy; ${PER_FAULT} scopes created and ${PER_FAULT} ` +
        `deleted during each of: watches cut every ${DROP_EVERY_MS} ms for ${DROP_PHASE_MS} ms, ` +
        `every watch 500 for ${WINDOW_MS} ms, every watch 410 (HTTP and in-stream) for ` +
        `${WINDOW_MS} ms, the whole API stalled ${STALL_MS} ms`,
      found: found.length > 0 ? found.join('; ') : 'no phase completed',
      figures,
    });
    if (operator !== undefined) await crash(operator);
    // Whatever the operator did, deploy/rbac.yaml allowed (the proxy's faults are no 403).
    expect(refusalsIn(operator?.logs ?? [])).toEqual([]);
    await proxy?.close();
    kube?.close();
    if (plane !== undefined) {
      plane.child.kill('SIGKILL');
      await plane.exited;
    }
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('watch streams cut again and again: each resumes without a relist, no change is missed', async () => {
    let cuts = 0;
    let cutting = true;
    const outcome = await underFault(
      'drop',
      DROP_PHASE_MS,
      () => {
        void (async () => {
          while (cutting) {
            cuts += proxy.dropWatches();
            await sleep(DROP_EVERY_MS);
          }
        })();
      },
      () => {
        cutting = false;
      },
    );
    expect(cuts).toBeGreaterThan(0);
    // A cut watch resumes from the last resourceVersion it saw (still in the server's window),
    // as client-go's reflector does: listing everything again is for a 410 only.
    const relists = proxy.seen.filter(
      (r) => r.at >= outcome.from && r.at <= outcome.to && isList(r.path),
    ).length;
    expect(relists).toBe(0);
    figures.drop_cuts = cuts;
    figures.drop_recovered_ms = outcome.recoveredMs;
    found.push(
      `cut ${cuts} streams: ${outcome.created} created active, ${outcome.deleted} deleted gone, ` +
        `${outcome.recoveredMs} ms after, no relist`,
    );
  });

  it(`every watch answered 500 for ${WINDOW_MS} ms: at most the backoff's count of watches per informer, and no change missed`, async () => {
    const rule = {
      method: 'GET',
      path: /[?&]watch=true/,
      fault: { status: 500 as const },
      times: Number.POSITIVE_INFINITY,
    };
    const outcome = await underFault(
      'e500',
      WINDOW_MS,
      () => {
        proxy.rules.push(rule);
        // Open watches would carry on untouched: cut, each informer must watch again, into the fault.
        proxy.dropWatches();
      },
      () => {
        rule.times = 0;
      },
    );
    const watches = perInformer(
      proxy.seen.filter((r) => r.at >= outcome.from && r.at <= outcome.to && isWatch(r.path)),
    );
    // The fault lasted from `from` to `to` (a little over WINDOW_MS when kubectl was slow).
    const bound = mostAttempts(outcome.to - outcome.from, 0);
    const most = Math.max(...[...watches].map(([key, n]) => Math.ceil(n / watchersOf(key))));
    expect(watches.size).toBeGreaterThan(0);
    for (const [informer, count] of watches) {
      expect(count, informer).toBeLessThanOrEqual(bound * watchersOf(informer));
    }
    figures.e500_watches_max = most;
    figures.e500_bound = bound;
    figures.e500_recovered_ms = outcome.recoveredMs;
    found.push(
      `500 on every watch: ≤ ${most} watches per informer in ${WINDOW_MS} ms (bound ${bound}, ` +
        `${figures.informers} informers on ${watchers.size} collections); all ${outcome.created} created active and ${outcome.deleted} ` +
        `deleted gone ${outcome.recoveredMs} ms after`,
    );
  });

  it(`a 410 storm for ${WINDOW_MS} ms (every watch expired at once): lists and watches back off, no change missed`, async () => {
    // Our CRDs' watches get the in-stream ERROR event (kube-apiserver's way), the built-in
    // kinds' the HTTP 410: both kinds of answer at once.
    const rules = [
      {
        method: 'GET',
        path: /^\/apis\/platform\.nrn\.dev\/.*[?&]watch=true/,
        fault: 'expired-event' as const,
        times: Number.POSITIVE_INFINITY,
      },
      {
        method: 'GET',
        path: /[?&]watch=true/,
        fault: { status: 410 as const },
        times: Number.POSITIVE_INFINITY,
      },
    ];
    const outcome = await underFault(
      'e410',
      WINDOW_MS,
      () => {
        proxy.rules.push(...rules);
        proxy.dropWatches();
      },
      () => {
        for (const rule of rules) rule.times = 0;
      },
    );
    const during = proxy.seen.filter((r) => r.at >= outcome.from && r.at <= outcome.to);
    const watches = perInformer(during.filter((r) => isWatch(r.path)));
    const lists = perInformer(during.filter((r) => isList(r.path)));
    // One 410 after a watch that worked is history moving on: listed again at once, free.
    const bound = mostAttempts(outcome.to - outcome.from, 1);
    expect(watches.size).toBeGreaterThan(0);
    for (const [informer, count] of watches) {
      expect(count, informer).toBeLessThanOrEqual(bound * watchersOf(informer));
    }
    // Each 410 sends it back to a list: as many, at most, and some (the storm was met).
    expect(lists.size).toBeGreaterThan(0);
    for (const [informer, count] of lists) {
      expect(count, informer).toBeLessThanOrEqual(bound * watchersOf(informer));
    }
    const mostWatches = Math.max(...[...watches].map(([key, n]) => Math.ceil(n / watchersOf(key))));
    figures.e410_watches_max = mostWatches;
    figures.e410_lists_max = Math.max(0, ...[...lists.values()]);
    figures.e410_bound = bound;
    figures.e410_recovered_ms = outcome.recoveredMs;
    found.push(
      `410 storm: ≤ ${mostWatches} watches per informer in ${WINDOW_MS} ms (bound ${bound}); ` +
        `all ${outcome.created} created active and ${outcome.deleted} deleted gone ` +
        `${outcome.recoveredMs} ms after`,
    );
  });

  it(`the API server stalled ${STALL_MS} ms (requests held, streams silent): recovered alone, no change missed`, async () => {
    let stalled: Promise<void> = Promise.resolve();
    const before = proxy.seen.length;
    const outcome = await underFault(
      'stall',
      STALL_MS,
      () => {
        stalled = proxy.stall(STALL_MS);
      },
      () => {},
    );
    await stalled;
    const held = proxy.seen.slice(before).filter((r) => r.at >= outcome.from && r.at < outcome.to);
    expect(held.length).toBeGreaterThan(0);
    // Longer than the renew deadline, the stall costs the leader its Lease: it must win it back
    // by itself (ADR 0008), or nothing above would have been reconciled.
    const since = (msg: string) =>
      operator.logs.filter((l) => l.time >= outcome.from && l.msg.startsWith(msg)).length;
    const lost = since('leadership lost;');
    if (STALL_MS > DEFAULT_RENEW_DEADLINE_MS) expect(lost).toBeGreaterThan(0);
    if (lost > 0) {
      await operator.waitForLog(
        (l) => l.time >= outcome.from && l.msg.startsWith('leadership regained'),
        10_000,
      );
    }
    figures.stall_held_requests = held.length;
    figures.stall_recovered_ms = outcome.recoveredMs;
    found.push(
      `stalled ${STALL_MS} ms (${held.length} requests held, leadership lost and won back ` +
        `${lost} time(s)): all ${outcome.created} created active and ${outcome.deleted} deleted ` +
        `gone ${outcome.recoveredMs} ms after`,
    );
  });
});
