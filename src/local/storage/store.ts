// The storage engine: objects in memory, made durable by a group-committed log and snapshots.

// Data directory:
//   LOCK.sock            the lock: a socket the owning process listens on (see lock.ts)
//   LOCK                 pid of the owning process
//   wal-<seq>.log        log segments, replayed in seq order; only the newest is appended to
//   snapshot             the whole state at some revision R and the first segment still needed
//   snapshot.tmp         a snapshot being written (deleted at open)
// State = snapshot + every log record with revision > R. Records are numbered 1, 2, 3, ... with
// no gaps, one per commit; replay checks that, so a missing or reordered record fails loudly.
//
// Durability: `commit` applies a batch in memory at once and queues its record; one writer writes
// everything queued since its last write in one write + fdatasync (group commit) and then
// resolves those commits' `durable` promises. A crash can only tear the newest segment's tail
// (the unacknowledged last write): open cuts it off. Corruption anywhere else throws.
//
// Compaction: past `compactAfterBytes` of log, and more log than twice the live data, the writer
// switches to a new segment between two writes and captures the state (immutable entries, so a
// reference copy is consistent). The snapshot is written beside live commits, renamed in place
// once everything it holds is durable in the log, and the older segments are then deleted.
//
// Every file here is 0600 and the directory 0700, whatever the umask (ADR 0002): the log holds
// Secrets. Files are created so, and those found at open are narrowed.

import { type FileHandle, open, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fchmodPrivate, mkdirPrivate, openPrivate } from '../private.js';
import {
  decodeRecord,
  encodeCommit,
  encodeSnapshotChunk,
  encodeSnapshotEnd,
  encodeSnapshotHead,
  MAGIC_BYTES,
  type Mutation,
  readExactly,
  SNAPSHOT_MAGIC,
  scanFrames,
  WAL_MAGIC,
  writeFully,
} from './format.js';
import { type Entry, Keyspace, type ListCursor } from './keyspace.js';
import { type DirLock, lockDir } from './lock.js';

export type { Entry, ListCursor, Mutation };

export interface StoreOptions {
  /**
   * fdatasync each group of commits before acknowledging it, and fsync snapshots and the
   * directory (default true). `false` still writes everything, for tests that do not care.
   */
  fsync?: boolean;
  /** Compact once the log exceeds this many bytes and twice the live data (default 64 MiB). */
  compactAfterBytes?: number;
  /** Told when a background compaction fails; the log still holds everything, so nothing is lost. */
  onCompactionError?: (error: unknown) => void;
}

/** The outcome of `commit`. */
export interface Commit {
  /** The revision the batch was committed under (unchanged for an empty batch). */
  readonly revision: number;
  /** Resolves once the batch is on disk; rejects if writing it failed. */
  readonly durable: Promise<void>;
}

export interface ListOptions {
  /** Only keys after this one in (namespace, name) order: the continuation of a paged list. */
  after?: ListCursor;
  limit?: number;
}

export interface StoreStats {
  /** Non-empty commits since open. */
  commits: number;
  /** Log writes since open (one per group of commits). */
  writes: number;
  /** fdatasync calls on the log since open. */
  syncs: number;
  bytesWritten: number;
  compactions: number;
  compactionFailures: number;
  /** Bytes of log on disk that a restart would read (all segments not yet dropped). */
  logBytes: number;
  /** Approximate bytes of live keys and JSON. */
  liveBytes: number;
  /** Bytes cut from the log's tail at open: a write torn by a crash. */
  recoveredTornBytes: number;
}

const SNAPSHOT_FILE = 'snapshot';
const SNAPSHOT_TMP = 'snapshot.tmp';
const SEGMENT_RE = /^wal-(\d+)\.log$/;
const segmentFile = (seq: number) => `wal-${String(seq).padStart(10, '0')}.log`;
const DEFAULT_COMPACT_AFTER = 64 * 1024 * 1024;
/** Snapshot chunk size: large enough to amortize framing, small enough to bound memory. */
const SNAPSHOT_CHUNK_BYTES = 1024 * 1024;

interface Segment {
  readonly seq: number;
  readonly fh: FileHandle;
  size: number;
}

/** Commits queued for the same write + fdatasync. */
interface Group {
  readonly frames: Buffer[];
  bytes: number;
  last: number;
  readonly done: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** The state to snapshot, taken when the writer switched segments. */
interface Cut {
  readonly revision: number;
  /** The new segment: every record after the snapshot is in it or a later one. */
  readonly segment: number;
  readonly entries: Array<{ resource: string; entries: Entry[] }>;
  /** Resolves once every commit up to `revision` is durable. */
  readonly durable: Promise<void>;
}

interface Rotation {
  readonly resolve: (cut: Cut) => void;
  readonly reject: (error: unknown) => void;
}

const ignore = () => {};

function newGroup(): Group {
  let resolve = ignore;
  let reject: (error: unknown) => void = ignore;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Marked handled: a caller that never awaits `durable` must not crash the process; those
  // that do still see the rejection, and the store stays failed.
  done.catch(ignore);
  return { frames: [], bytes: 0, last: 0, done, resolve, reject };
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

function checkMutation(m: Mutation): void {
  if (typeof m.resource !== 'string' || m.resource === '') {
    throw new TypeError('mutation needs a resource');
  }
  if (typeof m.namespace !== 'string') throw new TypeError('mutation needs a namespace string');
  if (typeof m.name !== 'string' || m.name === '') throw new TypeError('mutation needs a name');
  if (m.json !== null && typeof m.json !== 'string') {
    throw new TypeError('mutation json must be a string or null');
  }
}

/**
 * A durable key-value store of serialized Kubernetes objects, keyed by (resource, namespace,
 * name), with one global revision counter (the resourceVersion) that never goes back or repeats
 * an acknowledged value, across restarts and compactions.
 *
 * Reads see every commit at once, before it is durable: the API server must not answer a write
 * (or emit its watch event) before `durable` resolves, and for reads that must never show an
 * unacknowledged write, wait for `flush()` when an entry's revision is above `durableRevision`.
 */
export class Store {
  private rev: number;
  private durableRev: number;
  private pending: Group | undefined;
  private inflight: Group | undefined;
  private rotation: Rotation | undefined;
  private draining = false;
  private drainer: Promise<void> = Promise.resolve();
  private failure: Error | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  private inCommit = false;
  private compaction: Promise<void> | undefined;
  /** Segments switched away from, still on disk until a snapshot covers them. */
  private retired: Array<{ seq: number; size: number }> = [];
  /** After a failed compaction, wait for this much log before trying again. */
  private compactFloor = 0;
  private readonly fsync: boolean;
  private readonly compactAfterBytes: number;
  private readonly onCompactionError: ((error: unknown) => void) | undefined;
  private readonly counters = {
    commits: 0,
    writes: 0,
    syncs: 0,
    bytesWritten: 0,
    compactions: 0,
    compactionFailures: 0,
  };

  private constructor(
    private readonly dir: string,
    private readonly lock: DirLock,
    private readonly keyspace: Keyspace,
    private segment: Segment,
    revision: number,
    private readonly recoveredTornBytes: number,
    options: StoreOptions,
  ) {
    this.rev = revision;
    this.durableRev = revision;
    this.fsync = options.fsync ?? true;
    this.compactAfterBytes = options.compactAfterBytes ?? DEFAULT_COMPACT_AFTER;
    this.onCompactionError = options.onCompactionError;
  }

  /**
   * Opens (creating if missing) the store in `dir`: takes the directory's lock, loads the
   * snapshot, replays the log after it, and cuts off a torn tail. Throws on corruption anywhere
   * but the tail of the newest log segment, and when another process holds the directory.
   */
  static async open(dir: string, options: StoreOptions = {}): Promise<Store> {
    const root = resolve(dir);
    const fsync = options.fsync ?? true;
    const created = await mkdirPrivate(root);
    if (created !== undefined && fsync) await syncDir(dirname(created));
    const lock = await lockDir(root);
    try {
      return await Store.recover(root, lock, options, fsync);
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  private static async recover(
    dir: string,
    lock: DirLock,
    options: StoreOptions,
    fsync: boolean,
  ): Promise<Store> {
    await rm(join(dir, SNAPSHOT_TMP), { force: true });
    const keyspace = new Keyspace();
    const snapshot = await loadSnapshot(join(dir, SNAPSHOT_FILE), keyspace);
    const base = snapshot?.revision ?? 0;
    const firstSeq = snapshot?.segment ?? 1;

    const seqs: number[] = [];
    for (const file of await readdir(dir)) {
      const match = SEGMENT_RE.exec(file);
      if (match?.[1] !== undefined) seqs.push(Number(match[1]));
    }
    seqs.sort((a, b) => a - b);
    // Older segments are covered by the snapshot: a compaction stopped before deleting them.
    for (const seq of seqs.filter((s) => s < firstSeq)) {
      await rm(join(dir, segmentFile(seq)), { force: true });
    }
    const live = seqs.filter((s) => s >= firstSeq);

    let last = 0; // revision of the last record read
    let torn = 0;
    let segment: Segment | undefined;
    const retired: Array<{ seq: number; size: number }> = [];
    for (const [i, seq] of live.entries()) {
      const newest = i === live.length - 1;
      const path = join(dir, segmentFile(seq));
      const fh = await open(path, newest ? 'r+' : 'r');
      let keep = false;
      try {
        await fchmodPrivate(fh);
        const size = (await fh.stat()).size;
        if (size < MAGIC_BYTES && newest) {
          // Created just before a crash: nothing in it was ever acknowledged.
          torn += size;
          await fh.truncate(0);
          await writeFully(fh, WAL_MAGIC, 0);
          if (fsync) await fh.datasync();
          segment = { seq, fh, size: MAGIC_BYTES };
          keep = true;
          continue;
        }
        const magic = Buffer.alloc(MAGIC_BYTES);
        if (size >= MAGIC_BYTES) await readExactly(fh, magic, 0, MAGIC_BYTES, 0);
        if (!magic.equals(WAL_MAGIC)) throw new Error(`${path} is not a log segment`);
        const result = await scanFrames(fh, MAGIC_BYTES, size, (payload) => {
          const record = decodeRecord(payload);
          if (record.type !== 'commit') throw new Error(`${path} holds a ${record.type} record`);
          const { revision } = record;
          if (revision <= last) {
            throw new Error(`${path}: revision ${revision} follows ${last} (log out of order)`);
          }
          const expected = Math.max(last, base) + 1;
          if (revision > base && revision !== expected) {
            throw new Error(`${path}: revision ${expected} is missing from the log`);
          }
          last = revision;
          if (revision > base) applyMutations(keyspace, revision, record.mutations);
        });
        if (result.problem !== undefined) {
          if (!newest) {
            throw new Error(
              `corrupt log segment ${path} at offset ${result.end}: ${result.problem}`,
            );
          }
          torn += size - result.end;
          await fh.truncate(result.end);
          if (fsync) await fh.datasync();
        }
        if (newest) {
          segment = { seq, fh, size: result.end };
          keep = true;
        } else {
          retired.push({ seq, size });
        }
      } finally {
        if (!keep) await fh.close();
      }
    }
    segment ??= await createSegment(dir, firstSeq, fsync);
    const store = new Store(dir, lock, keyspace, segment, Math.max(base, last), torn, options);
    store.retired = retired;
    return store;
  }

  /** The last revision assigned (durable or not). */
  get revision(): number {
    return this.rev;
  }

  /** The last revision known to be on disk. */
  get durableRevision(): number {
    return this.durableRev;
  }

  get stats(): Readonly<StoreStats> {
    return {
      ...this.counters,
      logBytes: this.logBytes(),
      liveBytes: this.keyspace.liveBytes,
      recoveredTornBytes: this.recoveredTornBytes,
    };
  }

  get(resource: string, namespace: string, name: string): Entry | undefined {
    return this.keyspace.get(resource, namespace, name);
  }

  /**
   * Entries of `resource` in (namespace, name) order: of one namespace, or of all when
   * `namespace` is undefined. Sorted keys are cached, so listing again costs O(result).
   */
  list(resource: string, namespace?: string, options: ListOptions = {}): Entry[] {
    return this.keyspace.list(
      resource,
      namespace,
      options.after,
      options.limit ?? Number.POSITIVE_INFINITY,
    );
  }

  /** How many objects: in all, of `resource`, or of `resource` in `namespace`. */
  count(resource?: string, namespace?: string): number {
    return this.keyspace.count(resource, namespace);
  }

  /**
   * Applies a batch in memory at once, under one new revision, and queues it for the next
   * group write. Pass a function to learn the revision before serializing: it is called
   * synchronously with the revision the batch will get (so the caller can set
   * metadata.resourceVersion) and may throw to abort, leaving nothing changed and no revision
   * used. An empty batch changes nothing, uses no revision, and returns the current one.
   * Throws when the store is closed or a write has failed.
   */
  commit(mutations: readonly Mutation[] | ((revision: number) => readonly Mutation[])): Commit {
    if (this.failure) {
      throw new Error('store failed; reopen it to recover', { cause: this.failure });
    }
    if (this.closed) throw new Error('store is closed');
    if (this.inCommit) throw new Error('Store.commit called from inside a commit');
    const revision = this.rev + 1;
    let batch: readonly Mutation[];
    if (typeof mutations === 'function') {
      this.inCommit = true;
      try {
        batch = mutations(revision);
      } finally {
        this.inCommit = false;
      }
    } else {
      batch = mutations;
    }
    if (batch.length === 0) return { revision: this.rev, durable: this.flush() };
    for (const m of batch) checkMutation(m);
    // Encoded before anything changes, so a record too large to write leaves no trace.
    const frame = encodeCommit(revision, batch);
    this.rev = revision;
    applyMutations(this.keyspace, revision, batch);
    this.pending ??= newGroup();
    const group = this.pending;
    group.frames.push(frame);
    group.bytes += frame.length;
    group.last = revision;
    this.counters.commits++;
    this.scheduleDrain();
    return { revision, durable: group.done };
  }

  /** Resolves when everything committed so far is durable (rejects if a write failed). */
  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return this.pending?.done ?? this.inflight?.done ?? Promise.resolve();
  }

  /**
   * Writes a snapshot now and drops the log it covers (compaction also runs by itself past
   * `compactAfterBytes`). Resolves when done; joins a compaction already running.
   */
  compact(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    if (!this.compaction) {
      this.compaction = this.runCompaction().finally(() => {
        this.compaction = undefined;
      });
    }
    return this.compaction;
  }

  /**
   * Waits for a running compaction, makes every commit durable, closes the files and releases
   * the directory. Later commits throw; reads still answer from memory. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    await this.compaction?.catch(ignore);
    while (this.draining) await this.drainer;
    try {
      await this.segment.fh.close();
    } finally {
      await this.lock.release();
    }
  }

  private logBytes(): number {
    let bytes = this.segment.size;
    for (const r of this.retired) bytes += r.size;
    return bytes;
  }

  private scheduleDrain(): void {
    if (this.draining) return;
    this.draining = true;
    // A microtask later, so that commits made in the same tick share the first write.
    this.drainer = Promise.resolve().then(() => this.drain());
  }

  /** The single writer: rotations and groups of commits, one at a time, until none is left. */
  private async drain(): Promise<void> {
    for (;;) {
      if (this.failure) {
        this.failAll(this.failure);
        this.draining = false;
        return;
      }
      const rotation = this.rotation;
      if (rotation) {
        this.rotation = undefined;
        try {
          rotation.resolve(await this.rotate());
        } catch (error) {
          rotation.reject(error);
        }
        continue;
      }
      const group = this.pending;
      if (!group) {
        // Cleared in the same synchronous step as the check, so no commit can slip between.
        this.draining = false;
        return;
      }
      this.pending = undefined;
      this.inflight = group;
      try {
        const data =
          group.frames.length === 1
            ? (group.frames[0] as Buffer)
            : Buffer.concat(group.frames, group.bytes);
        await writeFully(this.segment.fh, data, this.segment.size);
        this.segment.size += data.length;
        this.counters.writes++;
        this.counters.bytesWritten += data.length;
        if (this.fsync) {
          await this.segment.fh.datasync();
          this.counters.syncs++;
        }
        this.durableRev = group.last;
        group.resolve();
        this.maybeCompact();
      } catch (error) {
        // A failed or partial write leaves the log's tail unknown: stop, and let a reopen cut it.
        this.failure = error instanceof Error ? error : new Error(String(error));
        group.reject(this.failure);
      } finally {
        this.inflight = undefined;
      }
    }
  }

  private failAll(error: Error): void {
    this.pending?.reject(error);
    this.pending = undefined;
    this.rotation?.reject(error);
    this.rotation = undefined;
  }

  private maybeCompact(): void {
    if (this.compaction || this.closed) return;
    const log = this.logBytes();
    if (
      log > this.compactAfterBytes &&
      log > this.compactFloor &&
      log > 2 * this.keyspace.liveBytes
    ) {
      this.compact().catch((error: unknown) => this.onCompactionError?.(error));
    }
  }

  /** Starts a new segment (run by the writer, between two writes) and captures the state. */
  private async rotate(): Promise<Cut> {
    const old = this.segment;
    const seq = old.seq + 1;
    let next: Segment;
    try {
      next = await createSegment(this.dir, seq, this.fsync);
    } catch (error) {
      await rm(join(this.dir, segmentFile(seq)), { force: true }).catch(ignore);
      throw error;
    }
    this.segment = next;
    this.retired.push({ seq: old.seq, size: old.size });
    // Synchronous with the switch: the old segments hold no record above this revision.
    const cut: Cut = {
      revision: this.rev,
      segment: seq,
      entries: this.keyspace.capture(),
      durable: this.flush(),
    };
    // Everything in it was synced before the switch; a failing close loses nothing.
    await old.fh.close().catch(ignore);
    return cut;
  }

  private async runCompaction(): Promise<void> {
    try {
      const cut = await new Promise<Cut>((resolve, reject) => {
        if (this.failure) {
          reject(this.failure);
          return;
        }
        this.rotation = { resolve, reject };
        this.scheduleDrain();
      });
      const tmp = join(this.dir, SNAPSHOT_TMP);
      try {
        await writeSnapshot(tmp, cut, this.fsync);
        // Never publish a snapshot holding a commit that the log could still lose.
        await cut.durable;
        await rename(tmp, join(this.dir, SNAPSHOT_FILE));
        if (this.fsync) await syncDir(this.dir);
      } catch (error) {
        await rm(tmp, { force: true }).catch(ignore);
        throw error;
      }
      const covered = this.retired.filter((r) => r.seq < cut.segment);
      for (const r of covered) await rm(join(this.dir, segmentFile(r.seq)), { force: true });
      this.retired = this.retired.filter((r) => r.seq >= cut.segment);
      this.counters.compactions++;
      this.compactFloor = 0;
    } catch (error) {
      this.counters.compactionFailures++;
      this.compactFloor = this.logBytes() + this.compactAfterBytes;
      throw error;
    }
  }
}

function applyMutations(
  keyspace: Keyspace,
  revision: number,
  mutations: readonly Mutation[],
): void {
  for (const m of mutations) {
    if (m.json === null) keyspace.delete(m.resource, m.namespace, m.name);
    else keyspace.put(m.resource, m.namespace, m.name, m.json, revision);
  }
}

async function createSegment(dir: string, seq: number, fsync: boolean): Promise<Segment> {
  const fh = await openPrivate(join(dir, segmentFile(seq)), 'w');
  try {
    await writeFully(fh, WAL_MAGIC, 0);
    if (fsync) {
      await fh.datasync();
      await syncDir(dir);
    }
  } catch (error) {
    await fh.close();
    throw error;
  }
  return { seq, fh, size: MAGIC_BYTES };
}

async function writeSnapshot(path: string, cut: Cut, fsync: boolean): Promise<void> {
  const fh = await openPrivate(path, 'w');
  try {
    let position = 0;
    let parts: Buffer[] = [];
    let partBytes = 0;
    const add = async (part: Buffer) => {
      parts.push(part);
      partBytes += part.length;
      if (partBytes < SNAPSHOT_CHUNK_BYTES) return;
      const data = Buffer.concat(parts, partBytes);
      parts = [];
      partBytes = 0;
      await writeFully(fh, data, position);
      position += data.length;
    };
    let total = 0;
    for (const group of cut.entries) total += group.entries.length;
    await add(SNAPSHOT_MAGIC);
    await add(encodeSnapshotHead(cut.revision, cut.segment, total));
    for (const { resource, entries } of cut.entries) {
      let from = 0;
      let bytes = 0;
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i] as Entry;
        bytes += e.json.length + e.name.length + e.namespace.length + 16;
        if (bytes >= SNAPSHOT_CHUNK_BYTES || i === entries.length - 1) {
          await add(encodeSnapshotChunk(resource, entries.slice(from, i + 1)));
          from = i + 1;
          bytes = 0;
        }
      }
    }
    await add(encodeSnapshotEnd(total));
    if (partBytes > 0) await writeFully(fh, Buffer.concat(parts, partBytes), position);
    if (fsync) await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Loads the snapshot into `keyspace`; any damage throws, since it was complete when renamed. */
async function loadSnapshot(
  path: string,
  keyspace: Keyspace,
): Promise<{ revision: number; segment: number } | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  try {
    await fchmodPrivate(fh);
    const size = (await fh.stat()).size;
    const magic = Buffer.alloc(MAGIC_BYTES);
    if (size >= MAGIC_BYTES) await readExactly(fh, magic, 0, MAGIC_BYTES, 0);
    if (!magic.equals(SNAPSHOT_MAGIC)) throw new Error(`corrupt snapshot ${path}: bad header`);
    let head: { revision: number; segment: number; entries: number } | undefined;
    let count = 0;
    let ended = false;
    const result = await scanFrames(fh, MAGIC_BYTES, size, (payload) => {
      const record = decodeRecord(payload);
      if (ended) throw new Error(`corrupt snapshot ${path}: data after its end`);
      if (!head) {
        if (record.type !== 'snapshot-head') throw new Error(`corrupt snapshot ${path}: no head`);
        head = record;
      } else if (record.type === 'snapshot-chunk') {
        for (const it of record.items) {
          keyspace.put(record.resource, it.namespace, it.name, it.json, it.revision);
        }
        count += record.items.length;
      } else if (record.type === 'snapshot-end') {
        if (record.entries !== count || record.entries !== head.entries) {
          throw new Error(`corrupt snapshot ${path}: ${count} entries, expected ${head.entries}`);
        }
        ended = true;
      } else {
        throw new Error(`corrupt snapshot ${path}: unexpected ${record.type} record`);
      }
    });
    if (result.problem !== undefined) {
      throw new Error(`corrupt snapshot ${path} at offset ${result.end}: ${result.problem}`);
    }
    if (!head || !ended) throw new Error(`corrupt snapshot ${path}: incomplete`);
    if (!Number.isSafeInteger(head.segment) || head.segment < 1) {
      throw new Error(`corrupt snapshot ${path}: bad segment ${head.segment}`);
    }
    return { revision: head.revision, segment: head.segment };
  } finally {
    await fh.close();
  }
}
