// Scope ids: integers unique system-wide, handed out by compare-and-swap on a counter
// ConfigMap in the API, so that any number of operator processes never hand out one twice.
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

export interface IdAllocatorOptions {
  readonly namespace: string;
  readonly name?: string;
  /** Gives up after this many lost races in a row (each retried after a short random pause). */
  readonly maxAttempts?: number;
}

export class IdAllocator {
  private readonly configMaps: ResourceClient;
  private readonly name: string;

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
  async allocate(): Promise<number> {
    const attempts = this.options.maxAttempts ?? 50;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const counter = await this.read();
      if (counter === undefined) {
        try {
          await this.configMaps.create({
            metadata: { name: this.name, namespace: this.options.namespace },
            data: { [NEXT_KEY]: '2' },
          });
          return 1;
        } catch (error) {
          if (!isAlreadyExists(error)) throw error;
          continue;
        }
      }
      const next = nextOf(counter);
      try {
        await this.configMaps.replace({
          ...counter,
          data: {
            ...(counter.data as Record<string, string> | undefined),
            [NEXT_KEY]: String(next + 1),
          },
        });
        return next;
      } catch (error) {
        if (!isConflict(error)) throw error;
        // Lost the race: a short random pause spreads the losers out.
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 ** attempt)));
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
