// The operator's Kubernetes Events: a bounded queue written in the background, as client-go's
// recorder does, so that no reconcile waits on an Event.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { Events, type Kube, type KubeObject, type ResourceClient } from '../kube/index.js';
import { EVENT_WRITERS, EVENT_WRITERS_UNDER_LOAD } from './concurrency.js';
import { type EventType, rfc3339 } from './status.js';

/**
 * Events waiting to be written at most; past it they are dropped. client-go keeps 1,000; this
 * holds the 4,000 of a 2,000-scope burst, which wait while the scopes are worked off.
 */
export const MAX_QUEUED_EVENTS = 10_000;

/**
 * Up to this many Events waiting, they yield to reconciles; past it they are written at full
 * speed, so that a backlog that lasts (100,000 services to reconcile) is written, not dropped.
 */
export const YIELDING_EVENTS = 5_000;

export interface EventRecorderOptions {
  /** MAX_QUEUED_EVENTS unless set (tests). */
  readonly capacity?: number;
  /** YIELDING_EVENTS unless set (tests). */
  readonly yieldingUpTo?: number;
}

/**
 * Writes core/v1 Events about our objects, as client-go's recorder does: record() queues the
 * Event and returns at once, so a reconcile never waits on it (two round trips per scope
 * less on its path); writers send the queue in the background, the Events of one object in
 * the order they were recorded. While `yieldTo`'s test says reconciles wait for a worker,
 * only EVENT_WRITERS_UNDER_LOAD write at once: the status a reconcile writes is what users
 * and GitOps tools wait on, the Event only tells of it. Best effort: a failed write is
 * logged, and past the capacity an Event is dropped, never the reconcile. flush() waits for
 * the queue.
 */
export class EventRecorder {
  private readonly events: ResourceClient;
  /** Events not yet written, per involved object; a key is in `ready` or being written. */
  private readonly queues = new Map<string, RecordedEvent[]>();
  private readonly ready: string[] = [];
  private queued = 0;
  private writing = 0;
  private droppedCount = 0;
  private idle: (() => void)[] = [];
  private busy: () => boolean = () => false;
  /** Someone waits in flush() (a shutdown): Events no longer yield. */
  private flushing = false;
  private readonly capacity: number;
  private readonly yieldingUpTo: number;

  constructor(
    kube: Pick<Kube, 'resource'>,
    private readonly component: string,
    private readonly instance: string,
    private readonly log: Logger,
    options: EventRecorderOptions = {},
  ) {
    this.events = kube.resource(Events);
    this.capacity = options.capacity ?? MAX_QUEUED_EVENTS;
    this.yieldingUpTo = options.yieldingUpTo ?? YIELDING_EVENTS;
  }

  /** Events recorded and not yet written (or failed), those being written included. */
  get backlog(): number {
    return this.queued;
  }

  /** Event writes in flight now. */
  get inFlight(): number {
    return this.writing;
  }

  /** Events dropped because the queue was full, since the start. */
  get dropped(): number {
    return this.droppedCount;
  }

  /**
   * Writes fewer Events at once while `busy()` holds (the operator: while any controller has
   * keys waiting for a worker). It is asked each time a write can start, so writing speeds
   * up again as soon as it stops holding.
   */
  yieldTo(busy: () => boolean): void {
    this.busy = busy;
  }

  record(object: KubeObject, type: EventType, reason: string, message: string): void {
    const namespace = object.metadata.namespace ?? 'default';
    if (this.queued >= this.capacity) {
      // One line per hundred: a flood of drops must not become a flood of logs.
      if (this.droppedCount++ % 100 === 0) {
        this.log.warn(
          { object: `${namespace}/${object.metadata.name}`, reason, dropped: this.droppedCount },
          'event queue full; event dropped',
        );
      }
      return;
    }
    const key = object.metadata.uid ?? `${object.kind}/${namespace}/${object.metadata.name}`;
    const queue = this.queues.get(key);
    const event: RecordedEvent = {
      // Stamped when recorded, not when written: the time of the transition.
      at: Date.now(),
      type,
      reason,
      message,
      involvedObject: {
        apiVersion: object.apiVersion,
        kind: object.kind,
        name: object.metadata.name as string,
        namespace,
        uid: object.metadata.uid,
        resourceVersion: object.metadata.resourceVersion,
      },
    };
    this.queued++;
    if (queue !== undefined) {
      queue.push(event);
    } else {
      this.queues.set(key, [event]);
      this.ready.push(key);
      this.pump();
    }
  }

  /**
   * Resolves once every Event recorded so far is written (or failed), or after `timeoutMs`;
   * meanwhile they are written at full speed, busy or not (the operator's shutdown waits).
   */
  flush(timeoutMs = 5_000): Promise<void> {
    if (this.queued === 0) return Promise.resolve();
    this.flushing = true;
    this.pump();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private pump(): void {
    // At least one write stays in flight while any waits, so a pump always follows.
    const yielding = !this.flushing && this.queued <= this.yieldingUpTo && this.busy();
    const writers = yielding ? EVENT_WRITERS_UNDER_LOAD : EVENT_WRITERS;
    while (this.writing < writers && this.ready.length > 0) {
      const key = this.ready.shift() as string;
      const event = this.queues.get(key)?.shift();
      if (event === undefined) continue;
      this.writing++;
      void this.write(event).then(() => {
        this.writing--;
        this.queued--;
        const rest = this.queues.get(key);
        if (rest !== undefined && rest.length > 0) this.ready.push(key);
        else this.queues.delete(key);
        if (this.queued === 0) {
          this.flushing = false;
          for (const done of this.idle.splice(0)) done();
        }
        this.pump();
      });
    }
  }

  private async write(recorded: RecordedEvent): Promise<void> {
    try {
      // Nobody reads the stored Event back: its answer is not parsed.
      await this.events.createAndForget(this.event(recorded));
    } catch (error) {
      // An event is worth less than the reconcile that wanted it: log, never fail on it.
      const { namespace, name } = recorded.involvedObject;
      this.log.warn(
        { err: error, object: `${namespace}/${name}`, reason: recorded.reason },
        'event not recorded',
      );
    }
  }

  private event({ at, type, reason, message, involvedObject }: RecordedEvent): KubeObject {
    const time = rfc3339(new Date(at));
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        // The name only has to be unique; client-go uses <object>.<hex timestamp>.
        name: `${involvedObject.name}.${at.toString(16)}${randomBytes(3).toString('hex')}`,
        namespace: involvedObject.namespace,
      },
      involvedObject,
      reason,
      message,
      type,
      source: { component: this.component },
      reportingComponent: this.component,
      reportingInstance: this.instance,
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
    };
  }
}

/**
 * An Event as record() keeps it until it is written: what the Event is made of, a third of
 * the Event's own size (~250 against ~750 bytes), which counts when thousands wait.
 */
interface RecordedEvent {
  /** Epoch milliseconds. */
  readonly at: number;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
  readonly involvedObject: {
    readonly apiVersion: string;
    readonly kind: string;
    readonly name: string;
    readonly namespace: string;
    readonly uid: string | undefined;
    readonly resourceVersion: string | undefined;
  };
}
