// What a scope provisioner is: an idempotent, level-triggered ensure/remove pair that reports
// progress instead of blocking, so the reconciler can requeue and write status in between.
import type { ChildReference, RequestedSpec, ScopeSpec } from '../../api/index.js';
import type { Child } from '../../domain/scope-classes/children.js';

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
  /** What the scope's class makes for it, rendered (none for a webhook or none provisioner). */
  readonly children: readonly Child[];
  /** The namespace of the envelope, as rendered. */
  readonly envelopeNamespace: string | undefined;
  /** What status records as made for the scope so far. */
  readonly inventory: readonly ChildReference[];
  readonly spec: ScopeSpec;
  readonly generation: number | undefined;
  readonly domain: string;
  /** For a `webhook` class: where the agent is, and the deadline of its answers. */
  readonly webhook?: ScopeWebhookEndpoint;
}

export interface ScopeWebhookEndpoint {
  readonly url: string;
  /** The ScopeClass, for messages. */
  readonly scopeClass: string;
  /** Secret in the operator's namespace whose key `key` signs calls; unsigned if absent. */
  readonly signingSecret: string | undefined;
  readonly deadlineSeconds: number;
  /** When the current provisioning began: the deadline counts from there. */
  readonly startedAt: Date;
}

/** A right the operator lacks, named so the class can say which to grant. */
export interface MissingRight {
  readonly verb: string;
  readonly resource: string;
}

/**
 * How far provisioning got. `inventory`: every object that may now exist for the scope (what
 * is there to remove or prune later), recorded in the scope's status.
 */
export type Progress =
  | {
      readonly state: 'ready';
      readonly outputs?: Readonly<Record<string, string>>;
      readonly inventory?: readonly ChildReference[];
    }
  | {
      readonly state: 'in_progress';
      readonly message: string;
      readonly retryAfterMs?: number;
      readonly inventory?: readonly ChildReference[];
    }
  /** Retrying as is will not help; a spec change (or a retry request) may. */
  | {
      readonly state: 'failed';
      readonly reason: string;
      readonly message: string;
      readonly inventory?: readonly ChildReference[];
      readonly missingRight?: MissingRight;
    };

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
  /** Removes them (or lets them go: `removal`); 'ready' once nothing is left. */
  remove(target: ScopeTarget, signal?: AbortSignal, removal?: Removal): Promise<Progress>;
}

/**
 * What remove() does with what the scope's inventory holds. `delete`: the scope is deleted
 * and its class's deletion policy says delete. `orphan`: the policy says orphan: nothing is
 * deleted, everything is let go of (unmarked, so no scope ever deletes it). `keep-namespaces`:
 * a class change left them behind: namespaces (with all in them) are let go of, never deleted,
 * since they may hold what the operator did not make; the rest is deleted.
 */
export type Removal = 'delete' | 'orphan' | 'keep-namespaces';

/** One object a provisioner deleted or let go of, for the scope's Event and a WARN line. */
export interface Removed {
  readonly action: 'Deleted' | 'Orphaned';
  readonly ref: ChildReference;
  /** Why, in a few words: `the scope is deleted`, `its class no longer makes it`. */
  readonly why: string;
  /** The scope's delete asked for it (a class change did not). */
  readonly requested: boolean;
}
