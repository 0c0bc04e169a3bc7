// Running controllers as one process: informers, leader election and controllers started in
// order, and a graceful shutdown on SIGTERM/SIGINT within a bound.
import type { Logger } from 'pino';
import type { Controller } from './controller.js';
import { toError } from './controller.js';
import { type LeaderElectionOptions, LeaderElector, type StoppedReason } from './leader.js';

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
  /** Without it, the controllers start at once (a single replica). */
  readonly leaderElection?: Omit<
    LeaderElectionOptions,
    'log' | 'onStartedLeading' | 'onStoppedLeading'
  >;
  /**
   * After leadership is lost the controllers are halted already; this decides what follows.
   * controller-runtime exits the process, so that a fresh one campaigns with a clean state.
   */
  readonly onLostLeadership?: (reason: StoppedReason) => void;
  /** How long stop() waits for reconciles in flight. */
  readonly drainTimeoutMs?: number;
}

export const DEFAULT_DRAIN_TIMEOUT_MS = 20_000;

export class Manager {
  readonly elector: LeaderElector | undefined;
  private readonly log: Logger;
  private stopping: Promise<boolean> | undefined;

  constructor(private readonly options: ManagerOptions) {
    this.log = options.log.child({ component: 'manager' });
    const election = options.leaderElection;
    this.elector =
      election === undefined
        ? undefined
        : new LeaderElector({
            ...election,
            log: options.log,
            onStartedLeading: () => this.startControllers(),
            onStoppedLeading: (reason) => {
              // Before anything else: another process may be reconciling already.
              for (const controller of options.controllers) controller.halt();
              if (reason !== 'stopped') options.onLostLeadership?.(reason);
            },
          });
  }

  /** Resolves once the informers have listed; the controllers start now or when elected. */
  async start(): Promise<void> {
    await Promise.all(this.options.informers.map((informer) => informer.start()));
    if (this.elector !== undefined) this.elector.start();
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
      await this.elector?.stop({ release: true });
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
