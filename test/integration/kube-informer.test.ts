// src/kube's informer: lists and follows changes, re-watches when the server ends a watch,
// relists after 410, rides out an unreachable server and HTTP errors on its list and watch,
// backs off a 410 storm, gives up a dead watch at its idle deadline, keeps its indexes right,
// and stops for good.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { renderCrdFiles, ScopeSpec } from '../../src/api/index.js';
import {
  ConfigMaps,
  connect,
  defineResource,
  type Informer,
  type Kube,
  KubeApiError,
  type KubeObject,
  KubeTransportError,
  LAST_APPLIED_ANNOTATION,
  leanObject,
  Namespaces,
  Scopes,
} from '../../src/kube/index.js';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { silentLogger } from '../../src/log.js';
import { kubectl, startCluster, type TestCluster, uniqueName } from '../support/cluster.js';
import { type FaultRule, FaultyProxy } from '../support/faulty-proxy.js';

const log = silentLogger();
const fastBackoff = { initialMs: 50, maxMs: 400, jitter: 0.5 };

/** A scope, labelled `team` (what the index test moves: application_id is immutable). */
function scope(namespace: string, name: string, app = 1) {
  return {
    metadata: { name, namespace, labels: { team: String(app) } },
    spec: { name, type: 'serverless' as const, application_id: app, requested_spec: {} },
  };
}

/** Records an informer's events as `add x`, `update x`, `delete x`. */
function record<S, T>(informer: Informer<S, T>) {
  const events: string[] = [];
  const errors: Error[] = [];
  informer.on('add', (o) => events.push(`add ${o.metadata.name}`));
  informer.on('update', (o) => events.push(`update ${o.metadata.name}`));
  informer.on('delete', (o) => events.push(`delete ${o.metadata.name}`));
  informer.on('error', (e) => errors.push(e));
  return { events, errors };
}

const names = (objects: readonly KubeObject[]) => objects.map((o) => o.metadata.name).sort();

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('kube informer', () => {
  let cluster: TestCluster;
  let kube: Kube;
  let ns: string;

  beforeAll(async () => {
    cluster = await startCluster();
    await kubectl(cluster, ['apply', '-f', join(import.meta.dirname, '../../crds')]);
    await kubectl(cluster, ['wait', '--for=condition=Established', 'crd/scopes.platform.nrn.dev']);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    ns = uniqueName('kube-informer');
    await kube.resource(Namespaces).create({ metadata: { name: ns } });
  });
  afterAll(async () => {
    await kube?.resource(Namespaces).delete({ name: ns });
    kube?.close();
    await cluster?.close();
  });

  it('lists, follows adds, updates and deletes, and keeps its index right', async () => {
    const scopes = kube.resource(Scopes);
    await scopes.create(scope(ns, 'before-1', 1));
    await scopes.create(scope(ns, 'before-2', 2));
    const informer = kube.informer(Scopes, { namespace: ns, backoff: fastBackoff });
    informer.addIndex('team', (o) => {
      const team = o.metadata.labels?.team;
      return team !== undefined ? [team] : [];
    });
    const { events, errors } = record(informer);
    await informer.start();
    try {
      expect(informer.hasSynced()).toBe(true);
      expect(names(informer.cache.list())).toEqual(['before-1', 'before-2']);
      expect(events.sort()).toEqual(['add before-1', 'add before-2']);
      expect(names(informer.byIndex('team', '1'))).toEqual(['before-1']);

      await scopes.create(scope(ns, 'after', 1));
      await until(() => events.includes('add after'));
      expect(names(informer.byIndex('team', '1'))).toEqual(['after', 'before-1']);

      // An update that moves an object from one index value to another.
      await scopes.patch({ namespace: ns, name: 'after' }, { metadata: { labels: { team: '2' } } });
      await until(() => events.includes('update after'));
      expect(informer.cache.get(ns, 'after')?.metadata.labels?.team).toBe('2');
      expect(names(informer.byIndex('team', '1'))).toEqual(['before-1']);
      expect(names(informer.byIndex('team', '2'))).toEqual(['after', 'before-2']);

      await scopes.delete({ namespace: ns, name: 'after' });
      await until(() => events.includes('delete after'));
      expect(names(informer.cache.list())).toEqual(['before-1', 'before-2']);
      expect(names(informer.byIndex('team', '2'))).toEqual(['before-2']);
      expect(errors).toEqual([]);
      expect(informer.lists).toBe(1);
    } finally {
      await informer.stop();
    }
  });

  it('pages its list, and reports objects our schema refuses without stopping', async () => {
    const scopes = kube.resource(Scopes);
    const labelled = (name: string, specName: string) => ({
      metadata: { name, namespace: ns, labels: { set: 'strict' } },
      spec: { ...scope(ns, name).spec, name: specName },
    });
    await scopes.create(labelled('s-1', 'ok1'));
    await scopes.create(labelled('s-2', 'ok2'));
    await scopes.create(labelled('s-3', 'too-long'));
    // A stricter schema than the CRD's stands for objects that drifted from ours.
    const strict = defineResource({
      ...Scopes,
      spec: ScopeSpec.extend({ name: z.string().max(3) }),
    });
    const informer = kube.informer(strict, {
      namespace: ns,
      labelSelector: 'set=strict',
      pageSize: 1,
      backoff: fastBackoff,
    });
    const { events, errors } = record(informer);
    const invalid: string[] = [];
    informer.on('invalid', (error, key) => invalid.push(`${key} ${error.problems.join()}`));
    await informer.start();
    try {
      expect(names(informer.cache.list())).toEqual(['s-1', 's-2']);
      expect(invalid).toEqual([
        `${ns}/s-3 spec.name: Too big: expected string to have <=3 characters`,
      ]);
      expect(informer.isRefused(`${ns}/s-3`)).toBe(true);
      expect(informer.isRefused(`${ns}/s-1`)).toBe(false);

      // An update to an invalid spec: reported, and the last valid version stays cached.
      await scopes.patch({ namespace: ns, name: 's-1' }, { spec: { name: 'now-too-long' } });
      await until(() => invalid.length === 2);
      expect(invalid[1]).toMatch(new RegExp(`^${ns}/s-1 spec.name: `));
      expect(informer.cache.get(ns, 's-1')?.spec?.name).toBe('ok1');
      // ... and a reader can tell that what is cached for it is not its latest version.
      expect(informer.isRefused(`${ns}/s-1`)).toBe(true);
      await scopes.patch({ namespace: ns, name: 's-3' }, { spec: { name: 'ok3' } });
      await until(() => events.includes('add s-3'));
      expect(informer.isRefused(`${ns}/s-3`)).toBe(false);

      // Deleting it removes it, whatever its last version looked like; the watch goes on.
      await scopes.delete({ namespace: ns, name: 's-1' });
      await until(() => events.includes('delete s-1'));
      await scopes.create(labelled('s-4', 'ok4'));
      await until(() => events.includes('add s-4'));
      expect(names(informer.cache.list())).toEqual(['s-2', 's-3', 's-4']);
      expect(informer.isRefused(`${ns}/s-1`)).toBe(false);
      expect(errors).toEqual([]);
      expect(informer.lists).toBe(1);
    } finally {
      await informer.stop();
    }
  });

  it('transforms objects before caching and emitting them (leanObject drops managedFields)', async () => {
    const configMaps = kube.resource(ConfigMaps);
    const annotations = {
      [LAST_APPLIED_ANNOTATION]: '{"a":"copy"}',
      keep: 'me',
    };
    await configMaps.apply(
      { metadata: { name: 'lean-1', namespace: ns, labels: { set: 'lean' }, annotations } },
      { fieldManager: 'test' },
    );
    const raw = await configMaps.get({ namespace: ns, name: 'lean-1' });
    expect(raw.metadata.managedFields).toBeDefined();
    const informer = kube.informer(ConfigMaps, {
      namespace: ns,
      labelSelector: 'set=lean',
      transform: leanObject,
    });
    const seen: KubeObject[] = [];
    informer.on('add', (o) => seen.push(o));
    informer.on('update', (o) => seen.push(o));
    await informer.start();
    try {
      // From the list, then from the watch.
      await configMaps.apply(
        {
          metadata: {
            name: 'lean-2',
            namespace: ns,
            labels: { set: 'lean' },
            annotations: { [LAST_APPLIED_ANNOTATION]: '{}' },
          },
        },
        { fieldManager: 'test' },
      );
      await until(() => seen.length === 2);
      for (const object of [...seen, ...informer.cache.list()]) {
        expect(object.metadata.managedFields).toBeUndefined();
        expect(object.metadata.annotations?.[LAST_APPLIED_ANNOTATION]).toBeUndefined();
      }
      expect(informer.cache.get(ns, 'lean-1')?.metadata.annotations).toEqual({ keep: 'me' });
      // Nothing else left: the annotations are gone with their only entry.
      expect(informer.cache.get(ns, 'lean-2')?.metadata.annotations).toBeUndefined();
      expect(informer.cache.get(ns, 'lean-2')?.metadata.uid).toBeDefined();
    } finally {
      await informer.stop();
    }
  });

  it('resyncs: re-emits every cached object as an update', async () => {
    const configMaps = kube.resource(ConfigMaps);
    await configMaps.create({ metadata: { name: 'resync', namespace: ns } });
    const informer = kube.informer(ConfigMaps, { namespace: ns, resyncMs: 100 });
    const olds: boolean[] = [];
    informer.on('update', (object, old) => olds.push(object === old));
    await informer.start();
    try {
      await until(() => olds.length >= 2);
      expect(olds.every(Boolean)).toBe(true);
    } finally {
      await informer.stop();
    }
  });

  it('re-watches when the server ends the watch at timeoutSeconds, without listing again', async () => {
    const configMaps = kube.resource(ConfigMaps);
    const informer = kube.informer(ConfigMaps, {
      namespace: ns,
      watchTimeoutSeconds: { min: 1, max: 1 },
      backoff: fastBackoff,
    });
    const { events, errors } = record(informer);
    await informer.start();
    try {
      await until(() => informer.watches >= 3, 10_000);
      await configMaps.create({ metadata: { name: 'after-timeouts', namespace: ns } });
      await until(() => events.includes('add after-timeouts'));
      expect(informer.lists).toBe(1);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });

  it('stop() is final: no events, no timers, no requests after it, and it is idempotent', async () => {
    const configMaps = kube.resource(ConfigMaps);
    const baseline = timers();
    const informer = kube.informer(ConfigMaps, { namespace: ns, resyncMs: 50 });
    const { events, errors } = record(informer);
    await informer.start();
    await informer.stop();
    const seen = events.length;
    const requests = kube.stats.requests;
    await configMaps.create({ metadata: { name: 'after-stop', namespace: ns } });
    await sleep(300); // six resync periods, and time for a watch event to arrive
    expect(events.length).toBe(seen);
    expect(errors).toEqual([]);
    expect(kube.stats.requests).toBe(requests + 1); // only the create above
    expect(timers()).toBeLessThanOrEqual(baseline);
    await informer.stop();
    await expect(informer.start()).rejects.toThrow(/stopped/);
  });

  it('shares one list+watch and cache among callers asking for the same kind and options', async () => {
    const configMaps = kube.resource(ConfigMaps);
    const options = { namespace: ns, labelSelector: 'shared=yes' };
    const requests = kube.stats.requests;
    const a = kube.informer(ConfigMaps, options);
    const b = kube.informer(ConfigMaps, { labelSelector: 'shared=yes', namespace: ns });
    const lean = kube.informer(ConfigMaps, { ...options, transform: leanObject });
    expect(b.cache).toBe(a.cache);
    expect(lean.cache).not.toBe(a.cache);
    const byValue = (o: KubeObject) => [String((o as { data?: { v?: string } }).data?.v)];
    a.addIndex('by-v', byValue);
    b.addIndex('by-v', byValue); // the same index, named by both holders: kept once
    const seenByA = record(a);
    const seenByB = record(b);
    await Promise.all([a.start(), b.start()]);
    await until(() => a.isWatching());
    expect(kube.stats.requests - requests).toBe(2); // one list, one watch

    const shared = (name: string) => ({
      metadata: { name, namespace: ns, labels: { shared: 'yes' } },
      data: { v: name },
    });
    await configMaps.create(shared('shared-1'));
    await until(() => seenByA.events.length === 1 && seenByB.events.length === 1);
    expect(b.byIndex('by-v', 'shared-1').map((o) => o.metadata.name)).toEqual(['shared-1']);

    // One holder's stop() detaches its listeners only: the other keeps following.
    await a.stop();
    await expect(a.start()).rejects.toThrow(/stopped/);
    await configMaps.create(shared('shared-2'));
    await until(() => seenByB.events.includes('add shared-2'));
    expect(seenByA.events).toEqual(['add shared-1']);
    expect(b.isWatching()).toBe(true);

    // The last stop() stops the informer; the next caller gets a fresh one.
    await b.stop();
    expect(b.isWatching()).toBe(false);
    const fresh = kube.informer(ConfigMaps, options);
    const early = kube.informer(ConfigMaps, options);
    expect(fresh.cache).not.toBe(b.cache);
    // A holder stopped before the first list: its start() fails, the other's completes.
    const freshStart = fresh.start();
    const earlyStart = early.start();
    await early.stop();
    await expect(earlyStart).rejects.toThrow(/stopped before it synced/);
    await freshStart;
    expect(names(fresh.cache.list())).toEqual(['shared-1', 'shared-2']);
    await fresh.stop();
    await lean.stop();
    expect(seenByA.errors).toEqual([]);
    expect(seenByB.errors).toEqual([]);
  });

  it('stop() before the first list ends start() with an error instead of hanging', async () => {
    const informer = kube.informer(ConfigMaps, { namespace: ns });
    const started = informer.start();
    await informer.stop();
    await expect(started).rejects.toThrow(/stopped before it synced/);
  });
});

// These end watches, shrink the watch window and restart the server: the local control plane only.
describe('kube informer when the server ends watches or goes away (local control plane)', () => {
  let plane: ControlPlane;
  let dataDir: string;
  let kube: Kube;
  const ns = 'default';

  const start = (port?: number) =>
    startControlPlane({
      dataDir,
      fsync: false,
      watchWindow: 4,
      bookmarkIntervalMs: 3_600_000,
      ...(port !== undefined ? { port } : {}),
    });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'nrn-kube-informer-'));
    plane = await start();
    const crd = renderCrdFiles().get('scopes.platform.nrn.dev.yaml') as string;
    const cluster = {
      kind: 'local' as const,
      kubeconfigPath: plane.kubeconfigPath,
      settle: async () => {},
      close: async () => {},
    };
    const applied = await kubectl(cluster, ['apply', '-f', '-'], { input: crd });
    expect(applied.code).toBe(0);
    kube = await connect({ kubeconfigPath: plane.kubeconfigPath, log });
    await kube.resource(Namespaces).create({ metadata: { name: 'elsewhere' } });
  });
  afterAll(async () => {
    kube?.close();
    await plane?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('re-watches when the server closes the watch, and lists again after a 410', async () => {
    const scopes = kube.resource(Scopes);
    await scopes.create(scope(ns, 'first'));
    const informer = kube.informer(Scopes, { namespace: ns, backoff: fastBackoff });
    const { events, errors } = record(informer);
    await informer.start();
    try {
      expect(informer.lists).toBe(1);
      await until(() => informer.isWatching());
      plane.dropWatches();
      await scopes.create(scope(ns, 'after-close'));
      await until(() => events.includes('add after-close'));
      expect(informer.lists).toBe(1); // it resumed the watch; no new list was needed
      expect(informer.watches).toBeGreaterThanOrEqual(2);

      // Changes elsewhere push the informer's resourceVersion out of the 4-event window ...
      for (let i = 0; i < 8; i++) await scopes.create(scope('elsewhere', `other-${i}`));
      // ... so when its watch ends, resuming it answers 410 and the informer lists again.
      await until(() => informer.isWatching());
      plane.dropWatches();
      await until(() => informer.lists >= 2);
      await scopes.create(scope(ns, 'after-relist'));
      await until(() => events.includes('add after-relist'));
      expect(names(informer.cache.list())).toEqual(['after-close', 'after-relist', 'first']);
      // A relist of unchanged objects emits nothing: no duplicate adds.
      expect(events.filter((e) => e === 'add first')).toHaveLength(1);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });

  it('rides out an unreachable server, then relists and emits what changed meanwhile', async () => {
    const scopes = kube.resource(Scopes);
    for (const name of ['keep', 'change', 'remove']) await scopes.create(scope(ns, `r-${name}`));
    const informer = kube.informer(Scopes, {
      namespace: ns,
      labelSelector: '!excluded',
      backoff: fastBackoff,
    });
    const { events, errors } = record(informer);
    await informer.start();
    try {
      await until(() => informer.isWatching());
      const port = plane.port;
      await plane.close();
      await until(() => errors.length >= 2); // it keeps retrying, and says so each time

      // Changes the informer cannot see: made through a server on another port.
      const aside = await start();
      const other = await connect({ kubeconfigPath: aside.kubeconfigPath, log });
      const otherScopes = other.resource(Scopes);
      await otherScopes.create(scope(ns, 'r-added'));
      await otherScopes.patch({ namespace: ns, name: 'r-change' }, { spec: { tier: 'critical' } });
      await otherScopes.delete({ namespace: ns, name: 'r-remove' });
      other.close();
      await aside.close();

      // The server comes back where the informer looks for it.
      plane = await start(port);
      await until(() => events.includes('delete r-remove') && events.includes('add r-added'));
      expect(events).toContain('update r-change');
      expect(informer.cache.get(ns, 'r-change')?.spec?.tier).toBe('critical');
      expect(informer.cache.get(ns, 'r-remove')).toBeUndefined();
      expect(informer.lists).toBeGreaterThanOrEqual(2);
      expect(errors.every((e) => e instanceof KubeTransportError)).toBe(true);

      // And it follows live changes again.
      await scopes.create(scope(ns, 'r-live'));
      await until(() => events.includes('add r-live'));
    } finally {
      await informer.stop();
    }
  });
  it('rides out HTTP errors on its list and its watch (500, 503, 429, 403), then follows', async () => {
    const proxy = await FaultyProxy.start(plane.kubeconfigPath);
    const dir = await mkdtemp(join(tmpdir(), 'nrn-informer-faults-'));
    const behind = await connect({
      kubeconfigPath: await proxy.kubeconfig(plane.kubeconfigPath, join(dir, 'kubeconfig')),
      log,
    });
    const scopes = `^/apis/platform\\.nrn\\.dev/v1alpha1/namespaces/${ns}/scopes\\?`;
    const list = new RegExp(`${scopes}(?!.*watch=true)`);
    const watch = new RegExp(`${scopes}.*watch=true`);
    const rules: FaultRule[] = [
      { method: 'GET', path: list, fault: { status: 500 }, times: 2 },
      { method: 'GET', path: watch, fault: { status: 503 }, times: 1 },
      { method: 'GET', path: watch, fault: { status: 429, retryAfterSeconds: 1 }, times: 1 },
      // RBAC not granted yet: it may be, so this is retried too.
      { method: 'GET', path: watch, fault: { status: 403 }, times: 1 },
    ];
    proxy.rules.push(...rules);
    const informer = behind.informer(Scopes, { namespace: ns, backoff: fastBackoff });
    const { events, errors } = record(informer);
    try {
      await informer.start();
      await until(() => rules.every((r) => r.times === 0) && informer.isWatching());
      await kube.resource(Scopes).create(scope(ns, 'h-after'));
      await until(() => events.includes('add h-after'));
      const codes = errors.map((e) => (e instanceof KubeApiError ? e.code : e.name));
      expect(codes).toEqual(expect.arrayContaining([500, 503, 429, 403]));
    } finally {
      await informer.stop();
      behind.close();
      await proxy.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('backs off a 410 storm (every watch expired, in-stream or HTTP): no list+watch hot loop', async () => {
    const proxy = await FaultyProxy.start(plane.kubeconfigPath);
    const dir = await mkdtemp(join(tmpdir(), 'nrn-informer-410-'));
    const behind = await connect({
      kubeconfigPath: await proxy.kubeconfig(plane.kubeconfigPath, join(dir, 'kubeconfig')),
      log,
    });
    const watch = new RegExp(
      `^/apis/platform\\.nrn\\.dev/v1alpha1/namespaces/${ns}/scopes\\?.*watch=true`,
    );
    const informer = behind.informer(Scopes, { namespace: ns, backoff: fastBackoff });
    const { events, errors } = record(informer);
    const inStream: FaultRule = { method: 'GET', path: watch, fault: 'expired-event', times: 0 };
    const answered: FaultRule = { method: 'GET', path: watch, fault: { status: 410 }, times: 0 };
    try {
      await informer.start();
      await until(() => informer.isWatching());
      const windowMs = 2_000;
      const [lists, watches] = [informer.lists, informer.watches];
      inStream.times = Number.POSITIVE_INFINITY;
      proxy.rules.push(inStream, answered);
      proxy.dropWatches();
      await sleep(windowMs / 2);
      // kube-apiserver answers either way: the ERROR event, then the HTTP status.
      inStream.times = 0;
      answered.times = Number.POSITIVE_INFINITY;
      await sleep(windowMs / 2);
      answered.times = 0;
      // Each list+watch after the first waits its backoff (25, 50, 100, 200, 200... ms at the
      // least, with this backoff): 13 in 2 s, plus the one listed at once. Without backoff,
      // several hundred.
      expect(informer.watches - watches).toBeLessThanOrEqual(14);
      expect(informer.lists - lists).toBeLessThanOrEqual(14);
      expect(informer.lists - lists).toBeGreaterThanOrEqual(2);
      await kube.resource(Scopes).create(scope(ns, 'after-storm'));
      await until(() => events.includes('add after-storm'));
      // 410 is the server saying its history moved on: not a failure to report.
      expect(errors.filter((e) => e instanceof KubeApiError && e.code === 410)).toEqual([]);
    } finally {
      await informer.stop();
      behind.close();
      await proxy.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// A server that answers the list, then holds the watch open and silent: a dead connection.
describe('kube informer with a watch that goes silent', () => {
  let server: ReturnType<typeof createServer>;
  let dir: string;
  let kubeconfigPath: string;
  let watchRequests = 0;
  let openWatches = 0;

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.searchParams.get('watch') === 'true') {
        watchRequests++;
        openWatches++;
        res.on('close', () => openWatches--);
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.flushHeaders();
        return; // and nothing more, ever
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMapList',
          metadata: { resourceVersion: '5' },
          items: [{ metadata: { name: 'only', namespace: 'default', resourceVersion: '5' } }],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    dir = await mkdtemp(join(tmpdir(), 'nrn-kube-silent-'));
    kubeconfigPath = join(dir, 'kubeconfig');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      kubeconfigPath,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'c',
            cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true },
          },
        ],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('gives up a silent watch at its idle deadline and watches again', async () => {
    const kube = await connect({ kubeconfigPath, log });
    const informer = kube.informer(ConfigMaps, {
      namespace: 'default',
      watchTimeoutSeconds: { min: 1, max: 1 },
      idleSlackMs: 100,
      backoff: fastBackoff,
    });
    const { errors } = record(informer);
    await informer.start();
    try {
      expect(names(informer.cache.list())).toEqual(['only']);
      await until(() => watchRequests >= 2, 10_000);
      expect(errors[0]).toBeInstanceOf(KubeTransportError);
      expect((errors[0] as KubeTransportError).errorCode).toBe('IDLE_TIMEOUT');
      expect(informer.lists).toBe(1);
    } finally {
      await informer.stop();
      kube.close();
    }
    await until(() => openWatches === 0, 2_000); // stop() aborted the open watch
  });
});
