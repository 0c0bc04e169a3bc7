// The operator behind an API server that fails some of its requests (test/support/faulty-proxy.ts):
// 429 with Retry-After, 500, 503 and reset connections, on a scope's writes (status, metadata,
// the id counter, the namespace provisioner's) and a service's (status, finalizer, the Secret
// of its outputs, an Event). Each is retried (and counted in /metrics): neither is ever marked
// failed, and each ends active. The proxy forwards the operator's bearer token, so this runs
// where the kubeconfig's credentials are a token and a CA (the local control plane);
// elsewhere it is skipped.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawServices } from '../../src/controllers/service/index.js';
import { RawSpecifications } from '../../src/controllers/specification/index.js';
import { connect, type Kube, Namespaces, Scopes, Secrets } from '../../src/kube/index.js';
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
import { type FaultRule, FaultyProxy } from '../support/faulty-proxy.js';
import { applicationYaml, scopeYaml } from '../support/manifests.js';
import { refusalLog } from '../support/operator-identity.js';
import { lifecycle } from '../support/wait.js';

const log = silentLogger();
const operatorLog = refusalLog();
const SPEC_ID = '0b7c3f52-64a1-4f0e-9a57-3c1d2e4f5a6b';

/** A counter of /metrics, by its name and the label set written out exactly. */
async function counter(server: ObservabilityServer, series: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('operator: API errors are transient', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  let behind: Kube;
  let proxy: FaultyProxy;
  let operator: Operator;
  let metricsServer: ObservabilityServer;
  let dir: string;
  let ns: string;
  let opNs: string;
  let usable = true;
  // A provider that provisions every service at once, with an output attribute (its answers
  // are not under test here).
  let provider: Server | undefined;

  beforeAll(async () => {
    opNs = uniqueName('api-faults-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    const kubeconfig = await readFile(cluster.kubeconfigPath, 'utf8');
    usable = kubeconfig.includes('token:') && kubeconfig.includes('certificate-authority-data:');
    if (!usable) return;
    await installCrdsAndClasses(cluster);
    await kubectl(cluster, ['wait', '--for=condition=Established', 'crd/scopes.platform.nrn.dev']);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    ns = uniqueName('api-faults');
    await kube.resource(Namespaces).create({ metadata: { name: ns } });
    dir = await mkdtemp(join(tmpdir(), 'nrn-api-faults-'));
    proxy = await FaultyProxy.start(cluster.kubeconfigPath);
    // The operator's own identity (deploy/rbac.yaml's rights), through the proxy.
    const through = await proxy.kubeconfig(cluster.operatorKubeconfigPath, join(dir, 'kubeconfig'));
    behind = await connect({ kubeconfigPath: through, log: operatorLog.log });
    provider = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ status: 'active', attributes: { endpoint: 'cache.internal:6379' } }),
        );
      });
    });
    await new Promise<void>((resolve) => provider?.listen(0, '127.0.0.1', resolve));
    const port = (provider.address() as AddressInfo).port;
    await kube.resource(Secrets).create({
      metadata: { name: 'provider-signing', namespace: ns },
      data: { key: Buffer.from('signing-key').toString('base64') },
    });
    await kube.resource(RawSpecifications).create({
      metadata: { name: 'cache', namespace: ns },
      spec: {
        id: SPEC_ID,
        name: 'cache',
        type: 'dependency',
        attributes: {
          schema: { type: 'object', properties: { size: { type: 'string' } } },
        },
        provisioner: {
          type: 'webhook',
          url: `http://127.0.0.1:${port}/hook`,
          signing_secret_ref: { name: 'provider-signing' },
        },
      },
    });
    const metrics = new OperatorMetrics();
    metricsServer = await startObservabilityServer({ metrics, log, port: 0 });
    operator = await startOperator({
      kube: behind,
      log: operatorLog.log,
      namespace: opNs,
      leaderElection: false,
      metrics,
    });
  });
  afterAll(async () => {
    await operator?.stop();
    // Whatever the operator did, deploy/rbac.yaml allowed (the proxy's faults are no 403).
    expect(operatorLog.refusals()).toEqual([]);
    await metricsServer?.close();
    behind?.close();
    await proxy?.close();
    provider?.closeAllConnections();
    await new Promise((resolve) =>
      provider === undefined ? resolve(undefined) : provider.close(resolve),
    );
    if (cluster !== undefined && cluster.kind !== 'local' && usable) {
      await kubectl(cluster, ['delete', 'namespace', ns, opNs, '--wait=false']);
    }
    kube?.close();
    await cluster?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('a scope whose writes meet 429, 500, 503 and resets is retried to active, never failed', async (context) => {
    if (!usable) context.skip();
    const scopePath = `/apis/platform.nrn.dev/v1alpha1/namespaces/${ns}/scopes/faulty`;
    const rules: FaultRule[] = [
      { method: 'GET', path: /\/configmaps\/nrn-scope-ids/, fault: { status: 500 }, times: 1 },
      {
        method: 'PATCH',
        path: new RegExp(`^${scopePath}/status`),
        fault: { status: 503 },
        times: 2,
      },
      // Twice: the transport retries a request on a reset connection once by itself.
      { method: 'PATCH', path: new RegExp(`^${scopePath}(\\?|$)`), fault: 'reset', times: 2 },
      // The provisioner's namespace (created, then applied when it exists).
      {
        method: 'POST',
        path: /^\/api\/v1\/namespaces\?fieldManager=/,
        fault: { status: 500 },
        times: 1,
      },
      {
        method: 'PATCH',
        path: /^\/api\/v1\/namespaces\/nrn-scope-\d+\/resourcequotas\//,
        fault: { status: 429, retryAfterSeconds: 1 },
        times: 1,
      },
    ];
    proxy.rules.push(...rules);
    // Every status written, as a watch of a client of its own (not behind the proxy) sees it.
    const watched = kube.informer(Scopes, { namespace: ns, fieldSelector: 'metadata.name=faulty' });
    const seen = lifecycle(watched);
    await watched.start();
    try {
      const applied = await kubectl(cluster, ['apply', '-f', '-'], {
        input: `${applicationYaml(ns, 'shop', 41)}---${scopeYaml(ns, 'faulty', 41)}`,
      });
      expect(applied.code).toBe(0);
      // Settled either way, so that a scope marked failed fails here, at once.
      await expect
        .poll(() => seen.at(-1), { timeout: 45_000, interval: 50 })
        .toMatch(/^(active|failed)$/);
      expect(seen).not.toContain('failed');
      const waited = await kubectl(cluster, [
        'wait',
        '--for=condition=Ready',
        'scope/faulty',
        '-n',
        ns,
        '--timeout=10s',
      ]);
      expect(waited.code).toBe(0);
      // Every fault was met on the way.
      expect(rules.map((r) => r.times)).toEqual([0, 0, 0, 0, 0]);
      expect(seen.at(-1)).toBe('active');
      // The reconciles that met them failed, were counted, and were retried.
      expect(
        await counter(metricsServer, 'nrn_reconcile_errors_total{controller="scopes"}'),
      ).toBeGreaterThan(0);
      const scope = await kube.resource(Scopes).get({ namespace: ns, name: 'faulty' });
      const stalled = scope.status?.conditions?.find((c) => c.type === 'Stalled');
      expect(stalled?.status ?? 'False').toBe('False');
      const quota = await kubectl(cluster, [
        'get',
        'resourcequota',
        'scope-quota',
        '-n',
        `nrn-scope-${scope.status?.id}`,
      ]);
      expect(quota.code).toBe(0);
    } finally {
      await watched.stop();
    }
  });
  it('a service whose writes meet 500, 503, 429 and resets is retried to active, never failed', async (context) => {
    if (!usable) context.skip();
    const servicePath = `/apis/platform.nrn.dev/v1alpha1/namespaces/${ns}/services/shaky`;
    const rules: FaultRule[] = [
      {
        method: 'PATCH',
        path: new RegExp(`^${servicePath}/status`),
        fault: { status: 503 },
        times: 3,
      },
      // The finalizer's patch; twice, as the transport retries a reset connection once.
      {
        method: 'PATCH',
        path: new RegExp(`^${servicePath}(\\?|$)`),
        fault: 'reset',
        times: 2,
      },
      // Its provider's outputs, kept in a Secret of its own: read, then applied.
      {
        method: 'GET',
        path: new RegExp(`^/api/v1/namespaces/${ns}/secrets/shaky-outputs`),
        fault: { status: 500 },
        times: 1,
      },
      {
        method: 'PATCH',
        path: new RegExp(`^/api/v1/namespaces/${ns}/secrets/shaky-outputs`),
        fault: { status: 503 },
        times: 1,
      },
      {
        method: 'POST',
        path: new RegExp(`^/api/v1/namespaces/${ns}/events`),
        fault: { status: 429, retryAfterSeconds: 1 },
        times: 1,
      },
    ];
    proxy.rules.push(...rules);
    const watched = kube.informer(RawServices, {
      namespace: ns,
      fieldSelector: 'metadata.name=shaky',
    });
    const seen = lifecycle(watched);
    await watched.start();
    try {
      await kube.resource(RawServices).create({
        metadata: { name: 'shaky', namespace: ns },
        spec: {
          name: 'shaky',
          type: 'dependency',
          specification_id: SPEC_ID,
          entity_nrn: 'organization=1:account=2',
          attributes: { size: 'small' },
        },
      });
      await expect
        .poll(() => seen.at(-1), { timeout: 45_000, interval: 50 })
        .toMatch(/^(active|failed)$/);
      expect(seen).not.toContain('failed');
      expect(rules.map((r) => r.times)).toEqual([0, 0, 0, 0, 0]);
      const outputs = await kube.resource(Secrets).get({ namespace: ns, name: 'shaky-outputs' });
      const data = (outputs.data ?? {}) as Record<string, string>;
      expect(Buffer.from(data.endpoint ?? '', 'base64').toString()).toBe('cache.internal:6379');
      expect(seen).toEqual(['pending_create', 'pending', 'creating', 'active']);
      expect(
        await counter(metricsServer, 'nrn_reconcile_errors_total{controller="services"}'),
      ).toBeGreaterThan(0);
    } finally {
      await watched.stop();
    }
  });
});
