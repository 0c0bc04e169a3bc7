// Making cached objects cheaper to hold, for informers whose readers allow it: what nobody
// reads is dropped (metadata.managedFields, kubectl's last-applied copy: often most of an
// object), and the strings that recur across objects (namespaces, labels, finalizers, phases,
// condition reasons and messages, timestamps) are shared instead of held once per object.
// For readers that need nothing but metadata, spec and status can go too.
import type { KubeObject } from './client.js';

/** Set by kubectl apply (client-side): a full copy of the object. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** Longer strings are rarely repeated, and hashing them would cost more than sharing saves. */
const MAX_SHARED_LENGTH = 256;
/** Deeper than this, a spec or status is user data that is left as it is. */
const MAX_DEPTH = 8;

/**
 * Equal strings made one. Bounded: once it knows `capacity` strings it starts over, so strings
 * that stop recurring (names of objects long gone) are not held for ever; the objects keep
 * theirs either way, only later ones stop sharing with them.
 */
export class StringPool {
  private table = new Map<string, string>();

  constructor(private readonly capacity = 50_000) {}

  get size(): number {
    return this.table.size;
  }

  share(value: string): string {
    if (value.length > MAX_SHARED_LENGTH) return value;
    const known = this.table.get(value);
    if (known !== undefined) return known;
    if (this.table.size >= this.capacity) this.table = new Map();
    this.table.set(value, value);
    return value;
  }
}

const pool = new StringPool();

/**
 * The informer transform for readers that never look at managedFields or the last-applied
 * annotation. Mutates and returns the object (freshly parsed: nobody else holds it).
 */
export function leanObject<O extends KubeObject<unknown, unknown>>(object: O): O {
  const metadata = leanMetadata(object.metadata);
  object.metadata = metadata as O['metadata'];
  object.apiVersion = pool.share(object.apiVersion);
  object.kind = pool.share(object.kind);
  // Not name, uid or resourceVersion: those are one per object, sharing them saves nothing.
  if (metadata.namespace !== undefined) metadata.namespace = pool.share(metadata.namespace);
  if (metadata.creationTimestamp !== undefined) {
    metadata.creationTimestamp = pool.share(metadata.creationTimestamp);
  }
  for (const field of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    shareDeep(metadata[field], 0);
  }
  shareDeep(object.spec, 0);
  shareDeep(object.status, 0);
  return object;
}

type Metadata = KubeObject<unknown, unknown>['metadata'];

/**
 * metadata without managedFields and the last-applied annotation (an empty map goes too),
 * changed in place. Not copied: a copy holds only four fields inside the object and the rest
 * in a separate array, some 60 bytes more for each cached object's metadata.
 */
function leanMetadata(metadata: Metadata): Metadata {
  if (metadata.managedFields !== undefined) drop(metadata, 'managedFields');
  const annotations = metadata.annotations;
  if (annotations === undefined) return metadata;
  // Annotations are a map readers iterate: the annotation leaves it, not just its value.
  const kept =
    annotations[LAST_APPLIED_ANNOTATION] !== undefined
      ? without(annotations, LAST_APPLIED_ANNOTATION)
      : annotations;
  if (isEmpty(kept)) drop(metadata, 'annotations');
  else if (kept !== annotations) metadata.annotations = kept;
  return metadata;
}

/**
 * Deletes `key` if it is the last key of `record`: V8 then steps the object back to its
 * previous shape, its fields still inside it (kube-apiserver writes a built-in kind's
 * managedFields last). Deleting any other key would turn the object into a slower dictionary.
 */
function dropLast<T extends object>(record: T, key: keyof T & string): boolean {
  let last: string | undefined;
  for (const k in record) last = k;
  if (last !== key) return false;
  delete record[key];
  return true;
}

/**
 * Removes a field of a metadata object: deleted if last, else left undefined, which keeps the
 * object's shape. JSON, `?.` and canonicallyEqual read an undefined field as an absent one;
 * metadata is read field by field, never iterated.
 */
function drop<T extends object>(record: T, key: keyof T & string): void {
  if (!dropLast(record, key)) record[key] = undefined as T[keyof T & string];
}

/** `record` without `key`: in place if it is the last (see dropLast), else a copy. */
function without<T extends object>(record: T, key: keyof T & string): T {
  if (dropLast(record, key)) return record;
  const { [key]: _dropped, ...rest } = record;
  return rest as T;
}

function isEmpty(record: object): boolean {
  for (const _ in record) return false;
  return true;
}

/** leanObject without the status too: for readers that never look at it. */
export function leanWithoutStatus<O extends KubeObject<unknown, unknown>>(object: O): O {
  const lean = leanObject(object);
  if (lean.status !== undefined) drop(lean, 'status');
  return lean;
}

/**
 * leanObject, keeping metadata only (controller-runtime's metadata-only watches, done on our
 * side): for informers whose readers look at nothing but labels, annotations and the like.
 */
export function metadataOnly<O extends KubeObject<unknown, unknown>>(object: O): O {
  const { apiVersion, kind, metadata } = leanObject(object);
  return { apiVersion, kind, metadata } as O;
}

/** Replaces every string in `value` (an object or array parsed from JSON) by its shared copy. */
function shareDeep(value: unknown, depth: number): void {
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'string') value[i] = pool.share(item);
      else shareDeep(item, depth + 1);
    }
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const item = record[key];
    if (typeof item === 'string') record[key] = pool.share(item);
    else shareDeep(item, depth + 1);
  }
}
