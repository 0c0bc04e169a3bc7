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
  // Copies without the dropped fields rather than `delete`: V8 turns an object that lost a
  // property into a slower dictionary that takes more room than the field saved.
  const { managedFields: _managedFields, annotations, ...metadata } = object.metadata;
  if (annotations !== undefined) {
    const { [LAST_APPLIED_ANNOTATION]: _lastApplied, ...kept } = annotations;
    if (Object.keys(kept).length > 0) metadata.annotations = kept;
  }
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
