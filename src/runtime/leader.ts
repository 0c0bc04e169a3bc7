// Lease-based leader election (client-go leaderelection): acquire a coordination.k8s.io/v1 Lease
// when free or expired, renew it every retry period, stop leading the moment it cannot be kept,
// and release it on shutdown so a successor need not wait for it to expire.
import type { Logger } from 'pino';
import {
  isConflict,
  isNotFound,
  type Kube,
  type KubeObject,
  Leases,
  type ResourceClient,
} from '../kube/index.js';
import { type Clock, sleep, systemClock } from './clock.js';
import { toError } from './controller.js';

/** The fields of a Lease's spec that leader election reads and writes. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export type StoppedReason = 'lost' | 'renew-deadline' | 'stopped';

export interface LeaderElectionOptions {
  readonly kube: Pick<Kube, 'resource'>;
  readonly namespace: string;
  /** The Lease's name: one per group of candidates. */
  readonly name: string;
  /** Unique per candidate (pod name plus a random part, as client-go advises). */
  readonly identity: string;
  readonly log: Logger;
  /** How long others wait, from when they last saw it change, before taking the lease. */
  readonly leaseDurationMs?: number;
  /** The leader stops leading when it has not renewed for this long. */
  readonly renewDeadlineMs?: number;
  /** Between attempts to acquire or renew. */
  readonly retryPeriodMs?: number;
  readonly clock?: Clock;
  readonly onStartedLeading?: () => void;
  /** Called at once, before any further work, when leadership ends for any reason. */
  readonly onStoppedLeading?: (reason: StoppedReason) => void;
  /** Called when the observed holder changes ('' when nobody holds it). */
  readonly onNewLeader?: (identity: string) => void;
}

export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;
/** client-go's JitterFactor: acquire attempts wait retry * [1, 1 + 1.2]. */
const JITTER_FACTOR = 1.2;

type LeaseObject = KubeObject<unknown, unknown>;
type Attempt = 'acquired' | 'held' | 'failed';

export class LeaderElector {
  readonly identity: string;
  private readonly leases: ResourceClient<unknown, unknown>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private leading = false;
  /** Ends when leadership ends; no later write result may make this process act as leader. */
  private finished = false;
  private stopped = false;
  /** The Lease as last read or written, and when (our clock) its record last changed. */
  private observed: LeaseObject | undefined;
  private observedJson = '';
  private observedAt = 0;
  private lastHolder: string | undefined;
  private cancelDeadline: () => void = () => {};
  private electedWaiters: (() => void)[] = [];

  constructor(private readonly options: LeaderElectionOptions) {
    this.identity = options.identity;
    this.leases = options.kube.resource(Leases);
    this.clock = options.clock ?? systemClock;
    this.leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    if (options.identity === '') throw new Error('leader election needs an identity');
    // As client-go checks: the leader must give up before others may take over.
    if (this.leaseDurationMs <= this.renewDeadlineMs) {
      throw new Error('leaseDurationMs must be greater than renewDeadlineMs');
    }
    if (this.renewDeadlineMs <= JITTER_FACTOR * this.retryPeriodMs) {
      throw new Error('renewDeadlineMs must be greater than 1.2 * retryPeriodMs');
    }
    this.log = options.log.child({
      lease: `${options.namespace}/${options.name}`,
      identity: this.identity,
    });
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The holder last seen on the Lease ('' when released, undefined before the first read). */
  get leader(): string | undefined {
    return this.lastHolder;
  }

  /** Starts campaigning; leading begins with onStartedLeading. One round: after leadership ends, make a new elector. */
  start(): void {
    if (this.stopped) throw new Error('the leader elector was stopped');
    this.loop ??= this.run().catch((error: unknown) => {
      // run() handles its own failures; reaching here is a bug, so it must not pass silently.
      this.log.error({ err: toError(error) }, 'leader election loop failed');
      this.lose('lost');
    });
  }

  /** Resolves once this candidate leads (never, if it stops first). */
  elected(): Promise<void> {
    if (this.leading) return Promise.resolve();
    return new Promise((resolve) => this.electedWaiters.push(resolve));
  }

  /**
   * Stops campaigning or renewing; when leading, calls onStoppedLeading('stopped') and, unless
   * `release` is false, releases the Lease (holder '', duration 1 s) so a successor takes it
   * on its next attempt. `release: false` is a crash as far as others can tell.
   */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const wasLeading = this.leading;
    this.lose('stopped');
    this.abort.abort();
    await this.loop;
    if ((options.release ?? true) && (wasLeading || this.holder(this.observed) === this.identity)) {
      await this.release();
    }
  }

  private async run(): Promise<void> {
    let acquiredAt = 0;
    while (!this.stopped) {
      acquiredAt = this.clock.now();
      const attempt = await this.tryAcquireOrRenew();
      if (this.stopped) return;
      if (attempt === 'acquired') break;
      const wait = this.retryPeriodMs * (1 + JITTER_FACTOR * Math.random());
      await sleep(this.clock, wait, this.abort.signal);
    }
    if (this.stopped) return;
    this.leading = true;
    this.armDeadline(acquiredAt);
    this.log.info('leadership acquired');
    for (const resolve of this.electedWaiters.splice(0)) resolve();
    this.callback(() => this.options.onStartedLeading?.());

    while (this.leading && !this.stopped) {
      await sleep(this.clock, this.retryPeriodMs, this.abort.signal);
      if (!this.leading || this.stopped) return;
      const started = this.clock.now();
      const attempt = await this.tryAcquireOrRenew();
      if (!this.leading || this.stopped) return;
      if (attempt === 'acquired') this.armDeadline(started);
      else if (attempt === 'held') this.lose('lost');
      // 'failed': the next period tries again; the deadline timer ends leadership if none works.
    }
  }

  /** Leadership ends at `renewedAt + renewDeadline` unless a renew started before it succeeds. */
  private armDeadline(renewedAt: number): void {
    this.cancelDeadline();
    const left = renewedAt + this.renewDeadlineMs - this.clock.now();
    this.cancelDeadline = this.clock.setTimer(() => this.lose('renew-deadline'), left);
  }

  private lose(reason: StoppedReason): void {
    if (this.finished) return;
    this.finished = true;
    this.cancelDeadline();
    this.abort.abort();
    if (!this.leading) return;
    this.leading = false;
    if (reason === 'stopped') this.log.info({ reason }, 'leadership ended');
    else this.log.warn({ reason }, 'leadership lost');
    this.callback(() => this.options.onStoppedLeading?.(reason));
  }

  private async tryAcquireOrRenew(): Promise<Attempt> {
    const now = this.clock.now();
    // Fast path (client-go does the same): the leader writes on top of what it last wrote; a
    // conflict means someone else wrote, and the slow path below reads who.
    if (this.leading && this.observed !== undefined) {
      try {
        this.observe(await this.write(this.observed, this.record(this.observed, now)), now);
        return 'acquired';
      } catch (error) {
        if (!isConflict(error)) return this.failed(error);
      }
    }
    let current: LeaseObject;
    try {
      current = await this.leases.get({
        namespace: this.options.namespace,
        name: this.options.name,
      });
    } catch (error) {
      if (!isNotFound(error)) return this.failed(error);
      return this.create(now);
    }
    this.observe(current, now);
    const spec = leaseSpecOf(current);
    const holder = spec.holderIdentity ?? '';
    if (holder !== '' && holder !== this.identity) {
      const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
      if (this.leading || this.observedAt + durationMs > now) return 'held';
    }
    try {
      this.observe(await this.write(current, this.record(current, now)), now);
      return 'acquired';
    } catch (error) {
      return this.failed(error);
    }
  }

  private async create(now: number): Promise<Attempt> {
    const record: LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    try {
      const created = await this.leases.create({
        metadata: { name: this.options.name, namespace: this.options.namespace },
        spec: record,
      });
      this.observe(created, now);
      return 'acquired';
    } catch (error) {
      return this.failed(error);
    }
  }

  /** The record to write over `current`: renewed if ours, taken over (a transition) if not. */
  private record(current: LeaseObject, now: number): LeaseSpec {
    const old = leaseSpecOf(current);
    const ours = old.holderIdentity === this.identity;
    return {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: ours && old.acquireTime !== undefined ? old.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (old.leaseTransitions ?? 0) + (ours ? 0 : 1),
    };
  }

  /** PUT with the read resourceVersion: optimistic concurrency decides between racing candidates. */
  private write(current: LeaseObject, spec: LeaseSpec): Promise<LeaseObject> {
    return this.leases.replace({ ...current, spec });
  }

  private async release(): Promise<void> {
    const current = this.observed;
    if (current === undefined) return;
    const now = this.clock.now();
    const spec: LeaseSpec = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: leaseSpecOf(current).leaseTransitions ?? 0,
    };
    try {
      // A conflict means someone took it meanwhile: then it is not ours to release.
      this.observed = await this.write(current, spec);
      this.log.info('lease released');
    } catch (error) {
      this.log.warn({ err: toError(error) }, 'lease release failed');
    }
  }

  /** Remembers the Lease; its record's change time is ours, not its renewTime (clock skew). */
  private observe(lease: LeaseObject, now: number): void {
    const json = JSON.stringify(leaseSpecOf(lease));
    if (json !== this.observedJson) {
      this.observedJson = json;
      this.observedAt = now;
    }
    this.observed = lease;
    const holder = this.holder(lease) ?? '';
    if (holder !== this.lastHolder) {
      this.lastHolder = holder;
      this.log.info({ holder }, 'lease holder changed');
      this.callback(() => this.options.onNewLeader?.(holder));
    }
  }

  private holder(lease: LeaseObject | undefined): string | undefined {
    return lease === undefined ? undefined : leaseSpecOf(lease).holderIdentity;
  }

  private failed(error: unknown): Attempt {
    if (isConflict(error)) this.log.debug({ err: toError(error) }, 'lease write lost a race');
    else this.log.warn({ err: toError(error) }, 'lease acquire or renew failed');
    return 'failed';
  }

  private callback(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.log.error({ err: toError(error) }, 'leader election callback threw');
    }
  }
}

/** A Lease's spec, keeping only well-typed fields: anything else reads as absent. */
export function leaseSpecOf(lease: LeaseObject): LeaseSpec {
  const spec = lease.spec;
  if (typeof spec !== 'object' || spec === null) return {};
  const s = spec as Record<string, unknown>;
  const out: LeaseSpec = {};
  if (typeof s.holderIdentity === 'string') out.holderIdentity = s.holderIdentity;
  if (typeof s.leaseDurationSeconds === 'number') out.leaseDurationSeconds = s.leaseDurationSeconds;
  if (typeof s.acquireTime === 'string') out.acquireTime = s.acquireTime;
  if (typeof s.renewTime === 'string') out.renewTime = s.renewTime;
  if (typeof s.leaseTransitions === 'number') out.leaseTransitions = s.leaseTransitions;
  return out;
}

/** metav1.MicroTime's JSON: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
