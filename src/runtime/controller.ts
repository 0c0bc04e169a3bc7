// The controller loop (controller-runtime): informer events only enqueue keys, workers call
// reconcile(key), and the outcome decides forget, requeue after a delay, or retry with backoff.
import type { Logger } from 'pino';
import { type BackoffOptions, type Informer, type KubeObject, keyOf } from '../kube/index.js';
import { type Clock, systemClock } from './clock.js';
import { WorkQueue } from './queue.js';

/** What a reconcile asks for: nothing (done until the next change), or another look later. */
export interface Result {
  readonly requeueAfter?: number;
}

export interface ReconcileContext {
  /** Aborted when the controller halts (leadership lost) or its shutdown bound passes. */
  readonly signal: AbortSignal;
  /** Carries the key. */
  readonly log: Logger;
  /** Failures of this key since its last success. */
  readonly retries: number;
}

// biome-ignore lint/suspicious/noConfusingVoidType: a reconcile that asks for nothing just returns
type Outcome = Result | undefined | void;

/** Re-reads state by key (the event that queued it is gone); resolves undefined when done. */
export type Reconcile = (key: string, context: ReconcileContext) => Promise<Outcome>;

/** A failure retrying cannot fix (kopf's PermanentError): logged, not retried. */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

export type ReconcileOutcome = 'success' | 'requeue' | 'error' | 'terminal';

/** Hooks for metrics; the caller implements the ones it wants (prom-client counters, gauges). */
export interface ControllerMetrics {
  reconciled?(sample: {
    readonly controller: string;
    readonly key: string;
    readonly outcome: ReconcileOutcome;
    readonly durationMs: number;
  }): void;
  queueDepth?(controller: string, depth: number): void;
}

/** From an event's object to the keys to reconcile: itself, its owner, nothing ... */
export type KeyMapper<O> = (object: O) => Iterable<string> | string | undefined;

export interface ControllerOptions {
  /** Names the controller in logs and metrics. */
  readonly name: string;
  readonly log: Logger;
  readonly reconcile: Reconcile;
  /** Reconciles in parallel (each on a different key). */
  readonly workers?: number;
  readonly backoff?: BackoffOptions;
  readonly clock?: Clock;
  readonly random?: () => number;
  readonly metrics?: ControllerMetrics;
}

/** Keys of the objects that own `object` through a controller reference of `kind`. */
export function ownerKeys(kind: string): KeyMapper<KubeObject> {
  return (object) => {
    const owners = object.metadata.ownerReferences ?? [];
    return owners
      .filter((owner) => owner.kind === kind && owner.controller === true)
      .map((owner) => keyOf({ name: owner.name, namespace: object.metadata.namespace }));
  };
}

interface Watched {
  readonly informer: { start(): Promise<void> };
  readonly unsubscribe: () => void;
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly watched: Watched[] = [];
  private readonly abort = new AbortController();
  private hooks: ControllerMetrics | undefined;
  private workers: Promise<void> | undefined;
  private stopping: Promise<boolean> | undefined;

  constructor(private readonly options: ControllerOptions) {
    this.name = options.name;
    this.log = options.log.child({ controller: options.name });
    this.clock = options.clock ?? systemClock;
    this.hooks = options.metrics;
    this.queue = new WorkQueue({
      clock: this.clock,
      ...(options.backoff !== undefined ? { backoff: options.backoff } : {}),
      ...(options.random !== undefined ? { random: options.random } : {}),
      onDepth: (depth) => this.metric(() => this.hooks?.queueDepth?.(this.name, depth)),
    });
  }

  /**
   * Enqueues keys on every add, update (resyncs included: level-triggered) and delete of the
   * informer's objects: the object's own key, or those `map` gives. Call before start().
   */
  watch<Spec, Status>(
    informer: Informer<Spec, Status>,
    map?: KeyMapper<KubeObject<Spec, Status>>,
  ): this {
    const enqueue = (object: KubeObject<Spec, Status>) => {
      if (map === undefined) return this.enqueue(keyOf(object.metadata));
      const keys = map(object);
      if (keys === undefined) return;
      if (typeof keys === 'string') return this.enqueue(keys);
      for (const key of keys) this.enqueue(key);
    };
    const offs = [
      informer.on('add', enqueue),
      informer.on('update', (object) => enqueue(object)),
      informer.on('delete', enqueue),
      // The reconciler of a refused object can report the problem on it; a mapped watch cannot
      // tell whose it is without the object.
      informer.on('invalid', (_error, key) => {
        if (map === undefined) this.enqueue(key);
      }),
    ];
    this.watched.push({
      informer,
      unsubscribe: () => {
        for (const off of offs) off();
      },
    });
    return this;
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  get running(): boolean {
    return this.workers !== undefined && !this.queue.isShuttingDown;
  }

  /** Waits for the watched informers' first list, then starts the workers. */
  async start(): Promise<void> {
    if (this.workers !== undefined || this.queue.isShuttingDown) return;
    await Promise.all(this.watched.map((w) => w.informer.start()));
    if (this.queue.isShuttingDown) return;
    const workers = this.options.workers ?? 1;
    this.log.info({ workers }, 'controller started');
    this.workers = this.queue.work(
      workers,
      (key) => this.process(key),
      (key, error) => this.log.error({ key, err: toError(error) }, 'worker failed'),
    );
  }

  /** Stops reconciling at once (leadership lost): no new work, in-flight reconciles aborted. */
  halt(): void {
    this.queue.shutDown();
    this.unsubscribe();
    this.abort.abort(new Error('controller halted'));
  }

  /**
   * Graceful stop: no new work, then waits up to `timeoutMs` for reconciles in flight, and
   * aborts the signal of any still running. Resolves true when all ended in time.
   */
  stop(timeoutMs: number): Promise<boolean> {
    this.stopping ??= (async () => {
      this.queue.shutDown();
      this.unsubscribe();
      const drained = await this.queue.drain(timeoutMs);
      if (!drained) {
        this.log.warn({ inFlight: this.queue.inFlight, timeoutMs }, 'reconciles still running');
      }
      this.abort.abort(new Error('controller stopped'));
      this.log.info({ drained }, 'controller stopped');
      return drained;
    })();
    return this.stopping;
  }

  private unsubscribe(): void {
    for (const w of this.watched.splice(0)) w.unsubscribe();
  }

  private async process(key: string): Promise<void> {
    const log = this.log.child({ key });
    const retries = this.queue.retries(key);
    const started = this.clock.now();
    let outcome: ReconcileOutcome;
    try {
      // A reconcile that throws before returning a promise is caught the same way.
      const result = await Promise.resolve().then(() =>
        this.options.reconcile(key, { signal: this.abort.signal, log, retries }),
      );
      this.queue.forget(key);
      const after = result?.requeueAfter;
      if (after !== undefined && after > 0) {
        this.queue.addAfter(key, after);
        outcome = 'requeue';
      } else {
        outcome = 'success';
      }
    } catch (error) {
      const err = toError(error);
      if (err instanceof TerminalError) {
        this.queue.forget(key);
        log.error({ err }, 'reconcile failed; not retrying');
        outcome = 'terminal';
      } else {
        const retryInMs = this.queue.addRateLimited(key);
        log.warn({ err, retries: retries + 1, retryInMs }, 'reconcile failed; retrying');
        outcome = 'error';
      }
    }
    const durationMs = this.clock.now() - started;
    this.metric(() =>
      this.hooks?.reconciled?.({ controller: this.name, key, outcome, durationMs }),
    );
  }

  /** Attaches metrics hooks to a controller built elsewhere (the operator wires every one). */
  setMetrics(metrics: ControllerMetrics): void {
    this.hooks = metrics;
  }

  private metric(record: () => void): void {
    try {
      record();
    } catch (error) {
      this.log.error({ err: toError(error) }, 'metrics hook failed');
    }
  }
}

/** Anything thrown, as an Error: reconcilers may throw strings or undefined. */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  return new Error(`non-Error thrown: ${safeString(thrown)}`, { cause: thrown });
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
}
