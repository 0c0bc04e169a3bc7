// Graceful shutdown on SIGTERM/SIGINT within a bound: what a process's main waits on.
import type { Logger } from 'pino';
import { toError } from './controller.js';
import { DEFAULT_DRAIN_TIMEOUT_MS, type Manager } from './manager.js';

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
