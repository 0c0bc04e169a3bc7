// The Manager (controller-runtime's): one place that starts a process's runnables and stops
// them — the shared informers first (every controller reads their caches), then the runnables
// that run everywhere, then, when elected, the leader-only ones (the controllers, together),
// halted when leadership is lost and started again when it is won back; stopped the other way
// round.
import type { Logger } from 'pino';
import { toError } from './controller.js';
import { type LeaderElectionOptions, LeaderElector } from './leader.js';
import type { Runnable } from './runnable.js';

/** What the manager needs of an informer: src/kube's Informer has both. */
export interface Startable {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ManagerOptions {
  readonly log: Logger;
  /** Started first and stopped first; shared by the runnables. */
  readonly informers: readonly Startable[];
  /**
   * After the informers: those that run everywhere in this order, then the leader-only ones
   * together. Stopped the other way round: the leader-only ones together (each drains within
   * the bound, side by side), then the others in reverse order.
   */
  readonly runnables: readonly Runnable[];
  /**
   * Without it, leader-only runnables start at once (a single replica). With it, losing
   * leadership halts them and campaigns again; it never ends the process (ADR 0008).
   */
  readonly leaderElection?: Omit<
    LeaderElectionOptions,
    'log' | 'onStartedLeading' | 'onStoppedLeading'
  >;
  /** How long stop() waits for each runnable's work in flight. */
  readonly drainTimeoutMs?: number;
}

export const DEFAULT_DRAIN_TIMEOUT_MS = 20_000;

export class Manager {
  private readonly log: Logger;
  private readonly leaders: readonly Runnable[];
  private readonly others: readonly Runnable[];
  private stopping: Promise<boolean> | undefined;
  private started = false;
  /** The elector of the current campaign: one per term, as LeaderElector runs one round. */
  private current: LeaderElector | undefined;
  /** Terms this process has led; from the second on, the leader-only runnables start again. */
  private terms = 0;

  constructor(private readonly options: ManagerOptions) {
    this.log = options.log.child({ component: 'manager' });
    this.leaders = options.runnables.filter((r) => r.leaderOnly);
    this.others = options.runnables.filter((r) => !r.leaderOnly);
    if (options.leaderElection !== undefined) this.current = this.campaign();
  }

  /** The elector of the current campaign (a new one after each lost term); none without election. */
  get elector(): LeaderElector | undefined {
    return this.current;
  }

  /** True while the leader-only runnables may run: leading, or no election at all. */
  get leading(): boolean {
    return this.current?.isLeader() ?? this.options.leaderElection === undefined;
  }

  /** True once start() has resolved and until stop() is called: what readiness reports. */
  get ready(): boolean {
    return this.started && this.stopping === undefined;
  }

  private campaign(): LeaderElector {
    const election = this.options.leaderElection as NonNullable<ManagerOptions['leaderElection']>;
    const elector: LeaderElector = new LeaderElector({
      ...election,
      log: this.options.log,
      onStartedLeading: () => {
        this.terms++;
        if (this.terms > 1) {
          this.log.info(
            { identity: elector.identity, term: this.terms },
            'leadership regained; controllers starting again',
          );
        }
        this.startAll(this.leaders);
      },
      onStoppedLeading: (reason) => {
        // Before anything else: another process may be reconciling already.
        for (const runnable of this.leaders) runnable.halt?.();
        if (reason === 'stopped' || this.stopping !== undefined) return;
        // controller-runtime exits here so that a fresh process campaigns; this process may
        // also serve the API, the facade and metrics, so it campaigns again itself (ADR 0008).
        this.log.warn(
          { identity: elector.identity, reason },
          'leadership lost; controllers halted, campaigning again',
        );
        this.current = this.campaign();
        this.current.start();
      },
    });
    return elector;
  }

  /**
   * Resolves once the informers have listed: a standby is as ready as the leader, so this
   * does not wait for the lease. The leader-only runnables start now or when elected.
   */
  async start(): Promise<void> {
    await Promise.all(this.options.informers.map((informer) => informer.start()));
    this.startAll(this.others);
    if (this.current !== undefined) this.current.start();
    else this.startAll(this.leaders);
    this.started = true;
  }

  /**
   * Graceful shutdown, in order: informers stop (no new keys), the leader-only runnables stop
   * together, each waiting up to drainTimeoutMs for its work in flight, the lease is released,
   * then the others stop in reverse order (so what the last reconciles queued, such as Events,
   * is still written). Resolves true when every runnable drained in time.
   */
  stop(): Promise<boolean> {
    this.stopping ??= (async () => {
      const timeoutMs = this.options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
      this.log.info({ timeoutMs }, 'shutting down');
      await Promise.all(this.options.informers.map((informer) => informer.stop()));
      const leaders = await Promise.all(this.leaders.map((r) => r.stop(timeoutMs)));
      await this.current?.stop({ release: true });
      const others: boolean[] = [];
      for (const runnable of [...this.others].reverse())
        others.push(await runnable.stop(timeoutMs));
      const all = [...leaders, ...others].every(Boolean);
      this.log.info({ drained: all }, 'shut down');
      return all;
    })();
    return this.stopping;
  }

  private startAll(runnables: readonly Runnable[]): void {
    for (const runnable of runnables) {
      runnable.start().catch((error: unknown) => {
        this.log.error(
          { err: toError(error), runnable: runnable.name },
          'runnable failed to start',
        );
      });
    }
  }
}
