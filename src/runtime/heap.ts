// How far the process lets V8's heap grow before a full collection (ADR 0026). An operator's
// heap is mostly its informers' caches, which live as long as the process. V8's own policy,
// made for programs whose heap comes and goes, lets the old generation grow to up to four
// times what was live at the last full collection, and what it grew to stays resident long
// after: at 10,000 scopes and 100,000 services, 229 MiB of old space held 118 MiB live. A fixed
// growth bounds that, for a few more (concurrent) collections.
import { setFlagsFromString } from 'node:v8';

/** Percent the old generation may grow past what the last full collection left live. */
export const DEFAULT_HEAP_GROWTH_PERCENT = 50;
/** V8's own policy grows by 300% at most: more than that would only hold more garbage. */
export const MAX_HEAP_GROWTH_PERCENT = 300;

/**
 * Sets the growth for this process from now on (V8 reads it at each full collection); 0
 * gives the decision back to V8.
 */
export function setHeapGrowth(percent: number): void {
  if (!Number.isInteger(percent) || percent < 0 || percent > MAX_HEAP_GROWTH_PERCENT) {
    throw new RangeError(
      `heap growth must be a whole percent from 0 to ${MAX_HEAP_GROWTH_PERCENT}, not ${percent}`,
    );
  }
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
