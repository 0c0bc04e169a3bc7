// The operator's /metrics, /healthz and /readyz from the outside: plain HTTP against the
// metrics server while the operator, in-process, reconciles a scope applied with kubectl.
import { createConnection } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Kube, Namespaces } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import {
  type ObservabilityServer,
  OperatorMetrics,
  startObservabilityServer,
} from '../../src/observability.js';
import { type Operator, startOperator } from '../../src/operator.js';
import {
  installCrdsAndClasses,
  kubectl,
  type StartedCluster,
  startCluster,
  uniqueName,
} from '../support/cluster.js';
import { applicationYaml, scopeYaml } from '../support/manifests.js';
import { refusalLog } from '../support/operator-identity.js';
import { sleep } from '../support/wait.js';

const log = silentLogger();
const operatorLog = refusalLog();
const election = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 };

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** The Prometheus text format, sample lines only (label values here never hold quotes). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) {
      labels[pair[1] ?? ''] = pair[2] ?? '';
    }
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
  }
  return samples;
}

function find(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
}

describe('operator: metrics and health endpoints', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  /** The operators' own client: deploy/'s ServiceAccount, with the rights of deploy/rbac.yaml. */
  let operatorKube: Kube;
  let ns: string;
  let opNs: string;
  let metrics: OperatorMetrics;
  let server: ObservabilityServer;
  let operator: Operator | undefined;
  let standby: { operator: Operator; server: ObservabilityServer } | undefined;

  const get = async (target: ObservabilityServer, path: string) => {
    const response = await fetch(`${target.url}${path}`);
    return { status: response.status, body: await response.text() };
  };
  const scrape = async () => {
    const response = await get(server, '/metrics');
    expect(response.status).toBe(200);
    return parseMetrics(response.body);
  };
  const k = async (args: string[], input?: string) => {
    const result = await kubectl(cluster, args, input !== undefined ? { input } : {});
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };

  beforeAll(async () => {
    opNs = uniqueName('operator-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await installCrdsAndClasses(cluster);
    await kubectl(cluster, ['wait', '--for=condition=Established', 'crd/scopes.platform.nrn.dev']);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    operatorKube = await connect({
      kubeconfigPath: cluster.operatorKubeconfigPath,
      log: operatorLog.log,
    });
    ns = uniqueName('operator-metrics');
    await kube.resource(Namespaces).create({ metadata: { name: ns } });
    metrics = new OperatorMetrics();
    server = await startObservabilityServer({ metrics, log, port: 0 });
  });
  afterAll(async () => {
    await standby?.operator.stop();
    await standby?.server.close();
    await operator?.stop();
    await server?.close();
    // Whatever the operators did, deploy/rbac.yaml allowed.
    expect(operatorLog.refusals()).toEqual([]);
    if (cluster !== undefined && cluster.kind !== 'local') {
      await kubectl(cluster, ['delete', 'namespace', ns, opNs, '--wait=false']);
    }
    operatorKube?.close();
    kube?.close();
    await cluster?.close();
  });

  it('is live at once, and ready only once the operator has synced its informers', async () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.port).toBeGreaterThan(0);
    expect(await get(server, '/healthz')).toEqual({ status: 200, body: 'ok\n' });
    expect((await get(server, '/readyz')).status).toBe(503);
    expect((await get(server, '/nothing')).status).toBe(404);

    operator = await startOperator({
      kube: operatorKube,
      log: operatorLog.log,
      namespace: opNs,
      leaderElection: election,
      metrics,
    });
    expect((await get(server, '/readyz')).status).toBe(200);
    await operator.manager.elector?.elected();
    expect((await get(server, '/readyz')).status).toBe(200);
    expect(find(await scrape(), 'nrn_leader').map((s) => s.value)).toEqual([1]);
    // Another part the process waits for (the facade, in `run`) holds readiness until it is up.
    let facadeListening = false;
    metrics.requireReady(() => facadeListening);
    expect((await get(server, '/readyz')).status).toBe(503);
    facadeListening = true;
    expect((await get(server, '/readyz')).status).toBe(200);

    // Every controller has its series from the start, before any reconcile.
    const samples = await scrape();
    for (const controller of ['applications', 'scopes', 'services', 'servicespecifications']) {
      expect(find(samples, 'nrn_workqueue_depth', { controller }), controller).toHaveLength(1);
      expect(find(samples, 'nrn_reconcile_errors_total', { controller }), controller).toHaveLength(
        1,
      );
    }
  });

  it('a standby replica is ready too, though it does not lead', async () => {
    const standbyMetrics = new OperatorMetrics();
    const standbyServer = await startObservabilityServer({
      metrics: standbyMetrics,
      log,
      port: 0,
    });
    const standbyOperator = await startOperator({
      kube: operatorKube,
      log: operatorLog.log,
      namespace: opNs,
      leaderElection: election,
      metrics: standbyMetrics,
    });
    standby = { operator: standbyOperator, server: standbyServer };
    expect(standbyOperator.manager.elector?.isLeader()).toBe(false);
    expect((await get(standbyServer, '/readyz')).status).toBe(200);
    const standbySamples = parseMetrics((await get(standbyServer, '/metrics')).body);
    expect(find(standbySamples, 'nrn_leader').map((s) => s.value)).toEqual([0]);
    expect((await get(standbyServer, '/healthz')).status).toBe(200);
    await standbyOperator.stop();
    await standbyServer.close();
    standby = undefined;
  });

  it('counts reconciles, queue depth, API requests and resources by kind and status', async () => {
    await k(
      ['apply', '-f', '-'],
      `${applicationYaml(ns, 'shop', 31)}---${scopeYaml(ns, 'web', 31)}`,
    );
    await k(['wait', '-n', ns, '--for=jsonpath={.status.status}=active', 'scope/web']);

    // The informer cache follows the status write by a watch event: poll, do not race it.
    let samples = await scrape();
    const deadline = Date.now() + 5_000;
    const activeScopes = () => find(samples, 'nrn_resources', { kind: 'Scope', status: 'active' });
    while (activeScopes()[0] === undefined && Date.now() < deadline) {
      await sleep(50);
      samples = await scrape();
    }
    // Exactly one on a cluster of its own; a shared one may hold other tests' scopes.
    if (cluster.kind === 'local') {
      expect(activeScopes()).toEqual([expect.objectContaining({ value: 1 })]);
    } else {
      expect(activeScopes()[0]?.value).toBeGreaterThanOrEqual(1);
    }
    expect(
      find(samples, 'nrn_resources', { kind: 'Application', status: 'ready' })[0]?.value,
    ).toBeGreaterThanOrEqual(1);

    const scopeReconciles = find(samples, 'nrn_reconcile_total', { controller: 'scopes' });
    expect(scopeReconciles.map((s) => s.labels.outcome).sort()).toEqual([
      'error',
      'requeue',
      'stalled',
      'success',
    ]);
    expect(scopeReconciles.reduce((sum, s) => sum + s.value, 0)).toBeGreaterThan(0);
    expect(
      find(samples, 'nrn_reconcile_duration_seconds_count', { controller: 'scopes' })[0]?.value,
    ).toBeGreaterThan(0);
    expect(
      find(samples, 'nrn_workqueue_depth', { controller: 'scopes' })[0]?.value,
    ).toBeGreaterThanOrEqual(0);
    expect(find(samples, 'nrn_kube_api_requests_total')[0]?.value).toBeGreaterThan(0);
    expect(find(samples, 'nrn_kube_api_connections_total')[0]?.value).toBeGreaterThan(0);
    // The scope's Events follow its status in the background: the queue empties, none dropped.
    const eventsQueued = () => find(samples, 'nrn_events_queued')[0]?.value;
    while (eventsQueued() !== 0 && Date.now() < deadline + 5_000) {
      await sleep(50);
      samples = await scrape();
    }
    expect(eventsQueued()).toBe(0);
    expect(find(samples, 'nrn_events_dropped_total')).toEqual([
      expect.objectContaining({ value: 0 }),
    ]);
    // prom-client's default process metrics ride along.
    expect(find(samples, 'process_cpu_user_seconds_total')).toHaveLength(1);
    expect(find(samples, 'nodejs_heap_size_used_bytes')).toHaveLength(1);
  });

  it('goes unready on shutdown, and the server stops listening when closed', async () => {
    const stopping = operator?.stop();
    expect((await get(server, '/readyz')).status).toBe(503);
    expect(await stopping).toBe(true);
    expect((await get(server, '/healthz')).status).toBe(200);
    await server.close();
    // A fresh TCP connection: fetch would reuse its pooled keep-alive socket and fail otherwise.
    const refused = await new Promise<string | undefined>((resolve) => {
      const socket = createConnection(server.port, server.host);
      socket.once('connect', () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
    });
    expect(refused).toBe('ECONNREFUSED');
  });
});
