// Watch: a window of recent changes that watchers replay from any resourceVersion still in
// it, live fan-out of new changes, and the HTTP stream each watcher reads (bounded: a watcher
// that cannot keep up is cut off and must re-watch, as the real API server does).
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
    readonly oldest: number,
  ) {
    super(`too old resource version: ${requested} (${oldest})`);
  }
}

/** Keeps the last `capacity` changes and the live watchers. */
export class WatchHub {
  private readonly ring: (ChangeEvent | undefined)[];
  private start = 0;
  private size = 0;
  /** Events after this revision are all in the window. */
  private floor: number;
  private readonly watchers = new Map<string, Set<Watcher>>();

  constructor(
    readonly capacity: number,
    startRevision: number,
  ) {
    this.ring = new Array(capacity);
    this.floor = startRevision;
  }

  get watcherCount(): number {
    let n = 0;
    for (const set of this.watchers.values()) n += set.size;
    return n;
  }

  /** Publishes changes in revision order, once they are durable. */
  publish(event: ChangeEvent): void {
    if (this.size === this.capacity) {
      const dropped = this.ring[this.start] as ChangeEvent;
      this.floor = dropped.revision;
      this.start = (this.start + 1) % this.capacity;
      this.size--;
    }
    this.ring[(this.start + this.size) % this.capacity] = event;
    this.size++;
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
    if (fromRevision < this.floor) throw new TooOldError(fromRevision, this.floor + 1);
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

/** Bytes a watcher may have buffered before it is cut off. */
export const MAX_WATCH_BUFFER = 16 * 1024 * 1024;

/** One watch connection: newline-delimited JSON events, flushed at once. */
export class WatchStream {
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly onClose: Array<() => void> = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly maxBuffer = MAX_WATCH_BUFFER,
  ) {
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
    });
    // Without this, kubectl wait and client-node informers wait for a first byte forever.
    res.flushHeaders();
    res.on('close', () => this.close());
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Writes one event; false when the stream is closed or cut off for being too slow. */
  send(type: string, object: unknown): boolean {
    return this.sendLine(`{"type":${JSON.stringify(type)},"object":${JSON.stringify(object)}}\n`);
  }

  /** Writes one prepared wire line (see ChangeEvent.line). */
  sendLine(line: string | Buffer): boolean {
    if (this.closed) return false;
    this.res.write(line);
    if (this.res.writableLength > this.maxBuffer) {
      // A slow reader must not grow our memory without bound: drop it; it will re-watch.
      this.res.destroy();
      this.close();
      return false;
    }
    return true;
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

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    for (const action of this.onClose) action();
    if (!this.res.writableEnded) this.res.end();
  }
}
