// A process's parts (API server, client, metrics, operator, facade), started in order and
// stopped in reverse: a part that fails to start closes those started before it, newest first,
// and becomes one StartupError line naming the flag to change; a signal stops them all within
// a bound. What runLocal and runRun have in common, owned once.
import type { Logger } from 'pino';
import { stopOnSignal } from './runtime/index.js';

/**
 * A start-up failure the user fixes with a flag: its message is one line naming the flag and its
 * value, that src/cli prints alone (no stack) after everything started before it was closed.
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** Stops a part; what it resolves to is false when the part did not drain in time. */
type Close = () => unknown;

export class Parts {
  private readonly closers: { readonly name: string; readonly close: Close }[] = [];

  /**
   * Starts one part. When it fails, what started before it is closed, and the failure becomes
   * a StartupError with `describe`'s line (the error's own message when it names no flag).
   * `close` (given the started part) joins the parts stopped, in reverse, by stop().
   */
  async start<T>(
    name: string,
    start: () => Promise<T>,
    options: { describe?: (error: unknown) => string | undefined; close?: (part: T) => Close } = {},
  ): Promise<T> {
    let part: T;
    try {
      part = await start();
    } catch (error) {
      await this.stop();
      if (error instanceof StartupError) throw error;
      throw new StartupError(options.describe?.(error) ?? messageOf(error), { cause: error });
    }
    const close = options.close?.(part);
    if (close !== undefined) this.closers.push({ name, close });
    return part;
  }

  /**
   * Stops every part started, newest first; each is stopped even when one before it fails, for
   * whatever is left open keeps the process up. Resolves false when one did not drain in time.
   */
  async stop(): Promise<boolean> {
    let clean = true;
    for (const { close } of this.closers.splice(0).reverse()) {
      const drained = await Promise.resolve()
        .then(close)
        .catch(() => false);
      if (drained === false) clean = false;
    }
    return clean;
  }

  /** Waits for SIGTERM or SIGINT, then stops every part within the shutdown bound. */
  async stopOnSignal(log: Logger): Promise<boolean> {
    const { clean } = await stopOnSignal({ stop: () => this.stop() }, { log });
    return clean;
  }
}

export const messageOf = (error: unknown) =>
  error instanceof Error ? error.message : String(error);
