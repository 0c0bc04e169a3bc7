// The informers of what scope classes make: one per kind a class names, of the objects the
// operator labelled only (a cluster's other objects are none of its business), made the first
// time a class needs the kind and kept until the operator stops. A change to one wakes the
// scope that owns it (drift). The envelope's kinds are known in advance and start with the
// operator; a refused list or watch is remembered, so the class can say which right it lacks.
import type { Logger } from 'pino';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../../domain/names.js';
import {
  type Informer,
  type InformerOptions,
  type Kube,
  KubeApiError,
  type KubeObject,
  LimitRanges,
  leanObject,
  leanWithoutStatus,
  Namespaces,
  NetworkPolicies,
  ResourceQuotas,
  type ResourceType,
  ServiceAccounts,
} from '../../../kube/index.js';

/** The kinds of the namespace envelope: no discovery needed. */
export const ENVELOPE_KINDS: readonly ResourceType[] = [
  Namespaces,
  ResourceQuotas,
  LimitRanges,
  ServiceAccounts,
  NetworkPolicies,
];

/** `group/version/plural` of a resource: one informer each. */
export function resourceKey(type: ResourceType): string {
  return `${type.group}/${type.version}/${type.plural}`;
}

/** `deployments.apps`, `namespaces`: a resource as RBAC and kubectl name it. */
export function resourceName(type: ResourceType): string {
  return type.group === '' ? type.plural : `${type.plural}.${type.group}`;
}

/** A refused list or watch: the verb and resource a class must be given. */
export interface Refusal {
  readonly verb: string;
  readonly resource: string;
  readonly message: string;
}

export class ChildInformers {
  private readonly informers = new Map<string, Informer>();
  private readonly refusals = new Map<string, Refusal>();
  private readonly listeners: ((informer: Informer) => void)[] = [];
  private started = false;
  private stopped = false;

  constructor(
    private readonly kube: Pick<Kube, 'informer' | 'resource'>,
    private readonly options: Pick<InformerOptions, 'resyncMs'> & { log: Logger },
  ) {
    for (const type of ENVELOPE_KINDS) this.informerFor(type);
  }

  /** Called with every informer, those made already and those made later. */
  onInformer(listener: (informer: Informer) => void): void {
    this.listeners.push(listener);
    for (const informer of this.informers.values()) listener(informer);
  }

  /** The informer of `type`, made (and started, once the operator has started) on first use. */
  informerFor(type: ResourceType): Informer {
    const key = resourceKey(type);
    const known = this.informers.get(key);
    if (known !== undefined) return known;
    const informer = this.kube.informer(type, {
      ...this.options,
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
      // Whole objects: drift is told by comparing what the operator applied with what is there,
      // and a resource waited for is Current by its status. The envelope's kinds are never
      // waited for: their status (a quota's usage) would only cost memory, per scope.
      transform: ENVELOPE_KINDS.includes(type) ? leanWithoutStatus : leanObject,
    });
    informer.on('error', (error) => {
      if (error instanceof KubeApiError && error.code === 403) {
        this.refusals.set(key, {
          verb: 'list',
          resource: resourceName(type),
          message: error.message,
        });
      }
    });
    informer.on('add', () => this.refusals.delete(key));
    this.informers.set(key, informer);
    for (const listener of this.listeners) listener(informer);
    if (this.started && !this.stopped) this.startOne(informer);
    return informer;
  }

  /** The cached object, when the kind's informer has listed; undefined means unknown or none. */
  cached(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.informers.get(resourceKey(type))?.cache.get(namespace, name);
  }

  /** True once the kind's informer has its first list: a cache miss then means "none". */
  synced(type: ResourceType): boolean {
    return this.informers.get(resourceKey(type))?.hasSynced() === true;
  }

  /**
   * Why the kind cannot be watched, if its list was refused and still is: a refusal on
   * record is checked with one list of a single object, since the informer's own retry
   * backs off for a while after a 403 and a right may have been granted since.
   */
  async refusal(type: ResourceType, signal?: AbortSignal): Promise<Refusal | undefined> {
    const key = resourceKey(type);
    const refused = this.refusals.get(key);
    if (refused === undefined) return undefined;
    if (this.informers.get(key)?.hasSynced() === true) {
      this.refusals.delete(key);
      return undefined;
    }
    try {
      await this.kube.resource(type).list({
        labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
        limit: 1,
        ...(signal !== undefined ? { signal } : {}),
      });
    } catch (error) {
      if (error instanceof KubeApiError && error.code === 403) return refused;
      throw error;
    }
    this.refusals.delete(key);
    return undefined;
  }

  /** Starts the envelope's informers (awaited: the operator's caches) and any made later. */
  async start(): Promise<void> {
    this.started = true;
    await Promise.all([...this.informers.values()].map((informer) => informer.start()));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.informers.values()].map((informer) => informer.stop()));
  }

  /** A kind named after start: not awaited, its first list wakes the scopes through events. */
  private startOne(informer: Informer): void {
    informer.start().catch((error: unknown) => {
      if (!this.stopped) this.options.log.warn({ err: error }, 'child informer did not start');
    });
  }
}
