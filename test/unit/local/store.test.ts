// The storage engine: reads and writes, restart, torn tails, compaction, group commit, kill -9.
import { spawn } from 'node:child_process';
import {
  appendFile,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { crc32 } from '../../../src/local/storage/crc32.js';
import { type Mutation, Store, type StoreOptions } from '../../../src/local/storage/store.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WRITER = join(ROOT, 'test/support/store-writer.ts');

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nrn-store-'));
  dirs.push(dir);
  return dir;
}

async function open(dir: string, options?: StoreOptions): Promise<Store> {
  const store = await Store.open(dir, options);
  stores.push(store);
  return store;
}

async function reopen(store: Store, dir: string, options?: StoreOptions): Promise<Store> {
  await store.close();
  return open(dir, options);
}

const put = (resource: string, namespace: string, name: string, json: string): Mutation => ({
  resource,
  namespace,
  name,
  json,
});
const del = (resource: string, namespace: string, name: string): Mutation => ({
  resource,
  namespace,
  name,
  json: null,
});
const keys = (store: Store, resource: string, namespace?: string) =>
  store.list(resource, namespace).map((e) => `${e.namespace}/${e.name}`);

async function logFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((f) => f.endsWith('.log')).sort();
}

async function logBytes(dir: string): Promise<number> {
  let total = 0;
  for (const f of await logFiles(dir)) total += (await stat(join(dir, f))).size;
  return total;
}

/** A snapshot of what the store holds, to compare before and after a restart. */
function dump(store: Store, resources: string[]) {
  return resources.map((r) => store.list(r).map((e) => [e.namespace, e.name, e.revision, e.json]));
}

describe('Store', () => {
  it('computes the standard CRC-32', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    const data = Buffer.from('a longer buffer, to exercise the 8-byte steps and the tail');
    expect(crc32(data.subarray(13), crc32(data.subarray(0, 13)))).toBe(crc32(data));
  });

  it('puts, gets, deletes and lists in order, and restores it all after a restart', async () => {
    const dir = await tempDir();
    let store = await open(dir);
    expect(store.revision).toBe(0);
    const pods = 'core/pods';
    const revisions = [
      store.commit([put(pods, 'b', 'y', '{"v":1}'), put(pods, 'a', 'z', '{"v":2}')]).revision,
      store.commit([put(pods, 'a', 'x', '{"v":3}'), put('core/namespaces', '', 'a', '{}')])
        .revision,
      store.commit([put(pods, 'b', 'y', '{"v":4}')]).revision,
    ];
    const last = store.commit((revision) => [put(pods, 'c', 'w', JSON.stringify({ revision }))]);
    revisions.push(last.revision);
    expect(revisions).toEqual([1, 2, 3, 4]);
    await last.durable;
    expect(store.durableRevision).toBe(4);

    expect(store.get(pods, 'b', 'y')).toEqual({
      namespace: 'b',
      name: 'y',
      json: '{"v":4}',
      revision: 3,
    });
    expect(store.get(pods, 'c', 'w')?.json).toBe('{"revision":4}');
    expect(store.get(pods, 'a', 'nope')).toBeUndefined();
    expect(keys(store, pods)).toEqual(['a/x', 'a/z', 'b/y', 'c/w']);
    expect(keys(store, pods, 'a')).toEqual(['a/x', 'a/z']);
    expect(keys(store, pods, 'none')).toEqual([]);
    expect(keys(store, 'core/none')).toEqual([]);
    expect(store.count()).toBe(5);
    expect(store.count(pods)).toBe(4);
    expect(store.count(pods, 'a')).toBe(2);

    // Paging: a cursor is exclusive, in (namespace, name) order, with or without a namespace.
    const page = (after?: { namespace: string; name: string }, namespace?: string) =>
      store.list(pods, namespace, { after, limit: 2 }).map((e) => `${e.namespace}/${e.name}`);
    expect(page()).toEqual(['a/x', 'a/z']);
    expect(page({ namespace: 'a', name: 'z' })).toEqual(['b/y', 'c/w']);
    expect(page({ namespace: 'a', name: 'zz' })).toEqual(['b/y', 'c/w']);
    expect(page({ namespace: 'a', name: 'x' }, 'a')).toEqual(['a/z']);
    expect(page({ namespace: 'b', name: '' }, 'a')).toEqual([]);

    // Inserts and deletes between lists keep the cached order right.
    const d = store.commit([del(pods, 'a', 'x'), put(pods, 'a', 'm', '{}'), del(pods, 'c', 'w')]);
    expect(d.revision).toBe(5);
    store.commit([put(pods, 'a', 'x', '{"again":true}'), put(pods, '0', 'first', '{}')]);
    expect(keys(store, pods)).toEqual(['0/first', 'a/m', 'a/x', 'a/z', 'b/y']);
    expect(store.get(pods, 'a', 'x')?.revision).toBe(6);
    // Deleting what is not there is harmless; an empty batch uses no revision.
    store.commit([del(pods, 'q', 'q')]);
    expect(store.commit([]).revision).toBe(7);
    expect(store.commit(() => []).revision).toBe(7);
    // A builder that throws changes nothing and uses no revision.
    expect(() =>
      store.commit(() => {
        throw new Error('no');
      }),
    ).toThrow('no');
    expect(store.revision).toBe(7);
    expect(() => store.commit([put(pods, 'a', '', '{}')])).toThrow(TypeError);
    expect(store.revision).toBe(7);

    const before = dump(store, [pods, 'core/namespaces']);
    store = await reopen(store, dir);
    expect(store.revision).toBe(7);
    expect(dump(store, [pods, 'core/namespaces'])).toEqual(before);
    expect(store.commit([put(pods, 'a', 'n', '{}')]).revision).toBe(8);
    await store.close();
    expect(() => store.commit([put(pods, 'a', 'n', '{}')])).toThrow('closed');
  });

  it('lets only one store at a time own a directory, and takes over a dead process’s lock', async () => {
    const dir = await tempDir();
    const store = await open(dir);
    await expect(Store.open(dir)).rejects.toThrow(/already open/);
    await store.close();
    // A pid that cannot exist (above Linux's pid_max): the lock of a process killed with -9.
    await writeFile(join(dir, 'LOCK'), '2147483646\n');
    const again = await open(dir);
    expect(again.revision).toBe(0);
  });

  it('recovers from a torn tail: keeps earlier commits and never reuses a surviving revision', async () => {
    const dir = await tempDir();
    let store = await open(dir);
    for (let i = 1; i <= 20; i++) store.commit([put('r/x', 'ns', `k${i}`, JSON.stringify({ i }))]);
    await store.flush();
    await store.close();
    const [log] = await logFiles(dir);
    const path = join(dir, log ?? '');

    // Garbage after the last record (a write that never completed).
    await appendFile(path, Buffer.from([7, 0, 0, 0, 1, 2, 3]));
    store = await open(dir);
    expect(store.revision).toBe(20);
    expect(store.count('r/x')).toBe(20);
    expect(store.stats.recoveredTornBytes).toBe(7);

    // The last record cut short: it is dropped, every earlier one kept.
    await store.close();
    const size = (await stat(path)).size;
    await truncate(path, size - 5);
    store = await open(dir);
    expect(store.revision).toBe(19);
    expect(store.get('r/x', 'ns', 'k19')?.json).toBe('{"i":19}');
    expect(store.get('r/x', 'ns', 'k20')).toBeUndefined();

    // A zero-filled tail (as a file system may leave after a power cut) is a torn tail too.
    await store.close();
    await appendFile(path, Buffer.alloc(4096));
    store = await open(dir);
    expect(store.revision).toBe(19);
    const next = store.commit([put('r/x', 'ns', 'after', '{}')]);
    expect(next.revision).toBe(20);
    await next.durable;
    store = await reopen(store, dir);
    expect(store.revision).toBe(20);
    expect(store.count('r/x')).toBe(20);
    expect(store.get('r/x', 'ns', 'after')?.revision).toBe(20);
  });

  it('compacts: the log shrinks, the state and revision survive, revisions keep increasing', async () => {
    const dir = await tempDir();
    let store = await open(dir, { compactAfterBytes: 16 * 1024 });
    const big = 'y'.repeat(200);
    const pending: Promise<void>[] = [];
    for (let i = 0; i < 2000; i++) {
      const { durable } = store.commit((rev) => [
        put('r/x', `ns${i % 2}`, `k${i % 10}`, JSON.stringify({ rev, big })),
      ]);
      pending.push(durable);
      if (i % 100 === 99) await Promise.all(pending.splice(0));
    }
    store.commit([del('r/x', 'ns0', 'k0')]);
    await store.flush();
    const written = store.stats.bytesWritten;
    const before = dump(store, ['r/x']);
    await store.close();
    expect(store.stats.compactions).toBeGreaterThan(0);
    // ~500 KB went to the log; what is left is one segment (what came in during the last
    // compaction, so its size depends on the machine's speed: a third of it on a loaded CI
    // machine) and a snapshot. Without compaction the log would hold all of it.
    expect(written).toBeGreaterThan(400_000);
    expect(await logBytes(dir)).toBeLessThan(written / 2);
    expect((await logFiles(dir)).length).toBe(1);
    expect(await readdir(dir)).toContain('snapshot');

    store = await open(dir, { compactAfterBytes: 16 * 1024 });
    expect(store.revision).toBe(2001);
    expect(dump(store, ['r/x'])).toEqual(before);
    expect(store.count('r/x')).toBe(9);

    // Deleting everything and compacting keeps the revision: it is never handed out again.
    const [oldLog = ''] = await logFiles(dir);
    const oldBytes = await readFile(join(dir, oldLog));
    store.commit(store.list('r/x').map((e) => del('r/x', e.namespace, e.name)));
    await store.compact();
    expect(await logBytes(dir)).toBeLessThan(1024);
    await store.close();
    // As if killed after the snapshot's rename but before the old segment went, in the midst of
    // writing the next snapshot: open finishes the job.
    await writeFile(join(dir, oldLog), oldBytes);
    await writeFile(join(dir, 'snapshot.tmp'), 'half a snapshot');
    store = await open(dir);
    expect(await readdir(dir)).not.toContain(oldLog);
    expect(await readdir(dir)).not.toContain('snapshot.tmp');
    expect(store.count()).toBe(0);
    expect(store.revision).toBe(2002);
    expect(store.commit([put('r/x', '', 'new', '{}')]).revision).toBe(2003);
  });

  it('fails loudly on a corrupt snapshot', async () => {
    const dir = await tempDir();
    const store = await open(dir);
    for (let i = 0; i < 50; i++) store.commit([put('r/x', '', `k${i}`, JSON.stringify({ i }))]);
    await store.compact();
    await store.close();
    const path = join(dir, 'snapshot');
    const bytes = await readFile(path);
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] ?? 0) ^ 0xff;
    await writeFile(path, bytes);
    await expect(Store.open(dir)).rejects.toThrow(/corrupt snapshot/);
    // The failed open released the directory.
    await writeFile(path, bytes.subarray(0, bytes.length - 3));
    await expect(Store.open(dir)).rejects.toThrow(/corrupt snapshot/);
  });

  it('group-commits: many concurrent commits share few fdatasyncs', async () => {
    const dir = await tempDir();
    const store = await open(dir);
    // A burst from one tick goes out in one write.
    const burst = Array.from({ length: 1000 }, (_, i) =>
      store.commit([put('r/x', '', `k${i}`, '{}')]),
    );
    await Promise.all(burst.map((c) => c.durable));
    expect(store.stats.syncs).toBeLessThanOrEqual(2);

    // 16 clients that each wait for their ack before the next commit, like HTTP clients.
    const syncs = store.stats.syncs;
    await Promise.all(
      Array.from({ length: 16 }, async (_, client) => {
        for (let i = 0; i < 63; i++) {
          await store.commit([put('r/y', '', `c${client}-${i}`, '{}')]).durable;
        }
      }),
    );
    expect(store.count('r/y')).toBe(16 * 63);
    expect(store.stats.syncs - syncs).toBeLessThan((16 * 63) / 4);
    expect(store.durableRevision).toBe(store.revision);
  });

  it('keeps every acknowledged commit through kill -9, including during compaction', async () => {
    const dir = await tempDir();
    type Ack = { revision: number; namespace: string; name: string };

    // Runs the writer until it has acknowledged `acks` commits, then kills it with SIGKILL.
    const runAndKill = (args: string[], acks: number) =>
      new Promise<Ack[]>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', WRITER, dir, ...args], {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const acked: Ack[] = [];
        let buffered = '';
        let stderr = '';
        const timer = setTimeout(() => child.kill('SIGKILL'), 12_000);
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        child.stdout.on('data', (chunk: Buffer) => {
          buffered += chunk.toString();
          const lines = buffered.split('\n');
          buffered = lines.pop() ?? '';
          for (const line of lines) {
            const [revision, namespace, name] = line.split(' ');
            if (revision === 'ready' || namespace === undefined || name === undefined) continue;
            acked.push({ revision: Number(revision), namespace, name });
          }
          if (acked.length >= acks) child.kill('SIGKILL');
        });
        child.on('error', reject);
        child.on('exit', (_code, signal) => {
          clearTimeout(timer);
          if (signal !== 'SIGKILL' || acked.length < acks) {
            reject(new Error(`writer ended early (${signal}, ${acked.length} acks): ${stderr}`));
          } else {
            resolve(acked);
          }
        });
      });

    const check = (store: Store, acked: Ack[]) => {
      const latest = new Map<string, Ack>();
      for (const ack of acked) {
        const key = `${ack.namespace}/${ack.name}`;
        const seen = latest.get(key);
        if (!seen || seen.revision < ack.revision) latest.set(key, ack);
      }
      const max = Math.max(...acked.map((a) => a.revision));
      expect(store.revision).toBeGreaterThanOrEqual(max);
      const counter = store.get('test/counters', '', 'last');
      expect(counter?.revision).toBeGreaterThanOrEqual(max);
      for (const ack of latest.values()) {
        const entry = store.get('test/items', ack.namespace, ack.name);
        // Overwritten later (by an unacknowledged commit) is fine; older or missing is not.
        expect(entry?.revision, `${ack.namespace}/${ack.name}`).toBeGreaterThanOrEqual(
          ack.revision,
        );
        expect(JSON.parse(entry?.json ?? '{}').rev).toBe(entry?.revision);
      }
    };

    // Overwrites with a tiny compaction threshold: killed while snapshots come and go.
    const first = await runAndKill(['one', '20', String(64 * 1024)], 3000);
    let store = await open(dir);
    check(store, first);
    expect(await readdir(dir)).toContain('snapshot');
    const afterFirst = store.revision;
    await store.close();

    // Unique keys: every acknowledged commit must be there, exactly.
    const second = await runAndKill(['two', '0'], 1500);
    expect(Math.min(...second.map((a) => a.revision))).toBeGreaterThan(afterFirst);
    store = await open(dir);
    check(store, first);
    check(store, second);
    for (const ack of second) {
      expect(store.get('test/items', ack.namespace, ack.name)?.revision).toBe(ack.revision);
    }
    const { revision } = store.commit([put('test/items', '', 'final', '{}')]);
    expect(revision).toBeGreaterThan(Math.max(...second.map((a) => a.revision)));
  }, 30_000);
});
