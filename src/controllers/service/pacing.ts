// When a service may call its provider again: the provider's Retry-After, else backoff, per
// key for one generation and action at a time (a spec change or another action starts
// afresh); and when the current call sequence started, which its deadline counts from.
import { type BackoffOptions, backoffDelay } from '../../kube/index.js';
import type { ServiceAction } from '../provisioners/service-provisioner.js';
import { provisioningSince } from './conditions.js';
import type { RawService } from './resources.js';

/** Between polls of a provider that gave no Retry-After, and between failed calls. */
export const DEFAULT_PROVIDER_BACKOFF: BackoffOptions = {
  initialMs: 500,
  maxMs: 30_000,
  jitter: 0.5,
};

interface Pace {
  readonly generation: number | undefined;
  readonly action: ServiceAction;
  /** Calls in a row that were not final: the backoff's exponent. */
  readonly attempt: number;
  /** Epoch ms before which no call is made. */
  readonly at: number;
}

export class ProviderPacing {
  /**
   * When each key may call its provider again, and how many calls in a row were not final.
   * Our own status writes wake the key through the informer; this keeps Retry-After and the
   * backoff in force anyway. In memory: a restart only makes the next call come sooner.
   */
  private readonly pace = new Map<string, Pace>();

  constructor(
    readonly backoff: BackoffOptions,
    private readonly now: () => Date,
  ) {}

  /** How long until the key may call its provider again for this generation and action. */
  early(key: string, generation: number | undefined, action: ServiceAction): number | undefined {
    const pace = this.pace.get(key);
    if (pace === undefined) return undefined;
    if (pace.generation !== generation || pace.action !== action) return undefined;
    const left = pace.at - this.now().getTime();
    return left > 0 ? left : undefined;
  }

  /** The next call's delay (the provider's Retry-After, else backoff), recorded. */
  later(
    key: string,
    generation: number | undefined,
    action: ServiceAction,
    retryAfterMs: number | undefined,
    cap?: number,
  ): number {
    const previous = this.pace.get(key);
    const attempt =
      previous !== undefined && previous.generation === generation && previous.action === action
        ? previous.attempt
        : 0;
    let delay = retryAfterMs ?? backoffDelay(attempt, this.backoff);
    if (cap !== undefined) delay = Math.min(delay, cap);
    this.pace.set(key, {
      generation,
      action,
      attempt: attempt + 1,
      at: this.now().getTime() + delay,
    });
    return delay;
  }

  /** A final answer, a retry request or the service gone: the next call need not wait. */
  forget(key: string): void {
    this.pace.delete(key);
  }

  /** When the current provider call sequence started: kept in status, so restarts keep it. */
  startOf(service: RawService, action: ServiceAction): Date {
    const since = provisioningSince(service, action);
    if (since !== undefined) return since;
    // Whole seconds, as lastTransitionTime holds it, so the instant survives the write;
    // rounded up, so a deadline is never cut short.
    return new Date(Math.ceil(this.now().getTime() / 1000) * 1000);
  }
}
