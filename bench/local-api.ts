// Benchmark of the local control plane (issue 2): durable creates/s and updates/s from 16
// concurrent keep-alive connections (autocannon, and wrk too when it is on the PATH), watch
// delivery latency with 100 watchers, and RSS per stored object with 100,000 small objects.
// The server runs in its own process. The same creates and watches then run against a bare
// durable Node server (bench/support/durable-floor-server.ts): what this machine allows any
// Node server that commits each write before answering, the yardstick for the goals.
//   npm run bench:local-api            (BENCH_CREATES, BENCH_OBJECTS, BENCH_WRK_SECONDS to
//                                       scale it; the server runs compiled unless
//                                       BENCH_TSX=1; BENCH_NODE_FLAGS)
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { call, percentile } from './support/api.js';
import { type Lines, linesOf, support } from './support/processes.js';
import { emit } from './support/report.js';

const CONNECTIONS = 16;
const CREATES = Number(process.env.BENCH_CREATES ?? 20_000);
const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 100_000);
const WATCHERS = 100;
const WATCH_WRITES = 300;
const WRK_SECONDS = Number(process.env.BENCH_WRK_SECONDS ?? 8);

interface Server {
  child: ChildProcess;
  url: URL;
  token: string;
  agent: https.Agent;
  lines: Lines;
  dir: string;
}

async function startServer(name = 'local-server'): Promise<Server> {
  const dir = await mkdtemp(join(tmpdir(), 'nrn-bench-'));
  const child = await support(name, [dir], { nodeArgs: ['--expose-gc'] });
  const lines = linesOf(child);
  const ready = await lines.next();
  const [, url, token, ca] = ready.split(' ');
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: CONNECTIONS,
    ca: Buffer.from(ca as string, 'base64').toString(),
  });
  return { child, url: new URL(url as string), token: token as string, agent, lines, dir };
}

async function stopServer(server: Server): Promise<void> {
  server.agent.destroy();
  server.child.kill('SIGTERM');
  await new Promise((r) => server.child.once('exit', r));
  await rm(server.dir, { recursive: true, force: true });
}

async function memory(server: Server): Promise<{ rss: number; heap: number }> {
  server.child.kill('SIGUSR2');
  const line = await server.lines.next();
  const [, rss, heap] = line.split(' ');
  return { rss: Number(rss), heap: Number(heap) };
}

/** Runs `count` operations over CONNECTIONS workers; returns ops/s and per-op latencies. */
async function load(
  count: number,
  op: (i: number) => Promise<void>,
): Promise<{ perSecond: number; latencies: number[] }> {
  let next = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      for (let i = next++; i < count; i = next++) {
        const t = performance.now();
        await op(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { perSecond: count / ((performance.now() - started) / 1000), latencies };
}

const ms = (v: number) => `${v.toFixed(2)} ms`;

async function expectStatus(
  promise: Promise<{ status: number; text: string }>,
  status: number,
): Promise<string> {
  const res = await promise;
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text}`);
  return res.text;
}

/** Sends `count` requests over CONNECTIONS keep-alive connections with autocannon. */
async function cannon(
  server: Server,
  count: number,
  method: 'POST' | 'PATCH',
  path: (i: number) => string,
  body: (i: number) => unknown,
  type: string,
) {
  let i = 0;
  // Timed here, to the last answer: autocannon's own duration only ends at its next 1 s
  // sampling tick, which rounds the rate down to `count` / whole seconds.
  const started = performance.now();
  let last = started;
  let instance: autocannon.Instance | undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url: server.url.origin,
        connections: CONNECTIONS,
        amount: count,
        requests: [
          {
            method,
            setupRequest: (req) => {
              const n = i++;
              return { ...req, path: path(n), body: JSON.stringify(body(n)) };
            },
          },
        ],
        headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': type },
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
  instance?.on('response', () => {
    last = performance.now();
  });
  const result = await done;
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors`);
  }
  return {
    perSecond: result.requests.total / ((last - started) / 1000),
    p50: result.latency.p50,
    p99: result.latency.p99,
  };
}

async function throughput(server: Server) {
  const creates = await createThroughput(server);
  const path = '/api/v1/namespaces/bench/configmaps';
  const updates = await cannon(
    server,
    CREATES,
    'PATCH',
    (i) => `${path}/c${i}`,
    () => ({ data: { v: 'y' } }),
    'application/merge-patch+json',
  );
  return { creates, updates };
}

async function createThroughput(server: Server) {
  await expectStatus(
    call(server, 'POST', '/api/v1/namespaces', { metadata: { name: 'bench' } }),
    201,
  );
  return cannon(
    server,
    CREATES,
    'POST',
    () => '/api/v1/namespaces/bench/configmaps',
    (i) => ({ metadata: { name: `c${i}` }, data: { v: 'x' } }),
    'application/json',
  );
}

/**
 * One wrk run of durable creates or updates (wrk, a C load generator, Debian's `wrk`; see
 * bench/support/wrk-write.lua): autocannon, in JavaScript, takes most of a core of the two
 * this machine has, so its figure is partly its own. Undefined when wrk is not on the PATH.
 */
function wrk(
  server: Server,
  seconds: number,
  mode: 'create' | 'update',
  count = 0,
): Promise<{ perSecond: number; requests: number } | undefined> {
  const script = join(import.meta.dirname, 'support', 'wrk-write.lua');
  return new Promise((resolve, reject) => {
    execFile(
      'wrk',
      ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '-s', script, server.url.origin],
      {
        env: {
          ...process.env,
          TOKEN: server.token,
          MODE: mode,
          COUNT: String(count),
          PREFIX: 'wrk',
        },
      },
      (error, stdout) => {
        if (error !== null) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') resolve(undefined);
          else reject(error);
          return;
        }
        if (/Non-2xx/.test(stdout)) {
          reject(new Error(`wrk saw non-2xx answers:\n${stdout}`));
          return;
        }
        const rate = /Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1];
        const total = /(\d+) requests in/.exec(stdout)?.[1];
        resolve({ perSecond: Number(rate), requests: Number(total) });
      },
    );
  });
}

/** The durable creates, then updates of what they made, from wrk. Undefined without wrk. */
async function wrkThroughput(server: Server, seconds: number) {
  const creates = await wrk(server, seconds, 'create');
  if (creates === undefined) return undefined;
  // Each wrk thread names its objects wrk0-1, wrk0-2, ...: the updates go round those.
  const updates = await wrk(server, seconds, 'update', creates.requests);
  if (updates === undefined) throw new Error('wrk went away between two runs');
  return { creates, updates };
}

async function watchLatency(server: Server): Promise<number[]> {
  await expectStatus(
    call(server, 'POST', '/api/v1/namespaces', { metadata: { name: 'watched' } }),
    201,
  );
  const path = '/api/v1/namespaces/watched/configmaps';
  const created = JSON.parse(
    await expectStatus(
      call(server, 'POST', path, { metadata: { name: 'w' }, data: { t: '0' } }),
      201,
    ),
  );
  const from = created.metadata.resourceVersion as string;
  const samples: number[] = [];
  let received = 0;
  const watchAgent = new https.Agent({
    keepAlive: false,
    maxSockets: WATCHERS + 1,
    ca: server.agent.options.ca,
  });
  const requests = Array.from(
    { length: WATCHERS },
    () =>
      new Promise<ReturnType<typeof https.request>>((resolve) => {
        const req = https.request(
          {
            agent: watchAgent,
            host: server.url.hostname,
            port: server.url.port,
            path: `${path}?watch=true&resourceVersion=${from}`,
            headers: { Authorization: `Bearer ${server.token}` },
          },
          (res) => {
            let buffer = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => {
              const now = performance.timeOrigin + performance.now();
              buffer += d;
              let i = buffer.indexOf('\n');
              while (i >= 0) {
                const event = JSON.parse(buffer.slice(0, i));
                buffer = buffer.slice(i + 1);
                i = buffer.indexOf('\n');
                samples.push(now - Number(event.object.data.t));
                received++;
              }
            });
            resolve(req);
          },
        );
        req.end();
      }),
  );
  const watchers = await Promise.all(requests);
  for (let n = 0; n < WATCH_WRITES; n++) {
    const t = performance.timeOrigin + performance.now();
    await expectStatus(
      call(
        server,
        'PATCH',
        `${path}/w`,
        { data: { t: String(t) } },
        'application/merge-patch+json',
      ),
      200,
    );
    const expected = (n + 1) * WATCHERS;
    const deadline = Date.now() + 2000;
    while (received < expected && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  }
  for (const req of watchers) req.destroy();
  return samples;
}

async function memoryPerObject(server: Server) {
  await expectStatus(
    call(server, 'POST', '/api/v1/namespaces', { metadata: { name: 'many' } }),
    201,
  );
  const before = await memory(server);
  let jsonBytes = 0;
  const result = await load(OBJECTS, async (i) => {
    const text = await expectStatus(
      call(server, 'POST', '/api/v1/namespaces/many/configmaps', {
        metadata: { name: `m${i}`, labels: { app: 'bench' } },
        data: { key: `value-${i}` },
      }),
      201,
    );
    jsonBytes += Buffer.byteLength(text);
  });
  const after = await memory(server);
  return { before, after, jsonBytes, perSecond: result.perSecond };
}

const first = await startServer();
try {
  const { creates, updates } = await throughput(first);
  const byWrk = await wrkThroughput(first, WRK_SECONDS);
  const latencies = await watchLatency(first);
  const second = await startServer();
  let mem: Awaited<ReturnType<typeof memoryPerObject>>;
  try {
    mem = await memoryPerObject(second);
  } finally {
    await stopServer(second);
  }
  const floorServer = await startServer('durable-floor-server');
  let floor: {
    creates: Awaited<ReturnType<typeof cannon>>;
    byWrk: Awaited<ReturnType<typeof wrk>>;
    latencies: number[];
  };
  try {
    floor = {
      creates: await createThroughput(floorServer),
      byWrk: await wrk(floorServer, WRK_SECONDS, 'create'),
      latencies: await watchLatency(floorServer),
    };
  } finally {
    await stopServer(floorServer);
  }
  const perObject = (mem.after.rss - mem.before.rss - mem.jsonBytes) / OBJECTS;
  const floorCeiling = (name: string, value: number, higherIsBetter = true) =>
    ({
      name: `bare durable Node server: ${name}`,
      value,
      kind: 'ceiling',
      higherIsBetter,
    }) as const;
  emit({
    bench: 'local-api',
    name: 'durable creates/s',
    value: creates.perSecond,
    unit: '/s',
    against: floorCeiling('creates/s', floor.creates.perSecond),
  });
  emit({
    bench: 'local-api',
    name: 'watch delivery p99',
    value: percentile(latencies, 99),
    unit: 'ms',
    against: floorCeiling('p99', percentile(floor.latencies, 99), false),
  });
  emit({
    bench: 'local-api',
    name: 'RSS per object beyond its JSON',
    value: perObject,
    unit: 'B',
    against: { name: 'goal', value: 1536, kind: 'goal', higherIsBetter: false },
  });
  const rows: Array<[string, string, string]> = [
    [
      `durable creates/s (${CONNECTIONS} connections, ${CREATES})`,
      creates.perSecond.toFixed(0),
      '>= 10000',
    ],
    ['  create latency p50 / p99', `${ms(creates.p50)} / ${ms(creates.p99)}`, ''],
    [`durable updates/s (${CONNECTIONS} connections)`, updates.perSecond.toFixed(0), ''],
    ['  update latency p50 / p99', `${ms(updates.p50)} / ${ms(updates.p99)}`, ''],
    ...(byWrk === undefined
      ? ([['durable creates/s from wrk', 'wrk not on the PATH', '']] as Array<
          [string, string, string]
        >)
      : ([
          [
            `durable creates/s from wrk (${CONNECTIONS} connections, ${WRK_SECONDS} s)`,
            byWrk.creates.perSecond.toFixed(0),
            '>= 10000',
          ],
          ['durable updates/s from wrk', byWrk.updates.perSecond.toFixed(0), ''],
        ] as Array<[string, string, string]>)),
    [
      `watch delivery p50 (${WATCHERS} watchers, ${latencies.length} events)`,
      ms(percentile(latencies, 50)),
      '',
    ],
    ['watch delivery p99', ms(percentile(latencies, 99)), '<= 5 ms'],
    [`RSS with ${OBJECTS} objects (MiB)`, (mem.after.rss / 2 ** 20).toFixed(1), ''],
    ['  JSON size of the objects (MiB)', (mem.jsonBytes / 2 ** 20).toFixed(1), ''],
    ['  RSS per object beyond its JSON (bytes)', perObject.toFixed(0), '<= 1536'],
    ['floor: a bare durable Node server (no API logic)', '', ''],
    ['  durable creates/s', floor.creates.perSecond.toFixed(0), ''],
    [
      '  durable creates/s from wrk',
      floor.byWrk === undefined ? 'wrk not on the PATH' : floor.byWrk.perSecond.toFixed(0),
      '',
    ],
    [
      '  watch delivery p50 / p99',
      `${ms(percentile(floor.latencies, 50))} / ${ms(percentile(floor.latencies, 99))}`,
      '',
    ],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  process.stdout.write(`\nlocal control plane benchmark (node ${process.version}, fsync on)\n`);
  for (const [name, value, goal] of rows)
    process.stdout.write(`${name.padEnd(width)}  ${value.padStart(20)}  ${goal}\n`);
} finally {
  await stopServer(first);
}
