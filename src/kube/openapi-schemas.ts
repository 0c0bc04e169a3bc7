// The API server's published OpenAPI v3 schemas, one document per group-version
// (`/openapi/v3/api/v1`, `/openapi/v3/apis/<group>/<version>`, as kube-apiserver and the local
// plane serve them), fetched once, cached with a bound on count and age, and indexed by the
// `x-kubernetes-group-version-kind` of each definition. For checks of manifests the operator
// does not know in advance (a ScopeClass's resources, ADR 0031).
import { isRecord } from './client.js';
import type { DiscoveryTransport } from './rest-mapper.js';

export type OpenApiSchema = Record<string, unknown>;

/** A kind's schema and the document's definitions its `$ref`s name. */
export interface KindSchema {
  /** The definition's name in `components.schemas` (`io.k8s.api.core.v1.ConfigMap`). */
  readonly name: string;
  readonly schema: OpenApiSchema;
  /** `components.schemas` of its document: `#/components/schemas/<name>` resolves here. */
  readonly components: Readonly<Record<string, OpenApiSchema>>;
}

export interface OpenApiSchemasOptions {
  /** A document older than this is fetched again: a CRD's changed schema is seen within it. */
  readonly maxAgeMs?: number;
  /** A kind missing from a document younger than this is not asked again (a CRD just made). */
  readonly missRefreshMs?: number;
  /** Documents kept; the least recently used one goes beyond it. */
  readonly maxDocuments?: number;
  /** Deadline of one document's request. */
  readonly timeoutMs?: number;
  readonly now?: () => number;
}

const DEFAULT_MAX_AGE_MS = 60_000;
const DEFAULT_MISS_REFRESH_MS = 2_000;
// core/v1, the largest, is about 1.5 MB on kube-apiserver: 32 of them stay well under 100 MB.
const DEFAULT_MAX_DOCUMENTS = 32;
/** Well within the admission webhook's own 10 s (kube's default timeoutSeconds). */
const DEFAULT_TIMEOUT_MS = 4_000;
const GVK = 'x-kubernetes-group-version-kind';

interface Document {
  readonly components: Readonly<Record<string, OpenApiSchema>>;
  /** Kind -> definition name. */
  readonly kinds: ReadonlyMap<string, string>;
  readonly fetchedAt: number;
}

export class OpenApiSchemas {
  /** Document requests sent. */
  readonly stats = { requests: 0 };
  private readonly cache = new Map<string, Document>();
  private readonly inFlight = new Map<string, Promise<Document>>();
  private readonly maxAgeMs: number;
  private readonly missRefreshMs: number;
  private readonly maxDocuments: number;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(
    private readonly transport: DiscoveryTransport,
    options: OpenApiSchemasOptions = {},
  ) {
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
    this.missRefreshMs = options.missRefreshMs ?? DEFAULT_MISS_REFRESH_MS;
    this.maxDocuments = Math.max(1, options.maxDocuments ?? DEFAULT_MAX_DOCUMENTS);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * The schema the API server publishes for the kind; undefined when its group-version's
   * document names none (or the server serves no such document). Throws when the document
   * cannot be read (KubeApiError, KubeTransportError, as the transport raised them).
   */
  async kindSchema(group: string, version: string, kind: string): Promise<KindSchema | undefined> {
    const key = group === '' ? `api/${version}` : `apis/${group}/${version}`;
    let document = this.cache.get(key);
    const age = document === undefined ? Infinity : this.now() - document.fetchedAt;
    const missing = document !== undefined && !document.kinds.has(kind);
    if (document === undefined || age >= this.maxAgeMs || (missing && age >= this.missRefreshMs)) {
      document = await this.fetch(key, group, version);
    } else {
      this.remember(key, document);
    }
    const name = document.kinds.get(kind);
    const schema = name === undefined ? undefined : document.components[name];
    return name === undefined || schema === undefined
      ? undefined
      : { name, schema, components: document.components };
  }

  /** One request per document however many ask at once. */
  private fetch(key: string, group: string, version: string): Promise<Document> {
    const running = this.inFlight.get(key);
    if (running !== undefined) return running;
    const request = this.request(key, group, version).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, request);
    return request;
  }

  private async request(key: string, group: string, version: string): Promise<Document> {
    this.stats.requests++;
    const body = await this.transport.request<unknown>({
      method: 'GET',
      path: `/openapi/v3/${key}`,
      timeoutMs: this.timeoutMs,
    });
    const document = indexed(body, group, version, this.now());
    this.remember(key, document);
    return document;
  }

  private remember(key: string, document: Document): void {
    this.cache.delete(key);
    this.cache.set(key, document);
    while (this.cache.size > this.maxDocuments) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }
}

/**
 * The document's definitions, and which one is each kind of its group-version's (meta's
 * DeleteOptions and WatchEvent name every group-version's; only this one's counts).
 */
function indexed(body: unknown, group: string, version: string, fetchedAt: number): Document {
  const schemas = isRecord(body) && isRecord(body.components) ? body.components.schemas : {};
  const components: Record<string, OpenApiSchema> = {};
  const kinds = new Map<string, string>();
  if (isRecord(schemas)) {
    for (const [name, schema] of Object.entries(schemas)) {
      if (!isRecord(schema)) continue;
      components[name] = schema;
      const gvks = schema[GVK];
      if (!Array.isArray(gvks)) continue;
      for (const gvk of gvks) {
        if (
          isRecord(gvk) &&
          (gvk.group ?? '') === group &&
          gvk.version === version &&
          typeof gvk.kind === 'string' &&
          !kinds.has(gvk.kind)
        ) {
          kinds.set(gvk.kind, name);
        }
      }
    }
  }
  return { components, kinds, fetchedAt };
}
