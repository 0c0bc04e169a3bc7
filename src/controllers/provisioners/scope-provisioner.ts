// What a scope provisioner is: an idempotent, level-triggered ensure/remove pair that reports
// progress instead of blocking, so the reconciler can requeue and write status in between.
import type { RequestedSpec } from '../../api/index.js';

/** What a provisioner needs to know of a scope; all of it assigned before provisioning. */
export interface ScopeTarget {
  /** namespace/name of the Scope. */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly id: number;
  readonly nrn: string;
  readonly slug: string;
  readonly requestedSpec: RequestedSpec;
}

export type Progress =
  | { readonly state: 'ready'; readonly outputs?: Readonly<Record<string, string>> }
  | { readonly state: 'in_progress'; readonly message: string; readonly retryAfterMs?: number }
  /** Retrying as is will not help; a spec change (or a retry request) may. */
  | { readonly state: 'failed'; readonly reason: string; readonly message: string };

export interface ScopeProvisioner {
  readonly type: string;
  /**
   * Makes the scope's resources exist as desired; throws only errors worth a retry. `signal`
   * is the reconcile's: aborted, the provisioner stops making requests (another process may
   * lead now).
   */
  ensure(target: ScopeTarget, signal?: AbortSignal): Promise<Progress>;
  /**
   * What ensure() would answer, when the provisioner can tell from what it has cached without
   * a request; undefined when it cannot (or would have work to do). Lets a settled scope's
   * reconcile cost nothing.
   */
  peek?(target: ScopeTarget): Progress | undefined;
  /** Removes them; 'ready' once nothing is left. */
  remove(target: ScopeTarget, signal?: AbortSignal): Promise<Progress>;
}
