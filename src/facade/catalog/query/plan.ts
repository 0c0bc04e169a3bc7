// How a query is read: of the lists that could answer it (every service, one type, one status,
// the owner's buckets, the NRN's buckets), the one estimated cheapest for the page asked, and
// which filters are left to check on the rows read. Reading the plan is read.ts's.
import {
  type NrnSegment,
  parseNrn,
  type ServicePhase,
  type ServiceType,
} from '../../../api/index.js';
import type { Buckets } from './buckets.js';
import type { Row } from './row.js';
import type { SortedRows } from './sorted-rows.js';
import { type NrnNode, QueryNrn, sameLevelOverlap } from './trie.js';

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

export interface PlanOptions {
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

/** How a query reads: which sorted lists to merge, and which filters are left to check. */
export interface Plan {
  /** The lists, or the trie nodes whose buckets they are (found once the plan is chosen). */
  readonly sources: readonly SortedRows<Row>[] | Reach;
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
  readonly nodes: NrnNode<Row>[];
  /** Subtree lists of roots that have one: every row in them matches. */
  readonly lists: SortedRows<Row>[];
  readonly roots: NrnNode<Row>[];
  /** Rows in their buckets (a service in two of them counts twice). */
  rows: number;
  /** Non-empty buckets. */
  buckets: number;
}

const DEFAULT_NODE_BUDGET = 256;
const MAX_CACHED_QUERIES = 1024;

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

export class Planner {
  private readonly queries = new Map<string, QueryNrn>();
  private readonly nodeBudget: number;
  private readonly strategy: 'auto' | 'index' | 'scan';

  constructor(
    private readonly buckets: Buckets,
    options: PlanOptions = {},
  ) {
    this.nodeBudget = options.nodeBudget ?? DEFAULT_NODE_BUDGET;
    this.strategy = options.strategy ?? 'auto';
  }

  /** The cheapest way to read a query for `need` rows; undefined when nothing can match. */
  plan(query: CatalogQuery, need: number): Plan | undefined {
    const all = this.buckets.all;
    const total = all.size;
    if (total === 0) return undefined;
    const nrn = query.nrn !== undefined ? this.queryNrn(query.nrn) : undefined;
    const owner = query.entityNrn !== undefined ? this.queryNrn(query.entityNrn) : undefined;
    const { type, status } = query;
    // What share of all services passes each filter (1 when it is not asked for, or unknown).
    const byType = type !== undefined ? this.buckets.byType.get(type) : undefined;
    const byStatus = status !== undefined ? this.buckets.byStatus.get(status) : undefined;
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
                    : all) as SortedRows<Row>,
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
    const stack: NrnNode<Row>[] = [this.buckets.root];
    let pushed = 0;
    while (stack.length > 0) {
      const node = stack.pop() as NrnNode<Row>;
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
}

/** The sorted lists a plan reads: a reach's buckets, the subtrees of its roots walked now. */
export function sourcesOf(plan: Plan): readonly SortedRows<Row>[] {
  if (Array.isArray(plan.sources)) return plan.sources as readonly SortedRows<Row>[];
  const reach = plan.sources as Reach;
  const out = reach.nodes.map((n) => n.rows);
  for (const list of reach.lists) out.push(list);
  const stack = [...reach.roots];
  while (stack.length > 0) {
    const node = stack.pop() as NrnNode<Row>;
    if (node.rows.size > 0) out.push(node.rows);
    for (const child of node.list ?? []) stack.push(child);
  }
  return out;
}
