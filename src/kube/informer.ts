// List+watch of one kind into an indexed cache, that never stops on its own: it re-watches,
// relists after 410 (with backoff when 410s come in a row), retries everything else with
// backoff, resyncs, and stops only on stop().
// Objects can be trimmed on their way in (a transform), and keys whose latest version the
// schema refused are known, so a reader can tell a stale cached version from a current one.
import type { Logger } from 'pino';
import { type BackoffOptions, backoffDelay, between, DEFAULT_BACKOFF } from './backoff.js';
import { type CacheDiff, type IndexFunction, ObjectCache } from './cache.js';
import { type KubeObject, keyOf, type ResourceClient } from './client.js';
import { KubeApiError, KubeSchemaError, KubeTransportError } from './errors.js';

export interface InformerOptions {
  readonly log: Logger;
  /** Omitted on a namespaced kind: every namespace. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Every cached object is re-emitted as an update this often; 0 turns it off. */
  readonly resyncMs?: number;
  /** Server-side end of each watch, drawn from this range so informers do not re-watch together. */
  readonly watchTimeoutSeconds?: { readonly min: number; readonly max: number };
  /** Added to the watch timeout: past it with nothing received, the connection is presumed dead. */
  readonly idleSlackMs?: number;
  readonly backoff?: BackoffOptions;
  /** Page size of lists. */
  readonly pageSize?: number;
  /**
   * Applied to every object once it is parsed, before it is cached or handed to a listener
   * (client-go's SetTransform): what no reader needs, dropped here, costs no memory for as
   * long as the object stays cached. It must keep name, namespace and resourceVersion (the
   * cache and the watch live on them). See `leanObject` and `metadataOnly` (./lean.ts).
   */
  readonly transform?: <O extends KubeObject<unknown, unknown>>(object: O) => O;
}

export interface InformerListeners<O> {
  add: (object: O) => void;
  update: (object: O, old: O) => void;
  delete: (object: O) => void;
  /** A failure the informer recovers from by itself; reported so it is never silent. */
  error: (error: Error) => void;
  /**
   * An object our schema refuses: it stays out of the cache (a valid earlier version stays in),
   * but its key is worth a reconcile that can report the problem on the object.
   */
  invalid: (error: KubeSchemaError, key: string) => void;
}

type EventName = keyof InformerListeners<unknown>;

const DEFAULT_RESYNC_MS = 10 * 60_000;
const DEFAULT_WATCH_TIMEOUT = { min: 240, max: 300 };
const DEFAULT_IDLE_SLACK_MS = 30_000;
const DEFAULT_PAGE_SIZE = 500;
/** A watch that ends this soon with nothing received counts as a failure, to avoid a hot loop. */
const SHORT_WATCH_MS = 1_000;

/** The watch ended with a 410: the resourceVersion is too old, list again. */
class Expired extends Error {}

/** A watch that brought events, or stayed open a while: the server is serving it. */
function worked(watch: { readonly started: number; readonly received: number }): boolean {
  return watch.received > 0 || (watch.started > 0 && Date.now() - watch.started >= SHORT_WATCH_MS);
}

export class Informer<Spec = unknown, Status = unknown> {
  readonly cache = new ObjectCache<KubeObject<Spec, Status>>();
  private readonly listeners: {
    [E in EventName]: Set<InformerListeners<KubeObject<Spec, Status>>[E]>;
  } = {
    add: new Set(),
    update: new Set(),
    delete: new Set(),
    error: new Set(),
    invalid: new Set(),
  };
  private readonly abort = new AbortController();
  private readonly log: Logger;
  private synced = false;
  private watching = false;
  private stopped = false;
  private running: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private syncWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  private resourceVersion: string | undefined;
  /** Keys whose latest version seen was refused by the schema (the cached one is older). */
  private readonly refusedKeys = new Set<string>();
  /** How many lists this informer made (for tests and metrics). */
  lists = 0;
  /** How many watch requests this informer made. */
  watches = 0;

  constructor(
    private readonly client: ResourceClient<Spec, Status>,
    private readonly options: InformerOptions,
  ) {
    this.log = options.log.child({ informer: client.type.kind, namespace: options.namespace });
  }

  on<E extends EventName>(
    event: E,
    listener: InformerListeners<KubeObject<Spec, Status>>[E],
  ): () => void {
    this.listeners[event].add(listener);
    return () => this.listeners[event].delete(listener);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** True while a watch is open: the cache is following the server live (for readiness). */
  isWatching(): boolean {
    return this.watching;
  }

  addIndex(name: string, fn: IndexFunction<KubeObject<Spec, Status>>): void {
    this.cache.addIndex(name, fn);
  }

  byIndex(name: string, value: string): KubeObject<Spec, Status>[] {
    return this.cache.byIndex(name, value);
  }

  /**
   * True when the latest version seen of `key` was refused by the schema: what the cache holds
   * for it (if anything) is an older version, so only the API can say how the object stands.
   */
  isRefused(key: string): boolean {
    return this.refusedKeys.has(key);
  }

  /** The keys isRefused() is true of: a controller starting again enqueues them as its first list did. */
  refused(): string[] {
    return [...this.refusedKeys];
  }

  /** Starts list+watch; resolves once the first list is in the cache. */
  start(): Promise<void> {
    if (this.stopped) return Promise.reject(new Error('the informer was stopped'));
    const synced = this.synced
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => this.syncWaiters.push({ resolve, reject }));
    this.running ??= this.run().catch((error: unknown) => {
      // run() handles its own failures; reaching here is a bug, so it must not pass silently.
      this.log.error({ err: error }, 'informer loop failed');
    });
    return synced;
  }

  /** Final and idempotent: no events after it returns, no request or timer left behind. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      this.abort.abort();
      if (this.resyncTimer !== undefined) clearInterval(this.resyncTimer);
      this.resyncTimer = undefined;
      for (const waiter of this.syncWaiters.splice(0)) {
        waiter.reject(new Error('the informer was stopped before it synced'));
      }
      await this.running;
    })();
    return this.stopping;
  }

  private async run(): Promise<void> {
    // Failures in a row. Only a watch that worked ends a run of them, never a list that did:
    // else a server expiring every watch at once (a 410 storm) is listed and watched in a
    // hot loop.
    let attempt = 0;
    while (!this.stopped) {
      const watch = { started: 0, received: 0 };
      try {
        if (this.resourceVersion === undefined) this.resourceVersion = await this.relist();
        watch.started = Date.now();
        await this.watchOnce(this.resourceVersion, watch);
        if (worked(watch)) attempt = 0;
        else await this.sleep(backoffDelay(attempt++, this.backoff()));
      } catch (error) {
        if (this.stopped) break;
        if (worked(watch)) attempt = 0;
        if (error instanceof Expired || (error instanceof KubeApiError && error.code === 410)) {
          // The first 410 in a row is history moving on: list at once. More are a storm, backed
          // off as client-go's reflector backs off every ListAndWatch that ends (its Run is
          // wait.BackoffUntil with an exponential backoff manager, 800 ms to 30 s).
          const delay = attempt === 0 ? 0 : backoffDelay(attempt - 1, this.backoff());
          attempt++;
          this.log.info(
            { resourceVersion: this.resourceVersion, retryInMs: delay },
            'watch expired; listing again',
          );
          this.resourceVersion = undefined;
          await this.sleep(delay);
          continue;
        }
        const delay = backoffDelay(attempt++, this.backoff());
        this.report(error, delay);
        await this.sleep(delay);
      }
    }
  }

  private backoff(): BackoffOptions {
    return this.options.backoff ?? DEFAULT_BACKOFF;
  }

  /** Lists every page, then makes the cache match and emits what changed. */
  private async relist(): Promise<string> {
    const items: KubeObject<Spec, Status>[] = [];
    const invalid = new Set<string>();
    let token: string | undefined;
    let resourceVersion = '';
    this.lists++;
    do {
      const page = await this.client.listRaw({
        ...this.selection(),
        limit: this.options.pageSize ?? DEFAULT_PAGE_SIZE,
        ...(token !== undefined ? { continue: token } : {}),
        signal: this.abort.signal,
      });
      resourceVersion = page.resourceVersion;
      token = page.continue;
      for (const raw of page.items) {
        const object = this.parseItem(raw, invalid);
        if (object !== undefined) items.push(object);
      }
    } while (token !== undefined && !this.stopped);
    if (this.stopped) return resourceVersion;
    // Objects our schema refuses keep their earlier valid version, as a watch update would.
    const kept = [...invalid].flatMap((key) => this.cache.getByKey(key) ?? []);
    this.refusedKeys.clear();
    for (const key of invalid) this.refusedKeys.add(key);
    const diff = this.cache.replace([...items, ...kept]);
    this.emitDiff(diff);
    this.log.debug(
      {
        objects: this.cache.size,
        resourceVersion,
        added: diff.added.length,
        deleted: diff.deleted.length,
      },
      'informer listed',
    );
    if (!this.synced) this.markSynced();
    return resourceVersion;
  }

  private parseItem(raw: unknown, invalid: Set<string>): KubeObject<Spec, Status> | undefined {
    try {
      return this.transformed(this.client.parse(raw));
    } catch (error) {
      if (!(error instanceof KubeSchemaError)) throw error;
      invalid.add(error.objectKey);
      this.emit('invalid', error, error.objectKey);
      return undefined;
    }
  }

  private markSynced(): void {
    this.synced = true;
    for (const waiter of this.syncWaiters.splice(0)) waiter.resolve();
    const every = this.options.resyncMs ?? DEFAULT_RESYNC_MS;
    if (every > 0) this.resyncTimer = setInterval(() => this.resync(), every);
  }

  private resync(): void {
    for (const object of this.cache.list()) this.emit('update', object, object);
  }

  /** One watch; `progress.received` counts its events (an ERROR aside) even when it throws. */
  private async watchOnce(from: string, progress: { received: number }): Promise<void> {
    const range = this.options.watchTimeoutSeconds ?? DEFAULT_WATCH_TIMEOUT;
    const timeoutSeconds = between(range.min, range.max);
    this.watches++;
    try {
      await this.watchStream(from, timeoutSeconds, () => progress.received++);
    } finally {
      this.watching = false;
    }
  }

  private watchStream(from: string, timeoutSeconds: number, count: () => void): Promise<void> {
    return this.client.watch(
      {
        ...this.selection(),
        resourceVersion: from,
        allowWatchBookmarks: true,
        timeoutSeconds,
        idleTimeoutMs: timeoutSeconds * 1000 + (this.options.idleSlackMs ?? DEFAULT_IDLE_SLACK_MS),
        signal: this.abort.signal,
        onOpen: () => {
          this.watching = true;
        },
      },
      (event) => {
        if (this.stopped) return;
        // An ERROR event is the server refusing the watch, not the watch working.
        if (event.type !== 'ERROR') count();
        switch (event.type) {
          case 'BOOKMARK':
            if (event.resourceVersion !== '') this.resourceVersion = event.resourceVersion;
            return;
          case 'ERROR':
            if (event.error.code === 410) throw new Expired(event.error.message);
            throw event.error;
          case 'INVALID': {
            const rv = event.raw.metadata?.resourceVersion;
            if (typeof rv === 'string' && rv !== '') this.resourceVersion = rv;
            const key = event.error.objectKey;
            // Gone is gone, whatever its last version looked like.
            if (event.eventType === 'DELETED') {
              this.refusedKeys.delete(key);
              const old = this.cache.remove(key);
              if (old !== undefined) this.emit('delete', old);
              return;
            }
            this.refusedKeys.add(key);
            this.emit('invalid', event.error, key);
            return;
          }
          case 'DELETED': {
            const object = this.transformed(event.object);
            const key = keyOf(object.metadata);
            this.advance(object);
            this.refusedKeys.delete(key);
            if (this.cache.remove(key) !== undefined) this.emit('delete', object);
            return;
          }
          case 'ADDED':
          case 'MODIFIED': {
            const object = this.transformed(event.object);
            this.advance(object);
            this.refusedKeys.delete(keyOf(object.metadata));
            const old = this.cache.upsert(object);
            if (old === undefined) this.emit('add', object);
            else if (old.metadata.resourceVersion !== object.metadata.resourceVersion) {
              this.emit('update', object, old);
            }
            return;
          }
        }
      },
    );
  }

  private transformed(object: KubeObject<Spec, Status>): KubeObject<Spec, Status> {
    const transform = this.options.transform;
    return transform === undefined ? object : transform(object);
  }

  private advance(object: KubeObject<Spec, Status>): void {
    const rv = object.metadata.resourceVersion;
    if (rv !== undefined && rv !== '') this.resourceVersion = rv;
  }

  private selection() {
    return {
      ...(this.options.namespace !== undefined ? { namespace: this.options.namespace } : {}),
      ...(this.options.labelSelector !== undefined
        ? { labelSelector: this.options.labelSelector }
        : {}),
      ...(this.options.fieldSelector !== undefined
        ? { fieldSelector: this.options.fieldSelector }
        : {}),
    };
  }

  private emitDiff(diff: CacheDiff<KubeObject<Spec, Status>>): void {
    for (const object of diff.added) this.emit('add', object);
    for (const { object, old } of diff.updated) this.emit('update', object, old);
    for (const object of diff.deleted) this.emit('delete', object);
  }

  private report(error: unknown, retryInMs: number): void {
    const err = error instanceof Error ? error : new Error(String(error));
    const fields = {
      err,
      retryInMs,
      resourceVersion: this.resourceVersion,
      ...(err instanceof KubeApiError ? { code: err.code, reason: err.reason } : {}),
      ...(err instanceof KubeTransportError ? { code: err.errorCode } : {}),
    };
    this.log.warn(fields, 'informer failed; retrying');
    this.emit('error', err);
  }

  private emit<E extends EventName>(
    event: E,
    ...args: Parameters<InformerListeners<KubeObject<Spec, Status>>[E]>
  ): void {
    if (this.stopped) return;
    for (const listener of this.listeners[event]) {
      try {
        (listener as (...a: typeof args) => void)(...args);
      } catch (error) {
        // A listener's bug must not stop the informer; it still gets logged.
        this.log.error({ err: error, event }, 'informer listener threw');
      }
    }
  }

  /** Waits, but wakes at once on stop(). */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopped) return resolve();
      const signal = this.abort.signal;
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      function done(this: void) {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
    });
  }
}
