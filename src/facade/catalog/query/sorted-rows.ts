// The catalog's order (created_at, then id) and the list that keeps rows in it: every bucket
// of the catalog is one of these, and a page is read from a few of them.

/** What rows are sorted by. */
export interface Ranked {
  /** creationTimestamp in ms; -Infinity when missing, so such rows come first. */
  readonly createdMs: number;
  readonly uid: string;
  /** The object key (namespace/name): one service is one key. */
  readonly key: string;
}

/** created_at, then id; then the object key, so the order is total and duplicates are adjacent. */
export function compareRows(a: Ranked, b: Ranked): number {
  if (a.createdMs !== b.createdMs) return a.createdMs < b.createdMs ? -1 : 1;
  if (a.uid !== b.uid) return a.uid < b.uid ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
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
export class SortedRows<R extends Ranked> {
  chunks: R[][] = [];
  private settled = 0;
  private pending: R[] | undefined;

  get size(): number {
    return this.settled + (this.pending?.length ?? 0);
  }

  add(row: R): void {
    if (this.pending === undefined) this.pending = [row];
    else this.pending.push(row);
  }

  /** False when the row is not here. */
  delete(row: R): boolean {
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
    const all: R[] = [];
    for (const chunk of this.chunks) for (const row of chunk) all.push(row);
    for (const row of pending) all.push(row);
    all.sort(compareRows);
    this.chunks = [];
    for (let i = 0; i < all.length; i += CHUNK_FILL) this.chunks.push(all.slice(i, i + CHUNK_FILL));
    this.settled = all.length;
  }

  private insert(row: R): void {
    this.settled++;
    if (this.chunks.length === 0) {
      this.chunks.push([row]);
      return;
    }
    const ci = Math.min(this.chunkOf(row), this.chunks.length - 1);
    const chunk = this.chunks[ci] as R[];
    chunk.splice(lowerBound(chunk, row), 0, row);
    if (chunk.length > CHUNK_MAX) this.chunks.splice(ci + 1, 0, chunk.splice(CHUNK_MAX >> 1));
  }

  /** The first chunk whose last row is not before `row` (chunks.length when none). */
  private chunkOf(row: R): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const chunk = this.chunks[mid] as R[];
      if (compareRows(chunk[chunk.length - 1] as R, row) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Keeps chunks from thinning out after many deletes. */
  private absorbNext(ci: number): void {
    const chunk = this.chunks[ci] as R[];
    const next = this.chunks[ci + 1];
    if (next === undefined || chunk.length + next.length > CHUNK_MAX) return;
    for (const row of next) chunk.push(row);
    this.chunks.splice(ci + 1, 1);
  }
}

function lowerBound<R extends Ranked>(rows: readonly R[], row: R): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareRows(rows[mid] as R, row) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
