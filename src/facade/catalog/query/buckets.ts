// Every sorted list a service is filed in — all services, one per type, one per status, and
// the NRN trie's buckets, owner lists and subtree lists — and keeping a row in exactly the
// lists its values name as it comes, changes and goes. What a query reads of them is plan.ts's.
import { nodesOf, type Row } from './row.js';
import { SortedRows } from './sorted-rows.js';
import { addTo, covering, deleteFrom, intern, joinList, leaveList, NrnNode } from './trie.js';

export class Buckets {
  readonly all = new SortedRows<Row>();
  readonly byType = new Map<string, SortedRows<Row>>();
  readonly byStatus = new Map<string, SortedRows<Row>>();
  readonly root = new NrnNode<Row>(undefined, '', []);

  file(row: Row): void {
    this.all.add(row);
    if (row.type !== undefined) bucket(this.byType, row.type).add(row);
    if (row.status !== undefined) bucket(this.byStatus, row.status).add(row);
    const nodes = nodesOf(row);
    for (const node of nodes) addTo(node, row);
    if (row.entity !== undefined) joinList(row.entity, 'owned', row);
    for (const node of covering(nodes)) joinList(node, 'subtree', row);
  }

  unfile(row: Row): void {
    this.all.delete(row);
    if (row.type !== undefined) unbucket(this.byType, row.type, row);
    if (row.status !== undefined) unbucket(this.byStatus, row.status, row);
    const nodes = nodesOf(row);
    // Subtree and owner lists first: pruning a node must find them empty.
    for (const node of covering(nodes)) leaveList(node, 'subtree', row);
    if (row.entity !== undefined) leaveList(row.entity, 'owned', row);
    for (const node of nodes) deleteFrom(node, row);
  }

  /** An update that keeps its place in the order: only the lists it joins or leaves change. */
  move(
    row: Row,
    type: string | undefined,
    status: string | undefined,
    entity: NrnNode<Row> | undefined,
    links: NrnNode<Row>[] | undefined,
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
    for (const node of before) if (!after.includes(node)) deleteFrom(node, row);
  }

  /** The trie node of an NRN, made with its ancestors when missing; undefined if not an NRN. */
  intern(text: string | undefined): NrnNode<Row> | undefined {
    return intern(this.root, text);
  }

  /** The trie nodes of linkable_to, distinct and other than the entity's; undefined when none. */
  linksOf(
    linkable: readonly string[] | undefined,
    entity: NrnNode<Row> | undefined,
  ): NrnNode<Row>[] | undefined {
    if (linkable === undefined || linkable.length === 0) return undefined;
    const out: NrnNode<Row>[] = [];
    for (const text of linkable) {
      const node = this.intern(text);
      if (node !== undefined && node !== entity && !out.includes(node)) out.push(node);
    }
    return out.length > 0 ? out : undefined;
  }
}

function bucket(map: Map<string, SortedRows<Row>>, value: string): SortedRows<Row> {
  let rows = map.get(value);
  if (rows === undefined) {
    rows = new SortedRows<Row>();
    map.set(value, rows);
  }
  return rows;
}

function unbucket(map: Map<string, SortedRows<Row>>, value: string, row: Row): void {
  const rows = map.get(value);
  if (rows === undefined) return;
  rows.delete(row);
  if (rows.size === 0) map.delete(value);
}
