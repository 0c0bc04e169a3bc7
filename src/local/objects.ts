// The generic registry of the local control plane: create, read, update, patch and delete
// of any resource type with the API server's semantics (resourceVersion, optimistic
// concurrency, generation, status split, finalizers, validation), on top of the durable
// store. Every check and the write itself happen synchronously, so no two requests
// interleave between reading an object and writing it; the caller then awaits durability.

import type { Logger } from 'pino';
import { silentLogger } from '../log.js';
import { CRD_TYPE } from './kinds/customresourcedefinition.js';
import { BANNED_OWNERS, strategyOf, subresourceOf } from './kinds/index.js';
import { NAMESPACE_TYPE } from './kinds/namespace.js';
import type { StrategyContext } from './kinds/strategy.js';
import {
  decodeMetadata,
  generateNameSuffix,
  invalid,
  metadataCauses,
  nameProblems,
  newUid,
  specPart,
  timestamp,
  unknownMetadataFields,
} from './meta.js';
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  fieldTypesFromSchema,
  fieldTypesOf,
  type ListTypeInfo,
  type PatchType,
  recordUpdate,
  serverSideApply,
} from './patch/index.js';
import { clone, sameJson } from './patch/util.js';
import {
  apiVersionOf,
  qualifiedResource,
  type ResourceType,
  servedAs,
  storageKeyOf,
  storedFormOf,
} from './resource-type.js';
import { type CompiledSchema, compileSchema } from './schema/validate.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { Mutation, Store } from './storage/store.js';
import {
  applyTypeErrors,
  decodeFailure,
  jsonDecodeFailure,
  refusePatchedValues,
} from './typed-maps.js';
import { ApiError, badRequest, type KubeObject, type StatusCause } from './types.js';
import { ChangeEvent } from './watch.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';
/** `status`, or a subresource of a kind's own that its strategy declares (namespaces' `finalize`). */
export type Subresource = string;

/** What a request says about how to write: who is writing, and how strictly. */
export interface WriteOptions {
  fieldManager?: string;
  fieldValidation: FieldValidation;
  dryRun: boolean;
  /** Filled with the `Warning` header's messages. */
  warnings: string[];
  /** The admission webhooks of a client's request (admission/); internal writes have none. */
  admission?: AdmissionHooks;
}

/**
 * Where admission webhooks take part in a write, in kube's order: `mutate` on the decoded and
 * defaulted object before the kind's preparation and validation, `validate` after them, just
 * before the write (the object to write; `object` undefined for a DELETE). Either may throw to
 * suspend the write (admission/dispatch.ts), which is then run again from its start.
 */
export interface AdmissionHooks {
  mutate(
    type: ResourceType,
    object: KubeObject,
    old: KubeObject | undefined,
    subresource?: string,
  ): KubeObject;
  validate(
    type: ResourceType,
    object: KubeObject | undefined,
    old: KubeObject | undefined,
    subresource?: string,
  ): KubeObject | undefined;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface DeleteOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun: boolean;
  admission?: AdmissionHooks;
}

/** What the watch hub and the garbage collector learn of each write. */
export interface WriteListener {
  /** Called synchronously at commit, in revision order; `durable` settles once it is on disk. */
  committed(
    event: ChangeEvent,
    before: KubeObject | undefined,
    after: KubeObject | undefined,
    durable: Promise<void>,
  ): void;
}

export interface Written {
  object: KubeObject;
  /** The object as stored, when this write stored it: the response body, serialized once. */
  json?: string;
  /** Resolves once the write is on disk; undefined when nothing was written. */
  durable?: Promise<void>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export class Objects {
  private readonly schemas = new WeakMap<ResourceType, CompiledSchema>();
  private readonly fieldTypes = new WeakMap<ResourceType, ListTypeInfo>();
  /** The stored JSON an object was decoded from, so a write need not serialize it again. */
  private readonly stored = new WeakMap<KubeObject, string>();
  /** Whether each namespace is terminating, by the revision it was read at. */
  private readonly namespaces = new Map<string, { revision: number; terminating: boolean }>();
  private readonly listeners: WriteListener[] = [];

  constructor(
    private readonly store: Store,
    /** What the kinds' strategies may ask of the server (the types served). */
    private readonly context: StrategyContext,
    private readonly log: Logger = silentLogger(),
    private readonly now: () => Date = () => new Date(),
  ) {}

  listen(listener: WriteListener): void {
    this.listeners.push(listener);
  }

  get revision(): number {
    return this.store.revision;
  }

  // --- reads ------------------------------------------------------------------------------

  /** Parses a stored object, presenting it in the version the client asked for. */
  private decode(type: ResourceType, json: string, stale = false): KubeObject {
    const parsed = JSON.parse(json) as KubeObject;
    if (stale) return servedAs(type, this.asRead(type, parsed));
    const object = servedAs(type, parsed);
    this.stored.set(object, json);
    return object;
  }

  /**
   * The revision before which a custom resource may be stored under an older schema of its
   * CRD: the CRD's own last write. Such objects are read as apiextensions-apiserver reads them
   * from etcd, pruned and defaulted by today's schema (defaults added by a CRD change appear on
   * read, and are written back only by the next write). Undefined: nothing to redo.
   */
  private schemaSince(type: ResourceType): number | undefined {
    if (!type.custom || type.schema === undefined) return undefined;
    return this.store.get(storageKeyOf(CRD_TYPE), '', `${type.resource}.${type.group}`)?.revision;
  }

  find(type: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const entry = this.store.get(storageKeyOf(type), type.namespaced ? namespace : '', name);
    if (entry === undefined) return undefined;
    const since = this.schemaSince(type);
    return this.decode(type, entry.json, since !== undefined && entry.revision < since);
  }

  get(type: ResourceType, namespace: string, name: string): KubeObject {
    const found = this.find(type, namespace, name);
    if (found === undefined) throw notFound(type, name);
    return found;
  }

  /** True when the options select every object (no label or field selector). */
  selectsAll(options: ListOptions): boolean {
    return (
      (options.labelSelector ?? '').trim() === '' && (options.fieldSelector ?? '').trim() === ''
    );
  }

  /** The label and field selectors of a list or watch, as one predicate. */
  selector(type: ResourceType, options: ListOptions): (object: KubeObject) => boolean {
    const labels = parseLabelSelector(options.labelSelector ?? '');
    const selectable = strategyOf(type)?.selectableFields;
    const fields = parseFieldSelector(options.fieldSelector ?? '', selectable, {
      clusterScoped: !type.namespaced,
      defaultConversion: !type.custom && selectable === undefined,
    });
    return (object) => labels(object.metadata.labels) && fields(object);
  }

  list(type: ResourceType, namespace: string | undefined, options: ListOptions = {}): ListResult {
    const matches = this.selector(type, options);
    const all = this.selectsAll(options);
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : undefined;
    const after = options.continue === undefined ? undefined : decodeContinue(options.continue);
    const resourceVersion = String(this.store.revision);
    const since = this.schemaSince(type) ?? 0;
    const items: KubeObject[] = [];
    let remaining = 0;
    let more = false;
    let last: string | undefined;
    for (const entry of this.store.list(
      storageKeyOf(type),
      type.namespaced ? namespace : undefined,
    )) {
      const key = `${entry.namespace}/${entry.name}`;
      if (after !== undefined && key <= after) continue;
      if (limit !== undefined && items.length >= limit) {
        // Past the limit, what every selector takes is counted without being parsed; with a
        // selector, one more match is enough to know a next page exists.
        if (all) remaining++;
        else if (matches(this.decode(type, entry.json, entry.revision < since))) {
          more = true;
          break;
        }
        continue;
      }
      const object = this.decode(type, entry.json, entry.revision < since);
      if (!matches(object)) continue;
      items.push(object);
      last = key;
    }
    const result: ListResult = { items, resourceVersion };
    if ((remaining > 0 || more) && last !== undefined) {
      result.continue = encodeContinue(last);
      // As the real API server: a list a selector narrows does not know how many remain.
      if (all) result.remainingItemCount = remaining;
    }
    return result;
  }

  // --- writes -----------------------------------------------------------------------------

  create(type: ResourceType, namespace: string, body: unknown, options: WriteOptions): Written {
    const object = this.decodeBody(type, namespace, body, options, 'create');
    const version = object.metadata.resourceVersion;
    if (version !== undefined && version !== '' && version !== '0') {
      // The etcd3 store's plain error (store.go Create), which the handler turns into a 500
      // with no reason: what `kubectl create -f` of an exported object meets.
      throw new ApiError(500, '', 'resourceVersion should not be set on objects to be created');
    }
    return this.createObject(type, namespace, object, options);
  }

  /** A create of an object already decoded; `managedFields` when apply computed them. */
  private createObject(
    type: ResourceType,
    namespace: string,
    object: KubeObject,
    options: WriteOptions,
    managedFields?: KubeObject['metadata']['managedFields'],
  ): Written {
    if (options.admission !== undefined) object = options.admission.mutate(type, object, undefined);
    const meta = object.metadata;
    if (!meta.name) {
      if (!meta.generateName) {
        throw invalid(type, '', [
          {
            reason: 'FieldValueRequired',
            field: 'metadata.name',
            message: 'Required value: name or generateName is required',
          },
        ]);
      }
      meta.name = `${meta.generateName}${generateNameSuffix()}`;
    }
    const name = meta.name;
    this.checkName(type, name);
    if (type.namespaced) this.checkNamespaceOpen(type, namespace, name);
    if (this.store.get(storageKeyOf(type), type.namespaced ? namespace : '', name) !== undefined) {
      throw new ApiError(
        409,
        'AlreadyExists',
        `${qualifiedResource(type)} "${name}" already exists`,
        {
          name,
          group: type.group,
          kind: type.resource,
        },
      );
    }
    if (type.hasStatus) delete object.status;
    const now = this.now();
    Object.assign(meta, {
      uid: newUid(),
      creationTimestamp: timestamp(now),
      // Only kinds whose strategy counts generations set it; a ConfigMap keeps what was sent.
      ...(tracksGeneration(type) ? { generation: 1 } : {}),
    });
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.resourceVersion;
    if (type.namespaced) meta.namespace = namespace;
    else delete meta.namespace;
    const prepared = this.finish(type, object, undefined);
    let tracked = prepared;
    if (managedFields !== undefined) prepared.metadata.managedFields = managedFields;
    else {
      tracked = recordUpdate(undefined, prepared, managerOf(options), {
        apiVersion: apiVersionOf(type),
        now: timestamp(now),
        ...this.ownership(type),
      });
    }
    if (options.admission !== undefined)
      tracked = options.admission.validate(type, tracked, undefined) ?? tracked;
    return this.commit(type, undefined, tracked, options);
  }

  update(
    type: ResourceType,
    namespace: string,
    name: string,
    body: unknown,
    options: WriteOptions,
    subresource?: Subresource,
  ): Written {
    const incoming = this.decodeBody(type, namespace, body, options, 'update');
    const old = this.get(type, namespace, name);
    if (incoming.metadata.name !== undefined && incoming.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${incoming.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    const wanted = incoming.metadata.resourceVersion;
    if (wanted === undefined || wanted === '') {
      if (type.custom) {
        // The generic store names the resource where a kind would be (Store.Update).
        throw invalid({ kind: type.resource, group: type.group }, name, [
          {
            reason: 'FieldValueInvalid',
            field: 'metadata.resourceVersion',
            message: 'Invalid value: 0x0: must be specified for an update',
          },
        ]);
      }
    } else if (wanted !== old.metadata.resourceVersion) {
      throw conflict(type, name);
    }
    return this.replace(type, old, incoming, options, subresource);
  }

  patch(
    type: ResourceType,
    namespace: string,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: WriteOptions & { force: boolean },
    subresource?: 'status',
  ): Written & { created: boolean } {
    const old = this.find(type, namespace, name);
    if (patchType === 'apply')
      return this.apply(type, namespace, name, old, patch, options, subresource);
    if (old === undefined) throw notFound(type, name);
    // The patch applies to the object as the server reads it back, so what it stored before a
    // schema dropped a field is not this request's unknown field.
    const base = this.asRead(type, old);
    let patched: unknown;
    switch (patchType) {
      case 'json':
        patched = applyJsonPatch(base, patch);
        break;
      case 'merge':
        patched = applyMergePatch(base, patch);
        break;
      case 'strategic':
        patched = applyStrategicMergePatch(base, patch, this.ownership(type).listTypes);
        break;
    }
    refusePatchedValues(type, strategyOf(type)?.typedMaps, patchType, patch, patched);
    const next = this.decodeBody(type, namespace, patched, options, 'patch');
    // As kube-apiserver's patcher checks the patched object (checkName, handlers/patch.go): a
    // patch does not rename, and one that tries is refused rather than quietly ignored.
    if (next.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${next.metadata.name ?? ''}) does not match the name on the URL (${name})`,
      );
    }
    const wanted = next.metadata.resourceVersion;
    if (wanted !== undefined && wanted !== old.metadata.resourceVersion) throw conflict(type, name);
    return { ...this.replace(type, old, next, options, subresource), created: false };
  }

  private apply(
    type: ResourceType,
    namespace: string,
    name: string,
    old: KubeObject | undefined,
    patch: unknown,
    options: WriteOptions & { force: boolean },
    subresource?: 'status',
  ): Written & { created: boolean } {
    if (!options.fieldManager) {
      throw badRequest('PATCH requests with apply content type must have fieldManager set');
    }
    const applied = this.decodeApplied(type, namespace, name, patch);
    if (applied.metadata.name !== undefined && applied.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${applied.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    applied.metadata.name = name;
    if (subresource === 'status') {
      if (old === undefined) throw notFound(type, name);
      applied.metadata = { name };
    }
    const now = timestamp(this.now());
    const live = old === undefined ? undefined : this.asRead(type, old);
    const next = serverSideApply(live, applied, {
      manager: options.fieldManager,
      force: options.force,
      apiVersion: apiVersionOf(type),
      now,
      kind: type.kind,
      ...this.ownership(type),
      ...(subresource ? { subresource } : {}),
    });
    if (old === undefined) {
      // Create-if-missing: the same path as POST, keeping the ownership apply computed.
      const decoded = this.decodeBody(type, namespace, next, options, 'apply');
      const created = this.createObject(
        type,
        namespace,
        decoded,
        options,
        next.metadata.managedFields,
      );
      return { ...created, created: true };
    }
    const decoded = this.decodeBody(type, namespace, next, options, 'apply');
    return { ...this.replace(type, old, decoded, options, subresource, true), created: false };
  }

  /** PUT, PATCH and apply end here: the new state of an existing object. */
  private replace(
    type: ResourceType,
    old: KubeObject,
    incoming: KubeObject,
    options: WriteOptions,
    subresource?: Subresource,
    managedAlready = false,
  ): Written {
    if (options.admission !== undefined)
      incoming = options.admission.mutate(type, incoming, old, subresource);
    let next: KubeObject;
    const own = subresource === undefined ? undefined : subresourceOf(type, subresource);
    if (own !== undefined) {
      next = own.update(old, incoming);
    } else if (subresource === 'status') {
      next = clone(old);
      if ('status' in incoming) next.status = incoming.status;
      else delete next.status;
      if (managedAlready) next.metadata.managedFields = incoming.metadata.managedFields;
    } else {
      next = incoming;
      if (type.hasStatus) {
        if ('status' in old) next.status = old.status;
        else delete next.status;
      }
    }
    // What only the server may set keeps its value.
    const meta = next.metadata;
    for (const key of [
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
    ] as const) {
      if (old.metadata[key] === undefined) delete meta[key];
      else meta[key] = old.metadata[key] as never;
    }
    meta.name = old.metadata.name;
    if (type.namespaced) meta.namespace = old.metadata.namespace;
    else delete meta.namespace;
    meta.resourceVersion = old.metadata.resourceVersion;
    if (old.metadata.deletionTimestamp !== undefined) {
      const added = (meta.finalizers ?? []).filter(
        (f) => !(old.metadata.finalizers ?? []).includes(f),
      );
      if (added.length > 0) {
        throw invalid(type, old.metadata.name ?? '', [
          {
            reason: 'FieldValueForbidden',
            field: 'metadata.finalizers',
            message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
          },
        ]);
      }
    }
    // The scale subresource (scale.ts) writes the object itself: its defaults and checks run.
    if (subresource === undefined || subresource === 'scale') {
      next = this.finish(type, next, old);
    } else if (type.schema !== undefined) {
      // The rest of the object is the stored one, read back as the server reads it.
      const metadata = next.metadata;
      next = this.schemaOf(type).decode(next).object as KubeObject;
      next.metadata = metadata;
      this.validateSchema(type, next, old);
    }
    if (tracksGeneration(type) && specPart(next) !== specPart(old))
      next.metadata.generation = (old.metadata.generation ?? 0) + 1;
    if (!managedAlready) {
      next = recordUpdate(old, next, managerOf(options), {
        apiVersion: apiVersionOf(type),
        now: timestamp(this.now()),
        ...this.ownership(type),
        ...(subresource === 'status' || subresource === 'scale' ? { subresource } : {}),
      });
    }
    if (options.admission !== undefined)
      next = options.admission.validate(type, next, old, subresource) ?? next;
    if (sameContent(old, next)) return { object: old };
    // The last finalizer gone from an object being deleted: it goes now.
    if (next.metadata.deletionTimestamp !== undefined && !isHeld(type, next)) {
      return this.commit(type, old, undefined, options, next);
    }
    return this.commit(type, old, next, options);
  }

  delete(type: ResourceType, namespace: string, name: string, options: DeleteOptions): Written {
    const old = this.get(type, namespace, name);
    const pre = options.preconditions;
    if (pre?.uid !== undefined && pre.uid !== old.metadata.uid) {
      throw new ApiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`,
        { name, group: type.group, kind: type.resource },
      );
    }
    if (
      pre?.resourceVersion !== undefined &&
      pre.resourceVersion !== old.metadata.resourceVersion
    ) {
      throw new ApiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
        { name, group: type.group, kind: type.resource },
      );
    }
    options.admission?.validate(type, undefined, old);
    const writeOptions: WriteOptions = {
      fieldValidation: 'Ignore',
      dryRun: options.dryRun,
      warnings: [],
    };
    if (old.metadata.deletionTimestamp !== undefined) strategyOf(type)?.deleteAgain?.(old);
    const finalizers = [...(old.metadata.finalizers ?? [])];
    if (options.propagationPolicy === 'Foreground' && !finalizers.includes('foregroundDeletion')) {
      finalizers.push('foregroundDeletion');
    }
    if (options.propagationPolicy === 'Orphan' && !finalizers.includes('orphan')) {
      finalizers.push('orphan');
    }
    if (finalizers.length === 0 && !isHeld(type, old)) {
      return this.commit(type, old, undefined, writeOptions, old);
    }
    if (
      old.metadata.deletionTimestamp !== undefined &&
      sameList(finalizers, old.metadata.finalizers)
    ) {
      return { object: old };
    }
    const next = clone(old);
    next.metadata.deletionTimestamp ??= timestamp(this.now());
    next.metadata.deletionGracePeriodSeconds = 0;
    if (finalizers.length > 0) next.metadata.finalizers = finalizers;
    strategyOf(type)?.beginDelete?.(next);
    return this.commit(type, old, next, writeOptions);
  }

  // --- internals --------------------------------------------------------------------------

  /**
   * The body as an object of this type, with kind, apiVersion and namespace checked, and its
   * metadata decoded as ObjectMeta: the fields ObjectMeta has not are dropped, their paths
   * added to `unknown` (in the body's order for a built-in kind, decoded straight from it; in
   * encoding/json's sorted order for a custom resource, whose metadata is re-encoded first).
   */
  private checkBody(
    type: ResourceType,
    namespace: string,
    body: unknown,
    unknown: string[],
  ): KubeObject {
    if (!isObject(body)) throw badRequest('the request body must be a JSON object');
    // Bodies are parsed per request (or cloned by internal callers), so they are ours to change.
    const object = body as KubeObject;
    const apiVersion = apiVersionOf(type);
    if (object.kind !== undefined && object.kind !== type.kind) {
      throw badRequest(
        `the kind in the data (${String(object.kind)}) does not match the expected kind (${type.kind})`,
      );
    }
    if (object.apiVersion !== undefined && object.apiVersion !== apiVersion) {
      throw badRequest(
        `the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${apiVersion})`,
      );
    }
    object.kind = type.kind;
    object.apiVersion = apiVersion;
    if (object.metadata === undefined || object.metadata === null) object.metadata = {};
    if (!isObject(object.metadata)) throw badRequest('metadata must be an object');
    decodeMetadata(object.metadata);
    unknown.push(...unknownMetadataFields(object.metadata, 'metadata', true, type.custom));
    const ns = object.metadata.namespace;
    if (type.namespaced && ns !== undefined && ns !== '' && ns !== namespace) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    return object;
  }

  private checkName(type: ResourceType, name: string): void {
    const problems = nameProblems(name, type.nameRule);
    if (problems.length > 0) {
      throw invalid(
        type,
        name,
        problems.map((p) => ({
          reason: 'FieldValueInvalid',
          field: 'metadata.name',
          message: `Invalid value: ${JSON.stringify(name)}: ${p}`,
        })),
      );
    }
  }

  /** NamespaceLifecycle admission: no create in a namespace that is missing or terminating. */
  private checkNamespaceOpen(type: ResourceType, namespace: string, name: string): void {
    const entry = this.store.get(storageKeyOf(NAMESPACE_TYPE), '', namespace);
    if (entry === undefined) throw notFound(NAMESPACE_TYPE, namespace);
    let known = this.namespaces.get(namespace);
    if (known?.revision !== entry.revision) {
      const ns = JSON.parse(entry.json) as KubeObject;
      known = {
        revision: entry.revision,
        terminating: ns.metadata.deletionTimestamp !== undefined,
      };
      this.namespaces.set(namespace, known);
    }
    if (known.terminating) {
      const why = `unable to create new content in namespace ${namespace} because it is being terminated`;
      throw new ApiError(
        403,
        'Forbidden',
        `${qualifiedResource(type)} "${name}" is forbidden: ${why}`,
        {
          name,
          ...(type.group !== '' ? { group: type.group } : {}),
          kind: type.resource,
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: `namespace ${namespace} is being terminated`,
              field: 'metadata.namespace',
            },
          ],
        },
      );
    }
  }

  /** Kind hooks, schema validation and metadata checks: what every create and update runs. */
  private finish(type: ResourceType, object: KubeObject, old: KubeObject | undefined): KubeObject {
    dropEmptyMetadata(object.metadata);
    strategyOf(type)?.prepare?.(object, old, this.context);
    if (type.schema !== undefined) this.validateSchema(type, object, old);
    const causes = metadataCauses(object, BANNED_OWNERS);
    if (causes.length > 0) throw invalid(type, object.metadata.name ?? '', causes);
    return object;
  }

  /** A custom resource, decoded already, against its schema and rules: a 422 with every cause. */
  private validateSchema(
    type: ResourceType,
    object: KubeObject,
    old: KubeObject | undefined,
  ): void {
    const issues = this.schemaOf(type).checkWrite(object, old);
    if (issues.length > 0) {
      const causes: StatusCause[] = issues.map((i) => ({
        reason: i.reason,
        field: i.field,
        message: i.message,
      }));
      throw invalid(type, object.metadata.name ?? '', causes);
    }
  }

  /**
   * What the server's decoder does to a body before anything else looks at it: metadata
   * decoded as ObjectMeta, a custom resource pruned and defaulted. Fields either drops are
   * unknown: refused, warned of or dropped as `fieldValidation` says, in the words of the
   * verb's handler (create.go and update.go wrap the strict decoding error, patch.go does not).
   */
  private decodeBody(
    type: ResourceType,
    namespace: string,
    body: unknown,
    options: WriteOptions,
    verb: 'create' | 'update' | 'patch' | 'apply',
  ): KubeObject {
    const unknown: string[] = [];
    const object = this.checkBody(type, namespace, body, unknown);
    const maps = strategyOf(type)?.typedMaps;
    const undecodable = maps === undefined ? undefined : jsonDecodeFailure(type.kind, object, maps);
    if (undecodable !== undefined) throw decodeFailure(type, object, verb, undecodable);
    let decoded = object;
    if (type.schema !== undefined) {
      const outcome = this.schemaOf(type).decode(object);
      unknown.push(...outcome.unknownFields);
      decoded = outcome.object as KubeObject;
      decoded.metadata = object.metadata;
    }
    if (unknown.length === 0 || options.fieldValidation === 'Ignore') return decoded;
    const messages = unknown.map((f) => `unknown field "${f}"`);
    if (options.fieldValidation === 'Warn') {
      options.warnings.push(...messages);
      return decoded;
    }
    const strict = `strict decoding error: ${messages.join(', ')}`;
    if (verb === 'patch' || verb === 'apply') throw badRequest(strict);
    // transformDecodeError: the kind and version the body was decoded as.
    throw badRequest(
      `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: ${strict}`,
    );
  }

  /**
   * An applied configuration, which server-side apply types against the kind's schema whatever
   * `fieldValidation` says: a field the type does not declare fails the request, as
   * structured-merge-diff words it (a 500 there, a 400 here: ADR 0003).
   */
  private decodeApplied(
    type: ResourceType,
    namespace: string,
    name: string,
    patch: unknown,
  ): KubeObject {
    const unknown: string[] = [];
    const applied = this.checkBody(type, namespace, patch, unknown);
    if (type.schema !== undefined)
      unknown.push(...this.schemaOf(type).decode(applied).unknownFields);
    const maps = strategyOf(type)?.typedMaps;
    const typeErrors = maps === undefined ? [] : applyTypeErrors(applied, maps);
    if (unknown.length === 0 && typeErrors.length === 0) return applied;
    const errors = [
      ...unknown.map((f) => `.${f}: field not declared in schema`),
      ...typeErrors,
    ].sort();
    const where = `${applied.metadata.namespace ?? ''}/${applied.metadata.name ?? name}; ${type.group}/${type.version}, Kind=${type.kind}`;
    throw badRequest(
      `failed to create typed patch object (${where}): ${
        errors.length === 1 ? errors[0] : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n')
      }`,
    );
  }

  /**
   * A stored object as the server reads it back: its metadata as ObjectMeta holds it and, for
   * a custom resource, pruned and defaulted by the schema of today (which a patch applies to).
   * The stored object itself when that changes nothing of a built-in kind's.
   */
  private asRead(type: ResourceType, stored: KubeObject): KubeObject {
    if (type.schema === undefined) {
      if (unknownMetadataFields(stored.metadata, 'metadata', false).length === 0) return stored;
      const copy = clone(stored);
      unknownMetadataFields(copy.metadata, 'metadata', true);
      return copy;
    }
    const read = this.schemaOf(type).decode(stored).object as KubeObject;
    unknownMetadataFields(read.metadata, 'metadata', true);
    return read;
  }

  /** How field ownership reads a type: its list types, and whether status is split off. */
  private ownership(type: ResourceType): { listTypes: ListTypeInfo; resetFields?: string[] } {
    let listTypes = this.fieldTypes.get(type);
    if (listTypes === undefined) {
      listTypes = fieldTypesOf(
        apiVersionOf(type),
        type.kind,
        type.schema ? fieldTypesFromSchema(type.schema) : undefined,
      );
      this.fieldTypes.set(type, listTypes);
    }
    return type.hasStatus ? { listTypes } : { listTypes, resetFields: [] };
  }

  private schemaOf(type: ResourceType): CompiledSchema {
    let compiled = this.schemas.get(type);
    if (compiled === undefined) {
      compiled = compileSchema(type.schema ?? { type: 'object' });
      this.schemas.set(type, compiled);
    }
    return compiled;
  }

  /**
   * Writes one change under a new revision. `next` undefined deletes; `deleted` is the
   * object as the DELETED event shows it.
   */
  private commit(
    type: ResourceType,
    old: KubeObject | undefined,
    next: KubeObject | undefined,
    options: WriteOptions,
    deleted?: KubeObject,
  ): Written {
    const shown = next ?? deleted ?? old;
    if (shown === undefined) throw new Error('commit with nothing to write');
    const namespace = type.namespaced ? (shown.metadata.namespace ?? '') : '';
    const name = shown.metadata.name ?? '';
    if (options.dryRun) return { object: shown };
    const resource = storageKeyOf(type);
    let json = '';
    // What the store keeps: `shown` itself, unless its type is stored as another's (events.k8s.io).
    let kept = shown;
    const { revision, durable } = this.store.commit((rev) => {
      shown.metadata.resourceVersion = String(rev);
      kept = storedFormOf(type, shown);
      json = JSON.stringify(kept);
      // Checked on the text the store keeps, after the only serialisation a write pays for;
      // thrown here, it leaves no trace. A write that does not grow an object stored before
      // the limit existed is let through, so such an object can still be fixed or deleted.
      if (
        next !== undefined &&
        json.length * 3 > MAX_OBJECT_BYTES &&
        Buffer.byteLength(json) > MAX_OBJECT_BYTES &&
        !(old !== undefined && json.length <= (this.stored.get(old)?.length ?? 0))
      ) {
        throw tooLarge(type, name, Buffer.byteLength(json));
      }
      const mutation: Mutation = {
        resource,
        namespace,
        name,
        json: next === undefined ? null : json,
      };
      return [mutation];
    });
    const event = new ChangeEvent(
      revision,
      next === undefined ? 'DELETED' : old === undefined ? 'ADDED' : 'MODIFIED',
      resource,
      namespace,
      name,
      String(kept.apiVersion),
      json,
      old === undefined
        ? undefined
        : (this.stored.get(old) ?? JSON.stringify(storedFormOf(type, old))),
    );
    // The write is stored: whatever a listener meets, the client is told it succeeded.
    for (const listener of this.listeners) {
      try {
        listener.committed(event, old, next, durable);
      } catch (error) {
        this.log.error(
          { err: error, resource, namespace, name, revision },
          'write listener failed after commit',
        );
      }
    }
    return { object: shown, ...(kept === shown ? { json } : {}), durable };
  }
}

/** Finalizers keep an object being deleted, and whatever else its kind's strategy says does. */
function isHeld(type: ResourceType, object: KubeObject): boolean {
  if ((object.metadata.finalizers ?? []).length > 0) return true;
  return strategyOf(type)?.holdsDeletion?.(object) === true;
}

function managerOf(options: WriteOptions): string {
  return options.fieldManager ?? 'unknown';
}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** Equal but for the bookkeeping a no-op write would touch. */
function sameContent(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => {
    const { managedFields: _m, resourceVersion: _r, ...meta } = o.metadata;
    return { ...o, metadata: meta };
  };
  return sameJson(strip(a), strip(b)) && sameJson(fieldSets(a), fieldSets(b));
}

/** managedFields without their timestamps: a change of owner is a change; a new time is not. */
function fieldSets(o: KubeObject): unknown {
  return (o.metadata.managedFields ?? []).map(({ time: _t, ...rest }) => rest);
}

/**
 * The largest object stored: etcd's default request limit (--max-request-bytes, 1.5 MiB), which
 * is what bounds an object on a real cluster whatever the request that grows it.
 */
export const MAX_OBJECT_BYTES = 1536 * 1024;

function tooLarge(type: ResourceType, name: string, bytes: number): ApiError {
  // kube-apiserver passes etcd's "request is too large" on as a 500; it is the client's write
  // that is too large, so it is answered as one (ADR 0003).
  return new ApiError(
    413,
    'RequestEntityTooLarge',
    `${qualifiedResource(type)} "${name}" is too large: ${bytes} bytes stored, over the limit of ${MAX_OBJECT_BYTES} (etcdserver: request is too large)`,
    { name, group: type.group, kind: type.resource },
  );
}

function notFound(type: ResourceType, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(type)} "${name}" not found`, {
    name,
    group: type.group,
    kind: type.resource,
  });
}

function conflict(type: ResourceType, name: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, group: type.group, kind: type.resource },
  );
}

// Continue tokens name the last key served; listing resumes after it.
function encodeContinue(key: string): string {
  return Buffer.from(JSON.stringify({ v: 1, after: key })).toString('base64url');
}

function decodeContinue(token: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      after?: unknown;
    };
    if (typeof parsed.after === 'string') return parsed.after;
  } catch {
    // falls through to the error below
  }
  throw badRequest('continue key is not valid: illegal base64 data or malformed token');
}

/**
 * Whether writes count `metadata.generation`: custom resources do, and built-in kinds whose
 * strategy sets it in PrepareForCreate/Update (Deployment, CRD...); ConfigMap, Secret,
 * Namespace, Event... have none.
 */
function tracksGeneration(type: ResourceType): boolean {
  return type.custom || strategyOf(type)?.countsGeneration === true;
}

/**
 * ObjectMeta's maps and lists are `omitempty`: every kind's metadata (custom resources' too)
 * goes through the typed ObjectMeta on its way to storage, so an empty one is not written (a
 * patch that removes the last label leaves no `labels`).
 */
function dropEmptyMetadata(meta: KubeObject['metadata']): void {
  for (const key of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    const value: unknown = meta[key];
    if (value === null) delete meta[key];
    else if (
      Array.isArray(value) ? value.length === 0 : isObject(value) && Object.keys(value).length === 0
    ) {
      delete meta[key];
    }
  }
}
