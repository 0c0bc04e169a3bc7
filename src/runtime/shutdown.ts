// Running controllers as one process: informers, leader election and controllers started in
// order, controllers halted when leadership is lost and started again when it is won back, and
// a graceful shutdown on SIGTERM/SIGINT within a bound.
import type { Logger } from 'pino';
import type { Controller } from './controller.js';
import { toError } from './controller.js';
import { type LeaderElectionOptions, LeaderElector } from './leader.js';

/** What the manager needs of an informer: src/kube's Informer has both. */
export interface Startable {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ManagerOptions {
  readonly log: Logger;
  /** Started first and stopped first; shared by the controllers (and, later, the facade). */
  readonly informers: readonly Startable[];
  readonly controllers: readonly Controller[];
  /**
   * Without it, the controllers start at once (a single replica). With it, losing leadership
   * halts them and campaigns again; it never ends the process (ADR 0008).
   */
  readonly leaderElection?: Omit<
    LeaderElectionOptions,
    'log' | 'onStartedLeading' | 'onStoppedLeading'
  >;
  /** How long stop() waits for reconciles in flight. */
  readonly drainTimeoutMs?: number;
}

export const DEFAULT_DRAIN_TIMEOUT_MS = 20_000;

export class Manager {
  private readonly log: Logger;
  private stopping: Promise<boolean> | undefined;
  /** The elector of the current campaign: one per term, as LeaderElector runs one round. */
  private current: LeaderElector | undefined;
  /** Terms this process has led; from the second on, the controllers start again. */
  private terms = 0;

  constructor(private readonly options: ManagerOptions) {
    this.log = options.log.child({ component: 'manager' });
    if (options.leaderElection !== undefined) this.current = this.campaign();
  }

  /** The elector of the current campaign (a new one after each lost term); none without election. */
  get elector(): LeaderElector | undefined {
    return this.current;
  }

  /** True while the controllers may run: leading, or no election at all. */
  get leading(): boolean {
    return this.current?.isLeader() ?? this.options.leaderElection === undefined;
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
        this.startControllers();
      },
      onStoppedLeading: (reason) => {
        // Before anything else: another process may be reconciling already.
        for (const controller of this.options.controllers) controller.halt();
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

  /** Resolves once the informers have listed; the controllers start now or when elected. */
  async start(): Promise<void> {
    await Promise.all(this.options.informers.map((informer) => informer.start()));
    if (this.current !== undefined) this.current.start();
    else this.startControllers();
  }

  /**
   * Graceful shutdown, in order: informers stop (no new keys), controllers stop handing out
   * work and wait up to drainTimeoutMs for reconciles in flight, the lease is released.
   * Resolves true when every reconcile ended in time.
   */
  stop(): Promise<boolean> {
    this.stopping ??= (async () => {
      const timeoutMs = this.options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
      this.log.info({ timeoutMs }, 'shutting down');
      await Promise.all(this.options.informers.map((informer) => informer.stop()));
      const drained = await Promise.all(this.options.controllers.map((c) => c.stop(timeoutMs)));
      await this.current?.stop({ release: true });
      const all = drained.every(Boolean);
      this.log.info({ drained: all }, 'shut down');
      return all;
    })();
    return this.stopping;
  }

  private startControllers(): void {
    for (const controller of this.options.controllers) {
      controller.start().catch((error: unknown) => {
        this.log.error(
          { err: toError(error), controller: controller.name },
          'controller failed to start',
        );
      });
    }
  }
}

export interface SignalOptions {
  readonly log: Logger;
  readonly signals?: readonly NodeJS.Signals[];
  /** A hard bound on the whole shutdown, past the manager's own drain bound. */
  readonly timeoutMs?: number;
}

/**
 * Waits for the first of `signals`, then stops `manager` within `timeoutMs`. A second signal
 * ends the wait at once. Resolves with the signal and whether the shutdown was clean.
 */
export async function stopOnSignal(
  manager: Pick<Manager, 'stop'>,
  options: SignalOptions,
): Promise<{ signal: NodeJS.Signals; clean: boolean }> {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const timeoutMs = options.timeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS + 10_000;
  let onSignal: (signal: NodeJS.Signals) => void = () => {};
  const next = () =>
    new Promise<NodeJS.Signals>((resolve) => {
      onSignal = resolve;
    });
  const handler = (signal: NodeJS.Signals) => onSignal(signal);
  for (const s of signals) process.on(s, handler);
  try {
    const signal = await next();
    options.log.info({ signal, timeoutMs }, 'signal received; stopping');
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      manager.stop().then(
        (drained) => (drained ? 'clean' : 'drain-timeout'),
        (error: unknown) => {
          options.log.error({ err: toError(error) }, 'shutdown failed');
          return 'failed';
        },
      ),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      }),
      next().then((again) => `second ${again}`),
    ]);
    clearTimeout(timer);
    if (outcome !== 'clean') options.log.warn({ outcome }, 'shutdown was not clean');
    return { signal, clean: outcome === 'clean' };
  } finally {
    for (const s of signals) process.off(s, handler);
  }
}
