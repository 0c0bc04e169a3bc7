// The controller loop (controller-runtime): informer events only enqueue keys, workers call
// reconcile(key), and the outcome decides forget, requeue after a delay, or retry with backoff;
// halted when leadership goes, and started again afresh (a new queue, refilled from the
// informers' caches) when it comes back.
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { type BackoffOptions, type Informer, type KubeObject, keyOf } from '../kube/index.js';
import { type Clock, systemClock } from './clock.js';
import { WorkQueue } from './queue.js';
import {
  type Predicate,
  type ReconcileContext,
  type Reconciler,
  type Result,
  Stalled,
} from './reconciler.js';
import type { Runnable } from './runnable.js';

// biome-ignore lint/suspicious/noConfusingVoidType: a reconcile that asks for nothing just returns
type Outcome = Result | undefined | void;

/** Re-reads state by key (the event that queued it is gone); resolves undefined when done. */
export type Reconcile = (key: string, context: ReconcileContext) => Promise<Outcome>;

/** How a reconcile ended: done, asked for a later look, failed (retried), or Stalled (not). */
export type ReconcileOutcome = 'success' | 'requeue' | 'error' | 'stalled';

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
  /** The reconciler, or (for tests and small controllers) its reconcile function alone. */
  readonly reconciler: Reconciler | Reconcile;
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
  /** Adds the listeners; returns what removes them. */
  readonly subscribe: () => () => void;
  /** Enqueues what the informer holds now, as its events would have. */
  readonly replay: () => void;
}

/** While a halted run's reconciles are still going, how often start() says it is waiting. */
const HALTED_WAIT_WARN_MS = 10_000;

export class Controller implements Runnable {
  readonly leaderOnly = true;
  readonly name: string;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly watched: Watched[] = [];
  private unsubscribes: (() => void)[] = [];
  /** One run: from start() to halt() or stop(). A halted controller starts a new one. */
  private current: WorkQueue;
  private abort = runController();
  private workers: Promise<void> | undefined;
  /** Bumped by halt(): a start() that waited across one gives up, the newer start() goes on. */
  private generation = 0;
  private hooks: ControllerMetrics | undefined;
  private stopping: Promise<boolean> | undefined;

  constructor(private readonly options: ControllerOptions) {
    this.name = options.name;
    this.log = options.log.child({ controller: options.name });
    this.clock = options.clock ?? systemClock;
    this.hooks = options.metrics;
    this.current = this.newQueue();
  }

  /** The current run's queue (a halt ends it; the next start() makes a new one). */
  get queue(): WorkQueue {
    return this.current;
  }

  /**
   * Enqueues keys on every add, update (resyncs included: level-triggered) and delete of the
   * informer's objects: the object's own key, or those `map` gives. With `predicate`, an
   * update (not a resync) enqueues only when it holds. Call before start().
   */
  watch<Spec, Status>(
    informer: Informer<Spec, Status>,
    map?: KeyMapper<KubeObject<Spec, Status>>,
    predicate?: Predicate<KubeObject<Spec, Status>>,
  ): this {
    const enqueue = (object: KubeObject<Spec, Status>) => {
      if (map === undefined) return this.enqueue(keyOf(object.metadata));
      const keys = map(object);
      if (keys === undefined) return;
      if (typeof keys === 'string') return this.enqueue(keys);
      for (const key of keys) this.enqueue(key);
    };
    const subscribe = () => {
      const offs = [
        informer.on('add', enqueue),
        informer.on('update', (object, old) => {
          // A resync hands the cached object as both: always worth a look (level-triggered).
          if (predicate === undefined || object === old || predicate(object, old)) enqueue(object);
        }),
        informer.on('delete', enqueue),
        // The reconciler of a refused object can report the problem on it; a mapped watch
        // cannot tell whose it is without the object.
        informer.on('invalid', (_error, key) => {
          if (map === undefined) this.enqueue(key);
        }),
      ];
      return () => {
        for (const off of offs) off();
      };
    };
    // What a fresh process gets from the informer's first list: an add per cached object and
    // the refused keys. Deletes that happened meanwhile are gone, as they are for it.
    const replay = () => {
      for (const object of informer.cache.list()) enqueue(object);
      if (map === undefined) for (const key of informer.refused()) this.enqueue(key);
    };
    this.watched.push({ informer, subscribe, replay });
    // A halted controller listens again when it starts again.
    if (!this.current.isShuttingDown) this.unsubscribes.push(subscribe());
    return this;
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  get running(): boolean {
    return this.workers !== undefined && !this.current.isShuttingDown;
  }

  /**
   * Waits for the watched informers' first list, then starts the workers. After halt() it
   * starts afresh, as a new process would: once the halted run's reconciles have ended (never
   * two of one key at once), a new queue (no delays or backoff carried over) is filled from
   * the informers' caches. Nothing after stop().
   */
  async start(): Promise<void> {
    if (this.stopping !== undefined) return;
    const generation = this.generation;
    if (this.current.isShuttingDown) {
      const halted = this.current;
      while (!(await halted.drain(HALTED_WAIT_WARN_MS))) {
        if (generation !== this.generation || this.stopping !== undefined) return;
        this.log.warn(
          { inFlight: halted.inFlight },
          'halted reconciles still running; not restarting until they end',
        );
      }
      if (generation !== this.generation || this.stopping !== undefined) return;
      if (this.current === halted) this.renew();
    } else if (this.workers !== undefined) {
      return;
    }
    const queue = this.current;
    await Promise.all(this.watched.map((w) => w.informer.start()));
    if (queue.isShuttingDown || this.workers !== undefined) return;
    const workers = this.options.workers ?? 1;
    this.log.info({ workers, queued: queue.length }, 'controller started');
    const { signal } = this.abort;
    this.workers = queue.work(
      workers,
      (key) => this.process(key, queue, signal),
      (key, error) => this.log.error({ key, err: toError(error) }, 'worker failed'),
    );
  }

  /**
   * Stops reconciling at once (leadership lost): no new work, queued keys dropped, in-flight
   * reconciles aborted. start() may follow, when leadership comes back.
   */
  halt(): void {
    this.generation++;
    this.current.shutDown();
    this.unsubscribe();
    this.abort.abort(new Error('controller halted'));
  }

  /**
   * Graceful stop: no new work, then waits up to `timeoutMs` for reconciles in flight, and
   * aborts the signal of any still running. Resolves true when all ended in time.
   */
  stop(timeoutMs: number): Promise<boolean> {
    this.stopping ??= (async () => {
      const queue = this.current;
      queue.shutDown();
      this.unsubscribe();
      const drained = await queue.drain(timeoutMs);
      if (!drained) {
        this.log.warn({ inFlight: queue.inFlight, timeoutMs }, 'reconciles still running');
      }
      this.abort.abort(new Error('controller stopped'));
      this.log.info({ drained }, 'controller stopped');
      return drained;
    })();
    return this.stopping;
  }

  private unsubscribe(): void {
    for (const off of this.unsubscribes.splice(0)) off();
  }

  private newQueue(): WorkQueue {
    return new WorkQueue({
      clock: this.clock,
      ...(this.options.backoff !== undefined ? { backoff: this.options.backoff } : {}),
      ...(this.options.random !== undefined ? { random: this.options.random } : {}),
      onDepth: (depth) => this.metric(() => this.hooks?.queueDepth?.(this.name, depth)),
    });
  }

  /** A new run after a halt: fresh queue and signal, listening again, refilled from the caches. */
  private renew(): void {
    this.current = this.newQueue();
    this.abort = runController();
    this.workers = undefined;
    for (const w of this.watched) this.unsubscribes.push(w.subscribe());
    for (const w of this.watched) w.replay();
  }

  /** One reconcile, on the queue and signal of the run that handed the key out. */
  private async process(key: string, queue: WorkQueue, signal: AbortSignal): Promise<void> {
    const log = this.log.child({ key });
    const retries = queue.retries(key);
    const started = this.clock.now();
    let outcome: ReconcileOutcome;
    try {
      // A reconcile that throws before returning a promise is caught the same way.
      const result = await Promise.resolve().then(() =>
        this.reconcile(key, { signal, log, retries }),
      );
      queue.forget(key);
      const after = result?.requeueAfter;
      if (after !== undefined && after > 0) {
        queue.addAfter(key, after);
        outcome = 'requeue';
      } else {
        outcome = 'success';
      }
    } catch (error) {
      const err = toError(error);
      if (err instanceof Stalled) {
        // Said on the object already; the object's next change brings the key back.
        queue.forget(key);
        log.info({ reason: err.reason, message: err.message }, 'reconcile stalled; not retrying');
        outcome = 'stalled';
      } else {
        const retryInMs = queue.addRateLimited(key);
        log.warn({ err, retries: retries + 1, retryInMs }, 'reconcile failed; retrying');
        outcome = 'error';
      }
    }
    const durationMs = this.clock.now() - started;
    this.metric(() =>
      this.hooks?.reconciled?.({ controller: this.name, key, outcome, durationMs }),
    );
  }

  private reconcile(key: string, context: ReconcileContext): Promise<Outcome> {
    const reconciler = this.options.reconciler;
    return typeof reconciler === 'function'
      ? reconciler(key, context)
      : reconciler.reconcile(key, context);
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

/**
 * The abort controller of one run. Every request in flight of every worker listens to its
 * signal and stops listening when it ends (src/kube/transport.ts): past ten at once, Node
 * would warn of a "possible memory leak" that is only the work in flight.
 */
function runController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
