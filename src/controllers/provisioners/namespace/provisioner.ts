// The `namespace` provisioner of scopes: a dedicated Namespace labelled with the scope's NRN
// and id, a ResourceQuota and a LimitRange derived from requested_spec, and a ServiceAccount,
// all applied server-side under one field manager (only those the caches do not already show
// as desired), and removed with the Namespace.
import type { RequestedSpec } from '../../../api/index.js';
import {
  labelValue,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  NRN_ANNOTATION,
  NRN_LABEL,
  nrnLabelValue,
  SCOPE_ANNOTATION,
  SCOPE_ID_LABEL,
  SCOPE_NAME_LABEL,
  SCOPE_NAMESPACE_LABEL,
  SCOPE_UID_LABEL,
  SPEC_HASH_ANNOTATION,
  scopeNamespaceName,
  shortHash,
} from '../../../domain/names.js';
import { canonical } from '../../../domain/status.js';
import {
  isAlreadyExists,
  isNotFound,
  type Kube,
  KubeApiError,
  type KubeObject,
  LimitRanges,
  Namespaces,
  type ResourceClient,
  ResourceQuotas,
  ServiceAccounts,
} from '../../../kube/index.js';
import type { Progress, ScopeProvisioner, ScopeTarget } from '../scope-provisioner.js';

export const FIELD_MANAGER = 'nrn-operator';
export const QUOTA_NAME = 'scope-quota';
export const LIMIT_RANGE_NAME = 'scope-limits';
export const SERVICE_ACCOUNT_NAME = 'scope-runtime';

/**
 * CPU by profile (ADR 0004): the quota's limits.cpu / requests.cpu, and the per-container
 * default limit / request the LimitRange fills in.
 */
export const CPU_PROFILES = {
  standard: { limit: '2', request: '1', defaultLimit: '500m', defaultRequest: '100m' },
  intensive: { limit: '8', request: '4', defaultLimit: '2', defaultRequest: '500m' },
} as const;

/** Reads what the informers hold, so that a steady scope costs no request. */
export interface ChildLookup {
  namespace(name: string): KubeObject | undefined;
  inNamespace(
    kind: 'ResourceQuota' | 'LimitRange' | 'ServiceAccount',
    namespace: string,
    name: string,
  ): KubeObject | undefined;
}

const gib = (gb: number) => `${Math.round(gb * 1024)}Mi`;

/** The children of a scope, as applied. Exported for tests. */
export function desiredChildren(target: ScopeTarget): KubeObject[] {
  const ns = scopeNamespaceName(target.id);
  const labels = {
    [MANAGED_BY_LABEL]: MANAGED_BY,
    [SCOPE_ID_LABEL]: String(target.id),
    [SCOPE_UID_LABEL]: target.uid,
    [SCOPE_NAMESPACE_LABEL]: target.namespace,
    [SCOPE_NAME_LABEL]: labelValue(target.name),
    [NRN_LABEL]: nrnLabelValue(target.nrn),
  };
  const spec = target.requestedSpec;
  const hash = specHash(spec, target);
  const annotations = {
    [NRN_ANNOTATION]: target.nrn,
    [SCOPE_ANNOTATION]: `${target.namespace}/${target.name}`,
    [SPEC_HASH_ANNOTATION]: hash,
  };
  const meta = (name: string, namespace?: string) => ({
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    labels,
    annotations,
  });
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: meta(ns) },
    {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: meta(QUOTA_NAME, ns),
      spec: { hard: quotaOf(spec) },
    },
    {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: meta(LIMIT_RANGE_NAME, ns),
      spec: { limits: [limitsOf(spec)] },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(SERVICE_ACCOUNT_NAME, ns) },
  ];
}

function quotaOf(spec: RequestedSpec): Record<string, string> {
  const hard: Record<string, string> = {};
  if (spec.memory_in_gb !== undefined) {
    hard['limits.memory'] = gib(spec.memory_in_gb);
    hard['requests.memory'] = gib(spec.memory_in_gb);
  }
  if (spec.cpu_profile !== undefined) {
    hard['limits.cpu'] = CPU_PROFILES[spec.cpu_profile].limit;
    hard['requests.cpu'] = CPU_PROFILES[spec.cpu_profile].request;
  }
  if (spec.local_storage_in_gb !== undefined) {
    hard['limits.ephemeral-storage'] = gib(spec.local_storage_in_gb);
    hard['requests.ephemeral-storage'] = gib(spec.local_storage_in_gb);
  }
  return hard;
}

/**
 * A quota on limits.* makes pods without limits fail admission; the LimitRange gives every
 * container defaults so they still start, and caps one container at the whole quota.
 */
function limitsOf(spec: RequestedSpec): Record<string, unknown> {
  const max: Record<string, string> = {};
  const defaults: Record<string, string> = {};
  const requests: Record<string, string> = {};
  if (spec.memory_in_gb !== undefined) {
    max.memory = gib(spec.memory_in_gb);
    defaults.memory = gib(Math.min(spec.memory_in_gb, 0.5));
    requests.memory = gib(Math.min(spec.memory_in_gb, 0.25));
  }
  if (spec.cpu_profile !== undefined) {
    const cpu = CPU_PROFILES[spec.cpu_profile];
    max.cpu = cpu.limit;
    defaults.cpu = cpu.defaultLimit;
    requests.cpu = cpu.defaultRequest;
  }
  if (spec.local_storage_in_gb !== undefined) {
    max['ephemeral-storage'] = gib(spec.local_storage_in_gb);
  }
  return {
    type: 'Container',
    ...(Object.keys(max).length > 0 ? { max } : {}),
    ...(Object.keys(defaults).length > 0 ? { default: defaults } : {}),
    ...(Object.keys(requests).length > 0 ? { defaultRequest: requests } : {}),
  };
}

function specHash(spec: RequestedSpec, target: ScopeTarget): string {
  // v2: children carry the scope annotation (and a label value that fits for long names).
  return shortHash(canonical({ spec, nrn: target.nrn, v: 2 }), 16);
}

/**
 * A refusal (400, 403, 422) will not fix itself: `failed`. Conflicts, 5xx and network errors
 * are thrown on, for the work queue to retry with backoff.
 */
function refusedBy(error: unknown): Progress {
  if (
    error instanceof KubeApiError &&
    !error.transient &&
    error.code !== 409 &&
    error.code !== 404
  ) {
    return {
      state: 'failed',
      reason: 'ProvisionRefused',
      message: `${error.reason}: ${error.message}`,
    };
  }
  throw error;
}

export class NamespaceProvisioner implements ScopeProvisioner {
  readonly type = 'namespace';
  private readonly clients: Record<string, ResourceClient>;

  constructor(
    kube: Pick<Kube, 'resource'>,
    private readonly lookup: ChildLookup,
  ) {
    this.clients = {
      Namespace: kube.resource(Namespaces),
      ResourceQuota: kube.resource(ResourceQuotas),
      LimitRange: kube.resource(LimitRanges),
      ServiceAccount: kube.resource(ServiceAccounts),
    };
  }

  async ensure(target: ScopeTarget, signal?: AbortSignal): Promise<Progress> {
    const desired = desiredChildren(target);
    const nsName = scopeNamespaceName(target.id);
    let made = false;
    let current = this.lookup.namespace(nsName);
    if (current === undefined) {
      // Not in the cache of ours: create it, which also says whether someone else's has the
      // name (409), in one request instead of a read and then an apply. Its fields are then
      // owned by an Update entry of our manager beside later Apply ones; the labels it carries
      // never change for a scope and the spec-hash is rewritten, so that co-ownership keeps
      // nothing that an apply would have removed.
      const namespace = desired.find((child) => child.kind === 'Namespace');
      try {
        if (namespace !== undefined) {
          current = await this.clients.Namespace?.create(namespace, {
            fieldManager: FIELD_MANAGER,
            ...(signal !== undefined ? { signal } : {}),
          });
          made = true;
        }
      } catch (error) {
        if (!isAlreadyExists(error)) return refusedBy(error);
        current = await this.readNamespace(nsName, signal);
      }
    }
    const refused = this.refusal(target, current);
    if (refused !== undefined) return refused;
    const stale = desired.filter(
      (child) => !(made && child.kind === 'Namespace') && !this.upToDate(child),
    );
    if (stale.length === 0) return { state: 'ready', outputs: { namespace: nsName } };
    try {
      // The Namespace first (the others live in it), then the rest side by side.
      const [first, ...rest] = stale;
      if (first?.kind === 'Namespace') await this.apply(first, signal);
      const others = first?.kind === 'Namespace' ? rest : stale;
      const results = await Promise.allSettled(others.map((child) => this.apply(child, signal)));
      for (const result of results) if (result.status === 'rejected') throw result.reason;
    } catch (error) {
      return refusedBy(error);
    }
    return { state: 'ready', outputs: { namespace: nsName } };
  }

  peek(target: ScopeTarget): Progress | undefined {
    const nsName = scopeNamespaceName(target.id);
    const cached = this.lookup.namespace(nsName);
    // Not cached: only a request can say whether someone else's namespace has the name.
    if (cached === undefined) return undefined;
    const refused = this.refusal(target, cached);
    if (refused !== undefined) return refused;
    if (!desiredChildren(target).every((child) => this.upToDate(child))) return undefined;
    return { state: 'ready', outputs: { namespace: nsName } };
  }

  async remove(target: ScopeTarget, signal?: AbortSignal): Promise<Progress> {
    const nsName = scopeNamespaceName(target.id);
    const current = await this.readNamespace(nsName, signal);
    if (current === undefined) return { state: 'ready' };
    // Never delete a namespace this scope does not own (a reused id, a hand-made namespace).
    if (current.metadata.labels?.[SCOPE_UID_LABEL] !== target.uid) return { state: 'ready' };
    if (current.metadata.deletionTimestamp === undefined) {
      try {
        await this.clients.Namespace?.delete(
          { name: nsName },
          {
            preconditions: { uid: current.metadata.uid ?? '' },
            ...(signal !== undefined ? { signal } : {}),
          },
        );
      } catch (error) {
        if (isNotFound(error)) return { state: 'ready' };
        throw error;
      }
    }
    // The namespace's own finalizer deletes what is in it; done once the namespace is gone.
    return {
      state: 'in_progress',
      message: `namespace ${nsName} is terminating`,
      retryAfterMs: 250,
    };
  }

  /** The namespace as the API server has it now, or undefined when there is none. */
  private async readNamespace(
    name: string,
    signal: AbortSignal | undefined,
  ): Promise<KubeObject | undefined> {
    try {
      return await this.clients.Namespace?.get({ name }, signal !== undefined ? { signal } : {});
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Why the scope's namespace cannot be used as it is, if it cannot. */
  private refusal(target: ScopeTarget, existing: KubeObject | undefined): Progress | undefined {
    if (existing === undefined) return undefined;
    const nsName = existing.metadata.name;
    if (existing.metadata.labels?.[SCOPE_UID_LABEL] !== target.uid) {
      return {
        state: 'failed',
        reason: 'NamespaceTaken',
        message: `namespace ${nsName} exists and does not belong to this scope`,
      };
    }
    if (existing.metadata.deletionTimestamp !== undefined) {
      return {
        state: 'in_progress',
        message: `namespace ${nsName} is terminating`,
        retryAfterMs: 1000,
      };
    }
    return undefined;
  }

  /** The answer is not read: the child's informer brings what the API server made of it. */
  private apply(child: KubeObject, signal: AbortSignal | undefined): Promise<void> {
    const client = this.clients[child.kind];
    if (client === undefined) return Promise.resolve();
    return client.applyAndForget(child, {
      fieldManager: FIELD_MANAGER,
      force: true,
      ...(signal !== undefined ? { signal } : {}),
    });
  }

  /** The child is in the caches with the current spec hash: nothing to write. */
  private upToDate(child: KubeObject): boolean {
    const found =
      child.kind === 'Namespace'
        ? this.lookup.namespace(child.metadata.name)
        : this.lookup.inNamespace(
            child.kind as 'ResourceQuota' | 'LimitRange' | 'ServiceAccount',
            child.metadata.namespace ?? '',
            child.metadata.name,
          );
    return (
      found !== undefined &&
      found.metadata.deletionTimestamp === undefined &&
      found.metadata.annotations?.[SPEC_HASH_ANNOTATION] ===
        child.metadata.annotations?.[SPEC_HASH_ANNOTATION]
    );
  }
}
