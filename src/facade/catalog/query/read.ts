// Reading a plan: its lists settled, merged lazily in the catalog's order (one list is walked
// as it is), the filters the plan left checked row by row, the offset skipped, and the read
// stopped once the page is full.
import type { CatalogEntry } from '../render.js';
import { CursorHeap } from './merge-heap.js';
import { type Plan, sourcesOf } from './plan.js';
import type { Row } from './row.js';
import type { SortedRows } from './sorted-rows.js';

/** The entries of one page of a plan: `limit` of them at most, after `offset` that match. */
export function readPage(plan: Plan, offset: number, limit: number): CatalogEntry[] {
  const sources = sourcesOf(plan);
  for (const source of sources) source.settle();
  const checks =
    plan.nrn !== undefined ||
    plan.owner !== undefined ||
    plan.type !== undefined ||
    plan.status !== undefined;
  const out: CatalogEntry[] = [];
  let skipped = 0;
  if (sources.length === 1) {
    const only = sources[0] as SortedRows<Row>;
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

/** A page of one list with no filter left: straight to the offset, no row looked at before it. */
function slice(rows: SortedRows<Row>, offset: number, limit: number): CatalogEntry[] {
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
