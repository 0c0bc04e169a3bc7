// Pacing a class change: a changed ScopeClass reaches the scopes it serves at most `rate` a
// second, so a mistake in a class shows on the first scopes (and can be undone) before it
// reaches them all, and the API server is not hit by every scope at once. Each scope that must
// roll out holds a reserved slot; the reconcile comes back at its slot and goes ahead.

export const DEFAULT_ROLLOUT_RATE = 10;

export class RolloutLimiter {
  private readonly intervalMs: number;
  /** When the last slot handed out falls. */
  private last = Number.NEGATIVE_INFINITY;
  /** Slots reserved and not yet used, by scope key. */
  private readonly reserved = new Map<string, number>();

  constructor(
    ratePerSecond = DEFAULT_ROLLOUT_RATE,
    private readonly now: () => number = Date.now,
  ) {
    if (!(ratePerSecond > 0)) throw new Error('the rollout rate must be above zero');
    this.intervalMs = 1000 / ratePerSecond;
  }

  /** 0: go ahead now; else come back in this many ms (the scope's slot is kept for it). */
  take(key: string): number {
    const now = this.now();
    const slot = this.reserved.get(key);
    if (slot !== undefined) {
      if (slot <= now) {
        this.reserved.delete(key);
        return 0;
      }
      return Math.ceil(slot - now);
    }
    const next = Math.max(now, this.last + this.intervalMs);
    this.last = next;
    if (next <= now) return 0;
    this.reserved.set(key, next);
    return Math.ceil(next - now);
  }

  /** The scope is gone: its slot, if any, is dropped. */
  forget(key: string): void {
    this.reserved.delete(key);
  }

  /** Scopes waiting for their slot. */
  get waiting(): number {
    return this.reserved.size;
  }
}
