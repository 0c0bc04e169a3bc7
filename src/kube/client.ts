// The typed client: one resource kind's verbs (get, list, create, replace, patch, apply,
// status writes, delete, watch) with answers checked and parsed by the kind's zod schemas.
import type { z } from 'zod';
import { KubeApiError, KubeSchemaError } from './errors.js';
import type { QueryValue, Transport, WatchEvent } from './transport.js';

/** What a resource is on the wire, and optionally the zod schemas of its spec and status. */
export interface ResourceType<Spec = unknown, Status = unknown> {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly spec?: z.ZodType<Spec>;
  readonly status?: z.ZodType<Status>;
}

/** `v1`, `apps/v1`: the apiVersion of a resource's objects. */
export function apiVersionOf(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

export function defineResource<Spec = unknown, Status = unknown>(
  type: ResourceType<Spec, Status>,
): ResourceType<Spec, Status> {
  return type;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  generateName?: string;
  [field: string]: unknown;
}

/** An object as the API returns it; kinds without spec/status (Secret, Event ...) use the rest. */
export interface KubeObject<Spec = unknown, Status = unknown> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: Spec;
  status?: Status;
  [field: string]: unknown;
}

/** What a write sends: metadata needs only a name, and apiVersion/kind are filled in. */
export interface ObjectInput<Spec = unknown, Status = unknown> {
  apiVersion?: string;
  kind?: string;
  metadata: Partial<ObjectMeta> & { name?: string };
  spec?: Spec;
  status?: Status;
  [field: string]: unknown;
}

export interface ObjectRef {
  readonly name: string;
  /** Required for namespaced kinds. */
  readonly namespace?: string;
}

export interface ListOptions {
  /** Omitted on a namespaced kind: all namespaces. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly signal?: AbortSignal;
}

export interface ListResult<O> {
  readonly items: O[];
  readonly resourceVersion: string;
  /** Set when there are more pages. */
  readonly continue?: string;
}

/** Aborts the request (a halted controller's reconcile, a caller gone). */
interface Abortable {
  readonly signal?: AbortSignal;
}

export interface WriteOptions extends Abortable {
  readonly fieldManager?: string;
  readonly dryRun?: boolean;
  readonly fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
}

export interface ApplyOptions extends Abortable {
  readonly fieldManager: string;
  readonly force?: boolean;
  readonly dryRun?: boolean;
}

export type PatchType = 'merge' | 'json' | 'strategic';

export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

export interface PatchOptions extends WriteOptions {
  /** `merge` (RFC 7386) unless said; `json` (RFC 6902) takes a list of operations. */
  readonly type?: PatchType;
}

export interface DeleteOptions extends Abortable {
  readonly propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly gracePeriodSeconds?: number;
  readonly dryRun?: boolean;
}

export interface WatchOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly resourceVersion?: string;
  readonly allowWatchBookmarks?: boolean;
  readonly timeoutSeconds?: number;
  readonly idleTimeoutMs: number;
  readonly signal?: AbortSignal;
  readonly onOpen?: () => void;
}

/** A watch event with its object checked; ERROR and BOOKMARK keep the raw object. */
export type ResourceWatchEvent<O> =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: O }
  | { readonly type: 'BOOKMARK'; readonly resourceVersion: string }
  | { readonly type: 'ERROR'; readonly error: KubeApiError }
  /** The object arrived but our schema refuses it: the raw object, for its key. */
  | {
      readonly type: 'INVALID';
      readonly eventType: 'ADDED' | 'MODIFIED' | 'DELETED';
      readonly error: KubeSchemaError;
      readonly raw: KubeObject;
    };

const CONTENT_TYPES: Record<PatchType | 'apply', string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  // The body is JSON, which is YAML; this is what kubectl --server-side sends.
  apply: 'application/apply-patch+yaml',
};

export class ResourceClient<Spec = unknown, Status = unknown> {
  readonly apiVersion: string;

  constructor(
    private readonly transport: Transport,
    readonly type: ResourceType<Spec, Status>,
  ) {
    this.apiVersion = apiVersionOf(type);
  }

  async get(
    ref: ObjectRef,
    options: { signal?: AbortSignal } = {},
  ): Promise<KubeObject<Spec, Status>> {
    const raw = await this.transport.request({
      method: 'GET',
      path: this.path(ref.namespace, ref.name),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return this.parse(raw);
  }

  /** One page; the items are parsed, so a refused item fails the whole call. */
  async list(options: ListOptions = {}): Promise<ListResult<KubeObject<Spec, Status>>> {
    const raw = await this.listRaw(options);
    return { ...raw, items: raw.items.map((item) => this.parse(item)) };
  }

  /** One page, envelope only: the informer parses item by item so one bad object costs one. */
  async listRaw(options: ListOptions = {}): Promise<ListResult<unknown>> {
    const raw = await this.transport.request({
      method: 'GET',
      path: this.collectionPath(options.namespace, true),
      query: {
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        limit: options.limit,
        continue: options.continue,
        resourceVersion: options.resourceVersion,
      },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!isRecord(raw) || !Array.isArray(raw.items)) {
      throw new KubeSchemaError(
        `${this.type.kind}List`,
        this.collectionPath(options.namespace, true),
        ['items: expected an array'],
      );
    }
    const metadata = isRecord(raw.metadata) ? raw.metadata : {};
    const next = typeof metadata.continue === 'string' ? metadata.continue : '';
    return {
      items: raw.items as unknown[],
      resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '',
      ...(next !== '' ? { continue: next } : {}),
    };
  }

  async create(
    object: ObjectInput<Spec, Status>,
    options: WriteOptions = {},
  ): Promise<KubeObject<Spec, Status>> {
    return this.parse(await this.post(object, options, false));
  }

  /**
   * create, for a caller that has no use for the answer (an Event): the answer is neither
   * parsed nor checked. Errors are as create's.
   */
  async createAndForget(object: ObjectInput<Spec, Status>, options: WriteOptions = {}) {
    await this.post(object, options, true);
  }

  private post(object: ObjectInput<Spec, Status>, options: WriteOptions, discardAnswer: boolean) {
    return this.transport.request({
      method: 'POST',
      path: this.collectionPath(this.namespaceOf(object), false),
      query: writeQuery(options),
      body: this.withTypeMeta(object),
      discardAnswer,
      ...signalOf(options),
    });
  }

  /** PUT: optimistic concurrency through metadata.resourceVersion when it is set. */
  async replace(
    object: ObjectInput<Spec, Status>,
    options: WriteOptions = {},
  ): Promise<KubeObject<Spec, Status>> {
    const raw = await this.transport.request({
      method: 'PUT',
      path: this.path(this.namespaceOf(object), nameOf(object)),
      query: writeQuery(options),
      body: this.withTypeMeta(object),
      ...signalOf(options),
    });
    return this.parse(raw);
  }

  async patch(
    ref: ObjectRef,
    patch: Record<string, unknown> | readonly JsonPatchOperation[],
    options: PatchOptions = {},
  ): Promise<KubeObject<Spec, Status>> {
    return this.sendPatch(ref, '', patch, options);
  }

  /** Server-side apply: the fields `object` sets become this manager's. */
  async apply(
    object: ObjectInput<Spec, Status>,
    options: ApplyOptions,
  ): Promise<KubeObject<Spec, Status>> {
    return this.parse(await this.sendApply(object, '', options, false));
  }

  /**
   * apply, for a caller that has no use for the answer (a child it follows through an
   * informer): the answer is neither parsed nor checked. Errors are as apply's.
   */
  async applyAndForget(object: ObjectInput<Spec, Status>, options: ApplyOptions): Promise<void> {
    await this.sendApply(object, '', options, true);
  }

  /** Merge patch of /status: the server leaves spec and metadata alone. */
  async patchStatus(
    ref: ObjectRef,
    patch: Record<string, unknown>,
    options: WriteOptions = {},
  ): Promise<KubeObject<Spec, Status>> {
    return this.sendPatch(ref, '/status', patch, { ...options, type: 'merge' });
  }

  async applyStatus(
    object: ObjectInput<Spec, Status>,
    options: ApplyOptions,
  ): Promise<KubeObject<Spec, Status>> {
    return this.parse(await this.sendApply(object, '/status', options, false));
  }

  async replaceStatus(
    object: ObjectInput<Spec, Status>,
    options: WriteOptions = {},
  ): Promise<KubeObject<Spec, Status>> {
    const raw = await this.transport.request({
      method: 'PUT',
      path: `${this.path(this.namespaceOf(object), nameOf(object))}/status`,
      query: writeQuery(options),
      body: this.withTypeMeta(object),
      ...signalOf(options),
    });
    return this.parse(raw);
  }

  /**
   * Returns the object while finalizers hold it (deletionTimestamp set), or undefined when the
   * server answers with a Status (gone at once).
   */
  async delete(
    ref: ObjectRef,
    options: DeleteOptions = {},
  ): Promise<KubeObject<Spec, Status> | undefined> {
    const raw = await this.transport.request({
      method: 'DELETE',
      path: this.path(ref.namespace, ref.name),
      query: { dryRun: options.dryRun ? 'All' : undefined },
      body: {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
        ...(options.preconditions ? { preconditions: options.preconditions } : {}),
        ...(options.gracePeriodSeconds !== undefined
          ? { gracePeriodSeconds: options.gracePeriodSeconds }
          : {}),
      },
      ...signalOf(options),
    });
    if (isRecord(raw) && raw.kind === 'Status') return undefined;
    return this.parse(raw);
  }

  /** One watch request: resolves when the server ends it, rejects on a failure. */
  watch(
    options: WatchOptions,
    onEvent: (event: ResourceWatchEvent<KubeObject<Spec, Status>>) => void,
  ): Promise<void> {
    const query: Record<string, QueryValue> = {
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      resourceVersion: options.resourceVersion,
      allowWatchBookmarks: options.allowWatchBookmarks,
      timeoutSeconds: options.timeoutSeconds,
    };
    return this.transport.watch({
      path: this.collectionPath(options.namespace, true),
      query,
      idleTimeoutMs: options.idleTimeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onOpen ? { onOpen: options.onOpen } : {}),
      onEvent: (event) => onEvent(this.watchEvent(event)),
    });
  }

  /** Checks the envelope and parses spec and status; throws KubeSchemaError naming the field. */
  parse(raw: unknown): KubeObject<Spec, Status> {
    const object = this.checkEnvelope(raw);
    const key = keyOf(object.metadata);
    const problems: string[] = [];
    const out: KubeObject<Spec, Status> = { ...object };
    if (this.type.spec !== undefined && object.spec !== undefined) {
      const parsed = this.type.spec.safeParse(object.spec);
      if (parsed.success) out.spec = parsed.data;
      else problems.push(...issuesOf('spec', parsed.error));
    }
    if (this.type.status !== undefined && object.status !== undefined) {
      const parsed = this.type.status.safeParse(object.status);
      if (parsed.success) out.status = parsed.data;
      else problems.push(...issuesOf('status', parsed.error));
    }
    if (problems.length > 0) throw new KubeSchemaError(this.type.kind, key, problems);
    return out;
  }

  private checkEnvelope(raw: unknown): KubeObject<Spec, Status> {
    const where = `${this.type.kind} answer`;
    if (!isRecord(raw)) throw new KubeSchemaError(this.type.kind, where, ['expected an object']);
    const problems: string[] = [];
    // Items of a list come without apiVersion and kind on real servers.
    const apiVersion = raw.apiVersion ?? this.apiVersion;
    const kind = raw.kind ?? this.type.kind;
    if (apiVersion !== this.apiVersion)
      problems.push(`apiVersion: expected ${this.apiVersion}, got ${String(apiVersion)}`);
    if (kind !== this.type.kind)
      problems.push(`kind: expected ${this.type.kind}, got ${String(kind)}`);
    const metadata = raw.metadata;
    if (!isRecord(metadata) || typeof metadata.name !== 'string') {
      problems.push('metadata.name: expected a string');
    } else if (this.type.namespaced && typeof metadata.namespace !== 'string') {
      problems.push('metadata.namespace: expected a string');
    }
    const key = isRecord(metadata) ? keyOf(metadata as ObjectMeta) : where;
    if (problems.length > 0) throw new KubeSchemaError(this.type.kind, key, problems);
    return { ...raw, apiVersion, kind, metadata } as KubeObject<Spec, Status>;
  }

  private watchEvent(event: WatchEvent): ResourceWatchEvent<KubeObject<Spec, Status>> {
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED':
        try {
          return { type: event.type, object: this.parse(event.object) };
        } catch (error) {
          if (!(error instanceof KubeSchemaError)) throw error;
          return { type: 'INVALID', eventType: event.type, error, raw: event.object as KubeObject };
        }
      case 'BOOKMARK': {
        const metadata = isRecord(event.object.metadata) ? event.object.metadata : {};
        const rv = typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '';
        return { type: 'BOOKMARK', resourceVersion: rv };
      }
      case 'ERROR':
        return { type: 'ERROR', error: KubeApiError.fromStatus(500, event.object, 'watch error') };
      default:
        return {
          type: 'ERROR',
          error: new KubeApiError(500, 'InternalError', `unknown watch event type ${event.type}`),
        };
    }
  }

  private async sendPatch(
    ref: ObjectRef,
    subresource: '' | '/status',
    patch: unknown,
    options: PatchOptions,
  ): Promise<KubeObject<Spec, Status>> {
    const type = options.type ?? 'merge';
    if ((type === 'json') !== Array.isArray(patch)) {
      throw new TypeError(
        `a ${type} patch takes ${type === 'json' ? 'a list of operations' : 'an object'}`,
      );
    }
    const raw = await this.transport.request({
      method: 'PATCH',
      path: `${this.path(ref.namespace, ref.name)}${subresource}`,
      query: writeQuery(options),
      body: patch,
      contentType: CONTENT_TYPES[type],
      ...signalOf(options),
    });
    return this.parse(raw);
  }

  private sendApply(
    object: ObjectInput<Spec, Status>,
    subresource: '' | '/status',
    options: ApplyOptions,
    discardAnswer: boolean,
  ): Promise<unknown> {
    return this.transport.request({
      method: 'PATCH',
      path: `${this.path(this.namespaceOf(object), nameOf(object))}${subresource}`,
      query: {
        fieldManager: options.fieldManager,
        force: options.force ? true : undefined,
        dryRun: options.dryRun ? 'All' : undefined,
      },
      body: this.withTypeMeta(object),
      contentType: CONTENT_TYPES.apply,
      discardAnswer,
      ...signalOf(options),
    });
  }

  private withTypeMeta(object: ObjectInput<Spec, Status>): ObjectInput<Spec, Status> {
    return { ...object, apiVersion: this.apiVersion, kind: this.type.kind };
  }

  private namespaceOf(object: ObjectInput<Spec, Status>): string | undefined {
    return object.metadata.namespace;
  }

  private prefix(): string {
    return this.type.group === ''
      ? `/api/${this.type.version}`
      : `/apis/${this.type.group}/${this.type.version}`;
  }

  /** The collection: across namespaces only when `anyNamespace` and no namespace is given. */
  private collectionPath(namespace: string | undefined, anyNamespace: boolean): string {
    if (!this.type.namespaced) return `${this.prefix()}/${this.type.plural}`;
    if (namespace === undefined || namespace === '') {
      if (anyNamespace) return `${this.prefix()}/${this.type.plural}`;
      throw new TypeError(`${this.type.kind} is namespaced: metadata.namespace is required`);
    }
    return `${this.prefix()}/namespaces/${encodeURIComponent(namespace)}/${this.type.plural}`;
  }

  private path(namespace: string | undefined, name: string): string {
    if (name === '') throw new TypeError(`${this.type.kind}: a name is required`);
    return `${this.collectionPath(namespace, false)}/${encodeURIComponent(name)}`;
  }
}

/** `namespace/name`, or `name` for cluster-scoped objects: the key of caches and work queues. */
export function keyOf(metadata: { readonly name?: string; readonly namespace?: string }): string {
  const name = metadata.name ?? '';
  // join() builds one flat string; a template literal builds a V8 cons string (a node pointing
  // at both halves), some 20 bytes more for each of the keys every cache and queue holds.
  return metadata.namespace ? [metadata.namespace, name].join('/') : name;
}

function nameOf(object: ObjectInput): string {
  return object.metadata.name ?? '';
}

function writeQuery(options: WriteOptions): Record<string, QueryValue> {
  return {
    fieldManager: options.fieldManager,
    fieldValidation: options.fieldValidation,
    dryRun: options.dryRun ? 'All' : undefined,
  };
}

function issuesOf(root: string, error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = [root, ...issue.path.map(String)].join('.');
    return `${path}: ${issue.message}`;
  });
}

/** A JSON object (not null, not an array): what a response body or a field must be. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function signalOf(options: Abortable): { signal?: AbortSignal } {
  return options.signal !== undefined ? { signal: options.signal } : {};
}
