// The store's in-memory key space: resource -> namespace -> name -> entry, with sorted key caches.

/** A stored object: its serialized JSON and the revision that last wrote it. */
export interface Entry {
  readonly namespace: string;
  readonly name: string;
  readonly json: string;
  /** The revision of the commit that last wrote this object (its resourceVersion). */
  readonly revision: number;
}

/** A position in (namespace, name) order; listing after it returns the keys strictly greater. */
export interface ListCursor {
  readonly namespace: string;
  readonly name: string;
}

/**
 * The keys of a map in sorted order, kept up to date cheaply. Nothing is tracked until the first
 * read, so loading and write-only key sets cost nothing; after that an insert is an O(1) note and
 * the next read merges the notes in (O(n + k log k)), so listing after every create of a large
 * collection never re-sorts it. Deletes are only counted: the merge drops keys no longer live.
 */
class SortedKeys {
  private sorted: string[] | undefined;
  private added: string[] = [];
  private removed = 0;

  /** `key` was not in the map and now is. */
  noteAdded(key: string): void {
    if (this.sorted) this.added.push(key);
  }

  noteRemoved(): void {
    if (this.sorted) this.removed++;
  }

  get(live: ReadonlyMap<string, unknown>): readonly string[] {
    if (!this.sorted) {
      this.sorted = [...live.keys()].sort(compare);
    } else if (this.added.length > 0 || this.removed > 0) {
      this.sorted = merge(this.sorted, this.added.sort(compare), live);
      this.added = [];
      this.removed = 0;
    }
    return this.sorted;
  }
}

// Plain code-unit order (not localeCompare): stable, and the same as byte order for ASCII keys.
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function merge(a: string[], b: string[], live: ReadonlyMap<string, unknown>): string[] {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  let last: string | undefined;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    let key: string;
    if (y === undefined || (x !== undefined && x <= y)) {
      key = x as string;
      i++;
    } else {
      key = y;
      j++;
    }
    // A key deleted and re-added is in both lists (and may be in `b` twice).
    if (key !== last && live.has(key)) out.push(key);
    last = key;
  }
  return out;
}

/** The first index whose key is > `key` (or >= when `inclusive`). */
function bound(keys: readonly string[], key: string, inclusive: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid] as string;
    if (k < key || (!inclusive && k === key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Bucket {
  readonly namespace: string;
  readonly entries: Map<string, Entry>;
  readonly names: SortedKeys;
}

interface ResourceSpace {
  readonly buckets: Map<string, Bucket>;
  readonly namespaces: SortedKeys;
  size: number;
}

export class Keyspace {
  private readonly resources = new Map<string, ResourceSpace>();
  private total = 0;
  /** Approximate bytes of live keys and JSON (string lengths), to judge when compaction pays. */
  liveBytes = 0;

  get(resource: string, namespace: string, name: string): Entry | undefined {
    return this.resources.get(resource)?.buckets.get(namespace)?.entries.get(name);
  }

  put(resource: string, namespace: string, name: string, json: string, revision: number): void {
    let space = this.resources.get(resource);
    if (!space) {
      space = { buckets: new Map(), namespaces: new SortedKeys(), size: 0 };
      this.resources.set(resource, space);
    }
    let bucket = space.buckets.get(namespace);
    if (!bucket) {
      bucket = { namespace, entries: new Map(), names: new SortedKeys() };
      space.buckets.set(namespace, bucket);
      space.namespaces.noteAdded(namespace);
    }
    const previous = bucket.entries.get(name);
    // Entries share the bucket's namespace string, so 100,000 objects in a namespace hold one copy.
    bucket.entries.set(name, { namespace: bucket.namespace, name, json, revision });
    if (previous) {
      this.liveBytes += json.length - previous.json.length;
    } else {
      bucket.names.noteAdded(name);
      space.size++;
      this.total++;
      this.liveBytes += json.length + name.length + namespace.length + resource.length;
    }
  }

  delete(resource: string, namespace: string, name: string): void {
    const space = this.resources.get(resource);
    const bucket = space?.buckets.get(namespace);
    const previous = bucket?.entries.get(name);
    if (!space || !bucket || !previous) return;
    bucket.entries.delete(name);
    bucket.names.noteRemoved();
    space.size--;
    this.total--;
    this.liveBytes -= previous.json.length + name.length + namespace.length + resource.length;
    if (bucket.entries.size === 0) {
      space.buckets.delete(namespace);
      space.namespaces.noteRemoved();
    }
  }

  count(resource?: string, namespace?: string): number {
    if (resource === undefined) return this.total;
    const space = this.resources.get(resource);
    if (namespace === undefined) return space?.size ?? 0;
    return space?.buckets.get(namespace)?.entries.size ?? 0;
  }

  list(
    resource: string,
    namespace: string | undefined,
    after: ListCursor | undefined,
    limit: number,
  ): Entry[] {
    const out: Entry[] = [];
    const space = this.resources.get(resource);
    if (!space || limit <= 0) return out;
    const namespaces =
      namespace === undefined ? space.namespaces.get(space.buckets) : ([namespace] as const);
    const first = after ? bound(namespaces, after.namespace, true) : 0;
    for (let i = first; i < namespaces.length && out.length < limit; i++) {
      const bucket = space.buckets.get(namespaces[i] as string);
      if (!bucket) continue;
      const names = bucket.names.get(bucket.entries);
      let j = after && after.namespace === bucket.namespace ? bound(names, after.name, false) : 0;
      for (; j < names.length && out.length < limit; j++) {
        const entry = bucket.entries.get(names[j] as string);
        if (entry) out.push(entry);
      }
    }
    return out;
  }

  /**
   * Every entry, grouped by resource. Entries are immutable and replaced on write, so holding
   * these references is a consistent copy of this moment, however the key space changes later.
   */
  capture(): Array<{ resource: string; entries: Entry[] }> {
    const out: Array<{ resource: string; entries: Entry[] }> = [];
    for (const [resource, space] of this.resources) {
      const entries: Entry[] = [];
      for (const bucket of space.buckets.values()) {
        for (const entry of bucket.entries.values()) entries.push(entry);
      }
      if (entries.length > 0) out.push({ resource, entries });
    }
    return out;
  }
}
