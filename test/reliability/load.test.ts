// Load: `nrn-operator local` (API server, operator and facade in one process) with GET /service
// at full speed from autocannon (the benchmark's query and connections, bench/facade.ts), scope
// creates through the facade at a steady 20 a second, and 200 watchers of scopes on the API
// server that ask for Tables and never read. No request fails, every create is a 200 and is
// there afterwards, and the process stays under 1 GiB of RSS (the Deployment's limit,
// deploy/deployment.yaml): unread watches cost bounded memory. Watchers the server closes for
// not reading are counted, not failed (ADR 0003: watchers' memory is bounded).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPE_ID_LABEL } from '../../src/domain/names.js';
import { kubectlAt } from '../support/cluster.js';
import { applicationYaml, namespaceYaml } from '../support/manifests.js';
import { crash, startLocalProcess, terminate } from '../support/operator-processes.js';
import { sleep } from '../support/wait.js';
import { FULL, report, size } from './support/scenario.js';

const SECONDS = size(15, 60);
const SERVICES = size(2_000, 20_000);
const WATCHERS = 200;
const CREATES_PER_SECOND = 20;
/** bench/facade.ts's connections: the rate it reaches is "the benchmark rate". */
const CONNECTIONS = 16;
/** The Deployment's memory limit: the process must live within it under this load. */
const RSS_BOUND_MIB = 1024;

const NS = 'load';
const APP_ID = 77;
const SPEC_ID = randomUUID();
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
/** bench/facade.ts's query: what one application sees, one type, a page of 30. */
const QUERY =
  '/service?id=organization=1:account=2:namespace=3:application=4&type=dependency&limit=30';

let dir: string;
let plane: Awaited<ReturnType<typeof startLocalProcess>>;
let facadeUrl: string;
let facadeToken: string;
let apiToken: string;
let ca: string;

/** One request to the API server as its admin. */
function api(
  method: string,
  path: string,
  body?: unknown,
  accept = 'application/json',
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${plane.url}${path}`,
      {
        method,
        ca,
        headers: {
          authorization: `Bearer ${apiToken}`,
          accept,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        timeout: 30_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.on('error', reject);
    req.end(body !== undefined ? JSON.stringify(body) : undefined);
  });
}

async function facade(method: string, path: string, body?: unknown) {
  const response = await fetch(`${facadeUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${facadeToken}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, text: await response.text() };
}

/** Runs `task` for 0..n-1, `width` at a time. */
async function concurrently(n: number, width: number, task: (i: number) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < n) await task(next++);
  };
  await Promise.all(Array.from({ length: width }, worker));
}

/** The child's resident set, from /proc (Linux), in MiB. */
async function rssMib(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/**
 * A watch of scopes as Tables whose client never reads. Its socket is paused, so it cannot see
 * the server close it either (nothing reads the end): the server's own count says how many it
 * closed (apiserver_terminated_watchers_total).
 */
interface Watcher {
  readonly end: () => void;
}

function openWatcher(watchers: Watcher[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const request: ClientRequest = httpsRequest(
      `${plane.url}/apis/platform.nrn.dev/v1alpha1/scopes?watch=true&allowWatchBookmarks=true`,
      { ca, agent: false, headers: { authorization: `Bearer ${apiToken}`, accept: TABLE } },
    );
    request.on('response', (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`watch: ${res.statusCode}`));
        return;
      }
      // Never read: what the server writes stays in its buffers and the kernel's.
      res.pause();
      res.socket.pause();
      res.on('error', () => {});
      watchers.push({ end: () => request.destroy() });
      resolve();
    });
    request.on('error', reject);
    request.end();
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nrn-load-'));
  const dataDir = join(dir, 'data');
  facadeToken = randomBytes(24).toString('hex');
  const tokenFile = join(dir, 'tokens.yaml');
  await writeFile(
    tokenFile,
    JSON.stringify({ tokens: [{ name: 'load', token: facadeToken, operations: ['*'] }] }),
    { mode: 0o600 },
  );
  plane = await startLocalProcess(dataDir, [
    '--facade-port',
    '0',
    '--facade-token-file',
    tokenFile,
  ]);
  const ready = plane.lines.find((l) => l.includes('ready:')) ?? '';
  const url = /facade at (http:\/\/[^;\s]+)/.exec(ready)?.[1];
  if (url === undefined) throw new Error(`no facade in ${ready}`);
  facadeUrl = url;
  apiToken = (await readFile(join(dataDir, 'apiserver-token'), 'utf8')).trim();
  ca = await readFile(join(dataDir, 'tls', 'ca.crt'), 'utf8');

  const k = kubectlAt(plane.kubeconfigPath);
  for (let i = 0; (await k(['get', 'crd', 'services.platform.nrn.dev'])).code !== 0; i++) {
    if (i > 120) throw new Error('the CRDs never came');
    await sleep(250);
  }
  await k(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=30s']);
  const applied = await k(
    ['apply', '-f', '-'],
    [namespaceYaml(NS), applicationYaml(NS, 'load-app', APP_ID)].join('---'),
  );
  if (applied.code !== 0) throw new Error(`kubectl apply: ${applied.stderr}`);
  const spec = await api(
    'POST',
    `/apis/platform.nrn.dev/v1alpha1/namespaces/${NS}/servicespecifications`,
    {
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'ServiceSpecification',
      metadata: { name: 'load-spec' },
      spec: {
        id: SPEC_ID,
        name: 'load-spec',
        type: 'dependency',
        attributes: { schema: { type: 'object', properties: { size: { type: 'string' } } } },
        provisioner: { type: 'none' },
      },
    },
  );
  if (spec.status !== 201) throw new Error(`specification: ${spec.status} ${spec.text}`);
  // A catalog to page through: services of ten applications, a tenth of them the query's.
  await concurrently(SERVICES, 16, async (i) => {
    const created = await api('POST', `/apis/platform.nrn.dev/v1alpha1/namespaces/${NS}/services`, {
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'Service',
      metadata: { name: `svc-${i}` },
      spec: {
        name: `service ${i}`,
        type: i % 3 === 0 ? 'scope' : 'dependency',
        specification_id: SPEC_ID,
        entity_nrn: `organization=1:account=2:namespace=3:application=${i % 10}`,
        attributes: { size: 'small' },
        provider: 'aws',
        category: 'database',
      },
    });
    if (created.status !== 201) throw new Error(`service ${i}: ${created.status} ${created.text}`);
  });
  // The facade lists them once its catalog has them: a full page.
  for (let i = 0; ; i++) {
    const page = await facade('GET', QUERY);
    if (
      page.status === 200 &&
      (JSON.parse(page.text) as { results: unknown[] }).results.length === 30
    )
      break;
    if (i > 240)
      throw new Error(`the catalog never filled: ${page.status} ${page.text.slice(0, 200)}`);
    await sleep(250);
  }
});

afterAll(async () => {
  if (plane !== undefined) {
    const stopped = await Promise.race([terminate(plane.child), sleep(20_000).then(() => 'late')]);
    if (stopped === 'late') await crash(plane);
  }
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('load: the facade at its benchmark rate, creates mixed in, 200 watchers that never read', () => {
  it(`${SECONDS} s: no request fails, every create is a 200 and is there after, RSS stays under ${RSS_BOUND_MIB} MiB`, async () => {
    const pid = plane.child.pid;
    if (pid === undefined) throw new Error('no pid');
    const rssAtStart = await rssMib(pid);

    const watchers: Watcher[] = [];
    await concurrently(WATCHERS, 20, () => openWatcher(watchers));
    expect(watchers.length).toBe(WATCHERS);

    let peakRss = rssAtStart;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peakRss = Math.max(peakRss, await rssMib(pid));
        await sleep(250);
      }
    })();

    // Creates at a steady pace, each on its own: a slow answer does not slow the pace.
    const creates: { status: number; ms: number; id?: number; text: string }[] = [];
    const inFlight = new Set<Promise<void>>();
    let creating = true;
    const creator = (async () => {
      const started = performance.now();
      for (let i = 0; creating; i++) {
        const due = started + (i * 1000) / CREATES_PER_SECOND;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        if (!creating) break;
        const t0 = performance.now();
        const one = facade('POST', '/scope', {
          name: `load ${i}`,
          type: 'web_pool',
          application_id: APP_ID,
          requested_spec: { memory_in_gb: 1, cpu_profile: 'standard', local_storage_in_gb: 1 },
        })
          .then((answer) => {
            const id =
              answer.status === 200 ? (JSON.parse(answer.text) as { id: number }).id : undefined;
            creates.push({
              status: answer.status,
              ms: performance.now() - t0,
              text: answer.text.slice(0, 300),
              ...(id !== undefined ? { id } : {}),
            });
          })
          .catch((error: unknown) => {
            creates.push({ status: 0, ms: performance.now() - t0, text: String(error) });
          })
          .finally(() => inFlight.delete(one));
        inFlight.add(one);
      }
    })();

    const result = await autocannon({
      url: `${facadeUrl}${QUERY}`,
      connections: CONNECTIONS,
      duration: SECONDS,
      headers: { authorization: `Bearer ${facadeToken}` },
    });
    creating = false;
    await creator;
    await Promise.all([...inFlight]);
    sampling = false;
    await sampler;

    // Read while the watchers are still open: what the server holds for them unread.
    const metrics = (await api('GET', '/metrics')).text;
    for (const w of watchers) w.end();
    const sum = (name: string) =>
      [
        ...metrics.matchAll(
          new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?(?:e\\+\\d+)?)`, 'gm'),
        ),
      ].reduce((total, m) => total + Number(m[1]), 0);
    const terminated = sum('apiserver_terminated_watchers_total');
    const registered = sum('apiserver_registered_watchers');
    const bufferedMib = sum('apiserver_watch_buffered_bytes') / 2 ** 20;

    const createMs = creates.map((c) => c.ms);
    const failedCreates = creates.filter((c) => c.status !== 200);
    const ids = creates.flatMap((c) => (c.id !== undefined ? [c.id] : []));
    // Every acknowledged create is there: the scopes of the application, by id.
    const listed = JSON.parse(
      (await api('GET', `/apis/platform.nrn.dev/v1alpha1/namespaces/${NS}/scopes`)).text,
    ) as { items: { metadata: { labels?: Record<string, string> } }[] };
    const stored = new Set(listed.items.map((s) => Number(s.metadata.labels?.[SCOPE_ID_LABEL])));
    const missing = ids.filter((id) => !stored.has(id));

    const figures = {
      getReqPerSecond: Math.round(result.requests.average),
      getP50Ms: result.latency.p50,
      getP99Ms: result.latency.p99,
      createsPerSecond: Number((creates.length / SECONDS).toFixed(1)),
      createP50Ms: Math.round(percentile(createMs, 50)),
      createP99Ms: Math.round(percentile(createMs, 99)),
      rssStartMiB: Math.round(rssAtStart),
      peakRssMiB: Math.round(peakRss),
      watchers: WATCHERS,
      watchersClosed: terminated,
      registeredWatchersAtEnd: registered,
      watchBufferedMiB: Number(bufferedMib.toFixed(1)),
      seconds: SECONDS,
      full: FULL ? 1 : 0,
    };
    await report({
      scenario: 'load',
      tried:
        `${SECONDS} s of GET /service (${CONNECTIONS} connections, autocannon, ${SERVICES} services) ` +
        `with POST /scope at ${CREATES_PER_SECOND}/s and ${WATCHERS} Table watches of scopes that never read`,
      found:
        `GET ${figures.getReqPerSecond} req/s p50/p99 ${figures.getP50Ms}/${figures.getP99Ms} ms ` +
        `(${result.errors} errors, ${result.non2xx} non-2xx); ${creates.length} creates, ` +
        `${failedCreates.length} not 200, p50/p99 ${figures.createP50Ms}/${figures.createP99Ms} ms, ` +
        `${missing.length} missing after; RSS ${figures.rssStartMiB} -> peak ${figures.peakRssMiB} MiB ` +
        `(bound ${RSS_BOUND_MIB}); watchers the server closed for not reading ${terminated} ` +
        `(apiserver_terminated_watchers_total); at the end ${registered} watches registered ` +
        `(the operator's and the facade's included), ${bufferedMib.toFixed(1)} MiB held unread`,
      figures,
    });

    expect(result.errors, 'autocannon errors').toBe(0);
    expect(result.non2xx, 'GET /service answers other than 2xx').toBe(0);
    expect(result.requests.total).toBeGreaterThan(0);
    expect(failedCreates.slice(0, 5)).toEqual([]);
    expect(creates.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(peakRss).toBeLessThan(RSS_BOUND_MIB);
    expect(plane.child.exitCode).toBeNull();
    expect((await api('GET', '/healthz')).status).toBe(200);
  });
});
