// The informer's store: objects by namespace/name, plus named indexes (object -> values) kept
// up to date on every write, so lookups like "scopes of application 7" cost no scan. As in
// client-go's threadSafeStore, an object is unfiled by running the index function on the
// object it replaces: cached objects are never changed in place (NRN_FREEZE_CACHE=1 makes
// that a TypeError, and the test suite runs so), so no key -> values map is kept beside them.
import { keyOf } from './client.js';

export type IndexFunction<O> = (object: O) => readonly string[];

/**
 * One key per value (the usual case: most index values name one object) is kept as the string
 * itself, not in a Set: with 100,000 objects cached, that spares some 400 bytes per value.
 */
interface Index<O> {
  readonly fn: IndexFunction<O>;
  /** value -> key(s) of the objects that have it */
  readonly byValue: Map<string, string | Set<string>>;
}

/** Tests set it: a cached object changed in place would unfile wrongly, so make that throw. */
const FREEZE = process.env.NRN_FREEZE_CACHE === '1';

export interface CacheDiff<O> {
  readonly added: O[];
  readonly updated: { readonly object: O; readonly old: O }[];
  readonly deleted: O[];
}

export const NAMESPACE_INDEX = 'namespace';

interface Meta {
  readonly metadata: {
    readonly name?: string;
    readonly namespace?: string;
    readonly resourceVersion?: string;
  };
}

export class ObjectCache<O extends Meta> {
  private readonly objects = new Map<string, O>();
  private readonly indexes = new Map<string, Index<O>>();

  constructor() {
    this.addIndex(NAMESPACE_INDEX, (o) => [o.metadata.namespace ?? '']);
  }

  get size(): number {
    return this.objects.size;
  }

  get(namespace: string | undefined, name: string): O | undefined {
    return this.objects.get(keyOf({ name, ...(namespace ? { namespace } : {}) }));
  }

  getByKey(key: string): O | undefined {
    return this.objects.get(key);
  }

  /** Every object, or those of one namespace. */
  list(namespace?: string): O[] {
    if (namespace === undefined) return [...this.objects.values()];
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  /** Adds an index over the objects already cached, then keeps it up to date. */
  addIndex(name: string, fn: IndexFunction<O>): void {
    if (this.indexes.has(name)) throw new Error(`index ${name} exists already`);
    const index: Index<O> = { fn, byValue: new Map() };
    this.indexes.set(name, index);
    for (const [key, object] of this.objects) file(index, key, fn(object));
  }

  hasIndex(name: string): boolean {
    return this.indexes.has(name);
  }

  byIndex(name: string, value: string): O[] {
    const index = this.indexes.get(name);
    if (index === undefined) throw new Error(`no index named ${name}`);
    const keys = index.byValue.get(value);
    if (keys === undefined) return [];
    const out: O[] = [];
    for (const key of typeof keys === 'string' ? [keys] : keys) {
      const object = this.objects.get(key);
      if (object !== undefined) out.push(object);
    }
    return out;
  }

  /** The values an index holds, e.g. every application id that has scopes. */
  indexValues(name: string): string[] {
    const index = this.indexes.get(name);
    if (index === undefined) throw new Error(`no index named ${name}`);
    return [...index.byValue.keys()];
  }

  /** Stores the object; returns the one it replaces. */
  upsert(object: O): O | undefined {
    const key = keyOf(object.metadata);
    const old = this.objects.get(key);
    if (FREEZE) deepFreeze(object);
    this.objects.set(key, object);
    for (const index of this.indexes.values()) {
      const values = index.fn(object);
      if (old === undefined) {
        file(index, key, values);
        continue;
      }
      // Most updates leave the indexed values as they were: nothing to refile then.
      const previous = index.fn(old);
      if (sameValues(previous, values)) continue;
      unfile(index, key, previous);
      file(index, key, values);
    }
    return old;
  }

  remove(key: string): O | undefined {
    const old = this.objects.get(key);
    if (old === undefined) return undefined;
    this.objects.delete(key);
    for (const index of this.indexes.values()) unfile(index, key, index.fn(old));
    return old;
  }

  /** Makes the cache hold exactly `objects`, and says what that changed (after a relist). */
  replace(objects: readonly O[]): CacheDiff<O> {
    const diff: CacheDiff<O> = { added: [], updated: [], deleted: [] };
    const seen = new Set<string>();
    for (const object of objects) {
      const key = keyOf(object.metadata);
      seen.add(key);
      const old = this.upsert(object);
      if (old === undefined) diff.added.push(object);
      else if (old.metadata.resourceVersion !== object.metadata.resourceVersion) {
        diff.updated.push({ object, old });
      }
    }
    for (const key of this.keys()) {
      if (seen.has(key)) continue;
      const old = this.remove(key);
      if (old !== undefined) diff.deleted.push(old);
    }
    return diff;
  }
}

function file<O>(index: Index<O>, key: string, values: readonly string[]): void {
  for (const value of values) {
    const keys = index.byValue.get(value);
    if (keys === undefined) index.byValue.set(value, key);
    else if (typeof keys !== 'string') keys.add(key);
    else if (keys !== key) index.byValue.set(value, new Set([keys, key]));
  }
}

function unfile<O>(index: Index<O>, key: string, values: readonly string[]): void {
  for (const value of values) {
    const keys = index.byValue.get(value);
    if (keys === undefined) continue;
    if (typeof keys === 'string') {
      if (keys === key) index.byValue.delete(value);
      continue;
    }
    keys.delete(key);
    if (keys.size === 0) index.byValue.delete(value);
  }
}

/**
 * Whether two lists of index values hold the same values (order and repeats aside). Runs on
 * every upsert for every index: no allocation, and lists are short (most hold one value).
 */
function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a.length <= 1 && b.length <= 1) return a.length === b.length && a[0] === b[0];
  return a.every((v) => b.includes(v)) && b.every((v) => a.includes(v));
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const item of Object.values(value)) deepFreeze(item);
}
