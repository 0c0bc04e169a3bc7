// The work queue: deduplication, one key in flight at a time, workers in parallel, per-key
// backoff with jitter, delayed adds, and a shutdown that waits for work in flight.
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/runtime/clock.js';
import { WorkQueue } from '../../../src/runtime/queue.js';

function deferred() {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Lets promise callbacks and I/O-free continuations run. */
const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

const backoff = { initialMs: 100, maxMs: 10_000, jitter: 0.5 };

describe('WorkQueue', () => {
  it('queues a key added while queued once, in FIFO order', async () => {
    const queue = new WorkQueue();
    for (const key of ['a', 'b', 'a', 'c', 'b']) queue.add(key);
    expect(queue.length).toBe(3);
    expect([await queue.get(), await queue.get(), await queue.get()]).toEqual(['a', 'b', 'c']);
    expect(queue.length).toBe(0);
  });

  it('never hands out a key in flight; one added meanwhile comes back after done()', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    expect(await queue.get()).toBe('a');
    queue.add('a');
    queue.add('a');
    expect(queue.length).toBe(0); // held back while 'a' is in flight
    let second: string | undefined;
    void queue.get().then((key) => {
      second = key;
    });
    await flush();
    expect(second).toBeUndefined();
    queue.done('a');
    await flush();
    expect(second).toBe('a');
    expect(queue.length).toBe(0); // once, though added twice
  });

  it('re-runs a key added during its own processing exactly once, after it ends', async () => {
    const queue = new WorkQueue();
    const gate = deferred();
    let running = 0;
    let maxRunning = 0;
    let calls = 0;
    const work = queue.work(4, async () => {
      calls++;
      running++;
      maxRunning = Math.max(maxRunning, running);
      if (calls === 1) {
        queue.add('a');
        queue.add('a');
        await gate.promise;
      }
      running--;
    });
    queue.add('a');
    await flush();
    expect(calls).toBe(1);
    gate.resolve();
    await flush();
    expect(calls).toBe(2);
    expect(maxRunning).toBe(1);
    queue.shutDown();
    await work;
  });

  it('runs N workers in parallel across keys', async () => {
    const queue = new WorkQueue();
    const gates = new Map<string, ReturnType<typeof deferred>>();
    const started: string[] = [];
    const work = queue.work(3, async (key) => {
      started.push(key);
      const gate = deferred();
      gates.set(key, gate);
      await gate.promise;
    });
    for (const key of ['a', 'b', 'c', 'd', 'e']) queue.add(key);
    await flush();
    expect(started).toEqual(['a', 'b', 'c']);
    expect(queue.inFlight).toBe(3);
    expect(queue.length).toBe(2);
    gates.get('b')?.resolve();
    await flush();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    for (const gate of gates.values()) gate.resolve();
    await flush();
    for (const gate of gates.values()) gate.resolve();
    await flush();
    expect(started).toEqual(['a', 'b', 'c', 'd', 'e']);
    queue.shutDown();
    await work;
  });

  it('keeps a worker going when its handler throws', async () => {
    const queue = new WorkQueue();
    const seen: string[] = [];
    const errors: unknown[] = [];
    const work = queue.work(
      1,
      async (key) => {
        seen.push(key);
        if (key === 'bad') throw 'not an Error';
      },
      (_key, error) => errors.push(error),
    );
    queue.add('bad');
    queue.add('good');
    await flush();
    expect(seen).toEqual(['bad', 'good']);
    expect(errors).toEqual(['not an Error']);
    queue.shutDown();
    await work;
  });

  it('backs off per key, exponentially, with jitter in bounds, and resets on forget()', () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, backoff });
    for (let attempt = 0; attempt < 8; attempt++) {
      const ceiling = Math.min(10_000, 100 * 2 ** attempt);
      const delay = queue.addRateLimited('a');
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
    expect(queue.retries('a')).toBe(8);
    // Another key starts from the beginning.
    expect(queue.addRateLimited('b')).toBeLessThanOrEqual(100);
    queue.forget('a');
    expect(queue.retries('a')).toBe(0);
    expect(queue.addRateLimited('a')).toBeLessThanOrEqual(100);
  });

  it('draws jitter from the given source: [d/2, d] for jitter 0.5', () => {
    const low = new WorkQueue({ clock: new FakeClock(), backoff, random: () => 1 });
    const high = new WorkQueue({ clock: new FakeClock(), backoff, random: () => 0 });
    expect([1, 2, 3].map(() => low.addRateLimited('k'))).toEqual([50, 100, 200]);
    expect([1, 2, 3].map(() => high.addRateLimited('k'))).toEqual([100, 200, 400]);
  });

  it('addRateLimited() makes the key ready after its delay', () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, backoff, random: () => 0 });
    queue.addRateLimited('a');
    clock.advance(99);
    expect(queue.length).toBe(0);
    clock.advance(1);
    expect(queue.length).toBe(1);
  });

  it('addAfter() adds once the delay passes; the earliest of several delays wins', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    queue.addAfter('a', 1_000);
    queue.addAfter('a', 300);
    queue.addAfter('a', 5_000);
    queue.addAfter('now', 0);
    expect(queue.length).toBe(1);
    expect(queue.delayed).toBe(1);
    clock.advance(299);
    expect(queue.length).toBe(1);
    clock.advance(1);
    expect(queue.length).toBe(2);
    expect(queue.delayed).toBe(0);
    clock.advance(10_000);
    expect(queue.length).toBe(2); // the later delays were dropped, not fired too
    expect([await queue.get(), await queue.get()]).toEqual(['now', 'a']);
  });

  it('reports its depth as it changes', async () => {
    const depths: number[] = [];
    const queue = new WorkQueue({ onDepth: (d) => depths.push(d) });
    queue.add('a');
    queue.add('b');
    queue.add('a');
    await queue.get();
    expect(depths).toEqual([1, 2, 1]);
  });

  it('shutDown() stops handing out work at once and ignores later adds', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    queue.add('queued');
    queue.addAfter('later', 100);
    const waiting = new WorkQueue({ clock });
    const pending = waiting.get();
    queue.shutDown();
    waiting.shutDown();
    expect(await pending).toBeUndefined();
    expect(await queue.get()).toBeUndefined();
    queue.add('new');
    clock.advance(1_000);
    expect(queue.length).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('drain() waits for work in flight, within its bound', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    queue.add('a');
    queue.add('b');
    await queue.get();
    await queue.get();
    queue.shutDown();
    let drained: boolean | undefined;
    void queue.drain(5_000).then((d) => {
      drained = d;
    });
    queue.done('a');
    await flush();
    expect(drained).toBeUndefined(); // 'b' is still in flight
    queue.done('b');
    await flush();
    expect(drained).toBe(true);

    // Work that never ends: drain gives up at its bound.
    const stuck = new WorkQueue({ clock });
    stuck.add('x');
    await stuck.get();
    stuck.shutDown();
    const bounded = stuck.drain(2_000);
    clock.advance(2_000);
    expect(await bounded).toBe(false);
    expect(await new WorkQueue().drain(1)).toBe(true);
  });

  it('a worker pool ends when the queue shuts down, after its handlers finish', async () => {
    const queue = new WorkQueue();
    const gate = deferred();
    let finished = false;
    const work = queue.work(2, async () => {
      await gate.promise;
      finished = true;
    });
    queue.add('a');
    await flush();
    queue.shutDown();
    let ended = false;
    void work.then(() => {
      ended = true;
    });
    await flush();
    expect(ended).toBe(false);
    gate.resolve();
    await work;
    expect(finished).toBe(true);
  });
});
