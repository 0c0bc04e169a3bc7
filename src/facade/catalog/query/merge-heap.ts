// The k-way merge a page reads when its plan names several sorted lists: one row at a time, in
// the catalog's order, so a page stops as soon as it is full.
import { compareRows, type Ranked, type SortedRows } from './sorted-rows.js';

/** A k-way merge of sorted lists, in order, one row at a time. */
export class CursorHeap<R extends Ranked> {
  /** Per cursor: its chunks, the chunk and the position in it, and the row there. */
  private readonly chunks: R[][][] = [];
  private readonly chunk: number[] = [];
  private readonly pos: number[] = [];
  private readonly heads: R[] = [];
  /** Cursor indexes, a binary min-heap by head row. */
  private readonly heap: number[] = [];

  constructor(sources: readonly SortedRows<R>[]) {
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

  next(): R | undefined {
    const heap = this.heap;
    if (heap.length === 0) return undefined;
    const c = heap[0] as number;
    const row = this.heads[c] as R;
    // Advance the cursor; an exhausted one leaves the heap.
    const chunks = this.chunks[c] as R[][];
    let chunk = this.chunk[c] as number;
    let pos = (this.pos[c] as number) + 1;
    if (pos >= (chunks[chunk] as R[]).length) {
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
    const row = heads[c] as R;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      let best = heads[heap[child] as number] as R;
      const right = child + 1;
      if (right < n) {
        const other = heads[heap[right] as number] as R;
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
