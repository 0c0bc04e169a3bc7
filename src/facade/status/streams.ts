// The open GET /watch streams: how many there may be (per facade and per caller), and each one
// as a server-sent events connection — the changes of the StatusStore that match its filters and
// that its caller may see, resumed from the store's ring after a Last-Event-ID, a keepalive
// comment every 15 s, and cut off when its reader falls behind by more than its byte budget
// (Node buffers what the socket does not take; that buffer is what is bounded, never grown).
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { StatusFilters, StatusKind } from '../../api/index.js';
import type { Authenticator, Caller } from '../auth.js';
import { FacadeError } from '../errors.js';
import type { Change, StatusStore } from './store.js';
import { type Entry, type Matcher, matcher } from './summary.js';
import { decide, OPERATION_OF } from './visibility.js';

export interface StreamLimits {
  /** Open streams per facade process. */
  readonly maxStreams: number;
  /** Open streams per caller (by username): a few tabs each, not a runaway loop. */
  readonly maxStreamsPerCaller: number;
  /** Bytes written but not yet taken by the socket; past it the reader is cut off. */
  readonly pendingBytes: number;
  readonly keepaliveMs: number;
  /**
   * A stream ends after this long and the client reconnects (resuming with Last-Event-ID), so a
   * revoked token or role stops a stream within this time, not never.
   */
  readonly maxLifetimeMs: number;
  /** How long a per-namespace decision is trusted on one stream. */
  readonly decisionTtlMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxStreams: 1000,
  maxStreamsPerCaller: 20,
  pendingBytes: 1024 * 1024,
  keepaliveMs: 15_000,
  maxLifetimeMs: 30 * 60_000,
  decisionTtlMs: 30_000,
};

/** What the browser waits before reconnecting (`retry:`). */
export const RETRY_MS = 2000;
/** Largest event written; summaries are clipped far below it, so this only guards. */
export const MAX_EVENT_BYTES = 16 * 1024;
/** Changes waiting for an authorization decision on one stream; past it the stream ends. */
const MAX_QUEUED = 10_000;
/** Per-namespace decisions one stream remembers. */
const MAX_DECISIONS = 1024;
const MAX_LAST_EVENT_ID = 64;

export type Resume =
  | { readonly kind: 'fresh' }
  | { readonly kind: 'resume'; readonly id: string; readonly changes: Change[] }
  | { readonly kind: 'reset'; readonly reason: 'foreign' | 'expired' | 'malformed' };

/** Where a stream starts, from its Last-Event-ID header. */
export function resumeFrom(store: StatusStore, lastEventId: string | undefined): Resume {
  if (lastEventId === undefined || lastEventId === '') return { kind: 'fresh' };
  const match =
    lastEventId.length <= MAX_LAST_EVENT_ID
      ? /^([0-9a-z]{1,32})\.([0-9]{1,15})$/.exec(lastEventId)
      : null;
  if (match === null) return { kind: 'reset', reason: 'malformed' };
  if (match[1] !== store.epoch) return { kind: 'reset', reason: 'foreign' };
  const changes = store.changesSince(Number(match[2]));
  if (changes === undefined) return { kind: 'reset', reason: 'expired' };
  return { kind: 'resume', id: lastEventId, changes };
}

/** The cluster-wide decisions a stream starts with: true means every namespace. */
export type Everywhere = Readonly<Record<StatusKind, boolean>>;

export class StreamHub {
  private readonly streams = new Set<Stream>();
  private readonly perCaller = new Map<string, number>();
  /** Slots taken: admitted streams, open or still being set up. */
  private reserved = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly limits: StreamLimits;

  constructor(
    private readonly store: StatusStore,
    private readonly auth: Authenticator,
    private readonly log: Logger,
    limits: Partial<StreamLimits> = {},
  ) {
    this.limits = { ...DEFAULT_STREAM_LIMITS, ...limits };
  }

  get open(): number {
    return this.streams.size;
  }

  /** Takes a slot for the caller, or refuses with TOO_MANY_STREAMS; returns what frees it. */
  admit(caller: Caller): () => void {
    const who = caller.username;
    const mine = this.perCaller.get(who) ?? 0;
    if (this.reserved >= this.limits.maxStreams) {
      throw new FacadeError(
        'TOO_MANY_STREAMS',
        `the facade has ${this.limits.maxStreams} status streams open; try again later`,
      );
    }
    if (mine >= this.limits.maxStreamsPerCaller) {
      throw new FacadeError(
        'TOO_MANY_STREAMS',
        `${who} has ${this.limits.maxStreamsPerCaller} status streams open; close one first`,
      );
    }
    this.perCaller.set(who, mine + 1);
    this.reserved++;
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.reserved--;
      const left = (this.perCaller.get(who) ?? 1) - 1;
      if (left <= 0) this.perCaller.delete(who);
      else this.perCaller.set(who, left);
    };
  }

  /** Serves an admitted stream on `res` (hijacked from Fastify) until either side ends it. */
  serve(options: {
    readonly res: ServerResponse;
    readonly caller: Caller;
    readonly filters: StatusFilters;
    readonly everywhere: Everywhere;
    readonly resume: Resume;
    readonly release: () => void;
  }): void {
    const { res, resume } = options;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      // Proxies that buffer responses (nginx) would hold the events back.
      'x-accel-buffering': 'no',
    });
    res.socket?.setNoDelay(true);
    const stream = new Stream(
      res,
      options.caller,
      matcher(options.filters),
      options.everywhere,
      this.auth,
      this.limits,
      this.log,
    );
    this.streams.add(stream);
    this.tick();
    let unsubscribe = () => {};
    res.once('close', () => {
      stream.closed = true;
      unsubscribe();
      this.streams.delete(stream);
      options.release();
      this.tick();
    });
    stream.write(`retry: ${RETRY_MS}\n\n`);
    const at = `${this.store.epoch}.${this.store.lastSeq}`;
    if (resume.kind === 'reset') {
      stream.write(`event: reset\ndata: ${JSON.stringify({ reason: resume.reason })}\n\n`);
    }
    if (resume.kind === 'resume') {
      stream.write(`id: ${resume.id}\nevent: ready\ndata: {"resumed":true}\n\n`);
      for (const change of resume.changes) stream.offer(change, this.store.epoch);
    } else {
      stream.write(`id: ${at}\nevent: ready\ndata: {}\n\n`);
    }
    // In the same tick as the replay: no change falls between the two.
    if (!stream.closed)
      unsubscribe = this.store.subscribe((c) => stream.offer(c, this.store.epoch));
  }

  /** Ends every stream (the facade is closing: an open stream would hold its server open). */
  closeAll(): void {
    for (const stream of this.streams) stream.end();
  }

  /** One timer for all streams: keepalives and lifetimes. */
  private tick(): void {
    if (this.streams.size === 0) {
      if (this.timer !== undefined) clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      const now = Date.now();
      for (const stream of this.streams) {
        if (now - stream.opened >= this.limits.maxLifetimeMs) stream.end();
        else stream.write(': keepalive\n\n');
      }
    }, this.limits.keepaliveMs);
    this.timer.unref();
  }
}

interface Queued {
  readonly change: Change;
  readonly text: string;
}

/** One open stream. */
class Stream {
  closed = false;
  readonly opened = Date.now();
  private readonly queue: Queued[] = [];
  private head = 0;
  private draining = false;
  private readonly decisions = new Map<string, { allowed: boolean; until: number }>();

  constructor(
    private readonly res: ServerResponse,
    private readonly caller: Caller,
    private readonly match: Matcher,
    private readonly everywhere: Everywhere,
    private readonly auth: Authenticator,
    private readonly limits: StreamLimits,
    private readonly log: Logger,
  ) {}

  /** Queues a change if it concerns this stream: written at once when its visibility is known. */
  offer(change: Change, epoch: string): void {
    if (this.closed) return;
    const now = change.entry !== undefined && this.match(change.entry);
    const before = change.old !== undefined && this.match(change.old);
    if (!now && !before) return;
    // An object that stops matching the filters leaves the client's set: a delete to it.
    const text = now
      ? event(epoch, change.seq, 'upsert', (change.entry as Entry).json)
      : event(
          epoch,
          change.seq,
          'delete',
          JSON.stringify({ kind: change.kind, namespace: change.namespace, name: change.name }),
        );
    if (text.length > MAX_EVENT_BYTES) {
      this.log.warn(
        { key: `${change.kind}/${change.namespace}/${change.name}` },
        'event too large; not streamed',
      );
      return;
    }
    if (this.head === this.queue.length && !this.draining) {
      const known = this.known(change.kind, change.namespace);
      if (known !== undefined) {
        if (known) this.write(text);
        return;
      }
    }
    if (this.queue.length - this.head >= MAX_QUEUED) {
      this.log.warn(
        { caller: this.caller.username },
        'status stream fell behind its decisions; closed',
      );
      this.destroy();
      return;
    }
    this.queue.push({ change, text });
    void this.drain();
  }

  write(text: string): void {
    if (this.closed) return;
    this.res.write(text);
    if (this.res.writableLength > this.limits.pendingBytes) {
      this.log.info(
        { caller: this.caller.username, pending: this.res.writableLength },
        'status stream reader too slow; disconnected',
      );
      this.destroy();
    }
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.res.end();
  }

  private destroy(): void {
    this.closed = true;
    this.res.destroy();
  }

  /** The cached decision for a kind in a namespace, undefined when it must be asked. */
  private known(kind: StatusKind, namespace: string): boolean | undefined {
    if (this.everywhere[kind]) return true;
    const key = `${kind}/${namespace}`;
    const hit = this.decisions.get(key);
    if (hit === undefined) return undefined;
    if (hit.until > Date.now()) return hit.allowed;
    this.decisions.delete(key);
    return undefined;
  }

  /** Writes the queued changes in order, asking each namespace's decision when not known. */
  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (!this.closed && this.head < this.queue.length) {
        const { change, text } = this.queue[this.head] as Queued;
        let allowed = this.known(change.kind, change.namespace);
        if (allowed === undefined) {
          allowed = await decide(
            this.auth,
            this.caller,
            OPERATION_OF[change.kind],
            change.namespace,
          );
          this.remember(change.kind, change.namespace, allowed);
        }
        this.head++;
        if (allowed) this.write(text);
      }
    } catch (error) {
      this.log.warn(
        { err: error, caller: this.caller.username },
        'status stream authorization failed; closed',
      );
      this.destroy();
    } finally {
      this.queue.splice(0, this.head);
      this.head = 0;
      this.draining = false;
    }
  }

  private remember(kind: StatusKind, namespace: string, allowed: boolean): void {
    if (this.decisions.size >= MAX_DECISIONS) {
      const oldest = this.decisions.keys().next();
      if (!oldest.done) this.decisions.delete(oldest.value);
    }
    this.decisions.set(`${kind}/${namespace}`, {
      allowed,
      until: Date.now() + this.limits.decisionTtlMs,
    });
  }
}

function event(epoch: string, seq: number, type: string, data: string): string {
  return `id: ${epoch}.${seq}\nevent: ${type}\ndata: ${data}\n\n`;
}
