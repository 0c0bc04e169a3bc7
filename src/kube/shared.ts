// Informers shared within one process, as client-go's shared informer factory shares them:
// components asking one Kube for the same kind with the same options (the operator and the
// facade of `nrn-operator run`) get one list+watch and one cache. Each caller holds its own
// handle: its listeners, its start(), and a final stop() that detaches them; the informer
// itself stops with its last handle.
import type { ResourceType } from './client.js';
import type { Informer, InformerListeners, InformerOptions } from './informer.js';

interface Entry {
  readonly informer: Informer<unknown, unknown>;
  holds: number;
}

export class SharedInformers {
  private readonly entries = new Map<ResourceType<unknown, unknown>, Map<string, Entry>>();
  private readonly transformIds = new WeakMap<object, number>();
  private nextTransformId = 1;

  constructor(
    private readonly make: <Spec, Status>(
      type: ResourceType<Spec, Status>,
      options: Partial<InformerOptions>,
    ) => Informer<Spec, Status>,
  ) {}

  informer<Spec, Status>(
    type: ResourceType<Spec, Status>,
    options: Partial<InformerOptions>,
  ): Informer<Spec, Status> {
    const key = this.keyOf(options);
    // A caller's own logger makes its informer its own.
    if (key === undefined) return this.make(type, options);
    const kind = type as ResourceType<unknown, unknown>;
    let byOptions = this.entries.get(kind);
    if (byOptions === undefined) {
      byOptions = new Map();
      this.entries.set(kind, byOptions);
    }
    let entry = byOptions.get(key);
    if (entry === undefined) {
      entry = { informer: this.make(type, options) as Informer<unknown, unknown>, holds: 0 };
      byOptions.set(key, entry);
    }
    entry.holds++;
    const held = entry;
    const release = async () => {
      if (--held.holds > 0) return;
      // The next caller gets a fresh informer: a stopped one cannot start again.
      byOptions.delete(key);
      await held.informer.stop();
    };
    return handle(held.informer as Informer<Spec, Status>, release);
  }

  private keyOf(options: Partial<InformerOptions>): string | undefined {
    const { log, transform, ...plain } = options;
    if (log !== undefined) return undefined;
    let transformId = 0;
    if (transform !== undefined) {
      transformId = this.transformIds.get(transform) ?? 0;
      if (transformId === 0) {
        transformId = this.nextTransformId++;
        this.transformIds.set(transform, transformId);
      }
    }
    // The rest is plain data (selectors, periods, backoff); sorted, so key order does not matter.
    const sorted = Object.fromEntries(Object.entries(plain).sort(([a], [b]) => (a < b ? -1 : 1)));
    return `${transformId} ${JSON.stringify(sorted)}`;
  }
}

type Listener = InformerListeners<unknown>[keyof InformerListeners<unknown>];

/** One caller's hold on a shared informer: the informer's API, with start/stop/on its own. */
function handle<Spec, Status>(
  informer: Informer<Spec, Status>,
  release: () => Promise<void>,
): Informer<Spec, Status> {
  let stopping: Promise<void> | undefined;
  const detach: Array<() => void> = [];
  const pendingStarts = new Set<(error: Error) => void>();
  const own: Record<string, unknown> = {
    on: (event: keyof InformerListeners<unknown>, listener: Listener) => {
      const off = informer.on(event, listener as never);
      detach.push(off);
      return off;
    },
    // Indexes are known by name (module constants): the second holder's is the first's.
    addIndex: (name: string, fn: Parameters<Informer<Spec, Status>['addIndex']>[1]) => {
      if (!informer.cache.hasIndex(name)) informer.addIndex(name, fn);
    },
    start: () => {
      if (stopping !== undefined) return Promise.reject(new Error('the informer was stopped'));
      return new Promise<void>((resolve, reject) => {
        pendingStarts.add(reject);
        informer.start().then(
          () => {
            pendingStarts.delete(reject);
            resolve();
          },
          (error: unknown) => {
            pendingStarts.delete(reject);
            reject(error);
          },
        );
      });
    },
    stop: () => {
      stopping ??= (async () => {
        for (const reject of pendingStarts) {
          reject(new Error('the informer was stopped before it synced'));
        }
        pendingStarts.clear();
        for (const off of detach.splice(0)) off();
        await release();
      })();
      return stopping;
    },
  };
  return new Proxy(informer, {
    get(target, property) {
      if (typeof property === 'string' && Object.hasOwn(own, property)) return own[property];
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
