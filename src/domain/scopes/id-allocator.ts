// Scope ids: integers unique system-wide, handed out by compare-and-swap on a counter
// ConfigMap in the API, so that any number of operator processes never hand out one twice.
// Callers of one process that ask at the same time share one swap. An idle process reserves
// exactly the ids asked for; under a burst a swap also reserves a few ahead, from the demand of
// the last second, which are handed out without a swap while they last, and dropped (a gap,
// never a duplicate) once a second old: the counter stops being a write per scope or two.
import {
  ConfigMaps,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type Kube,
  type KubeObject,
  type ResourceClient,
} from '../../kube/index.js';

export const ID_COUNTER_NAME = 'nrn-scope-ids';
const NEXT_KEY = 'next';
/** Ids reserved by one swap at most; more callers wait for the next one. */
const MAX_BATCH = 256;
/** Ids a swap reserves ahead of its callers at most, and the share of the last second's
 * demand it reserves (a quarter: some four swaps a second while a burst lasts). */
export const MAX_IDS_AHEAD = 64;
const AHEAD_SHARE = 4;
/** Spare ids older than this are dropped: an idle process holds none. */
const AHEAD_TTL_MS = 1_000;

export interface IdAllocatorOptions {
  readonly namespace: string;
  readonly name?: string;
  /** Gives up after this many lost races in a row (each retried after a short random pause). */
  readonly maxAttempts?: number;
}

interface Waiter {
  readonly resolve: (id: number) => void;
  readonly reject: (error: unknown) => void;
}

export class IdAllocator {
  private readonly configMaps: ResourceClient;
  private readonly name: string;
  private waiting: Waiter[] = [];
  private swapping = false;
  /**
   * The counter as this allocator's last swap left it: the next swap is tried on it without a
   * read. If anyone moved the counter since, its resourceVersion makes the write fail (409)
   * and the counter is read again, so this only saves a request, it never decides an id.
   */
  private last: KubeObject | undefined;
  /** Ids reserved ahead and not handed out yet: [next, end), reserved at `at`. */
  private spare = { next: 0, end: 0, at: 0 };
  /** Ids handed out in the current and the previous second: the demand a swap provides for. */
  private demand = { second: 0, current: 0, previous: 0 };

  constructor(
    kube: Pick<Kube, 'resource'>,
    private readonly options: IdAllocatorOptions,
  ) {
    this.configMaps = kube.resource(ConfigMaps);
    this.name = options.name ?? ID_COUNTER_NAME;
  }

  /**
   * The next id. The counter holds the next free id; a write carries the resourceVersion it
   * read, so of two processes that read the same value only one write succeeds (409 for the
   * other, which reads again). An id handed out is never handed out again, even if the caller
   * fails to record it: gaps are possible, duplicates are not.
   */
  allocate(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.next();
    });
  }

  /** Ids this allocator holds in reserve, not handed out (they are a gap if never used). */
  reserved(): number[] {
    const { next, end } = this.spare;
    return Array.from({ length: end - next }, (_, i) => next + i);
  }

  /**
   * Spare ids first; else one swap at a time per allocator, the callers that came meanwhile
   * sharing the next one.
   */
  private next(): void {
    const now = Date.now();
    if (now - this.spare.at > AHEAD_TTL_MS) this.spare = { next: 0, end: 0, at: 0 };
    while (this.waiting.length > 0 && this.spare.next < this.spare.end) {
      this.handOut(this.waiting.shift() as Waiter, this.spare.next++, now);
    }
    if (this.swapping || this.waiting.length === 0) return;
    this.swapping = true;
    const batch = this.waiting.splice(0, MAX_BATCH);
    const ahead = Math.min(MAX_IDS_AHEAD, Math.floor(this.recentDemand(now) / AHEAD_SHARE));
    this.reserve(batch.length + ahead)
      .then(
        (first) => {
          const at = Date.now();
          for (const [i, waiter] of batch.entries()) this.handOut(waiter, first + i, at);
          const end = first + batch.length + ahead;
          this.spare = { next: first + batch.length, end, at };
        },
        (error: unknown) => {
          for (const waiter of batch) waiter.reject(error);
        },
      )
      .finally(() => {
        this.swapping = false;
        this.next();
      });
  }

  private handOut(waiter: Waiter, id: number, now: number): void {
    this.recentDemand(now);
    this.demand.current++;
    waiter.resolve(id);
  }

  /** Ids handed out in the last full second (rolling the count over when a second passed). */
  private recentDemand(now: number): number {
    const second = Math.floor(now / 1000);
    if (second !== this.demand.second) {
      const previous = second === this.demand.second + 1 ? this.demand.current : 0;
      this.demand = { second, current: 0, previous };
    }
    return Math.max(this.demand.previous, this.demand.current);
  }

  /** Moves the counter on by `count`; returns the first of the ids that moved past. */
  private async reserve(count: number): Promise<number> {
    const attempts = this.options.maxAttempts ?? 50;
    for (let attempt = 0; attempt < attempts; ) {
      const remembered = this.last;
      this.last = undefined;
      const counter = remembered ?? (await this.read());
      if (counter === undefined) {
        try {
          this.last = await this.configMaps.create({
            metadata: { name: this.name, namespace: this.options.namespace },
            data: { [NEXT_KEY]: String(1 + count) },
          });
          return 1;
        } catch (error) {
          if (!isAlreadyExists(error)) throw error;
          attempt++;
          continue;
        }
      }
      const next = nextOf(counter);
      try {
        this.last = await this.configMaps.replace({
          ...counter,
          data: {
            ...(counter.data as Record<string, string> | undefined),
            [NEXT_KEY]: String(next + count),
          },
        });
        return next;
      } catch (error) {
        if (!isConflict(error)) throw error;
        // A remembered counter that moved is not a lost race: read it and try at once.
        if (remembered !== undefined) continue;
        // Lost the race: a short random pause spreads the losers out.
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 ** attempt)));
        attempt++;
      }
    }
    throw new IdAllocationError(`no scope id after ${attempts} attempts: too much contention`);
  }

  private async read(): Promise<KubeObject | undefined> {
    try {
      return await this.configMaps.get({ namespace: this.options.namespace, name: this.name });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }
}

export class IdAllocationError extends Error {
  override readonly name = 'IdAllocationError';
  readonly code = 'SCOPE_ID_ALLOCATION_FAILED';
}

function nextOf(counter: KubeObject): number {
  const raw = (counter.data as Record<string, unknown> | undefined)?.[NEXT_KEY];
  const next = typeof raw === 'string' ? Number(raw) : Number.NaN;
  // A counter someone broke by hand must stop allocation, not restart it at 1 (duplicates).
  if (!Number.isSafeInteger(next) || next < 1) {
    throw new IdAllocationError(
      `counter ${counter.metadata.namespace}/${counter.metadata.name} holds no valid "${NEXT_KEY}"`,
    );
  }
  return next;
}
