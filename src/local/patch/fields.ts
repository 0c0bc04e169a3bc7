// Field paths and field sets as structured-merge-diff keeps them for managedFields: path
// elements in their fieldsV1 spelling (`f:name`, `k:{"type":"Ready"}`, `v:"x"`, `i:0`), set
// algebra, the fieldsV1 encoding (with `.` for a set member that also has children) and
// bounded caches of decoded sets and of encodings, and the `.spec.x[type="Ready"]` rendering
// used in conflict messages.
import { isObject, type Json, type JsonObject } from './util.js';

/** One step of a field path, spelled as a fieldsV1 key. */
export type PathElement = string;
export type FieldPath = readonly PathElement[];

export const fieldElement = (name: string): PathElement => `f:${name}`;
export const valueElement = (value: Json): PathElement => `v:${JSON.stringify(value)}`;

/** `k:` with the key fields in name order, as structured-merge-diff sorts them. */
export function keyElement(fields: readonly (readonly [string, Json])[]): PathElement {
  const sorted = [...fields].sort(([a], [b]) => compareStrings(a, b));
  return `k:{${sorted.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`).join(',')}}`;
}

const compareStrings = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const RANK: Readonly<Record<string, number>> = { f: 0, k: 1, v: 2, i: 3 };

/** The order structured-merge-diff serializes and iterates path elements in. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  const ra = RANK[a[0] ?? ''] ?? 4;
  const rb = RANK[b[0] ?? ''] ?? 4;
  if (ra !== rb) return ra - rb;
  const va = a.slice(2);
  const vb = b.slice(2);
  switch (a[0]) {
    case 'f':
      return compareStrings(va, vb);
    case 'i':
      return Number(va) - Number(vb);
    case 'k':
      return compareKeys(parseJson(va), parseJson(vb));
    default:
      return compareValues(parseJson(va), parseJson(vb));
  }
}

function parseJson(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}

function compareKeys(a: Json, b: Json): number {
  const ea = isObject(a) ? Object.entries(a) : [];
  const eb = isObject(b) ? Object.entries(b) : [];
  for (let i = 0; ; i++) {
    const x = ea[i];
    const y = eb[i];
    if (x === undefined) return y === undefined ? 0 : -1;
    if (y === undefined) return 1;
    const byName = compareStrings(x[0], y[0]);
    if (byName !== 0) return byName;
    const byValue = compareValues(x[1], y[1]);
    if (byValue !== 0) return byValue;
  }
}

// structured-merge-diff's total order over values: numbers, strings, booleans, lists, maps, null.
const valueRank = (v: Json) =>
  typeof v === 'number'
    ? 0
    : typeof v === 'string'
      ? 1
      : typeof v === 'boolean'
        ? 2
        : Array.isArray(v)
          ? 3
          : v === null
            ? 5
            : 4;

function compareValues(a: Json, b: Json): number {
  const ra = valueRank(a);
  const rb = valueRank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareValues(a[i] ?? null, b[i] ?? null);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  if (isObject(a) && isObject(b)) {
    return compareKeys(sortEntries(a), sortEntries(b));
  }
  return 0;
}

const sortEntries = (o: JsonObject): JsonObject =>
  Object.fromEntries(Object.entries(o).sort(([x], [y]) => compareStrings(x, y)));

/** A value as structured-merge-diff prints it inside a path: strings quoted, the rest bare. */
function renderValue(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(renderValue).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.entries(sortEntries(v))
      .map(([k, x]) => `${k}=${renderValue(x)}`)
      .join(',')}}`;
  }
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

export function renderElement(pe: PathElement): string {
  const body = pe.slice(2);
  switch (pe[0]) {
    case 'f':
      return `.${body}`;
    case 'i':
      return `[${body}]`;
    case 'v':
      return `[=${renderValue(parseJson(body))}]`;
    case 'k': {
      const key = parseJson(body);
      const parts = isObject(key)
        ? Object.entries(key).map(([k, v]) => `${k}=${renderValue(v)}`)
        : [];
      return `[${parts.join(',')}]`;
    }
    default:
      return '{{invalid path element}}';
  }
}

/** `.status.conditions[type="Ready"].status`, as in `Apply failed with 1 conflict: ...`. */
export const renderPath = (path: FieldPath): string => path.map(renderElement).join('');

function comparePaths(a: FieldPath, b: FieldPath): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = comparePathElements(a[i] as PathElement, b[i] as PathElement);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

/**
 * A path's key in a set: its elements joined by NUL, a few times cheaper than its JSON. A
 * field name may hold a NUL (and fieldsV1 read from a client any text), so a path the join
 * would not tell apart is keyed by its JSON, behind a \u0001 no join key starts with.
 */
function keyOf(path: FieldPath): string {
  if (path[0]?.charCodeAt(0) === 1) return `\u0001${JSON.stringify(path)}`;
  for (const pe of path) if (pe.includes('\0')) return `\u0001${JSON.stringify(path)}`;
  return path.join('\0');
}

/**
 * Values by a text key, least recently used first, bounded by entries and by the keys' length:
 * what objects of one kind written by one manager share.
 */
class RecentlyUsed<V> {
  private readonly entries = new Map<string, V>();
  private chars = 0;

  constructor(
    private readonly maxEntries = 4096,
    private readonly maxChars = 2 * 1024 * 1024,
  ) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    if (this.entries.has(key)) this.entries.delete(key);
    else this.chars += key.length;
    this.entries.set(key, value);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries && this.chars <= this.maxChars) break;
      this.entries.delete(oldest);
      this.chars -= oldest.length;
    }
  }
}

/** Decoded fieldsV1 by their JSON. */
const decoded = new RecentlyUsed<FieldSet>();

/**
 * Encodings by their sets' member keys, joined: equal sets made apart (one per object) encode
 * once.
 */
const encodings = new RecentlyUsed<JsonObject>();
const ENCODING_SEPARATOR = '\u0002';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * A set of field paths (structured-merge-diff's fieldpath.Set). Immutable: an operation that
 * changes nothing returns the set itself, so its encoding (kept once made) is reused.
 */
export class FieldSet {
  private readonly members: ReadonlyMap<string, FieldPath>;
  private encoded: JsonObject | undefined;

  private constructor(members: ReadonlyMap<string, FieldPath>) {
    this.members = members;
  }

  static readonly empty = new FieldSet(new Map());

  static of(paths: Iterable<FieldPath>): FieldSet {
    const members = new Map<string, FieldPath>();
    for (const p of paths) if (p.length > 0) members.set(keyOf(p), [...p]);
    return new FieldSet(members);
  }

  get size(): number {
    return this.members.size;
  }

  isEmpty(): boolean {
    return this.members.size === 0;
  }

  has(path: FieldPath): boolean {
    return this.members.has(keyOf(path));
  }

  /** The members in serialization order. */
  paths(): FieldPath[] {
    return [...this.members.values()].sort(comparePaths);
  }

  union(other: FieldSet): FieldSet {
    if (other.isEmpty()) return this;
    if (this.isEmpty()) return other;
    let merged: Map<string, FieldPath> | undefined;
    for (const [key, path] of other.members) {
      if (this.members.has(key)) continue;
      merged ??= new Map(this.members);
      merged.set(key, path);
    }
    return merged === undefined ? this : new FieldSet(merged);
  }

  difference(other: FieldSet): FieldSet {
    if (other.isEmpty() || this.isEmpty()) return this;
    return this.keep((key) => !other.members.has(key));
  }

  intersection(other: FieldSet): FieldSet {
    return this.keep((key) => other.members.has(key));
  }

  filter(keep: (path: FieldPath) => boolean): FieldSet {
    return this.keep((_key, path) => keep(path));
  }

  /** The members `wanted` keeps; the set itself when it keeps them all. */
  private keep(wanted: (key: string, path: FieldPath) => boolean): FieldSet {
    let kept: Map<string, FieldPath> | undefined;
    let index = 0;
    for (const [key, path] of this.members) {
      if (wanted(key, path)) {
        kept?.set(key, path);
      } else if (kept === undefined) {
        kept = new Map([...this.members].slice(0, index));
      }
      index++;
    }
    return kept === undefined ? this : new FieldSet(kept);
  }

  /** Drops every path at or under one of the prefixes (an ignore filter on reset fields). */
  withoutPrefixes(prefixes: readonly FieldPath[]): FieldSet {
    if (prefixes.length === 0) return this;
    return this.filter(
      (p) => !prefixes.some((pre) => pre.length <= p.length && pre.every((e, i) => p[i] === e)),
    );
  }

  equals(other: FieldSet): boolean {
    return this.size === other.size && [...this.members.keys()].every((k) => other.members.has(k));
  }

  /**
   * The fieldsV1 object, e.g. `{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`: made once
   * per set and shared, so it is frozen.
   */
  toFieldsV1(): JsonObject {
    if (this.encoded !== undefined) return this.encoded;
    const keys = [...this.members.keys()];
    // A member key holding the separator could make two sets join alike: such are not shared.
    if (keys.some((k) => k.includes(ENCODING_SEPARATOR))) {
      this.encoded = deepFreeze(this.encode());
      return this.encoded;
    }
    const key = keys.join(ENCODING_SEPARATOR);
    let encoded = encodings.get(key);
    if (encoded === undefined) {
      encoded = deepFreeze(this.encode());
      encodings.set(key, encoded);
    }
    this.encoded = encoded;
    return encoded;
  }

  private encode(): JsonObject {
    interface Node {
      member: boolean;
      children: Map<PathElement, Node>;
    }
    const root: Node = { member: false, children: new Map() };
    for (const path of this.members.values()) {
      let node = root;
      for (const pe of path) {
        let next = node.children.get(pe);
        if (next === undefined) {
          next = { member: false, children: new Map() };
          node.children.set(pe, next);
        }
        node = next;
      }
      node.member = true;
    }
    const emit = (node: Node, self: boolean): JsonObject => {
      const out: JsonObject = {};
      if (self && node.member && node.children.size > 0) out['.'] = {};
      const keys = [...node.children.keys()].sort(comparePathElements);
      for (const key of keys) {
        const child = node.children.get(key) as Node;
        out[key] = child.children.size === 0 ? {} : emit(child, true);
      }
      return out;
    };
    return emit(root, false);
  }

  /** Reads fieldsV1; anything that is not an object of objects reads as nothing. */
  static fromFieldsV1(fields: unknown): FieldSet {
    if (!isObject(fields)) return FieldSet.empty;
    const text = JSON.stringify(fields);
    let set = decoded.get(text);
    if (set === undefined) {
      set = FieldSet.decode(fields);
      decoded.set(text, set);
    }
    return set;
  }

  private static decode(fields: JsonObject): FieldSet {
    const paths: FieldPath[] = [];
    const walk = (node: unknown, prefix: FieldPath) => {
      if (!isObject(node)) return;
      for (const [key, child] of Object.entries(node)) {
        if (key === '.') {
          paths.push(prefix);
          continue;
        }
        const path = [...prefix, key];
        if (isObject(child) && Object.keys(child).length === 0) paths.push(path);
        else walk(child, path);
      }
    };
    walk(fields, []);
    return FieldSet.of(paths);
  }
}

/**
 * Field paths as a tree whose marked nodes are the members: fieldsV1's own shape, built
 * without the per-path keys and set copies of FieldSet where a write only adds members.
 */
export class FieldTree {
  member = false;
  readonly children = new Map<PathElement, FieldTree>();

  child(pe: PathElement): FieldTree {
    let next = this.children.get(pe);
    if (next === undefined) {
      next = new FieldTree();
      this.children.set(pe, next);
    }
    return next;
  }

  private find(path: FieldPath): FieldTree | undefined {
    let node: FieldTree | undefined = this;
    for (const pe of path) node = node?.children.get(pe);
    return node;
  }

  /** Takes `path` out of the members; what is under it stays. */
  unmark(path: FieldPath): void {
    const node = this.find(path);
    if (node !== undefined && path.length > 0) node.member = false;
  }

  /** Takes `path` and everything under it out (FieldSet.withoutPrefixes). */
  prune(path: FieldPath): void {
    const last = path.at(-1);
    if (last !== undefined) this.find(path.slice(0, -1))?.children.delete(last);
  }

  /** The members as FieldSet.toFieldsV1 encodes them; undefined when there are none. */
  toFieldsV1(): JsonObject | undefined {
    return emitTree(this, false);
  }
}

function emitTree(node: FieldTree, self: boolean): JsonObject | undefined {
  const keys = [...node.children.keys()].sort(comparePathElements);
  const below: Array<[PathElement, JsonObject]> = [];
  for (const key of keys) {
    const sub = emitTree(node.children.get(key) as FieldTree, true);
    if (sub !== undefined) below.push([key, sub]);
  }
  if (below.length === 0) return self && node.member ? {} : undefined;
  const out: JsonObject = {};
  if (self && node.member) out['.'] = {};
  for (const [key, sub] of below) out[key] = sub;
  return out;
}
