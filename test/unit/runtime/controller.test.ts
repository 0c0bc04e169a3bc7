// The controller loop without a cluster: keys enqueued by hand or by a stand-in informer;
// outcomes of reconcile (success, requeueAfter, retried error, Stalled, anything thrown),
// the metrics hooks, owner mapping, halt()/stop() with work in flight, and start() after halt().
import { describe, expect, it } from 'vitest';
import type { Informer, KubeObject } from '../../../src/kube/index.js';
import { silentLogger } from '../../../src/log.js';
import { FakeClock } from '../../../src/runtime/clock.js';
import {
  Controller,
  type ControllerOptions,
  ownerKeys,
  type Reconcile,
  type ReconcileOutcome,
} from '../../../src/runtime/controller.js';
import { generationChanged, Stalled } from '../../../src/runtime/reconciler.js';

const log = silentLogger();

function deferred() {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

function controller(reconcile: Reconcile, options: Partial<ControllerOptions> = {}) {
  return new Controller({ name: 'test', log, reconciler: reconcile, ...options });
}

/**
 * A stand-in for src/kube's Informer: listeners, a start() that is already synced, and what
 * its cache holds (and which keys it refused), as a restarted controller reads them.
 */
function fakeInformer(held: KubeObject[] = [], refused: string[] = []) {
  const listeners = new Map<string, Set<(...args: unknown[]) => void>>();
  const informer = {
    cache: { list: () => held },
    refused: () => refused,
    on(event: string, listener: (...args: unknown[]) => void) {
      const set = listeners.get(event) ?? new Set();
      set.add(listener);
      listeners.set(event, set);
      return () => set.delete(listener);
    },
    start: async () => {},
    emit(event: string, ...args: unknown[]) {
      for (const listener of listeners.get(event) ?? []) listener(...args);
    },
    listeners: () => [...listeners.values()].reduce((n, s) => n + s.size, 0),
  };
  return { informer, asInformer: informer as unknown as Informer };
}

const object = (name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', ...extra },
});

describe('Controller', () => {
  it('retries a failing key with growing backoff, and starts over after a success', async () => {
    const clock = new FakeClock();
    const calls: number[] = [];
    let failuresLeft = 3;
    const c = controller(
      async () => {
        calls.push(clock.now());
        if (failuresLeft-- > 0) throw new Error('transient');
      },
      { clock, random: () => 0, backoff: { initialMs: 100, maxMs: 10_000, jitter: 0.5 } },
    );
    await c.start();
    c.enqueue('ns/a');
    for (let i = 0; i < 8; i++) {
      await flush();
      clock.advance(100);
    }
    expect(calls).toEqual([0, 100, 300, 700]); // delays 100, 200, 400
    expect(c.queue.retries('ns/a')).toBe(0);

    failuresLeft = 1;
    const before = calls.length;
    c.enqueue('ns/a');
    await flush();
    clock.advance(100);
    await flush();
    expect(calls.length).toBe(before + 2);
    expect((calls.at(-1) ?? 0) - (calls.at(-2) ?? 0)).toBe(100); // back to the first delay
    await c.stop(1_000);
  });

  it('does not retry a Stalled reconcile, and forgets the key', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const outcomes: ReconcileOutcome[] = [];
    const c = controller(
      async () => {
        calls++;
        throw new Stalled('InvalidSpec', 'the spec can never work');
      },
      { clock, metrics: { reconciled: (s) => outcomes.push(s.outcome) } },
    );
    await c.start();
    c.enqueue('ns/a');
    await flush();
    clock.advance(60 * 60_000);
    await flush();
    expect(calls).toBe(1);
    expect(outcomes).toEqual(['stalled']);
    expect(c.queue.retries('ns/a')).toBe(0);
    expect(c.queue.delayed).toBe(0);
    await c.stop(1_000);
  });

  it('with a predicate, enqueues an update only when it holds, and every resync', async () => {
    const seen: string[] = [];
    const c = controller(async (key) => {
      seen.push(key);
    });
    const { informer, asInformer } = fakeInformer();
    c.watch(asInformer, undefined, generationChanged);
    await c.start();
    const v1 = object('a', { generation: 1, resourceVersion: '1' });
    // A status write: same generation. Dropped.
    informer.emit('update', object('a', { generation: 1, resourceVersion: '2' }), v1);
    await flush();
    expect(seen).toEqual([]);
    // A spec change, then a resync (the cached object as both new and old): both enqueued.
    const v3 = object('a', { generation: 2, resourceVersion: '3' });
    informer.emit('update', v3, v1);
    await flush();
    informer.emit('update', v3, v3);
    await flush();
    // Deletion begins: enqueued though the generation did not move.
    informer.emit('update', object('a', { generation: 2, deletionTimestamp: 'now' }), v3);
    await flush();
    expect(seen).toEqual(['ns/a', 'ns/a', 'ns/a']);
    await c.stop(1_000);
  });

  it('survives anything thrown: non-Errors, undefined, synchronous throws', async () => {
    const clock = new FakeClock();
    const seen: string[] = [];
    const c = controller(
      ((key: string) => {
        seen.push(key);
        if (key === 'string') throw 'boom';
        if (key === 'undefined') return Promise.reject(undefined);
        if (key === 'sync') throw new Error('before any promise');
        return Promise.resolve(undefined);
      }) as Reconcile,
      { clock, workers: 1 },
    );
    await c.start();
    for (const key of ['string', 'undefined', 'sync', 'fine']) c.enqueue(key);
    await flush();
    expect(seen).toEqual(['string', 'undefined', 'sync', 'fine']);
    expect(['string', 'undefined', 'sync'].map((k) => c.queue.retries(k))).toEqual([1, 1, 1]);
    expect(c.running).toBe(true);
    // And the loop still serves new keys.
    c.enqueue('after');
    await flush();
    expect(seen.at(-1)).toBe('after');
    await c.stop(1_000);
  });

  it('requeueAfter reconciles the key again after the delay, and counts as a success', async () => {
    const clock = new FakeClock();
    const calls: number[] = [];
    const outcomes: ReconcileOutcome[] = [];
    const c = controller(
      async () => {
        calls.push(clock.now());
        return calls.length < 3 ? { requeueAfter: 5_000 } : undefined;
      },
      { clock, metrics: { reconciled: (s) => outcomes.push(s.outcome) } },
    );
    await c.start();
    c.enqueue('ns/a');
    for (let i = 0; i < 6; i++) {
      await flush();
      clock.advance(2_500);
    }
    expect(calls).toEqual([0, 5_000, 10_000]);
    expect(outcomes).toEqual(['requeue', 'requeue', 'success']);
    await c.stop(1_000);
  });

  it('reports reconciles, durations and queue depth through the metrics hooks', async () => {
    const clock = new FakeClock();
    const samples: { key: string; outcome: string; durationMs: number }[] = [];
    const depths: number[] = [];
    const gate = deferred();
    const c = controller(
      async (key) => {
        if (key === 'slow') {
          await gate.promise;
          clock.advance(250);
        }
        if (key === 'bad') throw new Error('no');
      },
      {
        clock,
        workers: 1,
        metrics: {
          reconciled: ({ key, outcome, durationMs }) => samples.push({ key, outcome, durationMs }),
          queueDepth: (_name, depth) => depths.push(depth),
        },
      },
    );
    c.enqueue('slow');
    c.enqueue('bad');
    await c.start();
    await flush();
    gate.resolve();
    await flush();
    expect(samples).toEqual([
      { key: 'slow', outcome: 'success', durationMs: 250 },
      { key: 'bad', outcome: 'error', durationMs: 0 },
    ]);
    expect(depths).toEqual([1, 2, 1, 0]);
    await c.stop(1_000);
  });

  it('a throwing metrics hook does not stop the loop', async () => {
    const seen: string[] = [];
    const c = controller(
      async (key) => {
        seen.push(key);
      },
      {
        metrics: {
          reconciled: () => {
            throw new Error('broken hook');
          },
        },
      },
    );
    await c.start();
    c.enqueue('a');
    c.enqueue('b');
    await flush();
    expect(seen).toEqual(['a', 'b']);
    await c.stop(1_000);
  });

  it('enqueues keys from informer events, mapped keys for mapped watches', async () => {
    const seen: string[] = [];
    const c = controller(async (key) => {
      seen.push(key);
    });
    const primary = fakeInformer();
    const children = fakeInformer();
    c.watch(primary.asInformer);
    c.watch(children.asInformer, ownerKeys('ConfigMap'));
    await c.start();
    primary.informer.emit('add', object('p1'));
    primary.informer.emit('invalid', new Error('bad'), 'ns/p2');
    const owner = { apiVersion: 'v1', kind: 'ConfigMap', uid: 'u', controller: true };
    children.informer.emit(
      'update',
      object('child', {
        ownerReferences: [
          { ...owner, name: 'p3' },
          { ...owner, name: 'not-controller', controller: false },
          { ...owner, kind: 'Secret', name: 'other-kind' },
        ],
      }),
      object('child'),
    );
    children.informer.emit('delete', object('orphan'));
    children.informer.emit('invalid', new Error('bad'), 'ns/unknown-owner');
    await flush();
    expect(seen.sort()).toEqual(['ns/p1', 'ns/p2', 'ns/p3']);
    await c.stop(1_000);
    expect(primary.informer.listeners()).toBe(0); // unsubscribed on stop
  });

  it('stop() waits for reconciles in flight within its bound and hands out no new work', async () => {
    const gate = deferred();
    const seen: string[] = [];
    let signal: AbortSignal | undefined;
    const c = controller(
      async (key, context) => {
        seen.push(key);
        signal = context.signal;
        if (key === 'slow') await gate.promise;
      },
      { workers: 1 },
    );
    await c.start();
    c.enqueue('slow');
    c.enqueue('queued');
    await flush();
    let stopped: boolean | undefined;
    void c.stop(5_000).then((drained) => {
      stopped = drained;
    });
    await flush();
    expect(stopped).toBeUndefined();
    expect(signal?.aborted).toBe(false);
    gate.resolve();
    await flush();
    expect(stopped).toBe(true);
    expect(seen).toEqual(['slow']); // 'queued' was never handed out
    expect(c.running).toBe(false);
  });

  it('stop() gives up at its bound and aborts the reconciles still running', async () => {
    let signal: AbortSignal | undefined;
    const c = controller(async (_key, context) => {
      signal = context.signal;
      await new Promise(() => {}); // never ends
    });
    await c.start();
    c.enqueue('stuck');
    await flush();
    const started = Date.now();
    expect(await c.stop(100)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(signal?.aborted).toBe(true);
  });

  it('halt() aborts reconciles in flight at once and stops all work', async () => {
    const seen: string[] = [];
    let signal: AbortSignal | undefined;
    const c = controller(
      async (key, context) => {
        seen.push(key);
        signal = context.signal;
        await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
      },
      { workers: 1 },
    );
    await c.start();
    c.enqueue('a');
    c.enqueue('b');
    await flush();
    c.halt();
    expect(signal?.aborted).toBe(true);
    await flush();
    c.enqueue('c');
    await flush();
    expect(seen).toEqual(['a']);
    expect(c.running).toBe(false);
    expect(await c.stop(100)).toBe(true);
  });

  it('start() after halt() runs afresh: after the halted reconciles end, from what the informers hold', async () => {
    const clock = new FakeClock();
    const seen: string[] = [];
    const signals: AbortSignal[] = [];
    const release = deferred();
    const c = controller(
      async (key, context) => {
        seen.push(key);
        signals.push(context.signal);
        if (key === 'ns/slow') await release.promise;
        if (key === 'ns/failing') throw new Error('not yet');
      },
      { workers: 2, clock, random: () => 0 },
    );
    const primary = fakeInformer([object('slow'), object('kept')], ['ns/refused']);
    const children = fakeInformer([
      object('child', {
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u', controller: true },
        ],
      }),
    ]);
    c.watch(primary.asInformer).watch(children.asInformer, ownerKeys('ConfigMap'));
    await c.start();
    c.enqueue('ns/slow');
    c.enqueue('ns/failing');
    await flush();
    c.enqueue('ns/queued');
    await flush();
    expect(c.queue.delayed).toBe(1); // ns/failing waits for its backoff
    const oldQueue = c.queue;

    c.halt();
    expect(primary.informer.listeners()).toBe(0);
    const restarted = c.start();
    await flush();
    // ns/slow's reconcile (aborted, not yet returned) still runs: nothing starts beside it.
    expect(c.running).toBe(false);
    expect(primary.informer.listeners()).toBe(0);
    seen.length = 0;
    release.resolve();
    await restarted;
    await flush();

    expect(c.running).toBe(true);
    expect(c.queue).not.toBe(oldQueue);
    expect(signals.at(-1)?.aborted).toBe(false);
    // The caches as a first list gives them, the refused key, and the mapped owner; nothing
    // of the halted run's queue (ns/queued) nor its backoff (ns/failing).
    expect(seen.sort()).toEqual(['ns/kept', 'ns/owner', 'ns/refused', 'ns/slow']);
    expect(c.queue.delayed).toBe(0);
    // Listening again, once per watch.
    expect(primary.informer.listeners()).toBe(4);
    primary.informer.emit('add', object('new'));
    await flush();
    expect(seen.filter((k) => k === 'ns/new')).toEqual(['ns/new']);
    expect(await c.stop(100)).toBe(true);
  });

  it('a start() overtaken by another halt() gives way to the next start()', async () => {
    const seen: string[] = [];
    const release = deferred();
    const c = controller(async (key) => {
      seen.push(key);
      if (key === 'ns/slow') await release.promise;
    });
    const informer = fakeInformer([object('kept')]);
    c.watch(informer.asInformer);
    await c.start();
    c.enqueue('ns/slow');
    await flush();
    c.halt();
    const first = c.start();
    c.halt();
    const second = c.start();
    release.resolve();
    await Promise.all([first, second]);
    await flush();
    expect(c.running).toBe(true);
    expect(informer.informer.listeners()).toBe(4);
    expect(seen).toEqual(['ns/slow', 'ns/kept']);
    expect(await c.stop(100)).toBe(true);
  });
});
