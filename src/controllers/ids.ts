// Scope ids: integers unique system-wide, handed out by compare-and-swap on a counter
// ConfigMap in the API, so that any number of operator processes never hand out one twice.
// Callers of one process that ask at the same time share one swap, which reserves exactly as
// many ids as they asked for: under a burst the counter is not a hot spot, and no id is kept
// in memory for later (none is lost to a crash but those already asked for).
import {
  ConfigMaps,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type Kube,
  type KubeObject,
  type ResourceClient,
} from '../kube/index.js';

export const ID_COUNTER_NAME = 'nrn-scope-ids';
const NEXT_KEY = 'next';
/** Ids reserved by one swap at most; more callers wait for the next one. */
const MAX_BATCH = 256;

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

  /** One swap at a time per allocator: the callers that came meanwhile share the next one. */
  private next(): void {
    if (this.swapping || this.waiting.length === 0) return;
    this.swapping = true;
    const batch = this.waiting.splice(0, MAX_BATCH);
    this.reserve(batch.length)
      .then(
        (first) => {
          for (const [i, waiter] of batch.entries()) waiter.resolve(first + i);
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
