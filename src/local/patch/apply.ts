// Server-side apply and field ownership: the API server's field manager (k8s.io/apimachinery
// managedfields over sigs.k8s.io/structured-merge-diff) for Apply patches and for every other
// write, with metadata.managedFields in the real FieldsV1 encoding.
//
// Differences from the real structured-merge-diff that remain:
// - Types come from a path-keyed table (kind-schema.ts: ObjectMeta's, the built-in kind's
//   strategy's, a CRD schema's), not from OpenAPI models: objects are
//   structs unless marked as maps, lists are atomic unless marked; no unions, no defaulting of
//   list-map keys, no `x-kubernetes-map-type: granular` vs struct distinction beyond the table,
//   and no atomic structs in built-in kinds (none of the served kinds has one).
// - No version conversion: every managedFields entry is read and compared at the request's
//   version, whatever apiVersion it records, and no schema-change reconciliation is done.
// - Objects are compared as JSON: a built-in kind's pointer/non-pointer struct distinction
//   is approximated by the `alwaysPresent` marks of the table (so creating such a struct is
//   not a change of its own); JSON null in an applied configuration deletes the field.
// - Pruning removes what the applier owned before, omits now and nobody else owns, in one
//   pass (the real one removes, then adds back owned and dangling items).
// - An associative list item without its key fields makes apply fail, with a shorter message
//   than the real one, and as a 400: the real one answers 500 for what the applied
//   configuration holds (ADR 0003); duplicate items keep the first one instead of
//   failing; an unreadable managedFields entry is skipped instead of failing the request.
// - The reset fields (the ones the status split ignores) default to `status` for the main
//   resource and `spec` for /status; kinds without a status subresource must say so.
import { ApiError, badRequest, type KubeObject, type ManagedFieldsEntry } from '../types.js';
import type { ListTypeInfo } from './field-types.js';
import { type FieldPath, FieldSet, type FieldTree, fieldElement, renderPath } from './fields.js';
import { Schema } from './kind-schema.js';
import { compare, createdFields, merge, removeFields, TypedError, toFieldSet } from './typed.js';
import { clone, deepEqual, isObject, type JsonObject, sortedJson } from './util.js';

export interface ApplyOptions {
  manager: string;
  force: boolean;
  /** The request's group/version, e.g. `platform.nrn.dev/v1alpha1`. */
  apiVersion: string;
  /** RFC 3339 time recorded on the entries this write touches. */
  now: string;
  /** Field types of a custom resource (fieldTypesFromSchema); built-in kinds have theirs. */
  listTypes?: ListTypeInfo;
  /** `status` for an apply to /status: a separate manager entry, owning only status. */
  subresource?: string;
  /** The kind served at this URL; defaults to the live object's (or the applied one's). */
  kind?: string;
  /**
   * Fields (dotted paths) the write cannot change and nobody may own through it: the
   * strategy's reset fields. Defaults to `status` for the main resource and `spec` for
   * /status; `[]` for a kind whose status is an ordinary field.
   */
  resetFields?: readonly string[];
}

export interface UpdateOptions {
  apiVersion: string;
  now: string;
  subresource?: string;
  listTypes?: ListTypeInfo;
  resetFields?: readonly string[];
}

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
const BEFORE_FIRST_APPLY = 'before-first-apply';
const ANCIENT_CHANGES = 'ancient-changes';
const MAX_UPDATE_MANAGERS = 10;
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** Fields the server owns itself, never recorded for a manager (stripMetaManager). */
const STRIPPED = FieldSet.of(
  [
    ['apiVersion'],
    ['kind'],
    ['metadata'],
    ...[
      'name',
      'namespace',
      'creationTimestamp',
      'selfLink',
      'uid',
      'clusterName',
      'generation',
      'managedFields',
      'resourceVersion',
    ].map((f) => ['metadata', f]),
  ].map((p) => p.map(fieldElement)),
);

const STRIPPED_PATHS = STRIPPED.paths();

interface Manager {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly apiVersion: string;
  readonly subresource?: string;
  readonly time?: string;
  readonly set: FieldSet;
}

/** Managers by their identifier, the JSON the real field manager keys them with. */
type Managers = Map<string, Manager>;

type Identity = Pick<Manager, 'manager' | 'operation' | 'apiVersion' | 'subresource'>;

/** Appliers are one entry whatever version they apply at; updaters one per version. */
const identifier = (m: Identity) =>
  JSON.stringify({
    manager: m.manager,
    operation: m.operation,
    ...(m.operation === 'Update' && m.apiVersion ? { apiVersion: m.apiVersion } : {}),
    ...(m.subresource ? { subresource: m.subresource } : {}),
  });

function decodeManagers(entries: unknown): Managers {
  const out: Managers = new Map();
  if (!Array.isArray(entries)) return out;
  for (const e of entries) {
    if (!isObject(e) || typeof e.manager !== 'string') continue;
    if (e.operation !== 'Apply' && e.operation !== 'Update') continue;
    if (e.fieldsType !== undefined && e.fieldsType !== 'FieldsV1') continue;
    const m: Manager = {
      manager: e.manager,
      operation: e.operation,
      apiVersion: typeof e.apiVersion === 'string' ? e.apiVersion : '',
      ...(typeof e.subresource === 'string' && e.subresource !== ''
        ? { subresource: e.subresource }
        : {}),
      ...(typeof e.time === 'string' ? { time: e.time } : {}),
      set: FieldSet.fromFieldsV1(e.fieldsV1),
    };
    out.set(identifier(m), m);
  }
  return out;
}

const seconds = (time: string | undefined) => {
  const t = time === undefined ? Number.NaN : Date.parse(time);
  return Number.isNaN(t) ? 0 : Math.floor(t / 1000);
};

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The entries in the server's order: appliers first, then by time, manager, version. */
function encodeManagers(managers: Managers): ManagedFieldsEntry[] {
  const entries = [...managers.values()].filter((m) => !m.set.isEmpty());
  entries.sort(
    (p, q) =>
      byString(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      byString(p.manager, q.manager) ||
      byString(p.apiVersion, q.apiVersion) ||
      byString(p.subresource ?? '', q.subresource ?? ''),
  );
  return entries.map((m) => ({
    manager: m.manager,
    operation: m.operation,
    apiVersion: m.apiVersion,
    ...(m.time !== undefined ? { time: m.time } : {}),
    fieldsType: 'FieldsV1',
    fieldsV1: m.set.toFieldsV1(),
    ...(m.subresource ? { subresource: m.subresource } : {}),
  }));
}

function setManagedFields(object: KubeObject, managers: Managers): KubeObject {
  const entries = encodeManagers(managers);
  if (!isObject(object.metadata)) object.metadata = {};
  if (entries.length > 0) object.metadata.managedFields = entries;
  else delete object.metadata.managedFields;
  return object;
}

function withoutManagedFields(object: JsonObject): JsonObject {
  const out = clone(object);
  if (isObject(out.metadata)) delete out.metadata.managedFields;
  return out;
}

/** The object as withoutManagedFields shows it, sharing all else: for walks that only read. */
function managedFieldsHidden(object: JsonObject): JsonObject {
  const meta = object.metadata;
  if (!isObject(meta) || !Object.hasOwn(meta, 'managedFields')) return object;
  const { managedFields: _, ...rest } = meta;
  return { ...object, metadata: rest };
}

/**
 * Merges the oldest updaters into one `ancient-changes` entry per version once there are
 * more than ten (capManagersManager).
 */
function capUpdateManagers(managers: Managers): Managers {
  const updaters = [...managers.entries()].filter(([, m]) => m.operation === 'Update');
  if (updaters.length <= MAX_UPDATE_MANAGERS) return managers;
  updaters.sort(([ka, a], [kb, b]) => seconds(a.time) - seconds(b.time) || byString(ka, kb));
  const out = new Map(managers);
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (const [key, m] of updaters) {
    if (length <= MAX_UPDATE_MANAGERS) break;
    const bucketIdentity: Identity = {
      manager: ANCIENT_CHANGES,
      operation: 'Update',
      apiVersion: m.apiVersion,
    };
    const bucket = identifier(bucketIdentity);
    const first = firstOfVersion.get(m.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(m.apiVersion, key);
      continue;
    }
    if (!out.has(bucket)) {
      const firstEntry = out.get(first) as Manager;
      out.delete(first);
      out.set(bucket, { ...firstEntry, ...bucketIdentity });
    }
    const current = out.get(bucket) as Manager;
    out.set(bucket, {
      ...current,
      set: m.set.union(current.set),
      ...(m.time !== undefined ? { time: m.time } : {}),
    });
    out.delete(key);
    length--;
  }
  return out;
}

function resetPrefixes(options: {
  subresource?: string;
  resetFields?: readonly string[];
}): FieldPath[] {
  const fields =
    options.resetFields ??
    (options.subresource === 'status' ? ['spec'] : options.subresource ? [] : ['status']);
  return fields.map((f) => f.split('.').map(fieldElement));
}

const removeStripped = (set: FieldSet) => set.difference(STRIPPED);

/** Drops the subtrees at the given top-level paths from a value. */
function withoutPaths(value: JsonObject, prefixes: readonly FieldPath[]): JsonObject {
  const out = clone(value);
  for (const prefix of prefixes) {
    let node: JsonObject | undefined = out;
    const names = prefix.map((pe) => pe.slice(2));
    for (const name of names.slice(0, -1)) {
      const next: unknown = node && Object.hasOwn(node, name) ? node[name] : undefined;
      node = isObject(next) ? next : undefined;
    }
    const last = names.at(-1);
    if (node && last !== undefined) delete node[last];
  }
  return out;
}

/**
 * The ownership a non-apply write leaves: whatever it changed becomes the writer's (and
 * stops being anyone else's); whatever it removed stops being anyone's.
 */
function trackUpdate(
  schema: Schema,
  live: JsonObject,
  next: JsonObject,
  managers: Managers,
  who: Identity,
  now: string,
  ignore: readonly FieldPath[],
): Managers {
  const cmp = compare(schema, managedFieldsHidden(live), managedFieldsHidden(next));
  const changed = cmp.modified.union(cmp.added).withoutPrefixes(ignore);
  const removed = cmp.removed.withoutPrefixes(ignore);
  const out: Managers = new Map();
  for (const [key, m] of managers) {
    const set = m.set.difference(changed).difference(removed);
    if (!set.isEmpty()) out.set(key, { ...m, set });
  }
  const mine = removeStripped(changed);
  if (!mine.isEmpty()) {
    // Only a write that changed something takes a timestamp.
    const key = identifier(who);
    const previous = out.get(key)?.set ?? FieldSet.empty;
    let set = mine.union(previous);
    // The same fields again (a status rewritten): keep the set, and so its encoding.
    const owned = managers.get(key)?.set;
    if (owned !== undefined && set.equals(owned)) set = owned;
    out.set(key, { ...who, time: now, set });
  }
  return out;
}

interface Conflict {
  readonly key: string;
  readonly manager: Manager;
  readonly path: FieldPath;
}

type Applied =
  | {
      readonly ok: true;
      readonly object: JsonObject;
      readonly managers: Managers;
      readonly changed: boolean;
    }
  | { readonly ok: false; readonly conflicts: readonly Conflict[] };

function applyOnce(
  schema: Schema,
  live: JsonObject,
  config: JsonObject,
  managers: Managers,
  who: Identity,
  force: boolean,
  ignore: readonly FieldPath[],
): Applied {
  const liveBare = withoutManagedFields(live);
  const kept = withoutPaths(config, ignore);
  let merged = merge(schema, liveBare, kept);
  const key = identifier(who);
  const previous = managers.get(key);
  const next: Managers = new Map(managers);
  const applied = removeStripped(toFieldSet(schema, kept).withoutPrefixes(ignore));
  next.set(key, {
    ...who,
    ...(previous?.time !== undefined ? { time: previous.time } : {}),
    set: applied,
  });

  // What this manager applied before and omits now goes, unless someone still owns it.
  const last = previous?.set;
  if (last !== undefined && !last.isEmpty()) {
    let owned = FieldSet.empty;
    for (const m of next.values()) owned = owned.union(m.set);
    const prune = last.intersection(toFieldSet(schema, merged)).difference(owned);
    merged = removeFields(schema, merged, prune);
  }

  const cmp = compare(schema, liveBare, merged);
  const changed = cmp.modified.union(cmp.added).withoutPrefixes(ignore);
  const removed = cmp.removed.withoutPrefixes(ignore);
  const conflicts: Conflict[] = [];
  for (const [k, m] of next) {
    if (k === key) continue;
    for (const path of m.set.intersection(changed).paths())
      conflicts.push({ key: k, manager: m, path });
  }
  if (conflicts.length > 0 && !force) return { ok: false, conflicts };
  for (const [k, m] of next) {
    if (k === key) continue;
    const set = m.set.difference(changed).difference(removed);
    if (set.isEmpty()) next.delete(k);
    else next.set(k, { ...m, set });
  }
  return { ok: true, object: merged, managers: next, changed: !deepEqual(liveBare, merged) };
}

/** How the server names a manager in a conflict: `"kubectl-client-side-apply" using v1`. */
function printManager(m: Manager): string {
  let s = JSON.stringify(m.manager);
  if (m.subresource) s += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === 'Update') s += ` using ${m.apiVersion}`;
  return s;
}

function conflictError(conflicts: readonly Conflict[]): ApiError {
  const sorted = [...conflicts].sort((a, b) => byString(a.key, b.key));
  const causes = sorted.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: renderPath(c.path),
  }));
  let message: string;
  const [only] = sorted;
  if (sorted.length === 1 && only !== undefined) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(only.manager)}: ${renderPath(only.path)}`;
  } else {
    const lines: string[] = [];
    let current: string | undefined;
    for (const c of sorted) {
      if (c.key !== current) {
        current = c.key;
        lines.push(`conflicts with ${printManager(c.manager)}:`);
      }
      lines.push(`- ${renderPath(c.path)}`);
    }
    message = `Apply failed with ${sorted.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, { causes });
}

function annotationsOf(object: JsonObject | undefined): JsonObject | undefined {
  const meta = object?.metadata;
  return isObject(meta) && isObject(meta.annotations) ? meta.annotations : undefined;
}

/**
 * Fields `kubectl` may take over from client-side apply without a conflict: those of the
 * last-applied annotation whose value the live object still has (lastAppliedManager).
 */
function allowedByLastApplied(
  schema: Schema,
  live: JsonObject,
  apiVersion: string,
): FieldSet | undefined {
  const text = annotationsOf(live)?.[LAST_APPLIED_ANNOTATION];
  if (typeof text !== 'string' || text === '') return undefined;
  let last: unknown;
  try {
    last = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(last) || last.apiVersion !== apiVersion) return undefined;
  try {
    const cmp = compare(schema, last, managedFieldsHidden(live));
    return toFieldSet(schema, last)
      .difference(cmp.modified)
      .difference(cmp.added)
      .difference(cmp.removed);
  } catch (err) {
    if (err instanceof TypedError) return undefined;
    throw err;
  }
}

/** Keeps an existing last-applied annotation in step with what `kubectl` applies. */
function syncLastApplied(object: JsonObject, applied: JsonObject): void {
  const annotations = annotationsOf(object);
  const current = annotations?.[LAST_APPLIED_ANNOTATION];
  if (annotations === undefined || typeof current !== 'string' || current === '') return;
  const config = clone(applied);
  const configAnnotations = annotationsOf(config);
  if (configAnnotations !== undefined) delete configAnnotations[LAST_APPLIED_ANNOTATION];
  annotations[LAST_APPLIED_ANNOTATION] = `${sortedJson(config)}\n`;
  let size = 0;
  for (const [k, v] of Object.entries(annotations))
    size += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) delete annotations[LAST_APPLIED_ANNOTATION];
}

function groupVersionKind(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  const slash = av.indexOf('/');
  const [group, version] = slash < 0 ? ['', av] : [av.slice(0, slash), av.slice(slash + 1)];
  return `${group}/${version}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

function typedFailure(
  err: unknown,
  what: string,
  object: JsonObject,
  options: ApplyOptions,
): never {
  if (!(err instanceof TypedError)) throw err;
  const meta = isObject(object.metadata) ? object.metadata : {};
  const where = `${String(meta.namespace ?? '')}/${String(meta.name ?? '')}; ${groupVersionKind(options.apiVersion, object.kind)}`;
  throw badRequest(`failed to create typed ${what} object (${where}): ${err.message}`);
}

/**
 * Server-side apply of `applied` by `options.manager` onto `live` (undefined: the object is
 * being created). Returns the new object with metadata.managedFields updated; throws 409
 * when another manager owns a field this configuration changes and `force` is false.
 */
export function serverSideApply(
  live: KubeObject | undefined,
  applied: KubeObject,
  options: ApplyOptions,
): KubeObject {
  const kind = options.kind ?? live?.kind ?? applied.kind;
  if (applied.kind !== kind || applied.apiVersion !== options.apiVersion) {
    throw badRequest(`invalid object type: ${groupVersionKind(applied.apiVersion, applied.kind)}`);
  }
  const appliedMeta: unknown = applied.metadata;
  if (
    isObject(appliedMeta) &&
    appliedMeta.managedFields !== undefined &&
    appliedMeta.managedFields !== null
  ) {
    throw badRequest('metadata.managedFields must be nil');
  }
  const schema = Schema.of(options.apiVersion, kind, options.listTypes);
  const ignore = resetPrefixes(options);
  const config = applied as unknown as JsonObject;
  const liveObject = (live === undefined ? {} : clone(live)) as JsonObject;
  const who: Identity = {
    manager: options.manager || 'unknown',
    operation: 'Apply',
    apiVersion: options.apiVersion,
    ...(options.subresource ? { subresource: options.subresource } : {}),
  };

  let managers = decodeManagers(live?.metadata?.managedFields);
  let result: Applied;
  try {
    if (live !== undefined && managers.size === 0) {
      // An object nobody tracked yet: what it holds belongs to a stand-in updater.
      const standIn: Identity = { ...who, manager: BEFORE_FIRST_APPLY, operation: 'Update' };
      managers = capUpdateManagers(
        trackUpdate(schema, {}, liveObject, managers, standIn, options.now, ignore),
      );
    }
  } catch (err) {
    typedFailure(err, 'live', liveObject, options);
  }
  try {
    result = applyOnce(schema, liveObject, config, managers, who, options.force, ignore);
    if (!result.ok && who.manager === 'kubectl') {
      // Taking over from `kubectl apply` (client-side): fields it applied with the value
      // still live are not conflicts.
      const allowed = allowedByLastApplied(schema, liveObject, options.apiVersion);
      if (allowed !== undefined) {
        const remaining = result.conflicts.filter((c) => !allowed.has(c.path));
        result =
          remaining.length === 0
            ? applyOnce(schema, liveObject, config, managers, who, true, ignore)
            : { ok: false, conflicts: remaining };
      }
    }
  } catch (err) {
    typedFailure(err, 'patch', config, options);
  }
  if (!result.ok) throw conflictError(result.conflicts);

  let next = result.managers;
  if (result.changed) {
    const key = identifier(who);
    const mine = next.get(key);
    if (mine !== undefined) next.set(key, { ...mine, time: options.now });
  }
  next = capUpdateManagers(next);
  const object = result.object as unknown as KubeObject;
  if (who.manager === 'kubectl') syncLastApplied(result.object, config);
  return setManagedFields(object, next);
}

const isReset = (entries: unknown) =>
  Array.isArray(entries) &&
  (entries.length === 0 || (entries.length === 1 && deepEqual(entries[0], {})));

/**
 * Ownership for a create, update or non-apply patch by `manager`: the fields the write
 * changed become the manager's (operation Update) and stop being anyone else's. `before`
 * is undefined for a create. Returns a copy of `after` with metadata.managedFields set.
 */
export function recordUpdate(
  before: KubeObject | undefined,
  after: KubeObject,
  manager: string,
  options: UpdateOptions,
): KubeObject {
  // A deep copy: sharing the request body's objects instead measured ~260 B more RSS per
  // stored object in bench:local-api (cause not pinned down), for ~6% less CPU per patch.
  const result = clone(after);
  if (!isObject(result.metadata)) result.metadata = {};
  const subresource = options.subresource || undefined;
  let managers: Managers;
  if (subresource !== undefined) {
    // A subresource write cannot rewrite ownership: the live entries stand.
    managers = decodeManagers(before?.metadata?.managedFields);
  } else if (isReset(after.metadata?.managedFields)) {
    managers = new Map();
  } else {
    // A client that sent entries (a PUT of what it read) sets them; one that sent none keeps
    // the live ones.
    managers = decodeManagers(after.metadata?.managedFields);
    if (managers.size === 0) managers = decodeManagers(before?.metadata?.managedFields);
  }
  delete result.metadata.managedFields;
  // An existing object without managedFields stays untracked until someone applies to it.
  if (managers.size === 0 && before?.metadata?.uid) return result;

  const schema = Schema.of(options.apiVersion, after.kind, options.listTypes);
  if (before === undefined && subresource === undefined && managers.size === 0) {
    return recordCreate(schema, result, manager, options);
  }
  const who: Identity = {
    manager: manager || 'unknown',
    operation: 'Update',
    apiVersion: options.apiVersion,
    ...(subresource !== undefined ? { subresource } : {}),
  };
  try {
    const live = (before === undefined ? {} : before) as unknown as JsonObject;
    managers = trackUpdate(
      schema,
      live,
      result as unknown as JsonObject,
      managers,
      who,
      options.now,
      resetPrefixes(options),
    );
  } catch (err) {
    // As UpdateNoErrors: ownership that cannot be computed is dropped rather than the write.
    if (err instanceof TypedError) return result;
    throw err;
  }
  return setManagedFields(result, capUpdateManagers(managers));
}

/**
 * recordUpdate of a create that brings no managedFields, the common write: every field the
 * object sets becomes the writer's, so the one entry is built straight from the object.
 * Gives what trackUpdate from {} gives (a property test holds the two together).
 */
function recordCreate(
  schema: Schema,
  result: KubeObject,
  manager: string,
  options: UpdateOptions,
): KubeObject {
  let fields: FieldTree;
  try {
    fields = createdFields(schema, result as unknown as JsonObject);
  } catch (err) {
    if (err instanceof TypedError) return result;
    throw err;
  }
  for (const prefix of resetPrefixes(options)) fields.prune(prefix);
  for (const path of STRIPPED_PATHS) fields.unmark(path);
  const fieldsV1 = fields.toFieldsV1();
  if (fieldsV1 !== undefined) {
    result.metadata.managedFields = [
      {
        manager: manager || 'unknown',
        operation: 'Update',
        apiVersion: options.apiVersion,
        time: options.now,
        fieldsType: 'FieldsV1',
        fieldsV1,
      },
    ];
  }
  return result;
}
