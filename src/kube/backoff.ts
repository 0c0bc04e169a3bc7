// Retry delays: exponential growth, a cap, and jitter so that many clients that failed together
// do not come back together.

export interface BackoffOptions {
  /** The first delay, before jitter. */
  readonly initialMs: number;
  /** No delay exceeds this. */
  readonly maxMs: number;
  /** 0: exact delays; 0.5: each delay drawn from [d/2, d]; 1: from [0, d]. */
  readonly jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000, jitter: 0.5 };

/** The delay before retry number `attempt` (0 for the first retry). */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  // Math.min before the power would overflow for large attempts; clamp the exponent instead.
  const exponent = Math.min(Math.max(0, attempt), 30);
  const ceiling = Math.min(options.maxMs, options.initialMs * 2 ** exponent);
  const jitter = Math.min(1, Math.max(0, options.jitter));
  return Math.round(ceiling * (1 - jitter * random()));
}

/** A number drawn from [min, max]: watch timeouts spread so re-watches do not line up. */
export function between(min: number, max: number, random: () => number = Math.random): number {
  return Math.round(min + (max - min) * random());
}
