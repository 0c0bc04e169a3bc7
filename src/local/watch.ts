// Watch: a window of recent changes that watchers replay from any resourceVersion still in
// it, live fan-out of new changes, and the HTTP streams watchers read (their memory bounded each
// and together: a watcher that cannot keep up is cut off and must re-watch, as kube-apiserver does).
import type { ServerResponse } from 'node:http';
import type { KubeObject } from './types.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * One committed change. Watchers share it: it parses its JSON at most once and builds each
 * wire line at most once, however many watchers receive it.
 */
export class ChangeEvent {
  private parsed: KubeObject | undefined;
  private parsedPrevious: KubeObject | undefined;
  private readonly lines = new Map<string, Buffer>();

  constructor(
    readonly revision: number,
    readonly type: EventType,
    /** Storage key of the resource (`group/plural`). */
    readonly resource: string,
    readonly namespace: string,
    readonly name: string,
    /** The apiVersion `json` holds: a watcher of another version needs it reshaped. */
    readonly apiVersion: string,
    /** The object after the change (for DELETED: as it was last, at the deleting revision). */
    readonly json: string,
    /** The object before the change, to tell when it enters or leaves a watcher's selector. */
    readonly previous?: string,
  ) {}

  /** The object, parsed once and shared: read it, never change it. */
  object(): KubeObject {
    this.parsed ??= JSON.parse(this.json) as KubeObject;
    return this.parsed;
  }

  previousObject(): KubeObject | undefined {
    if (this.previous === undefined) return undefined;
    this.parsedPrevious ??= JSON.parse(this.previous) as KubeObject;
    return this.parsedPrevious;
  }

  /**
   * `{"type":…,"object":…}` and a newline: the watch wire format, for this event as `type`.
   * Encoded once as bytes, so a hundred watchers do not each re-encode the same text.
   */
  line(type: string): Buffer {
    let line = this.lines.get(type);
    if (line === undefined) {
      line = Buffer.from(`{"type":"${type}","object":${this.json}}\n`);
      this.lines.set(type, line);
    }
    return line;
  }

  /**
   * A wire line in another shape (a Table row for watchers of one type and options), built by
   * `build` the first time `key` is asked for and shared after. `key` must name everything the
   * line depends on, and must not be an event type (those are `line`'s).
   */
  encoded(key: string, build: () => string): Buffer {
    let line = this.lines.get(key);
    if (line === undefined) {
      line = Buffer.from(build());
      this.lines.set(key, line);
    }
    return line;
  }
}

export interface Watcher {
  readonly resource: string;
  readonly namespace: string | undefined;
  /** Receives each event in revision order; returns false when the watcher is gone. */
  deliver(event: ChangeEvent): boolean;
}

export class TooOldError extends Error {
  constructor(
    readonly requested: number,
    /** The oldest version a watch may start from now. */
    readonly oldest: number,
  ) {
    super(`too old resource version: ${requested} (${oldest})`);
  }
}

/** Keeps the last `capacity` changes and the live watchers. */
/** What the watch window may hold: resuming watchers past it relist (410), as on a restart. */
export const DEFAULT_WINDOW_BYTES = 256 * 1024 * 1024;

/**
 * An event's memory, roughly: its JSON, the previous version's, and the wire line shared by
 * its watchers (two bytes a character where a string is not Latin-1 is not counted).
 */
const windowCost = (event: ChangeEvent): number =>
  2 * event.json.length + (event.previous?.length ?? 0);

export class WatchHub {
  private readonly ring: (ChangeEvent | undefined)[];
  private start = 0;
  private size = 0;
  /** What the events in the window hold, by windowCost(). */
  private bytes = 0;
  /** Events after this revision are all in the window. */
  private floor: number;
  private readonly watchers = new Map<string, Set<Watcher>>();

  constructor(
    readonly capacity: number,
    startRevision: number,
    /** The window also ends where its events would hold more than this. */
    readonly maxBytes = DEFAULT_WINDOW_BYTES,
  ) {
    this.ring = new Array(capacity);
    this.floor = startRevision;
  }

  /** Events and bytes the window holds now. */
  get window(): { events: number; bytes: number } {
    return { events: this.size, bytes: this.bytes };
  }

  get watcherCount(): number {
    let n = 0;
    for (const set of this.watchers.values()) n += set.size;
    return n;
  }

  /** Publishes changes in revision order, once they are durable. */
  publish(event: ChangeEvent): void {
    const cost = windowCost(event);
    // Objects may be 1.5 MiB each: a window bounded by count alone could hold gigabytes.
    while (this.size > 0 && (this.size === this.capacity || this.bytes + cost > this.maxBytes)) {
      const dropped = this.ring[this.start] as ChangeEvent;
      this.ring[this.start] = undefined;
      this.floor = dropped.revision;
      this.bytes -= windowCost(dropped);
      this.start = (this.start + 1) % this.capacity;
      this.size--;
    }
    this.ring[(this.start + this.size) % this.capacity] = event;
    this.size++;
    this.bytes += cost;
    const set = this.watchers.get(event.resource);
    if (set === undefined) return;
    for (const watcher of set) {
      if (watcher.namespace !== undefined && watcher.namespace !== event.namespace) continue;
      if (!watcher.deliver(event)) set.delete(watcher);
    }
  }

  /**
   * Replays the changes after `fromRevision` and then follows live ones. Throws TooOldError
   * when the window no longer holds them all (the client must list again).
   */
  subscribe(watcher: Watcher, fromRevision: number): () => void {
    // The watch cache's words (watch_cache.go): the number is the oldest version a watch may
    // still start from (its oldest event's, less one), which is the floor here.
    if (fromRevision < this.floor) throw new TooOldError(fromRevision, this.floor);
    for (let i = 0; i < this.size; i++) {
      const event = this.ring[(this.start + i) % this.capacity] as ChangeEvent;
      if (event.revision <= fromRevision || event.resource !== watcher.resource) continue;
      if (watcher.namespace !== undefined && watcher.namespace !== event.namespace) continue;
      if (!watcher.deliver(event)) return () => {};
    }
    const set = this.watchers.get(watcher.resource) ?? new Set<Watcher>();
    set.add(watcher);
    this.watchers.set(watcher.resource, set);
    return () => set.delete(watcher);
  }
}

/** How much the watch streams may hold in memory for clients that have not read it yet. */
export interface WatchLimits {
  /**
   * Bytes all watchers together may hold. Past it the watchers holding the most are closed
   * until the rest fit: a slow client costs its own watch, never the server.
   */
  readonly totalBytes: number;
  /**
   * Bytes one watcher may hold when an event comes: it is closed instead of sent the event.
   * Checked before the write, so a watcher below it takes an event however large.
   */
  readonly perWatcherBytes: number;
}

export const DEFAULT_WATCH_LIMITS: WatchLimits = {
  totalBytes: 256 * 1024 * 1024,
  perWatcherBytes: 16 * 1024 * 1024,
};

/** Why a watcher was closed for being slow. */
export type SlowReason = 'watcher-limit' | 'total-limit';

/**
 * The bytes every open watch stream holds unsent (`res.writableLength`, Node's buffers and the
 * TLS socket's), kept as a running total updated at each write and drain rather than summed on
 * each event, and the closing of the slowest when it goes over `limits.totalBytes`.
 */
export class WatchBudget {
  private total = 0;
  private readonly open = new Set<WatchStream>();

  constructor(
    readonly limits: WatchLimits,
    private readonly closedSlow: (stream: WatchStream, held: number, reason: SlowReason) => void,
  ) {}

  /** The bytes held now, read afresh from every stream. */
  get bufferedBytes(): number {
    this.recount();
    return this.total;
  }

  get streams(): ReadonlySet<WatchStream> {
    return this.open;
  }

  add(stream: WatchStream): void {
    this.open.add(stream);
  }

  remove(stream: WatchStream): void {
    if (!this.open.delete(stream)) return;
    this.total -= stream.counted;
    stream.counted = 0;
  }

  /** Counts what `stream` holds now (after a write, or when its socket drained). */
  update(stream: WatchStream): void {
    if (!this.open.has(stream)) return;
    const held = stream.buffered;
    this.total += held - stream.counted;
    stream.counted = held;
  }

  /** After a write to `stream`: counts it, and sheds the slowest when over the total. */
  wrote(stream: WatchStream): boolean {
    this.update(stream);
    if (this.total > this.limits.totalBytes) this.shed();
    return stream.isOpen;
  }

  /** Closes `stream` for being too slow, and says so. */
  cut(stream: WatchStream, reason: SlowReason): void {
    const held = stream.buffered;
    stream.terminate();
    this.closedSlow(stream, held, reason);
  }

  private recount(): void {
    this.total = 0;
    for (const stream of this.open) {
      stream.counted = stream.buffered;
      this.total += stream.counted;
    }
  }

  /**
   * Closes the watchers holding the most until the rest fit. Those are the ones furthest
   * behind; a client that reads holds at most what the current tick wrote to it.
   */
  private shed(): void {
    // Counts taken at each stream's last write are stale for those that drained since.
    this.recount();
    if (this.total <= this.limits.totalBytes) return;
    const biggestFirst = [...this.open].sort((a, b) => b.counted - a.counted);
    for (const stream of biggestFirst) {
      if (this.total <= this.limits.totalBytes) break;
      this.cut(stream, 'total-limit');
    }
  }
}

/** One watch connection: newline-delimited JSON events, flushed at once. */
export class WatchStream {
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly onClose: Array<() => void> = [];
  /** What the budget last counted for this stream. */
  counted = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly budget: WatchBudget,
    /** The watched resource as kube-apiserver's metrics name it (`configmaps`, `scopes.platform.nrn.dev`). */
    readonly resource: string,
  ) {
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
    });
    // Without this, kubectl wait and client-node informers wait for a first byte forever.
    res.flushHeaders();
    budget.add(this);
    res.on('drain', () => budget.update(this));
    res.on('close', () => this.close());
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Bytes written and not yet taken by the client's connection. */
  get buffered(): number {
    return this.res.writableLength;
  }

  /** Writes one event; false when the stream is closed or cut off for being too slow. */
  send(type: string, object: unknown): boolean {
    return this.sendLine(`{"type":${JSON.stringify(type)},"object":${JSON.stringify(object)}}\n`);
  }

  /** Writes one prepared wire line (see ChangeEvent.line). */
  sendLine(line: string | Buffer): boolean {
    if (this.closed) return false;
    // Judged on what is already waiting, not on this line: a watcher that keeps up takes one
    // event of any size, so an object larger than the limit does not end every watch of its kind.
    if (this.res.writableLength > this.budget.limits.perWatcherBytes) {
      this.budget.cut(this, 'watcher-limit');
      return false;
    }
    this.res.write(line);
    return this.budget.wrote(this);
  }

  after(ms: number, action: () => void): void {
    const timer = setTimeout(action, ms);
    timer.unref();
    this.timers.push(timer);
  }

  every(ms: number, action: () => void): void {
    const timer = setInterval(action, ms);
    timer.unref();
    this.timers.push(timer);
  }

  whenClosed(action: () => void): void {
    if (this.closed) action();
    else this.onClose.push(action);
  }

  /**
   * Ends a watcher that fell too far behind. Its socket is destroyed, not ended: an end would
   * queue behind what it has not read, and the point is to free that.
   */
  terminate(): void {
    this.res.destroy();
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.budget.remove(this);
    for (const t of this.timers) clearTimeout(t);
    for (const action of this.onClose) action();
    if (!this.res.writableEnded) this.res.end();
  }
}
