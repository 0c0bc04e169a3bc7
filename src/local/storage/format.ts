// The storage engine's on-disk encoding: CRC-framed binary records for log segments and snapshots.

// A file is an 8-byte magic followed by frames. A frame is
//   u32 LE payload length | u32 LE CRC-32 of (the 4 length bytes + payload) | payload
// and a payload starts with a type byte. Numbers are little-endian; a revision is an f64 (exact up
// to 2^53); a string is u32 byte length + UTF-8.
//   COMMIT (1):         f64 revision | u32 count | count x (u8 op: 1 put, 2 delete |
//                       str resource | str namespace | str name | put: str json)
//   SNAPSHOT_HEAD (2):  f64 revision | f64 first log segment still needed | f64 entry count
//   SNAPSHOT_CHUNK (3): str resource | u32 count | count x (str namespace | str name |
//                       f64 revision | str json)
//   SNAPSHOT_END (4):   f64 entry count
// Covering the length with the CRC, and refusing empty payloads, means a zero-filled tail (what
// some file systems leave after a crash) never reads as valid records.

import type { FileHandle } from 'node:fs/promises';
import { crc32 } from './crc32.js';

export const WAL_MAGIC = Buffer.from('NRNWAL01', 'latin1');
export const SNAPSHOT_MAGIC = Buffer.from('NRNSNP01', 'latin1');
export const MAGIC_BYTES = 8;
export const FRAME_HEADER_BYTES = 8;
/** The smallest payload: SNAPSHOT_END (a type byte and an f64). */
const MIN_PAYLOAD = 9;
/** Far above any Kubernetes object (etcd refuses requests over 1.5 MiB); bounds a garbage length. */
export const MAX_PAYLOAD = 256 * 1024 * 1024;

const COMMIT = 1;
const SNAPSHOT_HEAD = 2;
const SNAPSHOT_CHUNK = 3;
const SNAPSHOT_END = 4;
const PUT = 1;
const DELETE = 2;

/** One change of a commit: `json` null deletes the key. */
export interface Mutation {
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
  readonly json: string | null;
}

export interface SnapshotItem {
  readonly namespace: string;
  readonly name: string;
  readonly revision: number;
  readonly json: string;
}

export type StoredRecord =
  | { readonly type: 'commit'; readonly revision: number; readonly mutations: Mutation[] }
  | {
      readonly type: 'snapshot-head';
      readonly revision: number;
      readonly segment: number;
      readonly entries: number;
    }
  | { readonly type: 'snapshot-chunk'; readonly resource: string; readonly items: SnapshotItem[] }
  | { readonly type: 'snapshot-end'; readonly entries: number };

/** A record that passed its CRC but does not decode: a bug or a foreign file, never a torn write. */
export class FormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FormatError';
  }
}

const strBytes = (s: string) => 4 + Buffer.byteLength(s, 'utf8');

class Writer {
  private pos = FRAME_HEADER_BYTES;
  readonly frame: Buffer;

  constructor(payloadBytes: number) {
    if (payloadBytes > MAX_PAYLOAD) {
      throw new RangeError(`a record of ${payloadBytes} bytes exceeds the ${MAX_PAYLOAD} limit`);
    }
    this.frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payloadBytes);
  }

  u8(v: number): void {
    this.frame[this.pos++] = v;
  }

  u32(v: number): void {
    this.pos = this.frame.writeUInt32LE(v, this.pos);
  }

  f64(v: number): void {
    this.pos = this.frame.writeDoubleLE(v, this.pos);
  }

  str(s: string): void {
    const n = this.frame.write(s, this.pos + 4, 'utf8');
    this.frame.writeUInt32LE(n, this.pos);
    this.pos += 4 + n;
  }

  /** Seals the frame: fills in the length and the CRC. */
  finish(): Buffer {
    const { frame } = this;
    if (this.pos !== frame.length) throw new Error('record size miscomputed');
    frame.writeUInt32LE(frame.length - FRAME_HEADER_BYTES, 0);
    const crc = crc32(frame.subarray(FRAME_HEADER_BYTES), crc32(frame.subarray(0, 4)));
    frame.writeUInt32LE(crc, 4);
    return frame;
  }
}

class Reader {
  private pos = 0;

  constructor(private readonly buf: Buffer) {}

  private need(n: number): number {
    const at = this.pos;
    if (at + n > this.buf.length) throw new FormatError('record ends early');
    this.pos += n;
    return at;
  }

  u8(): number {
    return this.buf.readUInt8(this.need(1));
  }

  u32(): number {
    return this.buf.readUInt32LE(this.need(4));
  }

  f64(): number {
    return this.buf.readDoubleLE(this.need(8));
  }

  revision(): number {
    const v = this.f64();
    if (!Number.isSafeInteger(v) || v < 0) throw new FormatError(`bad revision ${v}`);
    return v;
  }

  str(): string {
    const n = this.u32();
    const at = this.need(n);
    return this.buf.toString('utf8', at, at + n);
  }

  end(): void {
    if (this.pos !== this.buf.length) throw new FormatError('trailing bytes in record');
  }
}

export function encodeCommit(revision: number, mutations: readonly Mutation[]): Buffer {
  let size = 1 + 8 + 4;
  for (const m of mutations) {
    size += 1 + strBytes(m.resource) + strBytes(m.namespace) + strBytes(m.name);
    if (m.json !== null) size += strBytes(m.json);
  }
  const w = new Writer(size);
  w.u8(COMMIT);
  w.f64(revision);
  w.u32(mutations.length);
  for (const m of mutations) {
    w.u8(m.json === null ? DELETE : PUT);
    w.str(m.resource);
    w.str(m.namespace);
    w.str(m.name);
    if (m.json !== null) w.str(m.json);
  }
  return w.finish();
}

export function encodeSnapshotHead(revision: number, segment: number, entries: number): Buffer {
  const w = new Writer(1 + 8 * 3);
  w.u8(SNAPSHOT_HEAD);
  w.f64(revision);
  w.f64(segment);
  w.f64(entries);
  return w.finish();
}

export function encodeSnapshotChunk(resource: string, items: readonly SnapshotItem[]): Buffer {
  let size = 1 + strBytes(resource) + 4;
  for (const it of items)
    size += strBytes(it.namespace) + strBytes(it.name) + 8 + strBytes(it.json);
  const w = new Writer(size);
  w.u8(SNAPSHOT_CHUNK);
  w.str(resource);
  w.u32(items.length);
  for (const it of items) {
    w.str(it.namespace);
    w.str(it.name);
    w.f64(it.revision);
    w.str(it.json);
  }
  return w.finish();
}

export function encodeSnapshotEnd(entries: number): Buffer {
  const w = new Writer(1 + 8);
  w.u8(SNAPSHOT_END);
  w.f64(entries);
  return w.finish();
}

export function decodeRecord(payload: Buffer): StoredRecord {
  const r = new Reader(payload);
  const type = r.u8();
  let record: StoredRecord;
  switch (type) {
    case COMMIT: {
      const revision = r.revision();
      const count = r.u32();
      const mutations: Mutation[] = [];
      for (let i = 0; i < count; i++) {
        const op = r.u8();
        if (op !== PUT && op !== DELETE) throw new FormatError(`unknown operation ${op}`);
        const resource = r.str();
        const namespace = r.str();
        const name = r.str();
        mutations.push({ resource, namespace, name, json: op === PUT ? r.str() : null });
      }
      record = { type: 'commit', revision, mutations };
      break;
    }
    case SNAPSHOT_HEAD:
      record = {
        type: 'snapshot-head',
        revision: r.revision(),
        segment: r.f64(),
        entries: r.f64(),
      };
      break;
    case SNAPSHOT_CHUNK: {
      const resource = r.str();
      const count = r.u32();
      const items: SnapshotItem[] = [];
      for (let i = 0; i < count; i++) {
        const namespace = r.str();
        const name = r.str();
        const revision = r.revision();
        items.push({ namespace, name, revision, json: r.str() });
      }
      record = { type: 'snapshot-chunk', resource, items };
      break;
    }
    case SNAPSHOT_END:
      record = { type: 'snapshot-end', entries: r.f64() };
      break;
    default:
      throw new FormatError(`unknown record type ${type}`);
  }
  r.end();
  return record;
}

export interface ScanResult {
  /** File offset just past the last good frame. */
  readonly end: number;
  /** Why the scan stopped before the end of the file, if it did. */
  readonly problem?: string;
}

const READ_CHUNK = 1024 * 1024;

/** Reads exactly `length` bytes at `position`; a file that shrinks under us is an error. */
export async function readExactly(
  fh: FileHandle,
  into: Buffer,
  offset: number,
  length: number,
  position: number,
): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(into, offset + done, length - done, position + done);
    if (bytesRead === 0) throw new Error('file ended while reading it');
    done += bytesRead;
  }
}

/** Writes all of `data` at `position` (a write may be partial, e.g. near a full disk). */
export async function writeFully(fh: FileHandle, data: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await fh.write(data, done, data.length - done, position + done);
    done += bytesWritten;
  }
}

/**
 * Hands each valid frame's payload in [start, size) of the file to `onPayload`, in order, and
 * stops at the first short or corrupt frame. Errors thrown by `onPayload` propagate.
 */
export async function scanFrames(
  fh: FileHandle,
  start: number,
  size: number,
  onPayload: (payload: Buffer) => void,
): Promise<ScanResult> {
  let buf = Buffer.alloc(0);
  let bufStart = start; // file offset of buf[0]
  let pos = 0;
  // Makes `need` bytes available at buf[pos]; false when the file has fewer left.
  const fill = async (need: number): Promise<boolean> => {
    const have = buf.length - pos;
    if (have >= need) return true;
    const left = size - (bufStart + buf.length);
    if (have + left < need) return false;
    const more = Math.min(Math.max(need - have, READ_CHUNK), left);
    const next = Buffer.allocUnsafe(have + more);
    buf.copy(next, 0, pos);
    await readExactly(fh, next, have, more, bufStart + buf.length);
    bufStart += pos;
    buf = next;
    pos = 0;
    return true;
  };
  for (;;) {
    const offset = bufStart + pos;
    if (offset >= size) return { end: offset };
    if (!(await fill(FRAME_HEADER_BYTES))) return { end: offset, problem: 'short frame header' };
    const length = buf.readUInt32LE(pos);
    if (length < MIN_PAYLOAD || length > MAX_PAYLOAD) {
      return { end: offset, problem: `bad frame length ${length}` };
    }
    if (!(await fill(FRAME_HEADER_BYTES + length))) return { end: offset, problem: 'short frame' };
    const expected = buf.readUInt32LE(pos + 4);
    const payload = buf.subarray(pos + FRAME_HEADER_BYTES, pos + FRAME_HEADER_BYTES + length);
    if (crc32(payload, crc32(buf.subarray(pos, pos + 4))) !== expected) {
      return { end: offset, problem: 'checksum mismatch' };
    }
    onPayload(payload);
    pos += FRAME_HEADER_BYTES + length;
  }
}
