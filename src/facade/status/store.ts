// StatusStore: every scope and service the facade's informers hold, summarised once per version
// (./summary.ts), the applications that name the tree's leaves, and a bounded ring of the
// recent changes that GET /watch streams and resumes from. It answers the status calls in one
// pass over its entries (no sort of the whole set: a page is a bounded heap), so 100,000 objects
// cost a few milliseconds of event loop per request.
import { randomBytes } from 'node:crypto';
import type {
  ApplicationSpec,
  ApplicationStatus,
  KindCounts,
  StatusFilters,
  StatusKind,
  StatusTree,
} from '../../api/index.js';
import { applicationById } from '../../domain/applications.js';
import { grantsScopeNamespace } from '../../domain/scopes/index.js';
import type { Informer, KubeObject } from '../../kube/index.js';
import {
  type Entry,
  entryKey,
  matcher,
  narrowsBeyondNrn,
  placesOf,
  type ScopeObject,
  type ServiceObject,
  scopeEntry,
  serviceEntry,
  sortableNrn,
} from './summary.js';

type ApplicationObject = KubeObject<ApplicationSpec, ApplicationStatus>;

/** Changes kept for Last-Event-ID: a browser away for a few seconds of a busy cluster resumes. */
export const DEFAULT_RING_SIZE = 10_000;

/** One change, as a stream sends it: an upsert carries `entry`, a delete only `old`. */
export interface Change {
  readonly seq: number;
  readonly kind: StatusKind;
  readonly namespace: string;
  readonly name: string;
  /** The object now; undefined when it was deleted. */
  readonly entry: Entry | undefined;
  /** The object before; undefined when it is new. */
  readonly old: Entry | undefined;
}

/** What a caller may see: every namespace, or these, per kind. */
export interface Visibility {
  readonly scope: 'all' | ReadonlySet<string>;
  readonly service: 'all' | ReadonlySet<string>;
}

export function sees(visibility: Visibility, kind: StatusKind, namespace: string): boolean {
  const allowed = visibility[kind];
  return allowed === 'all' || allowed.has(namespace);
}

interface Application {
  readonly nrn: string;
  readonly name: string;
  readonly namespace: string;
}

interface InformerLike<O> {
  on(event: 'add' | 'delete', listener: (object: O) => void): () => void;
  on(event: 'update', listener: (object: O, old: O) => void): () => void;
  readonly cache: { list(): O[]; get(namespace: string | undefined, name: string): O | undefined };
}

const emptyCounts = (): KindCounts => ({ scope: {}, service: {} });

function bump(counts: KindCounts, entry: Entry): void {
  const byStatus = counts[entry.summary.kind];
  byStatus[entry.summary.status] = (byStatus[entry.summary.status] ?? 0) + 1;
}

function add(into: KindCounts, from: KindCounts): void {
  for (const kind of ['scope', 'service'] as const) {
    for (const [status, n] of Object.entries(from[kind])) {
      into[kind][status] = (into[kind][status] ?? 0) + n;
    }
  }
}

const LEVEL_NAMES = ['organization', 'account', 'namespace', 'application'] as const;

export class StatusStore {
  /** This process: ids of another replica or an earlier process are recognised as foreign. */
  readonly epoch = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  private readonly entries = new Map<string, Entry>();
  /** How many entries of each kind each namespace holds: the namespaces visibility is asked about. */
  private readonly namespaceCounts = new Map<string, number>();
  private readonly applications = new Map<string, Application>();
  private readonly ring: (Change | undefined)[];
  private seq = 0;
  private readonly listeners = new Set<(change: Change) => void>();
  private scopeApps: Informer<ApplicationSpec, ApplicationStatus> | undefined;
  private readonly objects: {
    scope?: InformerLike<ScopeObject>;
    service?: InformerLike<ServiceObject>;
  } = {};

  constructor(ringSize = DEFAULT_RING_SIZE) {
    this.ring = new Array(Math.max(1, ringSize));
  }

  /** The number of the last change (0 before any). */
  get lastSeq(): number {
    return this.seq;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Follows the facade's informers; returns what stops following them. */
  attach(
    services: InformerLike<ServiceObject>,
    scopes: InformerLike<ScopeObject>,
    applications: Informer<ApplicationSpec, ApplicationStatus>,
  ): () => void {
    this.scopeApps = applications;
    this.objects.scope = scopes;
    this.objects.service = services;
    for (const o of applications.cache.list()) this.upsertApplication(o);
    for (const o of services.cache.list()) this.upsertService(o);
    for (const o of scopes.cache.list()) this.upsertScope(o);
    const off = [
      applications.on('add', (o) => this.upsertApplication(o)),
      applications.on('update', (o) => this.upsertApplication(o)),
      applications.on('delete', (o) => this.removeApplication(o)),
      services.on('add', (o) => this.upsertService(o)),
      services.on('update', (o) => this.upsertService(o)),
      services.on('delete', (o) => this.remove('service', o)),
      scopes.on('add', (o) => this.upsertScope(o)),
      scopes.on('update', (o) => this.upsertScope(o)),
      scopes.on('delete', (o) => this.remove('scope', o)),
    ];
    return () => {
      for (const stop of off) stop();
    };
  }

  upsertService(object: ServiceObject): void {
    const old = this.entries.get(
      entryKey('service', object.metadata.namespace ?? '', object.metadata.name ?? ''),
    );
    // A resync hands the same version again: nothing to work out, nothing to stream.
    if (old !== undefined && sameVersion(old, object)) return;
    this.put(serviceEntry(object), old);
  }

  upsertScope(object: ScopeObject): void {
    const old = this.entries.get(
      entryKey('scope', object.metadata.namespace ?? '', object.metadata.name ?? ''),
    );
    if (old !== undefined && sameVersion(old, object)) return;
    // Looked up only until the operator writes the scope's own NRN.
    const appId = object.spec?.application_id;
    const app =
      object.status?.nrn === undefined && appId !== undefined && this.scopeApps !== undefined
        ? applicationById(this.scopeApps, appId)
        : undefined;
    // Not under an application that does not let the scope in: naming it is no claim to it.
    const appNrn =
      app !== undefined && grantsScopeNamespace(app, object.metadata.namespace ?? '')
        ? app.spec?.nrn
        : undefined;
    this.put(scopeEntry(object, appNrn), old);
  }

  remove(kind: StatusKind, object: Pick<KubeObject, 'metadata'>): void {
    const namespace = object.metadata.namespace ?? '';
    const name = object.metadata.name ?? '';
    const key = entryKey(kind, namespace, name);
    const old = this.entries.get(key);
    if (old === undefined) return;
    this.entries.delete(key);
    this.countNamespace(namespace, -1);
    this.record({ kind, namespace, name, entry: undefined, old });
  }

  upsertApplication(object: ApplicationObject): void {
    const nrn = object.spec?.nrn;
    const key = `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
    if (nrn === undefined) {
      this.applications.delete(key);
      return;
    }
    this.applications.set(key, {
      nrn,
      name: object.spec?.name ?? object.metadata.name ?? '',
      namespace: object.metadata.namespace ?? '',
    });
  }

  removeApplication(object: Pick<KubeObject, 'metadata'>): void {
    this.applications.delete(`${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`);
  }

  get(kind: StatusKind, namespace: string, name: string): Entry | undefined {
    return this.entries.get(entryKey(kind, namespace, name));
  }

  /** The cached object behind an entry (conditions, messages, inventory: what the detail shows). */
  object(
    kind: StatusKind,
    namespace: string,
    name: string,
  ): ScopeObject | ServiceObject | undefined {
    return this.objects[kind]?.cache.get(namespace, name);
  }

  /** Every namespace holding a scope, a service or an application: what visibility is asked of. */
  namespaces(): string[] {
    const all = new Set(this.namespaceCounts.keys());
    for (const app of this.applications.values()) all.add(app.namespace);
    return [...all];
  }

  /** Calls `listener` with every change from now on; returns what stops it. */
  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The changes after `seq`, oldest first; undefined when some of them have left the ring (or
   * `seq` is ahead of this store): the caller cannot be brought up to date from here.
   */
  changesSince(seq: number): Change[] | undefined {
    if (!Number.isSafeInteger(seq) || seq < 0 || seq > this.seq) return undefined;
    const oldest = Math.max(1, this.seq - this.ring.length + 1);
    if (seq + 1 < oldest) return undefined;
    const out: Change[] = [];
    for (let s = seq + 1; s <= this.seq; s++) {
      const change = this.ring[s % this.ring.length];
      if (change?.seq !== s) return undefined;
      out.push(change);
    }
    return out;
  }

  /** The NRN tree of what matches and the caller may see, with counts by lifecycle value. */
  tree(filters: StatusFilters, visibility: Visibility): StatusTree {
    const match = matcher(filters);
    const total = emptyCounts();
    // Counted per deepest place first (one map lookup per entry), then rolled up to ancestors.
    const byPlace = new Map<string, KindCounts>();
    for (const entry of this.entries.values()) {
      const { kind, namespace } = entry.summary;
      if (!sees(visibility, kind, namespace) || !match(entry)) continue;
      bump(total, entry);
      const place = entry.places[entry.places.length - 1];
      if (place === undefined) continue;
      let counts = byPlace.get(place);
      if (counts === undefined) {
        counts = emptyCounts();
        byPlace.set(place, counts);
      }
      bump(counts, entry);
    }
    const nodes = new Map<string, KindCounts>();
    const node = (nrn: string): KindCounts => {
      let counts = nodes.get(nrn);
      if (counts === undefined) {
        counts = emptyCounts();
        nodes.set(nrn, counts);
      }
      return counts;
    };
    for (const [place, counts] of byPlace) {
      for (const ancestor of placesOf(place)) add(node(ancestor), counts);
    }
    const names = new Map<string, string>();
    const showEmpty = !narrowsBeyondNrn(filters);
    const prefix = filters.nrn;
    for (const app of this.applications.values()) {
      const visible =
        sees(visibility, 'scope', app.namespace) || sees(visibility, 'service', app.namespace);
      if (!visible) continue;
      if (prefix !== undefined && app.nrn !== prefix && !app.nrn.startsWith(`${prefix}:`)) {
        continue;
      }
      names.set(app.nrn, app.name);
      // An application with nothing yet is still a place to look, unless a filter asks for
      // something it does not have.
      if (showEmpty) for (const ancestor of placesOf(app.nrn)) node(ancestor);
    }
    return {
      nodes: [...nodes]
        .map(([nrn, counts]) => ({ key: sortableNrn(nrn), nrn, counts }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .map(({ nrn, counts }) => {
          const places = placesOf(nrn);
          const level = LEVEL_NAMES[places.length - 1] ?? 'organization';
          const name = names.get(nrn);
          return { nrn, level, ...(name !== undefined ? { name } : {}), counts };
        }),
      counts: total,
    };
  }

  /** A page of what matches and the caller may see, failures first, after `after` (a sort key). */
  page(
    filters: StatusFilters,
    visibility: Visibility,
    limit: number,
    after: string | undefined,
  ): { results: Entry[]; total: number; last: string | undefined; more: boolean } {
    const match = matcher(filters);
    const heap = new MaxHeap(limit);
    let total = 0;
    let beyond = 0;
    for (const entry of this.entries.values()) {
      const { kind, namespace } = entry.summary;
      if (!sees(visibility, kind, namespace) || !match(entry)) continue;
      total++;
      if (after !== undefined && entry.sortKey <= after) continue;
      beyond++;
      heap.offer(entry);
    }
    const results = heap.sorted();
    return {
      results,
      total,
      last: results[results.length - 1]?.sortKey,
      more: beyond > results.length,
    };
  }

  private put(entry: Entry, old: Entry | undefined): void {
    this.entries.set(entry.key, entry);
    if (old === undefined) this.countNamespace(entry.summary.namespace, 1);
    // A new version that shows the same (a spec edit the summary does not show, a status
    // rewritten unchanged) is not worth an event on every open stream.
    if (old !== undefined && old.json === entry.json) return;
    const { kind, namespace, name } = entry.summary;
    this.record({ kind, namespace, name, entry, old });
  }

  private record(change: Omit<Change, 'seq'>): void {
    const full: Change = { seq: ++this.seq, ...change };
    this.ring[full.seq % this.ring.length] = full;
    for (const listener of this.listeners) listener(full);
  }

  private countNamespace(namespace: string, delta: number): void {
    const n = (this.namespaceCounts.get(namespace) ?? 0) + delta;
    if (n <= 0) this.namespaceCounts.delete(namespace);
    else this.namespaceCounts.set(namespace, n);
  }
}

function sameVersion(entry: Entry, object: KubeObject<unknown, unknown>): boolean {
  return (
    entry.resourceVersion !== undefined && entry.resourceVersion === object.metadata.resourceVersion
  );
}

/** The `limit` entries of least sort key seen, kept in a binary max-heap of that size. */
class MaxHeap {
  private readonly items: Entry[] = [];

  constructor(private readonly limit: number) {}

  offer(entry: Entry): void {
    const items = this.items;
    if (items.length < this.limit) {
      items.push(entry);
      let i = items.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if ((items[parent] as Entry).sortKey >= entry.sortKey) break;
        items[i] = items[parent] as Entry;
        i = parent;
      }
      items[i] = entry;
      return;
    }
    const top = items[0];
    if (top === undefined || entry.sortKey >= top.sortKey) return;
    // Replace the largest and sift down.
    let i = 0;
    const n = items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let largest = i;
      let key = entry.sortKey;
      if (l < n && (items[l] as Entry).sortKey > key) {
        largest = l;
        key = (items[l] as Entry).sortKey;
      }
      if (r < n && (items[r] as Entry).sortKey > key) largest = r;
      if (largest === i) break;
      items[i] = items[largest] as Entry;
      i = largest;
    }
    items[i] = entry;
  }

  sorted(): Entry[] {
    return [...this.items].sort((a, b) => (a.sortKey < b.sortKey ? -1 : 1));
  }
}
