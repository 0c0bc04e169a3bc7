// What a service provisioner is: like a scope's, an ensure/remove pair that reports progress
// rather than blocking, plus one more answer, `unavailable`, for a provider that could not be
// reached: the reconciler retries it with backoff until the specification's deadline.
import type { MessageItem, ServiceSpec } from '../../api/index.js';

export type ServiceAction = 'create' | 'update' | 'delete';

/** What a provisioner needs to know of a service; secrets only inside `attributes`. */
export interface ServiceTarget {
  /** namespace/name of the Service. */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly generation: number | undefined;
  readonly spec: ServiceSpec;
  /** Plain and secret attributes together, validated against the specification. */
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly action: ServiceAction;
}

/** Where the provider is and how calls to it are signed: from the ServiceSpecification. */
export interface ProviderEndpoint {
  readonly url: string;
  /** namespace/name of the specification, for messages. */
  readonly specification: string;
  readonly namespace: string;
  /** Secret (in the specification's namespace) whose key `key` signs calls; unsigned if absent. */
  readonly signingSecret: string | undefined;
}

export type ServiceProgress =
  | {
      readonly state: 'ready';
      /** Output attributes the provider returned, as it returned them. */
      readonly outputs?: Readonly<Record<string, unknown>>;
      readonly messages?: readonly MessageItem[];
    }
  | {
      readonly state: 'in_progress';
      readonly message: string;
      /** The provider's Retry-After, when it gave one. */
      readonly retryAfterMs?: number;
    }
  /** The provider said no: retrying the same request will not help; a spec change may. */
  | {
      readonly state: 'failed';
      readonly reason: string;
      readonly messages: readonly MessageItem[];
    }
  /** No usable answer (network error, 5xx, 408, 429): worth retrying until the deadline. */
  | { readonly state: 'unavailable'; readonly message: string; readonly retryAfterMs?: number };

export interface ServiceProvisioner {
  readonly type: string;
  /**
   * One call for `target.action` create or update; idempotent on the provider's side. `signal`
   * is the reconcile's: aborted (leadership lost), the call is abandoned and the abort thrown,
   * so that a process that no longer leads neither waits on the provider nor reports it.
   */
  ensure(
    target: ServiceTarget,
    endpoint: ProviderEndpoint,
    signal?: AbortSignal,
  ): Promise<ServiceProgress>;
  /** One delete call; 'ready' once the provider holds nothing of it. */
  remove(
    target: ServiceTarget,
    endpoint: ProviderEndpoint,
    signal?: AbortSignal,
  ): Promise<ServiceProgress>;
}
