// What watchers cannot do to the local control plane, over real HTTPS: hold its memory by not
// reading (the slowest are closed once all watchers together hold more than the budget, as
// kube-apiserver's watch cache closes a watcher that does not keep up), break every watch of a
// kind with one large object, or overflow its timers with a huge timeoutSeconds.
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { type Fetch, fetchTrusting } from '../support/https.js';

const MiB = 1024 * 1024;
/** Small, so that a few MiB of ConfigMaps go over it; the default is 256 MiB. */
const BUDGET = 4 * MiB;
/** One watcher's limit in the plane that tests it: below the size of its events. */
const PER_WATCHER = 64 * 1024;
const OBJECT_BYTES = 100 * 1024;
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

let plane: ControlPlane;
let dataDir: string;
let fetch: Fetch;

/** A plane of its own for each group of tests, with the watch limits they are about. */
function withPlane(watchLimits: { totalBytes?: number; perWatcherBytes?: number }): void {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'nrn-watch-limits-'));
    plane = await startControlPlane({
      dataDir,
      fsync: false,
      // A short window: the changes it keeps for re-watches are not what this file measures.
      watchWindow: 20,
      watchLimits,
    });
    fetch = fetchTrusting(plane.ca);
  });
  afterAll(async () => {
    await plane?.close();
    await rm(dataDir, { recursive: true, force: true });
  });
}

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${plane.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${plane.token}`, 'Content-Type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, text };
}

async function createNamespace(name: string): Promise<void> {
  expect((await call('POST', '/api/v1/namespaces', { metadata: { name } })).status).toBe(201);
}

/** The samples of a metric family on /metrics, by their label text (`{resource="x"}` or ``). */
async function metric(name: string): Promise<Map<string, number>> {
  const { status, text } = await call('GET', '/metrics');
  expect(status).toBe(200);
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(\w+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (match?.[1] === name) samples.set(match[2] ?? '', Number(match[3]));
  }
  return samples;
}

interface Watch {
  readonly response: IncomingMessage;
  /** Events received, when the watch reads. */
  readonly events: Array<{ type: string; object: Record<string, any> }>;
  /** Settles when the stream ends or breaks. */
  readonly ended: Promise<void>;
  isEnded(): boolean;
}

/** A raw watch over HTTPS; one that does not read stops its socket, as a stuck client does. */
function openWatch(path: string, options: { accept?: string; read: boolean }): Promise<Watch> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${plane.url}${path}`,
      {
        headers: {
          Authorization: `Bearer ${plane.token}`,
          ...(options.accept !== undefined ? { Accept: options.accept } : {}),
        },
        ca: plane.ca,
      },
      (response) => {
        let ended = false;
        const events: Watch['events'] = [];
        const done = new Promise<void>((settle) => {
          const end = () => {
            ended = true;
            settle();
          };
          response.once('end', end);
          response.once('close', end);
          response.once('error', end);
          response.once('aborted', end);
        });
        if (options.read) {
          let buffer = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            buffer += chunk;
            for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
              events.push(JSON.parse(buffer.slice(0, i)));
              buffer = buffer.slice(i + 1);
            }
          });
        } else {
          response.pause();
        }
        resolve({ response, events, ended: done, isEnded: () => ended });
      },
    );
    req.once('error', reject);
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await sleep(20);
}

describe('watchers that do not read', () => {
  // Each one's own limit stays at its default (16 MiB): the budget of all is what acts.
  withPlane({ totalBytes: BUDGET });

  it('are closed, the slowest first, once all together hold more than the budget; a watcher that reads is not', async () => {
    const ns = 'slow';
    await createNamespace(ns);
    const path = `/api/v1/namespaces/${ns}/configmaps?watch=true&includeObject=Object`;
    const rssBefore = process.memoryUsage().rss;
    // What `kubectl get -w` asks for (Tables), with the whole object in each row so that
    // every event is as large as the ConfigMap.
    const slow = await Promise.all(
      Array.from({ length: 20 }, () => openWatch(path, { accept: TABLE, read: false })),
    );
    const reader = await openWatch(path, { accept: TABLE, read: true });
    const registered = await metric('apiserver_registered_watchers');
    expect(registered.get('{resource="configmaps"}')).toBe(21);

    const data = { v: 'x'.repeat(OBJECT_BYTES) };
    let created = 0;
    let peakBuffered = 0;
    // Each slow socket takes a few MiB in the kernel before anything waits in the server:
    // writing goes on until the server has closed them all (or far past the point it should).
    while (created < 300) {
      const answer = await call('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name: `cm-${created}` },
        data,
      });
      expect(answer.status).toBe(201);
      created++;
      const buffered = (await metric('apiserver_watch_buffered_bytes')).get('') ?? NaN;
      peakBuffered = Math.max(peakBuffered, buffered);
      const watchers = (await metric('apiserver_registered_watchers')).get(
        '{resource="configmaps"}',
      );
      if (watchers === 1) break;
    }
    const rssGrowth = process.memoryUsage().rss - rssBefore;

    // Never more waiting in the server than the budget, at any scrape.
    expect(peakBuffered).toBeGreaterThan(0);
    expect(peakBuffered).toBeLessThanOrEqual(BUDGET);
    expect((await metric('apiserver_registered_watchers')).get('{resource="configmaps"}')).toBe(1);
    expect(
      (await metric('apiserver_terminated_watchers_total')).get('{resource="configmaps"}'),
    ).toBe(20);
    // Their streams ended: a client that reads again sees the end, and re-watches.
    for (const watch of slow) watch.response.resume();
    await Promise.all(slow.map((watch) => watch.ended));
    // The reader took every event, and its watch is still open.
    await until(() => reader.events.length >= created);
    expect(reader.isEnded()).toBe(false);
    const names = reader.events.map((e) => e.object.rows?.[0]?.object?.metadata?.name);
    expect(names).toEqual(Array.from({ length: created }, (_, i) => `cm-${i}`));
    expect(reader.events[0]?.object.columnDefinitions.length).toBeGreaterThan(0);
    // A sanity bound, not a measure: before the budget, twenty such watchers held 16 MiB each
    // (and each its own copy of every Table) and the process grew by hundreds of MiB.
    expect(rssGrowth).toBeLessThan(150 * MiB);
    expect((await call('GET', `/api/v1/namespaces/${ns}/configmaps?limit=1`)).status).toBe(200);
    reader.response.destroy();
  });
});

describe('one large event', () => {
  withPlane({ perWatcherBytes: PER_WATCHER });

  it('goes to watchers whose own limit it exceeds, when nothing of theirs is waiting', async () => {
    const ns = 'large';
    await createNamespace(ns);
    const terminatedBefore =
      (await metric('apiserver_terminated_watchers_total')).get('{resource="configmaps"}') ?? 0;
    const path = `/api/v1/namespaces/${ns}/configmaps?watch=true`;
    const json = await openWatch(path, { read: true });
    const table = await openWatch(`${path}&includeObject=Object`, { accept: TABLE, read: true });
    const data = { v: 'y'.repeat(4 * PER_WATCHER) };
    const cms = `/api/v1/namespaces/${ns}/configmaps`;
    expect((await call('POST', cms, { metadata: { name: 'big' }, data })).status).toBe(201);
    await until(() => json.events.length >= 1 && table.events.length >= 1);
    const patched = await fetch(`${plane.url}${cms}/big`, {
      method: 'PATCH',
      headers: {
        Authorization: `Bearer ${plane.token}`,
        'Content-Type': 'application/merge-patch+json',
      },
      body: JSON.stringify({ data: { w: 'z'.repeat(4 * PER_WATCHER) } }),
    });
    expect(patched.status).toBe(200);
    await patched.text();
    await until(() => json.events.length >= 2 && table.events.length >= 2);
    expect(json.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
    expect(json.events[1]?.object.data.w.length).toBe(4 * PER_WATCHER);
    expect(table.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
    expect(json.isEnded()).toBe(false);
    expect(table.isEnded()).toBe(false);
    expect(
      (await metric('apiserver_terminated_watchers_total')).get('{resource="configmaps"}') ?? 0,
    ).toBe(terminatedBefore);
    json.response.destroy();
    table.response.destroy();
  });
});

describe('timeoutSeconds', () => {
  withPlane({});

  for (const seconds of ['2147484', '9999999999']) {
    it(`${seconds} keeps the watch open (a Node timer would overflow and end it at once)`, async () => {
      const watch = await openWatch(
        `/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=${seconds}`,
        { read: true },
      );
      await Promise.race([watch.ended, sleep(3000)]);
      expect(watch.isEnded()).toBe(false);
      watch.response.destroy();
    });
  }

  it('that is not an integer is refused as kube-apiserver refuses it', async () => {
    for (const [value, problem] of [
      ['abc', 'invalid syntax'],
      ['1.5', 'invalid syntax'],
      ['', 'invalid syntax'],
      ['9223372036854775808', 'value out of range'],
    ] as const) {
      const { status, text } = await call(
        'GET',
        `/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=${value}`,
      );
      expect(status).toBe(400);
      expect(JSON.parse(text)).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        reason: 'BadRequest',
        code: 400,
        message: `strconv.ParseInt: parsing "${value}": ${problem}`,
      });
    }
  });

  it('that is negative has passed already: the watch ends at once', async () => {
    const watch = await openWatch(
      '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=-1',
      {
        read: true,
      },
    );
    await watch.ended;
    expect(watch.response.statusCode).toBe(200);
  });
});

describe('/metrics', () => {
  withPlane({});

  it('is refused to system:anonymous (403), as on kube-apiserver', async () => {
    const anonymous = await fetch(`${plane.url}/metrics`);
    expect(anonymous.status).toBe(403);
    expect(await anonymous.json()).toMatchObject({
      message: 'forbidden: User "system:anonymous" cannot get path "/metrics"',
    });
  });
});
