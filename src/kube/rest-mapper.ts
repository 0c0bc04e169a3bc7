// The REST mapper: apiVersion + kind -> the resource that serves it (plural, scope, verbs),
// from API discovery, for kinds the operator does not know in advance (a ScopeClass's
// manifests). One discovery document per group-version, cached, as client-go's memory
// discovery cache and DeferredDiscoveryRESTMapper do (client-go discovery/cached/memory/
// memcache.go, restmapper/discovery.go), with their one weakness bounded: client-go resets
// the whole cache on any miss; here a miss refreshes only its group-version, and at most
// once per refresh interval, so a class naming a kind that does not exist cannot cost a
// discovery request per reconcile.
import { defineResource, type ResourceType } from './client.js';
import { KubeApiError } from './errors.js';
import type { RequestOptions } from './transport.js';

export interface RestMapping {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
}

/** What the mapper needs of the Transport: one JSON request. */
export interface DiscoveryTransport {
  request<T = unknown>(options: RequestOptions): Promise<T>;
}

export interface RestMapperOptions {
  /**
   * A group-version whose discovery is younger than this is not asked again on a miss: a
   * CRD installed after start is found within this long.
   */
  readonly refreshIntervalMs?: number;
  /** Group-versions kept; the least recently used one goes beyond it. */
  readonly maxGroupVersions?: number;
  /** The clock (ms): tests move it instead of sleeping. */
  readonly now?: () => number;
}

export interface RestMapperStats {
  /** Discovery requests sent (GET /api/v1, GET /apis/<group>/<version>). */
  discoveryRequests: number;
}

const DEFAULT_REFRESH_INTERVAL_MS = 5_000;
const DEFAULT_MAX_GROUP_VERSIONS = 256;
/** Resources read from one discovery document: core/v1, the largest, lists about 50. */
const MAX_RESOURCES_PER_GROUP_VERSION = 2_000;
// apimachinery validation: a group is a DNS subdomain (at most 253), a version a DNS label.
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VERSION = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const KIND = /^[A-Za-z][A-Za-z0-9]*$/;
const MAX_KIND_LENGTH = 253;

interface Discovered {
  /** undefined: the server answered 404, it serves no such group-version. */
  readonly kinds: ReadonlyMap<string, RestMapping> | undefined;
  readonly fetchedAt: number;
}

interface GroupVersion {
  readonly group: string;
  readonly version: string;
  /** "apps/v1", "v1": the cache key. */
  readonly key: string;
  readonly path: string;
}

export class RestMapper {
  readonly stats: RestMapperStats = { discoveryRequests: 0 };
  private readonly cache = new Map<string, Discovered>();
  private readonly inFlight = new Map<string, Promise<Discovered>>();
  private readonly refreshIntervalMs: number;
  private readonly maxGroupVersions: number;
  private readonly now: () => number;

  constructor(
    private readonly transport: DiscoveryTransport,
    options: RestMapperOptions = {},
  ) {
    this.refreshIntervalMs = options.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS;
    this.maxGroupVersions = Math.max(1, options.maxGroupVersions ?? DEFAULT_MAX_GROUP_VERSIONS);
    this.now = options.now ?? Date.now;
  }

  /**
   * The mapping of a kind, from API discovery; undefined when the API server serves no such
   * kind. With `maxAgeMs`, a cached document at least that old is fetched again first. Throws on a malformed apiVersion or kind, and on discovery errors other than 404
   * (KubeApiError, KubeTransportError) as the transport raised them.
   */
  async mappingFor(
    apiVersion: string,
    kind: string,
    signal?: AbortSignal,
    options: { readonly maxAgeMs?: number } = {},
  ): Promise<RestMapping | undefined> {
    const gv = parseApiVersion(apiVersion);
    if (kind.length > MAX_KIND_LENGTH || !KIND.test(kind)) {
      throw new Error(`kind ${JSON.stringify(kind.slice(0, 80))} is not a Kubernetes kind name`);
    }
    const cached = this.cache.get(gv.key);
    // A hit is kept for ever unless the caller bounds its age: who must see a kind go (a CRD
    // deleted) asks with maxAgeMs, and the document is asked again past it.
    const stale =
      cached !== undefined &&
      options.maxAgeMs !== undefined &&
      this.now() - cached.fetchedAt >= options.maxAgeMs;
    if (cached !== undefined && !stale) {
      this.touch(gv.key, cached);
      const found = cached.kinds?.get(kind);
      if (found !== undefined) return found;
      // A miss on a young document is final until it ages: the bound on requests per miss.
      if (this.now() - cached.fetchedAt < this.refreshIntervalMs && !this.inFlight.has(gv.key)) {
        return undefined;
      }
    }
    const discovered = await abortable(this.discover(gv), signal);
    return discovered.kinds?.get(kind);
  }

  /** A ResourceType for the kind, ready for Kube.resource()/informer(); undefined as above. */
  async resourceFor(
    apiVersion: string,
    kind: string,
    signal?: AbortSignal,
  ): Promise<ResourceType | undefined> {
    const mapping = await this.mappingFor(apiVersion, kind, signal);
    if (mapping === undefined) return undefined;
    return defineResource({
      group: mapping.group,
      version: mapping.version,
      plural: mapping.plural,
      kind: mapping.kind,
      namespaced: mapping.namespaced,
    });
  }

  /**
   * The group-version's discovery document: one request however many ask at once. It runs
   * without any caller's signal, so that one caller giving up does not fail the others.
   */
  private discover(gv: GroupVersion): Promise<Discovered> {
    const running = this.inFlight.get(gv.key);
    if (running !== undefined) return running;
    const request = this.fetch(gv).finally(() => this.inFlight.delete(gv.key));
    this.inFlight.set(gv.key, request);
    return request;
  }

  private async fetch(gv: GroupVersion): Promise<Discovered> {
    this.stats.discoveryRequests++;
    let kinds: Map<string, RestMapping> | undefined;
    try {
      const list = await this.transport.request<unknown>({ method: 'GET', path: gv.path });
      kinds = mappingsOf(gv, list);
    } catch (error) {
      // 404: no such group-version (yet); kept like an answer. Anything else is not an
      // answer about the kind and is not cached: transient errors (memcache.go
      // isTransientError) are asked again next time, and a 403 must reach the caller.
      if (!(error instanceof KubeApiError)) throw error;
      if (error.code !== 404) {
        throw new KubeApiError(
          error.code,
          error.reason,
          `API discovery GET ${gv.path} failed (${error.code} ${error.reason}): ${error.message}`,
          error.details,
        );
      }
    }
    const discovered: Discovered = { kinds, fetchedAt: this.now() };
    this.touch(gv.key, discovered);
    return discovered;
  }

  /** Stores as the most recently used, dropping the least recently used beyond the bound. */
  private touch(key: string, value: Discovered): void {
    this.cache.delete(key);
    this.cache.set(key, value);
    while (this.cache.size > this.maxGroupVersions) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }
}

function parseApiVersion(apiVersion: string): GroupVersion {
  const parts = apiVersion.split('/');
  const [group, version] = parts.length === 1 ? ['', parts[0] ?? ''] : parts;
  const valid =
    parts.length <= 2 &&
    group !== undefined &&
    version !== undefined &&
    (group === '' ? parts.length === 1 : group.length <= 253 && GROUP.test(group)) &&
    version.length <= 63 &&
    VERSION.test(version);
  if (!valid) {
    throw new Error(
      `apiVersion ${JSON.stringify(apiVersion.slice(0, 300))} is not <group>/<version> or <version>`,
    );
  }
  return group === ''
    ? { group, version, key: version, path: `/api/${version}` }
    : { group, version, key: `${group}/${version}`, path: `/apis/${group}/${version}` };
}

/**
 * The kinds of an APIResourceList. Subresources (deployments/status, pods/log) are not kinds
 * (restmapper/discovery.go skips names with a slash); where two resources give one kind,
 * the first listed stays.
 */
function mappingsOf(gv: GroupVersion, list: unknown): Map<string, RestMapping> {
  const kinds = new Map<string, RestMapping>();
  const resources = isRecord(list) && Array.isArray(list.resources) ? list.resources : [];
  for (const resource of resources.slice(0, MAX_RESOURCES_PER_GROUP_VERSION)) {
    if (!isRecord(resource)) continue;
    const { name, kind, namespaced, verbs } = resource;
    if (typeof name !== 'string' || name === '' || name.includes('/')) continue;
    if (typeof kind !== 'string' || kind === '' || kinds.has(kind)) continue;
    kinds.set(kind, {
      group: gv.group,
      version: gv.version,
      kind,
      plural: name,
      namespaced: namespaced === true,
      verbs: Array.isArray(verbs) ? verbs.filter((v): v is string => typeof v === 'string') : [],
    });
  }
  return kinds;
}

/** The shared promise, or the caller's abort, whichever comes first. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
