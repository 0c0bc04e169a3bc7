// The read model of GET /service: every Service rendered once as the spec's item (secret
// attributes left out) and its JSON, filed in sorted lists — one per NRN it carries (a trie of
// NRN segments), one per subtree of the top levels, one per type, one per status, one for all —
// so that a page costs about its own size, whatever the size of the catalog.
import {
  type Nrn,
  type NrnSegment,
  parseNrn,
  type ServiceItem,
  type ServicePhase,
  type ServiceSpec,
  type ServiceSpecificationSpec,
  type ServiceStatus,
  type ServiceType,
  valuesOverlap,
} from '../api/index.js';
import { slugify } from '../domain/names.js';
import { placeAt, propertiesOf } from '../domain/services/attributes.js';
import { type KubeObject, keyOf } from '../kube/index.js';

export type ServiceObject = KubeObject<ServiceSpec, ServiceStatus>;
export type SpecificationObject = KubeObject<ServiceSpecificationSpec, unknown>;

/** Where the values of a service's secret attributes are, for a caller allowed to see them. */
export interface SecretAttributes {
  /** The Secret named by spec.secret_attributes_ref, in the Service's namespace. */
  readonly name: string;
  /** Keys of the properties the specification marks `secret: true`, sorted: what to read from it. */
  readonly keys: readonly string[];
  /** Where each key's value goes in the attributes (`db.password` -> `['db', 'password']`). */
  readonly paths: ReadonlyMap<string, readonly string[]>;
  /** Keys whose schema type is not string: their value is read as JSON, as the reconciler does. */
  readonly jsonValued: ReadonlySet<string>;
}

/**
 * What to leave out of the attributes: `true` for the whole value, else, by property name,
 * what to leave out inside it.
 */
export type HiddenAttributes = true | ReadonlyMap<string, HiddenAttributes>;

/** One service as a page holds it. Immutable: an update files a new one. */
export interface CatalogEntry {
  /** `item` serialised, secret attributes already left out. */
  readonly json: string;
  readonly item: Readonly<ServiceItem>;
  readonly namespace: string;
  readonly name: string;
  /** Present when the service names a Secret for its secret attributes. */
  readonly secret: SecretAttributes | undefined;
}

export interface CatalogQuery {
  /** The `id` (alias `nrn`) filter: what is visible at this NRN. */
  readonly nrn?: string;
  /** The `entity_nrn` filter: the owner, `*` matching any id at its level. */
  readonly entityNrn?: string;
  readonly status?: ServicePhase;
  readonly type?: ServiceType;
  readonly limit: number;
  readonly offset: number;
}

export interface CatalogPage {
  readonly entries: readonly CatalogEntry[];
}

/** What the catalog needs of an informer (src/kube's Informer is one). */
export interface WatchedKind<O> {
  readonly cache: { list(): O[] };
  on(event: 'add' | 'delete', listener: (object: O) => void): () => void;
  on(event: 'update', listener: (object: O, old: O) => void): () => void;
}

export interface ServiceCatalogOptions {
  /**
   * How many NRN trie nodes a query may step to while collecting its buckets; past it, the
   * query is broad, so its matches are dense and a scan of a sorted list fills a page sooner.
   */
  readonly nodeBudget?: number;
  /**
   * `auto` (the default) reads each query the cheapest way it estimates; `index` reads from the
   * NRN buckets whenever a query has an NRN, `scan` always walks the list of all services.
   * For tests and benchmarks, which must reach every way of reading.
   */
  readonly strategy?: 'auto' | 'index' | 'scan';
}

const DEFAULT_NODE_BUDGET = 256;
const NO_KEYS: ReadonlySet<string> = new Set();
const NOTHING_HIDDEN: HiddenAttributes = new Map();
const NO_SECRETS: SpecSecrets = {
  keys: [],
  paths: new Map(),
  hidden: NOTHING_HIDDEN,
  jsonValued: NO_KEYS,
  signature: '',
};

// --- Rendering ---------------------------------------------------------------------------

/**
 * The spec's Service item of a Service resource: snake_case names, no nulls (a field without
 * a value is left out), and none of the attributes `hidden` names, even one a user put in the
 * plain spec by mistake (the reconciler refuses it, but the resource still exists).
 */
export function serviceItem(
  object: ServiceObject,
  hidden: HiddenAttributes = NOTHING_HIDDEN,
): ServiceItem {
  const { metadata, spec, status } = object;
  const item: Record<string, unknown> = {};
  put(item, 'id', metadata.uid);
  put(item, 'name', spec?.name);
  put(item, 'slug', status?.slug ?? (spec?.name ? slugify(spec.name) : undefined));
  put(item, 'specification_id', spec?.specification_id);
  put(item, 'desired_specification_id', spec?.desired_specification_id);
  put(item, 'messages', status?.messages);
  put(item, 'created_at', metadata.creationTimestamp);
  put(item, 'updated_at', status?.updated_at ?? metadata.creationTimestamp);
  put(item, 'status', status?.status);
  put(item, 'linkable_to', spec?.linkable_to);
  put(item, 'dimensions', spec?.dimensions);
  put(item, 'attributes', plainAttributes(spec?.attributes, hidden));
  put(item, 'entity_nrn', spec?.entity_nrn);
  put(item, 'selectors', spec?.selectors);
  put(item, 'imported', spec?.imported ?? spec?.selectors?.imported);
  put(item, 'provider', spec?.provider);
  put(item, 'category', spec?.category);
  put(item, 'sub_category', spec?.sub_category);
  put(item, 'type', spec?.type);
  return item as ServiceItem;
}

function put(item: Record<string, unknown>, name: string, value: unknown): void {
  if (value !== undefined && value !== null) item[name] = value;
}

/** The paths given, as HiddenAttributes: a path hides its value and everything in it. */
export function hiddenAttributes(paths: Iterable<readonly string[]>): HiddenAttributes {
  type Node = Map<string, Node | true>;
  const root: Node = new Map();
  for (const path of paths) {
    if (path.length === 0) return true;
    let node = root;
    for (const [i, name] of path.entries()) {
      const next = node.get(name);
      if (next === true) break;
      if (i === path.length - 1) node.set(name, true);
      else if (next === undefined) {
        const made: Node = new Map();
        node.set(name, made);
        node = made;
      } else node = next;
    }
  }
  return root;
}

/**
 * The attributes object itself when nothing hidden is in it, so an item shares it with the
 * resource; else copies of it and of the objects on the way to what is left out.
 */
function plainAttributes(
  attributes: Readonly<Record<string, unknown>> | undefined,
  hidden: HiddenAttributes,
): Record<string, unknown> | undefined {
  if (attributes === undefined) return attributes;
  if (hidden === true) return {};
  return hidden.size === 0 ? attributes : without(attributes, hidden);
}

function without(
  value: Readonly<Record<string, unknown>>,
  hidden: ReadonlyMap<string, HiddenAttributes>,
): Record<string, unknown> {
  let changed = false;
  const kept: [string, unknown][] = [];
  for (const key of Object.keys(value)) {
    const rule = hidden.get(key);
    let inner = value[key];
    if (rule === true) {
      changed = true;
      continue;
    }
    if (rule !== undefined && isRecord(inner)) {
      const stripped = without(inner, rule);
      if (stripped !== inner) changed = true;
      inner = stripped;
    }
    kept.push([key, inner]);
  }
  // fromEntries defines own properties, so a `__proto__` attribute stays data.
  return changed ? Object.fromEntries(kept) : (value as Record<string, unknown>);
}

/**
 * The entry's JSON with the values of its secret attributes merged in (what
 * include_secret_attributes shows a caller allowed to read the Secret), each at its path.
 * `values` are the Secret's decoded strings; keys the specification does not mark secret are
 * ignored, and so is a value whose parent in the plain attributes is not an object.
 */
export function withSecretValues(
  entry: CatalogEntry,
  values: Readonly<Record<string, string>>,
): string {
  const secret = entry.secret;
  if (secret === undefined) return entry.json;
  const attributes: Record<string, unknown> = { ...(entry.item.attributes ?? {}) };
  let shown = false;
  for (const key of secret.keys) {
    const value = values[key];
    const path = secret.paths.get(key);
    if (!Object.hasOwn(values, key) || typeof value !== 'string' || path === undefined) continue;
    const typed = secret.jsonValued.has(key) ? parseOrKeep(value) : value;
    if (placeAt(attributes, path, typed)) shown = true;
  }
  if (!shown) return entry.json;
  return JSON.stringify({ ...entry.item, attributes });
}

function parseOrKeep(value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

interface SpecSecrets {
  /** Sorted. */
  readonly keys: readonly string[];
  readonly paths: ReadonlyMap<string, readonly string[]>;
  readonly hidden: HiddenAttributes;
  readonly jsonValued: ReadonlySet<string>;
  /** All of the above as one string, to tell whether a change changes anything. */
  readonly signature: string;
}

/** What one ServiceSpecification says of secrets, read as the reconciler reads it. */
interface SchemaSecrets {
  /** Secret key -> its path and schema types. */
  readonly secret: ReadonlyMap<string, { path: readonly string[]; types: readonly string[] }>;
  /**
   * Where the schema marks secrets it cannot use (the reconciler refuses it): hidden all the
   * same, as services of it may exist and hold values there.
   */
  readonly concealed: readonly (readonly string[])[];
}

const NO_SCHEMA_SECRETS: SchemaSecrets = { secret: new Map(), concealed: [] };

function secretsOfSchema(schema: unknown): SchemaSecrets {
  if (!isRecord(schema)) return NO_SCHEMA_SECRETS;
  const { secret, concealed } = propertiesOf(schema);
  return secret.size === 0 && concealed.length === 0 ? NO_SCHEMA_SECRETS : { secret, concealed };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// --- Sorted buckets ----------------------------------------------------------------------

/** A catalog row: mutable inside this module only; what leaves it is `entry`. */
class Row {
  entry: CatalogEntry;
  constructor(
    readonly key: string,
    public object: ServiceObject,
    readonly createdMs: number,
    readonly uid: string,
    public type: string | undefined,
    public status: string | undefined,
    public specId: string | undefined,
    public entity: NrnNode | undefined,
    /** Nodes of linkable_to, distinct and other than entity's; undefined when none. */
    public links: NrnNode[] | undefined,
  ) {
    this.entry = EMPTY_ENTRY;
  }
}

const EMPTY_ENTRY: CatalogEntry = {
  json: '{}',
  item: {},
  namespace: '',
  name: '',
  secret: undefined,
};

/** created_at, then id; then the object key, so the order is total and duplicates are adjacent. */
function compareRows(a: Row, b: Row): number {
  if (a.createdMs !== b.createdMs) return a.createdMs < b.createdMs ? -1 : 1;
  if (a.uid !== b.uid) return a.uid < b.uid ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

function timeOf(timestamp: string | undefined): number {
  const ms = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
}

const CHUNK_MAX = 512;
const CHUNK_MIN = 64;
const CHUNK_FILL = 384;

/**
 * Rows in order, as a list of chunks of at most CHUNK_MAX: one large array would make every
 * insert or delete a splice of the whole list, which V8 does slowly past ~50,000 elements.
 * Inserts wait in `pending` until the next read, so a burst (an informer's first list) is
 * sorted once rather than inserted one by one.
 */
class SortedRows {
  chunks: Row[][] = [];
  private settled = 0;
  private pending: Row[] | undefined;

  get size(): number {
    return this.settled + (this.pending?.length ?? 0);
  }

  add(row: Row): void {
    if (this.pending === undefined) this.pending = [row];
    else this.pending.push(row);
  }

  /** False when the row is not here. */
  delete(row: Row): boolean {
    this.settle();
    const ci = this.chunkOf(row);
    const chunk = this.chunks[ci];
    if (chunk === undefined) return false;
    const i = lowerBound(chunk, row);
    if (chunk[i] !== row) return false;
    chunk.splice(i, 1);
    this.settled--;
    if (chunk.length === 0) this.chunks.splice(ci, 1);
    else if (chunk.length < CHUNK_MIN) this.absorbNext(ci);
    return true;
  }

  /** Files the pending rows: one by one when few, else by sorting everything once. */
  settle(): void {
    const pending = this.pending;
    if (pending === undefined) return;
    this.pending = undefined;
    if (pending.length * 8 <= this.settled) {
      for (const row of pending) this.insert(row);
      return;
    }
    const all: Row[] = [];
    for (const chunk of this.chunks) for (const row of chunk) all.push(row);
    for (const row of pending) all.push(row);
    all.sort(compareRows);
    this.chunks = [];
    for (let i = 0; i < all.length; i += CHUNK_FILL) this.chunks.push(all.slice(i, i + CHUNK_FILL));
    this.settled = all.length;
  }

  private insert(row: Row): void {
    this.settled++;
    if (this.chunks.length === 0) {
      this.chunks.push([row]);
      return;
    }
    const ci = Math.min(this.chunkOf(row), this.chunks.length - 1);
    const chunk = this.chunks[ci] as Row[];
    chunk.splice(lowerBound(chunk, row), 0, row);
    if (chunk.length > CHUNK_MAX) this.chunks.splice(ci + 1, 0, chunk.splice(CHUNK_MAX >> 1));
  }

  /** The first chunk whose last row is not before `row` (chunks.length when none). */
  private chunkOf(row: Row): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const chunk = this.chunks[mid] as Row[];
      if (compareRows(chunk[chunk.length - 1] as Row, row) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Keeps chunks from thinning out after many deletes. */
  private absorbNext(ci: number): void {
    const chunk = this.chunks[ci] as Row[];
    const next = this.chunks[ci + 1];
    if (next === undefined || chunk.length + next.length > CHUNK_MAX) return;
    for (const row of next) chunk.push(row);
    this.chunks.splice(ci + 1, 1);
  }
}

function lowerBound(rows: readonly Row[], row: Row): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareRows(rows[mid] as Row, row) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// --- The NRN trie ------------------------------------------------------------------------

/** A parsed query NRN; its identity stamps the match results memoised on trie nodes. */
class QueryNrn {
  readonly nrn: Nrn;
  /** Segment texts (`account=8`), the keys of trie children. */
  readonly keys: readonly string[];
  readonly concrete: readonly boolean[];
  /** Ends in `*`: the whole subtree below the query's levels is seen too. */
  readonly subtree: boolean;
  constructor(nrn: Nrn) {
    this.nrn = nrn;
    this.keys = nrn.map((s) => `${s.level}=${s.value}`);
    this.concrete = nrn.map((s) => !s.value.includes('*'));
    this.subtree = nrn.at(-1)?.value.endsWith('*') === true;
  }
}

/** One NRN that services carry: its bucket holds every service with it as entity or link. */
class NrnNode {
  readonly rows = new SortedRows();
  /** Children by segment text, and the same as a list (iterated without an iterator object). */
  children: Map<string, NrnNode> | undefined;
  list: NrnNode[] | undefined;
  /** Children whose value holds a `*`: a concrete query segment must still try them. */
  wild: NrnNode[] | undefined;
  /** Rows in the buckets of this subtree, and how many of its buckets are not empty. */
  subRows = 0;
  subBuckets = 0;
  /**
   * Down to SUBTREE_DEPTH, every service carrying an NRN of this subtree, sorted and each once:
   * a query ending in `*` at these levels merges a few such lists instead of many buckets.
   */
  subtree: SortedRows | undefined;
  /** The services whose entity_nrn this is (`rows` holds those linkable to it as well). */
  owned: SortedRows | undefined;
  private seenBy: QueryNrn | undefined;
  private seen = false;
  private prefixBy: QueryNrn | undefined;
  private prefix = false;

  constructor(
    readonly parent: NrnNode | undefined,
    /** `level=value`, this node's key in its parent. */
    readonly key: string,
    readonly nrn: Nrn,
  ) {}

  get depth(): number {
    return this.nrn.length;
  }

  /**
   * nrnMatches(query, this NRN), memoised (a node's NRN never changes) and worked out from the
   * parent's answer: up to the query's length, every segment must overlap the query's at its
   * place; below it, the parent must match and the query end in `*`. The unit test holds this
   * to nrnMatches itself.
   */
  visibleAt(query: QueryNrn): boolean {
    if (this.seenBy === query) return this.seen;
    const parent = this.parent as NrnNode;
    const up = parent.depth === 0 || parent.visibleAt(query);
    const depth = this.depth;
    this.seen =
      depth <= query.nrn.length
        ? up &&
          segmentsOverlap(this.nrn[depth - 1] as NrnSegment, query.nrn[depth - 1] as NrnSegment)
        : up && query.subtree;
    this.seenBy = query;
    return this.seen;
  }

  /** nrnEquals(query, this NRN), memoised the same way. */
  ownedAt(query: QueryNrn): boolean {
    return this.depth === query.nrn.length && this.overlapsPrefix(query);
  }

  private overlapsPrefix(query: QueryNrn): boolean {
    if (this.prefixBy === query) return this.prefix;
    const parent = this.parent as NrnNode;
    const depth = this.depth;
    this.prefix =
      (parent.depth === 0 || parent.overlapsPrefix(query)) &&
      segmentsOverlap(this.nrn[depth - 1] as NrnSegment, query.nrn[depth - 1] as NrnSegment);
    this.prefixBy = query;
    return this.prefix;
  }
}

/** Same level, and values that can name one id; the common cases before valuesOverlap's search. */
function segmentsOverlap(a: NrnSegment, b: NrnSegment): boolean {
  if (a.level !== b.level) return false;
  const x = a.value;
  const y = b.value;
  if (x === y || x === '*' || y === '*') return true;
  if (!x.includes('*') && !y.includes('*')) return false;
  return valuesOverlap(x, y);
}

const MAX_CACHED_QUERIES = 1024;
/**
 * Organizations, accounts and namespaces keep subtree lists; below, an application with its
 * scopes is small enough to merge bucket by bucket. Each level costs a list slot per service.
 */
const SUBTREE_DEPTH = 3;

/** How a query reads: which sorted lists to merge, and which filters are left to check. */
interface Plan {
  /** The lists, or the trie nodes whose buckets they are (found once the plan is chosen). */
  readonly sources: readonly SortedRows[] | Reach;
  readonly nrn: QueryNrn | undefined;
  readonly owner: QueryNrn | undefined;
  readonly type: string | undefined;
  readonly status: string | undefined;
}

/**
 * What a query NRN matches in the trie: `nodes` one by one; below a query ending in `*`, whole
 * subtrees, as their `lists` where the root keeps one, else as `roots` whose buckets are
 * walked only if the plan is chosen (counted meanwhile from the subtree totals).
 */
interface Reach {
  readonly nodes: NrnNode[];
  /** Subtree lists of roots that have one: every row in them matches. */
  readonly lists: SortedRows[];
  readonly roots: NrnNode[];
  /** Rows in their buckets (a service in two of them counts twice). */
  rows: number;
  /** Non-empty buckets. */
  buckets: number;
}

/** Starting a list in a merge, in rows read: a few cache misses per list (measured). */
const LIST_START = 8;

/**
 * What reading `size` rows from `lists` sorted lists costs, when a fraction `pass` of them
 * passes the filters left to check and `need` must pass: a page fills early when many pass,
 * the whole source is read when the page never fills. A merge pays log k per row.
 */
function costOf(size: number, lists: number, pass: number, need: number): number {
  const rows = Math.min(size, need / Math.max(pass, 1e-9));
  return lists <= 1 ? rows : lists * LIST_START + rows * (1 + Math.log2(lists) / 4);
}

// --- The catalog -------------------------------------------------------------------------

export class ServiceCatalog {
  private readonly rows = new Map<string, Row>();
  private readonly all = new SortedRows();
  private readonly byType = new Map<string, SortedRows>();
  private readonly byStatus = new Map<string, SortedRows>();
  private readonly root = new NrnNode(undefined, '', []);
  private readonly queries = new Map<string, QueryNrn>();
  /** ServiceSpecification key -> its spec.id and what its schema says of secrets. */
  private readonly specifications = new Map<
    string,
    { readonly id: string; readonly secrets: SchemaSecrets }
  >();
  /** spec.id -> the secret attributes every specification claiming that id marks, together. */
  private readonly secretsById = new Map<string, SpecSecrets>();
  private readonly nodeBudget: number;
  private readonly strategy: 'auto' | 'index' | 'scan';
  private changes = 0;

  constructor(options: ServiceCatalogOptions = {}) {
    this.nodeBudget = options.nodeBudget ?? DEFAULT_NODE_BUDGET;
    this.strategy = options.strategy ?? 'auto';
  }

  get size(): number {
    return this.rows.size;
  }

  /** Moves on with every change a page could show; what was read at one version still holds. */
  get version(): number {
    return this.changes;
  }

  /** Loads what the informers hold and follows them; returns the function that stops that. */
  attach(
    services: WatchedKind<ServiceObject>,
    specifications: WatchedKind<SpecificationObject>,
  ): () => void {
    // Specifications first, so services are rendered once with their secret keys known.
    for (const object of specifications.cache.list()) this.upsertSpecification(object);
    for (const object of services.cache.list()) this.upsertService(object);
    const off = [
      specifications.on('add', (o) => this.upsertSpecification(o)),
      specifications.on('update', (o) => this.upsertSpecification(o)),
      specifications.on('delete', (o) => this.removeSpecification(o)),
      services.on('add', (o) => this.upsertService(o)),
      services.on('update', (o) => this.upsertService(o)),
      services.on('delete', (o) => this.removeService(o)),
    ];
    return () => {
      for (const stop of off) stop();
    };
  }

  get(namespace: string | undefined, name: string): CatalogEntry | undefined {
    return this.rows.get(keyOf({ name, ...(namespace ? { namespace } : {}) }))?.entry;
  }

  /** The secret attribute names of a specification id (sorted; empty when none or unknown). */
  secretKeys(specificationId: string): readonly string[] {
    return (this.secretsById.get(specificationId) ?? NO_SECRETS).keys;
  }

  upsertService(object: ServiceObject): void {
    const key = keyOf(object.metadata);
    let row = this.rows.get(key);
    if (row !== undefined && row.object === object) return; // an informer resync
    this.changes++;
    const spec = object.spec;
    const createdMs = timeOf(object.metadata.creationTimestamp);
    const uid = object.metadata.uid ?? '';
    if (row !== undefined && (row.createdMs !== createdMs || row.uid !== uid)) {
      // Deleted and made again under the same name: its place in every list moves. Unfiled
      // before its NRNs are looked up, as unfiling may prune the trie nodes they would find.
      this.unfile(row);
      row = undefined;
    }
    const entity = this.intern(spec?.entity_nrn);
    const links = this.linksOf(spec?.linkable_to, entity);
    const type = spec?.type;
    const status = object.status?.status;
    const specId = spec?.specification_id;
    if (row === undefined) {
      row = new Row(key, object, createdMs, uid, type, status, specId, entity, links);
      this.rows.set(key, row);
      this.file(row);
    } else {
      // Joins its new lists before leaving the old, so no node it keeps is pruned in between.
      this.move(row, type, status, entity, links);
      row.object = object;
      row.specId = specId;
    }
    row.entry = this.render(object);
  }

  removeService(object: Pick<ServiceObject, 'metadata'>): void {
    const key = keyOf(object.metadata);
    const row = this.rows.get(key);
    if (row === undefined) return;
    this.changes++;
    this.rows.delete(key);
    this.unfile(row);
  }

  upsertSpecification(object: SpecificationObject): void {
    const key = keyOf(object.metadata);
    const old = this.specifications.get(key);
    const id = object.spec?.id;
    if (id === undefined) {
      this.removeSpecification(object);
      return;
    }
    this.changes++;
    this.specifications.set(key, { id, secrets: secretsOfSchema(object.spec?.attributes?.schema) });
    if (old !== undefined && old.id !== id) this.refreshSecrets(old.id);
    this.refreshSecrets(id);
  }

  removeSpecification(object: Pick<SpecificationObject, 'metadata'>): void {
    const key = keyOf(object.metadata);
    const old = this.specifications.get(key);
    if (old === undefined) return;
    this.changes++;
    this.specifications.delete(key);
    this.refreshSecrets(old.id);
  }

  /** One page: the services matching every filter given, by created_at then id. */
  query(query: CatalogQuery): CatalogPage {
    const limit = Math.max(0, Math.floor(query.limit));
    const offset = Math.max(0, Math.floor(query.offset));
    if (limit === 0) return { entries: [] };
    const plan = this.plan(query, offset + limit);
    return { entries: plan === undefined ? [] : this.run(plan, offset, limit) };
  }

  // --- Planning and reading ---

  /** The cheapest way to read a query; undefined when nothing can match. */
  private plan(query: CatalogQuery, need: number): Plan | undefined {
    const total = this.all.size;
    if (total === 0) return undefined;
    const nrn = query.nrn !== undefined ? this.queryNrn(query.nrn) : undefined;
    const owner = query.entityNrn !== undefined ? this.queryNrn(query.entityNrn) : undefined;
    const { type, status } = query;
    // What share of all services passes each filter (1 when it is not asked for, or unknown).
    const byType = type !== undefined ? this.byType.get(type) : undefined;
    const byStatus = status !== undefined ? this.byStatus.get(status) : undefined;
    if ((type !== undefined && byType === undefined) || (status !== undefined && !byStatus)) {
      return undefined;
    }
    const nrnReach = nrn !== undefined ? this.reach(nrn, false) : undefined;
    const ownerReach = owner !== undefined ? this.reach(owner, true) : undefined;
    if (nrnReach?.rows === 0 || ownerReach?.rows === 0) return undefined;
    const share = (rows: number | undefined) =>
      rows === undefined ? 1 : Math.min(1, rows / total);
    const fType = share(byType?.size);
    const fStatus = share(byStatus?.size);
    const fNrn = share(nrnReach?.rows);
    const fOwner = share(ownerReach?.rows);
    // The ways to read it, cheapest chosen: every service, one type, one status, the owner's
    // buckets, the NRN's buckets.
    let choice: 'all' | 'type' | 'status' | 'owner' | 'nrn' = 'all';
    let best = costOf(total, 1, fType * fStatus * fNrn * fOwner, need);
    const index = this.strategy === 'index';
    if (this.strategy !== 'scan') {
      if (byType !== undefined && !index) {
        const cost = costOf(byType.size, 1, fStatus * fNrn * fOwner, need);
        if (cost < best) [choice, best] = ['type', cost];
      }
      if (byStatus !== undefined && !index) {
        const cost = costOf(byStatus.size, 1, fType * fNrn * fOwner, need);
        if (cost < best) [choice, best] = ['status', cost];
      }
      if (ownerReach !== undefined) {
        const cost = costOf(ownerReach.rows, ownerReach.buckets, fType * fStatus * fNrn, need);
        if (index || cost < best) [choice, best] = ['owner', cost];
      }
      if (nrnReach !== undefined) {
        const cost = costOf(nrnReach.rows, nrnReach.buckets, fType * fStatus * fOwner, need);
        if (index || cost < best) [choice, best] = ['nrn', cost];
      }
    }
    return {
      sources:
        choice === 'nrn'
          ? (nrnReach as Reach)
          : choice === 'owner'
            ? (ownerReach as Reach)
            : [
                (choice === 'type'
                  ? byType
                  : choice === 'status'
                    ? byStatus
                    : this.all) as SortedRows,
              ],
      // Membership of the lists read is the filter they were chosen by.
      nrn: choice === 'nrn' ? undefined : nrn,
      owner: choice === 'owner' ? undefined : owner,
      type: choice === 'type' ? undefined : type,
      status: choice === 'status' ? undefined : status,
    };
  }

  /**
   * The trie nodes `query` matches (as the NRN filter, or as entity_nrn when `owner`), or
   * undefined when finding them would take more than the budget of nodes: the query is then
   * broad, so its matches are dense and a scan fills a page soon. A node that does not match
   * has no descendant that does, so the walk prunes there.
   */
  private reach(query: QueryNrn, owner: boolean): Reach | undefined {
    const segments = query.nrn;
    const subtree = !owner && query.subtree;
    const reach: Reach = { nodes: [], lists: [], roots: [], rows: 0, buckets: 0 };
    const stack: NrnNode[] = [this.root];
    let pushed = 0;
    while (stack.length > 0) {
      const node = stack.pop() as NrnNode;
      const depth = node.depth;
      if (depth === segments.length && subtree) {
        if (node.subtree !== undefined) {
          reach.lists.push(node.subtree);
          reach.rows += node.subtree.size;
          reach.buckets++;
        } else {
          reach.roots.push(node);
          reach.rows += node.subRows;
          reach.buckets += node.subBuckets;
        }
        continue;
      }
      if (owner) {
        if (depth === segments.length && node.owned !== undefined) {
          reach.lists.push(node.owned);
          reach.rows += node.owned.size;
          reach.buckets++;
        }
      } else if (depth > 0 && node.rows.size > 0) {
        reach.nodes.push(node);
        reach.rows += node.rows.size;
        reach.buckets++;
      }
      const children = node.children;
      if (children === undefined || depth >= segments.length) continue;
      const segment = segments[depth] as NrnSegment;
      const before = stack.length;
      if (query.concrete[depth]) {
        // A concrete value meets only the same value or a child holding a `*`.
        const exact = children.get(query.keys[depth] as string);
        if (exact !== undefined) stack.push(exact);
        for (const child of node.wild ?? []) {
          if (sameLevelOverlap(child, segment)) stack.push(child);
        }
      } else {
        for (const child of node.list ?? []) {
          if (sameLevelOverlap(child, segment)) stack.push(child);
        }
      }
      pushed += stack.length - before;
      if (pushed > this.nodeBudget) return undefined;
    }
    return reach;
  }

  /** The buckets of a reach, the subtrees of its roots walked now. */
  private static buckets(reach: Reach): SortedRows[] {
    const out = reach.nodes.map((n) => n.rows);
    for (const list of reach.lists) out.push(list);
    const stack = [...reach.roots];
    while (stack.length > 0) {
      const node = stack.pop() as NrnNode;
      if (node.rows.size > 0) out.push(node.rows);
      for (const child of node.list ?? []) stack.push(child);
    }
    return out;
  }

  /** Merges the plan's sources lazily, checks what is left to check, skips and stops early. */
  private run(plan: Plan, offset: number, limit: number): CatalogEntry[] {
    const sources = Array.isArray(plan.sources)
      ? (plan.sources as readonly SortedRows[])
      : ServiceCatalog.buckets(plan.sources as Reach);
    for (const source of sources) source.settle();
    const checks =
      plan.nrn !== undefined ||
      plan.owner !== undefined ||
      plan.type !== undefined ||
      plan.status !== undefined;
    const out: CatalogEntry[] = [];
    let skipped = 0;
    if (sources.length === 1) {
      const only = sources[0] as SortedRows;
      if (!checks) return slice(only, offset, limit);
      for (const chunk of only.chunks) {
        for (const row of chunk) {
          if (!accepts(row, plan)) continue;
          if (skipped < offset) {
            skipped++;
            continue;
          }
          out.push(row.entry);
          if (out.length === limit) return out;
        }
      }
      return out;
    }
    const heap = new CursorHeap(sources);
    let last: Row | undefined;
    for (let row = heap.next(); row !== undefined; row = heap.next()) {
      if (row === last) continue; // the same service from a second bucket
      last = row;
      if (checks && !accepts(row, plan)) continue;
      if (skipped < offset) {
        skipped++;
        continue;
      }
      out.push(row.entry);
      if (out.length === limit) break;
    }
    return out;
  }

  private queryNrn(text: string): QueryNrn {
    let query = this.queries.get(text);
    if (query !== undefined) return query;
    const nrn = parseNrn(text);
    if (nrn === undefined) throw new TypeError(`not an NRN: ${JSON.stringify(text)}`);
    query = new QueryNrn(nrn);
    if (this.queries.size >= MAX_CACHED_QUERIES) this.queries.clear();
    this.queries.set(text, query);
    return query;
  }

  // --- Filing ---

  private render(object: ServiceObject): CatalogEntry {
    const spec = object.spec;
    const secrets = this.secretsOf(spec?.specification_id);
    const item = serviceItem(object, secrets.hidden);
    const ref = spec?.secret_attributes_ref;
    return {
      json: JSON.stringify(item),
      item,
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name,
      secret:
        ref === undefined
          ? undefined
          : {
              name: ref.name,
              keys: secrets.keys,
              paths: secrets.paths,
              jsonValued: secrets.jsonValued,
            },
    };
  }

  private secretsOf(specificationId: string | undefined): SpecSecrets {
    return specificationId === undefined
      ? NO_SECRETS
      : (this.secretsById.get(specificationId) ?? NO_SECRETS);
  }

  /**
   * Recomputes the secret keys of a specification id and, when they changed, re-renders its
   * services. A scan of all rows: specifications change rarely, and an index by
   * specification_id would cost every service memory for that.
   */
  private refreshSecrets(id: string): void {
    const types = new Map<string, string[]>();
    const paths = new Map<string, readonly string[]>();
    const hide: (readonly string[])[] = [];
    for (const specification of this.specifications.values()) {
      if (specification.id !== id) continue;
      // Every claimant of the id counts: the one that owns it may change, and hiding an
      // attribute a stalled duplicate calls secret is the safe side.
      const { secret, concealed } = specification.secrets;
      for (const [key, { path, types: t }] of secret) {
        types.set(key, [...(types.get(key) ?? []), ...t]);
        hide.push(path);
        // Claimants putting one key at different paths (`a.b` the name, or a -> b): both are
        // hidden, and the value is shown at one of them, the same one whatever the order.
        const known = paths.get(key);
        if (known === undefined || JSON.stringify(path) < JSON.stringify(known))
          paths.set(key, path);
      }
      hide.push(...concealed);
    }
    const keys = [...types.keys()].sort();
    const jsonValued = new Set(
      keys.filter((k) => {
        const t = types.get(k) ?? [];
        return t.length > 0 && !t.includes('string');
      }),
    );
    const hidden = [...new Set(hide.map((path) => JSON.stringify(path)))].sort();
    const signature = JSON.stringify([
      keys.map((k) => [k, paths.get(k), jsonValued.has(k)]),
      hidden,
    ]);
    if (this.secretsOf(id).signature === signature) return;
    if (hidden.length === 0) this.secretsById.delete(id);
    else {
      this.secretsById.set(id, {
        keys,
        paths,
        hidden: hiddenAttributes(hidden.map((path) => JSON.parse(path) as string[])),
        jsonValued,
        signature,
      });
    }
    for (const row of this.rows.values()) {
      if (row.specId === id) row.entry = this.render(row.object);
    }
  }

  private file(row: Row): void {
    this.all.add(row);
    if (row.type !== undefined) bucket(this.byType, row.type).add(row);
    if (row.status !== undefined) bucket(this.byStatus, row.status).add(row);
    const nodes = nodesOf(row);
    for (const node of nodes) addTo(node, row);
    if (row.entity !== undefined) joinList(row.entity, 'owned', row);
    for (const node of covering(nodes)) joinList(node, 'subtree', row);
  }

  private unfile(row: Row): void {
    this.all.delete(row);
    if (row.type !== undefined) unbucket(this.byType, row.type, row);
    if (row.status !== undefined) unbucket(this.byStatus, row.status, row);
    const nodes = nodesOf(row);
    // Subtree and owner lists first: pruning a node must find them empty.
    for (const node of covering(nodes)) leaveList(node, 'subtree', row);
    if (row.entity !== undefined) leaveList(row.entity, 'owned', row);
    for (const node of nodes) this.deleteFrom(node, row);
  }

  /** An update that keeps its place in the order: only the lists it joins or leaves change. */
  private move(
    row: Row,
    type: string | undefined,
    status: string | undefined,
    entity: NrnNode | undefined,
    links: NrnNode[] | undefined,
  ): void {
    if (row.type !== type) {
      if (row.type !== undefined) unbucket(this.byType, row.type, row);
      if (type !== undefined) bucket(this.byType, type).add(row);
      row.type = type;
    }
    if (row.status !== status) {
      if (row.status !== undefined) unbucket(this.byStatus, row.status, row);
      if (status !== undefined) bucket(this.byStatus, status).add(row);
      row.status = status;
    }
    const before = nodesOf(row);
    const coveredBefore = covering(before);
    const owner = row.entity;
    row.entity = entity;
    row.links = links;
    const after = nodesOf(row);
    const coveredAfter = covering(after);
    for (const node of after) if (!before.includes(node)) addTo(node, row);
    for (const node of coveredAfter) {
      if (!coveredBefore.includes(node)) joinList(node, 'subtree', row);
    }
    if (owner !== entity && entity !== undefined) joinList(entity, 'owned', row);
    // Subtree and owner lists first: pruning a node must find them empty.
    for (const node of coveredBefore) {
      if (!coveredAfter.includes(node)) leaveList(node, 'subtree', row);
    }
    if (owner !== entity && owner !== undefined) leaveList(owner, 'owned', row);
    for (const node of before) if (!after.includes(node)) this.deleteFrom(node, row);
  }

  private deleteFrom(node: NrnNode, row: Row): void {
    if (!node.rows.delete(row)) return;
    const emptied = node.rows.size === 0;
    for (let n: NrnNode | undefined = node; n !== undefined; n = n.parent) {
      n.subRows--;
      if (emptied) n.subBuckets--;
    }
    this.prune(node);
  }

  /** The trie node of an NRN, made with its ancestors when missing; undefined if not an NRN. */
  private intern(text: string | undefined): NrnNode | undefined {
    if (text === undefined) return undefined;
    const nrn = parseNrn(text);
    if (nrn === undefined) return undefined;
    let node = this.root;
    for (const segment of nrn) {
      const key = `${segment.level}=${segment.value}`;
      node.children ??= new Map();
      let child = node.children.get(key);
      if (child === undefined) {
        child = new NrnNode(node, key, [...node.nrn, segment]);
        node.children.set(key, child);
        node.list ??= [];
        node.list.push(child);
        if (segment.value.includes('*')) {
          node.wild ??= [];
          node.wild.push(child);
        }
      }
      node = child;
    }
    return node;
  }

  private linksOf(
    linkable: readonly string[] | undefined,
    entity: NrnNode | undefined,
  ): NrnNode[] | undefined {
    if (linkable === undefined || linkable.length === 0) return undefined;
    const out: NrnNode[] = [];
    for (const text of linkable) {
      const node = this.intern(text);
      if (node !== undefined && node !== entity && !out.includes(node)) out.push(node);
    }
    return out.length > 0 ? out : undefined;
  }

  /** Drops nodes no service carries and no descendant needs, so the trie follows the catalog. */
  private prune(node: NrnNode): void {
    let current: NrnNode | undefined = node;
    while (current?.parent !== undefined && current.rows.size === 0 && !current.children?.size) {
      const parent: NrnNode = current.parent;
      parent.children?.delete(current.key);
      removeFrom(parent.list, current);
      if (parent.wild !== undefined) {
        const i = parent.wild.indexOf(current);
        if (i >= 0) parent.wild.splice(i, 1);
        if (parent.wild.length === 0) parent.wild = undefined;
      }
      if (parent.children?.size === 0) {
        parent.children = undefined;
        parent.list = undefined;
      }
      current = parent;
    }
  }
}

function addTo(node: NrnNode, row: Row): void {
  const first = node.rows.size === 0;
  node.rows.add(row);
  for (let n: NrnNode | undefined = node; n !== undefined; n = n.parent) {
    n.subRows++;
    if (first) n.subBuckets++;
  }
}

/**
 * The nodes whose subtree lists hold a row carrying `nodes`: their ancestors-or-self down to
 * SUBTREE_DEPTH, each once (a service in two places of one subtree is listed there once).
 */
function covering(nodes: readonly NrnNode[]): NrnNode[] {
  const out: NrnNode[] = [];
  for (const node of nodes) {
    for (let n: NrnNode | undefined = node; n !== undefined && n.depth > 0; n = n.parent) {
      if (n.depth <= SUBTREE_DEPTH && !out.includes(n)) out.push(n);
    }
  }
  return out;
}

function joinList(node: NrnNode, list: 'subtree' | 'owned', row: Row): void {
  let rows = node[list];
  if (rows === undefined) {
    rows = new SortedRows();
    node[list] = rows;
  }
  rows.add(row);
}

/** Drops an emptied list: most trie nodes are never asked for theirs. */
function leaveList(node: NrnNode, list: 'subtree' | 'owned', row: Row): void {
  const rows = node[list];
  if (rows === undefined) return;
  rows.delete(row);
  if (rows.size === 0) node[list] = undefined;
}

function removeFrom<T>(list: T[] | undefined, value: T): void {
  const i = list?.indexOf(value) ?? -1;
  if (i >= 0) list?.splice(i, 1);
}

function sameLevelOverlap(node: NrnNode, segment: NrnSegment): boolean {
  return segmentsOverlap(node.nrn[node.depth - 1] as NrnSegment, segment);
}

function nodesOf(row: Row): NrnNode[] {
  const nodes = row.links !== undefined ? [...row.links] : [];
  if (row.entity !== undefined) nodes.unshift(row.entity);
  return nodes;
}

function accepts(row: Row, plan: Plan): boolean {
  if (plan.type !== undefined && row.type !== plan.type) return false;
  if (plan.status !== undefined && row.status !== plan.status) return false;
  if (plan.owner !== undefined && (row.entity === undefined || !row.entity.ownedAt(plan.owner))) {
    return false;
  }
  const nrn = plan.nrn;
  if (nrn === undefined) return true;
  if (row.entity?.visibleAt(nrn)) return true;
  for (const link of row.links ?? []) if (link.visibleAt(nrn)) return true;
  return false;
}

function bucket(map: Map<string, SortedRows>, value: string): SortedRows {
  let rows = map.get(value);
  if (rows === undefined) {
    rows = new SortedRows();
    map.set(value, rows);
  }
  return rows;
}

function unbucket(map: Map<string, SortedRows>, value: string, row: Row): void {
  const rows = map.get(value);
  if (rows === undefined) return;
  rows.delete(row);
  if (rows.size === 0) map.delete(value);
}

/** A page of one list with no filter left: straight to the offset, no row looked at before it. */
function slice(rows: SortedRows, offset: number, limit: number): CatalogEntry[] {
  const out: CatalogEntry[] = [];
  let skip = offset;
  for (const chunk of rows.chunks) {
    if (skip >= chunk.length) {
      skip -= chunk.length;
      continue;
    }
    for (let i = skip; i < chunk.length && out.length < limit; i++)
      out.push((chunk[i] as Row).entry);
    skip = 0;
    if (out.length === limit) break;
  }
  return out;
}

/** A k-way merge of sorted lists, in order, one row at a time. */
class CursorHeap {
  /** Per cursor: its chunks, the chunk and the position in it, and the row there. */
  private readonly chunks: Row[][][] = [];
  private readonly chunk: number[] = [];
  private readonly pos: number[] = [];
  private readonly heads: Row[] = [];
  /** Cursor indexes, a binary min-heap by head row. */
  private readonly heap: number[] = [];

  constructor(sources: readonly SortedRows[]) {
    for (const source of sources) {
      const first = source.chunks[0]?.[0];
      if (first === undefined) continue;
      this.heap.push(this.chunks.length);
      this.chunks.push(source.chunks);
      this.chunk.push(0);
      this.pos.push(0);
      this.heads.push(first);
    }
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  next(): Row | undefined {
    const heap = this.heap;
    if (heap.length === 0) return undefined;
    const c = heap[0] as number;
    const row = this.heads[c] as Row;
    // Advance the cursor; an exhausted one leaves the heap.
    const chunks = this.chunks[c] as Row[][];
    let chunk = this.chunk[c] as number;
    let pos = (this.pos[c] as number) + 1;
    if (pos >= (chunks[chunk] as Row[]).length) {
      chunk++;
      pos = 0;
    }
    const head = chunks[chunk]?.[pos];
    if (head === undefined) {
      const tail = heap.pop() as number;
      if (heap.length === 0) return row;
      heap[0] = tail;
    } else {
      this.chunk[c] = chunk;
      this.pos[c] = pos;
      this.heads[c] = head;
    }
    this.down(0);
    return row;
  }

  private down(i: number): void {
    const { heap, heads } = this;
    const n = heap.length;
    const c = heap[i] as number;
    const row = heads[c] as Row;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      let best = heads[heap[child] as number] as Row;
      const right = child + 1;
      if (right < n) {
        const other = heads[heap[right] as number] as Row;
        if (compareRows(other, best) < 0) {
          child = right;
          best = other;
        }
      }
      if (compareRows(best, row) >= 0) break;
      heap[i] = heap[child] as number;
      i = child;
    }
    heap[i] = c;
  }
}
