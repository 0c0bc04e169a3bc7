// The catalog's record of one service: its place in the order, the values its buckets are
// chosen by (type, status, specification, trie nodes), and the entry a page shows.
import type { CatalogEntry, ServiceObject } from '../render.js';
import type { NrnNode } from './trie.js';

/** A catalog row: mutable inside the catalog only; what leaves it is `entry`. */
export class Row {
  entry: CatalogEntry;
  constructor(
    readonly key: string,
    public object: ServiceObject,
    readonly createdMs: number,
    readonly uid: string,
    public type: string | undefined,
    public status: string | undefined,
    public specId: string | undefined,
    public entity: NrnNode<Row> | undefined,
    /** Nodes of linkable_to, distinct and other than entity's; undefined when none. */
    public links: NrnNode<Row>[] | undefined,
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

/** A creationTimestamp in ms; -Infinity when missing or unreadable, so such rows come first. */
export function timeOf(timestamp: string | undefined): number {
  const ms = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
}

/** The trie nodes a row is filed under: its entity's first, then its links'. */
export function nodesOf(row: Row): NrnNode<Row>[] {
  const nodes = row.links !== undefined ? [...row.links] : [];
  if (row.entity !== undefined) nodes.unshift(row.entity);
  return nodes;
}
