// The NRN trie: one node per NRN that services carry (as entity_nrn or in linkable_to), each
// with the sorted bucket of those services, the counts of its subtree, and, near the root, the
// lists a broad query merges instead of many buckets. Keeping it in step with the catalog
// (nodes made, filled, emptied, pruned) is here; which nodes a query reads is plan.ts's.
import { type Nrn, type NrnSegment, parseNrn, valuesOverlap } from '../../../api/index.js';
import { type Ranked, SortedRows } from './sorted-rows.js';

/**
 * Organizations, accounts and namespaces keep subtree lists; below, an application with its
 * scopes is small enough to merge bucket by bucket. Each level costs a list slot per service.
 */
const SUBTREE_DEPTH = 3;

/** A parsed query NRN; its identity stamps the match results memoised on trie nodes. */
export class QueryNrn {
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
export class NrnNode<R extends Ranked> {
  readonly rows = new SortedRows<R>();
  /** Children by segment text, and the same as a list (iterated without an iterator object). */
  children: Map<string, NrnNode<R>> | undefined;
  list: NrnNode<R>[] | undefined;
  /** Children whose value holds a `*`: a concrete query segment must still try them. */
  wild: NrnNode<R>[] | undefined;
  /** Rows in the buckets of this subtree, and how many of its buckets are not empty. */
  subRows = 0;
  subBuckets = 0;
  /**
   * Down to SUBTREE_DEPTH, every service carrying an NRN of this subtree, sorted and each once:
   * a query ending in `*` at these levels merges a few such lists instead of many buckets.
   */
  subtree: SortedRows<R> | undefined;
  /** The services whose entity_nrn this is (`rows` holds those linkable to it as well). */
  owned: SortedRows<R> | undefined;
  private seenBy: QueryNrn | undefined;
  private seen = false;
  private prefixBy: QueryNrn | undefined;
  private prefix = false;

  constructor(
    readonly parent: NrnNode<R> | undefined,
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
    const parent = this.parent as NrnNode<R>;
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
    const parent = this.parent as NrnNode<R>;
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

/** Whether a child node's own segment can name what the query's segment at its level does. */
export function sameLevelOverlap<R extends Ranked>(node: NrnNode<R>, segment: NrnSegment): boolean {
  return segmentsOverlap(node.nrn[node.depth - 1] as NrnSegment, segment);
}

/** The trie node of an NRN, made with its ancestors when missing; undefined if not an NRN. */
export function intern<R extends Ranked>(
  root: NrnNode<R>,
  text: string | undefined,
): NrnNode<R> | undefined {
  if (text === undefined) return undefined;
  const nrn = parseNrn(text);
  if (nrn === undefined) return undefined;
  let node = root;
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

/** Files a row in a node's bucket, counting it in the subtree totals up to the root. */
export function addTo<R extends Ranked>(node: NrnNode<R>, row: R): void {
  const first = node.rows.size === 0;
  node.rows.add(row);
  for (let n: NrnNode<R> | undefined = node; n !== undefined; n = n.parent) {
    n.subRows++;
    if (first) n.subBuckets++;
  }
}

/** Takes a row out of a node's bucket, and the node out of the trie when nothing needs it. */
export function deleteFrom<R extends Ranked>(node: NrnNode<R>, row: R): void {
  if (!node.rows.delete(row)) return;
  const emptied = node.rows.size === 0;
  for (let n: NrnNode<R> | undefined = node; n !== undefined; n = n.parent) {
    n.subRows--;
    if (emptied) n.subBuckets--;
  }
  prune(node);
}

/** Drops nodes no service carries and no descendant needs, so the trie follows the catalog. */
function prune<R extends Ranked>(node: NrnNode<R>): void {
  let current: NrnNode<R> | undefined = node;
  while (current?.parent !== undefined && current.rows.size === 0 && !current.children?.size) {
    const parent: NrnNode<R> = current.parent;
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

/**
 * The nodes whose subtree lists hold a row carrying `nodes`: their ancestors-or-self down to
 * SUBTREE_DEPTH, each once (a service in two places of one subtree is listed there once).
 */
export function covering<R extends Ranked>(nodes: readonly NrnNode<R>[]): NrnNode<R>[] {
  const out: NrnNode<R>[] = [];
  for (const node of nodes) {
    for (let n: NrnNode<R> | undefined = node; n !== undefined && n.depth > 0; n = n.parent) {
      if (n.depth <= SUBTREE_DEPTH && !out.includes(n)) out.push(n);
    }
  }
  return out;
}

export function joinList<R extends Ranked>(
  node: NrnNode<R>,
  list: 'subtree' | 'owned',
  row: R,
): void {
  let rows = node[list];
  if (rows === undefined) {
    rows = new SortedRows<R>();
    node[list] = rows;
  }
  rows.add(row);
}

/** Drops an emptied list: most trie nodes are never asked for theirs. */
export function leaveList<R extends Ranked>(
  node: NrnNode<R>,
  list: 'subtree' | 'owned',
  row: R,
): void {
  const rows = node[list];
  if (rows === undefined) return;
  rows.delete(row);
  if (rows.size === 0) node[list] = undefined;
}

function removeFrom<T>(list: T[] | undefined, value: T): void {
  const i = list?.indexOf(value) ?? -1;
  if (i >= 0) list?.splice(i, 1);
}
