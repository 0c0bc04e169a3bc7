// The work queue (client-go workqueue): keys deduplicated, one in flight per key, delayed adds,
// per-key exponential backoff with jitter, N workers, and a shutdown that can wait for them.
import { type BackoffOptions, backoffDelay } from '../kube/index.js';
import { type Clock, systemClock } from './clock.js';

export interface WorkQueueOptions {
  readonly clock?: Clock;
  /** Delays of addRateLimited(); the attempt count is per key and reset by forget(). */
  readonly backoff?: BackoffOptions;
  /** For tests: the source of jitter. */
  readonly random?: () => number;
  /** Told the number of ready keys whenever it changes (a gauge for metrics). */
  readonly onDepth?: (depth: number) => void;
}

/** Controller-runtime starts at 5 ms; a little more spares the API server a hot loop. */
export const DEFAULT_QUEUE_BACKOFF: BackoffOptions = {
  initialMs: 100,
  maxMs: 5 * 60_000,
  jitter: 0.5,
};

export type WorkHandler = (key: string) => Promise<void>;

export class WorkQueue {
  /** FIFO of ready keys; `head` avoids Array#shift's O(n) on long queues. */
  private ready: string[] = [];
  private head = 0;
  /** Keys that need processing: queued, or re-added while in flight. */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly waiting = new Map<
    string,
    { readonly at: number; readonly cancel: () => void }
  >();
  private readonly failures = new Map<string, number>();
  private readonly getters: ((key: string | undefined) => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private shuttingDown = false;
  private readonly clock: Clock;
  private readonly backoff: BackoffOptions;

  constructor(private readonly options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.backoff = options.backoff ?? DEFAULT_QUEUE_BACKOFF;
  }

  /** Keys ready to be handed out (the depth metric). */
  get length(): number {
    return this.ready.length - this.head;
  }

  /** Keys being processed now. */
  get inFlight(): number {
    return this.processing.size;
  }

  /** Keys waiting for a delayed add. */
  get delayed(): number {
    return this.waiting.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Failures recorded for `key` since the last forget(). */
  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    // done() puts it back once the reconcile in flight ends: never two at once for one key.
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  /** Adds `key` after `ms`; of several pending delayed adds of one key the earliest wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.clock.now() + ms;
    const existing = this.waiting.get(key);
    if (existing !== undefined) {
      if (existing.at <= at) return;
      existing.cancel();
    }
    const cancel = this.clock.setTimer(() => {
      this.waiting.delete(key);
      this.add(key);
    }, ms);
    this.waiting.set(key, { at, cancel });
  }

  /** Adds `key` after its next backoff delay, and returns that delay. */
  addRateLimited(key: string): number {
    const attempt = this.failures.get(key) ?? 0;
    this.failures.set(key, attempt + 1);
    const delay = backoffDelay(attempt, this.backoff, this.options.random);
    this.addAfter(key, delay);
    return delay;
  }

  /** Clears `key`'s failures, so its next backoff starts from the beginning. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** The next key, marked in flight; undefined once the queue shuts down. Pair with done(). */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    if (this.length > 0) return Promise.resolve(this.take());
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Ends processing of `key`; a key added meanwhile is queued again now. */
  done(key: string): void {
    this.processing.delete(key);
    if (!this.shuttingDown && this.dirty.has(key)) this.enqueue(key);
    if (this.processing.size === 0) {
      for (const resolve of this.drainWaiters.splice(0)) resolve();
    }
  }

  /**
   * Stops handing out work at once: queued and delayed keys are dropped (an informer's relist
   * brings them back to the next process), waiting get() calls get undefined, adds are ignored.
   * Keys in flight stay in flight; drain() waits for them.
   */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const { cancel } of this.waiting.values()) cancel();
    this.waiting.clear();
    this.ready = [];
    this.head = 0;
    this.dirty.clear();
    this.options.onDepth?.(0);
    for (const resolve of this.getters.splice(0)) resolve(undefined);
    if (this.processing.size === 0) {
      for (const resolve of this.drainWaiters.splice(0)) resolve();
    }
  }

  /** After shutDown(): true once nothing is in flight, false if `timeoutMs` passes first. */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.processing.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = () => {
        cancel();
        resolve(true);
      };
      const cancel = this.clock.setTimer(() => {
        this.drainWaiters = this.drainWaiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.drainWaiters.push(waiter);
    });
  }

  /**
   * Runs `workers` loops that take keys and call `handler`, until shutdown. A handler that
   * throws is reported to `onError` and its loop goes on. Resolves when every loop has ended.
   */
  async work(
    workers: number,
    handler: WorkHandler,
    onError: (key: string, error: unknown) => void = () => {},
  ): Promise<void> {
    const loop = async () => {
      for (;;) {
        const key = await this.get();
        if (key === undefined) return;
        try {
          await handler(key);
        } catch (error) {
          try {
            onError(key, error);
          } catch {
            // The error reporter's own failure must not end the loop either.
          }
        } finally {
          this.done(key);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, workers) }, loop));
  }

  private enqueue(key: string): void {
    const getter = this.getters.shift();
    if (getter !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      getter(key);
      return;
    }
    this.ready.push(key);
    this.options.onDepth?.(this.length);
  }

  private take(): string | undefined {
    const key = this.ready[this.head];
    if (key === undefined) return undefined;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.ready.length) {
      this.ready = this.ready.slice(this.head);
      this.head = 0;
    }
    this.dirty.delete(key);
    this.processing.add(key);
    this.options.onDepth?.(this.length);
    return key;
  }
}
