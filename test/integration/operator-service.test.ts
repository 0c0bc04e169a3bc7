// Services from the outside: ServiceSpecifications and Services created against a cluster with
// the operator running in-process, the provider a real HTTP server on 127.0.0.1 that checks
// each call's signature and answers as each test wants.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifySignature,
} from '../../src/controllers/provisioners/webhook/index.js';
import { DEFAULT_PROVIDER_BACKOFF, RawServices } from '../../src/controllers/service/index.js';
import { RawSpecifications } from '../../src/controllers/specification/index.js';
import { connect, type Kube, Namespaces, Secrets } from '../../src/kube/index.js';
import { type Operator, startOperator } from '../../src/operator.js';
import { kubectl, type StartedCluster, startCluster, uniqueName } from '../support/cluster.js';
import { lifecycle, readUntil, sleep, untilCount } from '../support/wait.js';

/** Every line the operator logs (debug and up): no secret value may be among them. */
const logged: string[] = [];
const log = pino({ level: 'debug' }, { write: (line: string) => void logged.push(line) });
const SIGNING_KEY = 'test-signing-key-0123456789';
const SPEC_ID = '0b6f3a52-5a8e-4c41-9a57-2d3c4b5a6f70';
const FLAKY_SPEC_ID = '1c7a4b63-6b9f-4d52-8b68-3e4d5c6b7a81';
const SHORT_SPEC_ID = '2d8b5c74-7ca0-4e63-9c79-4f5e6d7c8b92';
const LATE_SPEC_ID = '3e9c6d85-8db1-4f74-8d8a-506f7e8d9ca3';

interface Received {
  readonly name: string;
  readonly action: string;
  readonly body: {
    action: string;
    metadata: { name: string; namespace: string; uid: string };
    spec: Record<string, unknown>;
    attributes: Record<string, unknown>;
  };
  readonly verified: boolean;
  readonly headers: IncomingHttpHeaders;
  /** When it came (Date.now()). */
  readonly at: number;
}

interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

interface ServiceView {
  metadata: { generation?: number; uid?: string; finalizers?: string[]; resourceVersion?: string };
  spec?: Record<string, unknown>;
  status?: {
    status?: string;
    observedRetry?: string;
    secretAttributesHash?: string;
    slug?: string;
    updated_at?: string;
    observedGeneration?: number;
    messages?: { level: string; message: string }[];
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

const activeReply = (): Reply => ({ status: 200, body: { status: 'active' } });

/** A provider: records every call and answers with the handler registered for the service. */
class Provider {
  readonly calls: Received[] = [];
  private readonly handlers = new Map<string, (call: Received, nth: number) => Reply>();
  private server: Server | undefined;
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const body = JSON.parse(raw) as Received['body'];
        const header = (h: string) => {
          const v = req.headers[h];
          return Array.isArray(v) ? v[0] : v;
        };
        const call: Received = {
          name: body.metadata.name,
          action: body.action,
          body,
          verified: verifySignature(
            SIGNING_KEY,
            header(TIMESTAMP_HEADER),
            header(SIGNATURE_HEADER),
            raw,
          ),
          headers: req.headers,
          at: Date.now(),
        };
        this.calls.push(call);
        const nth = this.calls.filter((c) => c.name === call.name).length;
        const reply = call.verified
          ? (this.handlers.get(call.name) ?? activeReply)(call, nth)
          : { status: 401, body: { message: 'bad signature' } };
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
      });
    });
    const server = this.server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
  }

  on(name: string, handler: (call: Received, nth: number) => Reply): void {
    this.handlers.set(name, handler);
  }

  callsOf(name: string): Received[] {
    return this.calls.filter((c) => c.name === name);
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('operator: services', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  /** The operator's own client: deploy/'s ServiceAccount, with the rights of deploy/rbac.yaml. */
  let operatorKube: Kube;
  let operator: Operator;
  let ns: string;
  let opNs: string;
  const provider = new Provider();
  const late = new Provider();
  let downPort = 0;

  const schema = {
    type: 'object',
    properties: {
      host: { type: 'string' },
      port: { type: 'integer', minimum: 1, maximum: 65535 },
      password: { type: 'string', secret: true },
    },
    required: ['host'],
  };
  const specification = (
    name: string,
    id: string,
    url: string,
    extra: Record<string, unknown> = {},
  ) => ({
    metadata: { name, namespace: ns },
    spec: {
      id,
      name,
      type: 'dependency',
      attributes: { schema },
      provisioner: {
        type: 'webhook',
        url,
        signing_secret_ref: { name: 'provider-signing' },
        deadline_seconds: 60,
        ...extra,
      },
    },
  });
  const createService = async (
    name: string,
    attributes: Record<string, unknown>,
    extra: Record<string, unknown> = {},
    specificationId = SPEC_ID,
  ) =>
    kube.resource(RawServices).create({
      metadata: { name, namespace: ns },
      spec: {
        name: `Service ${name}`,
        type: 'dependency',
        specification_id: specificationId,
        entity_nrn: 'organization=1:account=2',
        attributes,
        ...extra,
      },
    });
  const getService = async (name: string): Promise<ServiceView> =>
    (await kube.resource(RawServices).get({ namespace: ns, name })) as ServiceView;
  /** Polls until `check` holds, recording every lifecycle value seen on the way. */
  const waitService = (
    name: string,
    check: (s: ServiceView) => boolean,
    seen: string[] = [],
    timeoutMs = 15_000,
  ): Promise<ServiceView> =>
    readUntil(`service ${name}`, () => getService(name), check, {
      seen,
      timeoutMs,
      intervalMs: 20,
    });
  const condition = (s: ServiceView, type: string) =>
    s.status?.conditions?.find((c) => c.type === type);
  /** As the scope tests: the Events about service `name`, once there are `count`. */
  const eventReasons = (name: string, count: number): Promise<string[]> =>
    untilCount(() => readEventReasons(name), count);
  const readEventReasons = async (name: string): Promise<string[]> => {
    const result = await kubectl(cluster, [
      'get',
      'events',
      '-n',
      ns,
      '--field-selector',
      `involvedObject.name=${name}`,
      '-o',
      'json',
    ]);
    const list = JSON.parse(result.stdout) as {
      items: { reason: string; involvedObject: { kind: string }; metadata: { name: string } }[];
    };
    return list.items
      .filter((e) => e.involvedObject.kind === 'Service')
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))
      .map((e) => e.reason);
  };

  beforeAll(async () => {
    opNs = uniqueName('operator-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await kubectl(cluster, ['apply', '-f', join(import.meta.dirname, '../../crds')]);
    await kubectl(cluster, [
      'wait',
      '--for=condition=Established',
      'crd/services.platform.nrn.dev',
    ]);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    operatorKube = await connect({ kubeconfigPath: cluster.operatorKubeconfigPath, log });
    ns = uniqueName('operator-service');
    await kube.resource(Namespaces).create({ metadata: { name: ns } });
    await provider.start();
    downPort = await freePort();
    await kube.resource(Secrets).create({
      metadata: { name: 'provider-signing', namespace: ns },
      data: { key: b64(SIGNING_KEY) },
    });
    const base = `http://127.0.0.1:${provider.port}/hook`;
    const specs = kube.resource(RawSpecifications);
    await specs.create(specification('db', SPEC_ID, base));
    await specs.create(specification('flaky', FLAKY_SPEC_ID, `http://127.0.0.1:${downPort}/hook`));
    await specs.create(specification('short', SHORT_SPEC_ID, base, { deadline_seconds: 1 }));
    operator = await startOperator({
      kube: operatorKube,
      log,
      namespace: opNs,
      leaderElection: false,
    });
  });
  afterAll(async () => {
    expect(await operator?.stop()).toBe(true);
    // Whatever the operator did, deploy/rbac.yaml allowed.
    expect(logged.filter((line) => /forbidden/i.test(line))).toEqual([]);
    await provider.stop();
    await late.stop();
    if (cluster !== undefined && cluster.kind !== 'local') {
      await kubectl(cluster, ['delete', 'namespace', ns, opNs, '--wait=false']);
    }
    operatorKube?.close();
    kube?.close();
    await cluster?.close();
  });

  it('a specification with its signing secret is Ready; one whose secret is missing is not', async () => {
    const wait = await kubectl(cluster, [
      'wait',
      '--for=condition=Ready',
      'servicespecification/db',
      '-n',
      ns,
      '--timeout=10s',
    ]);
    expect(wait.code).toBe(0);
    await kube.resource(RawSpecifications).create(
      specification('unsigned', '4fad7e96-9ec2-4a85-9e9b-617a8f9eadb4', 'http://127.0.0.1:1/x', {
        signing_secret_ref: { name: 'no-such-secret' },
      }),
    );
    const deadline = Date.now() + 10_000;
    for (;;) {
      const spec = await kube.resource(RawSpecifications).get({ namespace: ns, name: 'unsigned' });
      const ready = (spec.status as ServiceView['status'])?.conditions?.find(
        (c) => c.type === 'Ready',
      );
      if (ready !== undefined) {
        expect(ready).toMatchObject({ status: 'False', reason: 'WaitingForSigningSecret' });
        break;
      }
      if (Date.now() > deadline) throw new Error('specification never checked');
      await sleep(20);
    }
  });

  it('immediate success: active, signed call, outputs in a Secret, Ready', async () => {
    provider.on('quick', () => ({
      status: 200,
      body: { status: 'active', attributes: { endpoint: 'db.internal:5432', tls: true } },
    }));
    await createService('quick', { host: 'db.internal', port: 5432 });
    const active = await waitService('quick', (s) => s.status?.status === 'active');
    expect(active.status?.slug).toBe('service-quick');
    expect(active.status?.updated_at).toBeDefined();
    expect(active.status?.observedGeneration).toBe(active.metadata.generation);
    expect(condition(active, 'Ready')).toMatchObject({ status: 'True', reason: 'Provisioned' });
    expect(active.metadata.finalizers).toContain('platform.nrn.dev/service-cleanup');

    const calls = provider.callsOf('quick');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.verified).toBe(true);
    expect(calls[0]?.body).toMatchObject({
      action: 'create',
      metadata: { name: 'quick', namespace: ns, uid: active.metadata.uid },
      spec: { name: 'Service quick', specification_id: SPEC_ID },
      attributes: { host: 'db.internal', port: 5432 },
    });

    const outputs = await kube.resource(Secrets).get({ namespace: ns, name: 'quick-outputs' });
    const data = outputs.data as Record<string, string>;
    expect(Buffer.from(data.endpoint ?? '', 'base64').toString()).toBe('db.internal:5432');
    expect(Buffer.from(data.tls ?? '', 'base64').toString()).toBe('true');
    expect(outputs.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'Service',
      uid: active.metadata.uid,
    });
    expect(await eventReasons('quick', 4)).toEqual([
      'Accepted',
      'Validated',
      'Provisioning',
      'Provisioned',
    ]);
  });

  it('asynchronous: creating (polled after Retry-After) then active', async () => {
    provider.on('slow', (_call, nth) =>
      nth === 1
        ? {
            status: 202,
            body: { status: 'creating', messages: ['allocating storage'] },
            headers: { 'retry-after': '1' },
          }
        : { status: 200, body: { status: 'active' } },
    );
    await createService('slow', { host: 'slow.internal' });
    const seen: string[] = [];
    const creating = await waitService('slow', (s) => s.status?.status === 'creating', seen);
    await waitService(
      'slow',
      (s) => s.status?.messages?.[0]?.message === 'allocating storage',
      seen,
    );
    expect(condition(creating, 'Reconciling')?.status).toBe('True');
    const started = Date.now();
    await waitService('slow', (s) => s.status?.status === 'active', seen);
    expect(Date.now() - started).toBeGreaterThan(500);
    expect(seen).toContain('creating');
    expect(seen.at(-1)).toBe('active');
    expect(provider.callsOf('slow')).toHaveLength(2);
  });

  it('asynchronous without Retry-After: polled with growing backoff, then active', async () => {
    provider.on('unhurried', (_call, nth) =>
      nth <= 4
        ? { status: 202, body: { status: 'creating' } }
        : { status: 200, body: { status: 'active' } },
    );
    await createService('unhurried', { host: 'u.internal' });
    await waitService('unhurried', (s) => s.status?.status === 'active');
    const calls = provider.callsOf('unhurried');
    expect(calls).toHaveLength(5);
    const gaps = calls.slice(1).map((c, i) => c.at - (calls[i] as Received).at);
    // DEFAULT_PROVIDER_BACKOFF: 500 ms doubling, each delay drawn from [d / 2, d]; the
    // queue may run a key later than asked, never sooner.
    const { initialMs, jitter } = DEFAULT_PROVIDER_BACKOFF;
    const floor = (attempt: number) => Math.floor(initialMs * 2 ** attempt * (1 - jitter));
    // The fourth wait (>= 2 s) is what a fixed poll would not make.
    gaps.forEach((gap, attempt) => {
      expect(gap).toBeGreaterThanOrEqual(floor(attempt));
    });
  });

  it('provider refusal: 4xx is failed with its message, and not called again', async () => {
    provider.on('refused', () => ({
      status: 422,
      body: { message: 'plan xl is not offered in this region' },
    }));
    await createService('refused', { host: 'r' });
    const failed = await waitService('refused', (s) => s.status?.status === 'failed');
    expect(failed.status?.messages?.[0]).toEqual({
      level: 'error',
      message: 'plan xl is not offered in this region',
    });
    expect(condition(failed, 'Stalled')).toMatchObject({
      status: 'True',
      reason: 'ProvisionRefused',
    });
    await sleep(500);
    expect(provider.callsOf('refused')).toHaveLength(1);
  });

  it('a failed service is retried on a spec change', async () => {
    provider.on('refused', () => ({ status: 200, body: { status: 'active' } }));
    await kube
      .resource(RawServices)
      .patch({ namespace: ns, name: 'refused' }, { spec: { attributes: { host: 'r2' } } });
    await waitService(
      'refused',
      (s) => s.status?.status === 'active' && s.status.observedGeneration === s.metadata.generation,
    );
    expect(provider.callsOf('refused').at(-1)?.body.attributes).toEqual({ host: 'r2' });
    expect(provider.callsOf('refused').at(-1)?.action).toBe('create');
  });

  it('provider down: retried and not failed within the deadline, active once it comes up', async () => {
    await createService('patient', { host: 'p' }, {}, FLAKY_SPEC_ID);
    const down = await waitService('patient', (s) =>
      (s.status?.messages?.[0]?.message ?? '').includes('ECONNREFUSED'),
    );
    expect(down.status?.status).toBe('creating');
    expect(condition(down, 'Reconciling')).toMatchObject({
      status: 'True',
      reason: 'ProviderUnavailable',
    });
    await sleep(1500);
    expect((await getService('patient')).status?.status).toBe('creating');
    // The provider comes up on the port the specification names.
    late.on('patient', (_call, nth) =>
      nth === 1
        ? { status: 503, body: { message: 'warming up' } }
        : { status: 200, body: { status: 'active' } },
    );
    await late.start(downPort);
    const active = await waitService('patient', (s) => s.status?.status === 'active', [], 20_000);
    expect(condition(active, 'Provisioning')).toMatchObject({
      status: 'False',
      reason: 'Succeeded',
    });
    expect(late.callsOf('patient').length).toBeGreaterThanOrEqual(2);
    expect(late.callsOf('patient').every((c) => c.verified)).toBe(true);
  });

  it('past the deadline, a provider that keeps failing makes the service failed', async () => {
    provider.on('doomed', () => ({ status: 503, body: { message: 'maintenance' } }));
    await createService('doomed', { host: 'd' }, {}, SHORT_SPEC_ID);
    const failed = await waitService('doomed', (s) => s.status?.status === 'failed', [], 10_000);
    expect(condition(failed, 'Stalled')?.reason).toBe('DeadlineExceeded');
    expect(failed.status?.messages?.[0]?.message).toContain('maintenance');
  });

  it('invalid attributes: failed naming the field, no provider call', async () => {
    await createService('bad-port', { host: 'h', port: 'eighty' });
    const failed = await waitService('bad-port', (s) => s.status?.status === 'failed');
    expect(failed.status?.messages?.[0]?.message).toBe('attributes.port: must be integer');
    expect(condition(failed, 'Stalled')?.reason).toBe('InvalidAttributes');
    expect(provider.callsOf('bad-port')).toHaveLength(0);
  });

  it('a secret attribute in the plain spec is failed, naming it', async () => {
    await createService('leaky', { host: 'h', password: 'hunter2' });
    const failed = await waitService('leaky', (s) => s.status?.status === 'failed');
    const message = failed.status?.messages?.[0]?.message ?? '';
    expect(message).toContain('attributes.password is secret');
    expect(message).not.toContain('hunter2');
    expect(condition(failed, 'Stalled')?.reason).toBe('SecretInSpec');
    expect(provider.callsOf('leaky')).toHaveLength(0);
  });

  it('secret attributes come from the Secret, reach the provider, and stay out of the Service', async () => {
    const password = 'pw-4c1d-not-in-the-resource';
    await createService('secretive', { host: 'h' }, { secret_attributes_ref: { name: 'creds' } });
    const waiting = await waitService('secretive', (s) => s.status?.status === 'pending');
    expect(waiting.status?.messages?.[0]?.message).toContain('secret creds');
    await kube.resource(Secrets).create({
      metadata: { name: 'creds', namespace: ns },
      data: { password: b64(password) },
    });
    await waitService('secretive', (s) => s.status?.status === 'active', [], 15_000);
    const call = provider.callsOf('secretive')[0];
    expect(call?.verified).toBe(true);
    expect(call?.body.attributes).toEqual({ host: 'h', password });
    expect(call?.body.spec.secret_attributes_ref).toBeUndefined();
    const raw = await kubectl(cluster, [
      'get',
      'service.platform.nrn.dev',
      'secretive',
      '-n',
      ns,
      '-o',
      'json',
    ]);
    expect(raw.code).toBe(0);
    expect(raw.stdout).not.toContain(password);
    const events = await kubectl(cluster, ['get', 'events', '-n', ns, '-o', 'json']);
    expect(events.stdout).not.toContain(password);
  });

  it('an imported service is active with no provider call', async () => {
    await createService('elsewhere', { host: 'h' }, { selectors: { imported: true } });
    const active = await waitService('elsewhere', (s) => s.status?.status === 'active');
    expect(condition(active, 'Ready')?.reason).toBe('Imported');
    expect(provider.callsOf('elsewhere')).toHaveLength(0);
  });

  it('specification created late: pending with a message, then active', async () => {
    await createService('early', { host: 'h' }, {}, LATE_SPEC_ID);
    const pending = await waitService('early', (s) => s.status?.status === 'pending');
    expect(pending.status?.messages?.[0]?.message).toContain(
      `specification ${LATE_SPEC_ID} does not exist`,
    );
    expect(condition(pending, 'Reconciling')).toMatchObject({
      status: 'True',
      reason: 'WaitingForSpecification',
    });
    await kube
      .resource(RawSpecifications)
      .create(specification('late', LATE_SPEC_ID, `http://127.0.0.1:${provider.port}/hook`));
    await waitService('early', (s) => s.status?.status === 'active');
    expect(provider.callsOf('early')).toHaveLength(1);
  });

  it('a spec change on an active service is an update call; delete is a delete call', async () => {
    await kube
      .resource(RawServices)
      .patch(
        { namespace: ns, name: 'quick' },
        { spec: { attributes: { host: 'db2', port: 6543 } } },
      );
    await waitService(
      'quick',
      (s) => s.status?.status === 'active' && s.status.observedGeneration === s.metadata.generation,
    );
    expect(provider.callsOf('quick').at(-1)).toMatchObject({
      action: 'update',
      body: { attributes: { host: 'db2', port: 6543 } },
    });
    expect((await eventReasons('quick', 6)).slice(4)).toEqual(['Updating', 'Provisioned']);

    provider.on('quick', (call) =>
      call.action === 'delete' ? { status: 204 } : { status: 200, body: { status: 'active' } },
    );
    const del = await kubectl(cluster, [
      'delete',
      'service.platform.nrn.dev',
      'quick',
      '-n',
      ns,
      '--timeout=15s',
    ]);
    expect(del.code).toBe(0);
    expect(provider.callsOf('quick').at(-1)?.action).toBe('delete');
    const gone = await kubectl(cluster, ['get', 'service.platform.nrn.dev', 'quick', '-n', ns]);
    expect(gone.stderr).toContain('NotFound');
  });

  it('goes through every lifecycle value, as a watch sees it, from accepted to deleted', async () => {
    const actions = new Map<string, number>();
    provider.on('traced', (call) => {
      const nth = (actions.get(call.action) ?? 0) + 1;
      actions.set(call.action, nth);
      const ongoing = call.action === 'delete' ? 'deleting' : 'creating';
      const done = call.action === 'delete' ? 'deleted' : 'active';
      return nth === 1
        ? { status: 202, body: { status: ongoing }, headers: { 'retry-after': '1' } }
        : { status: 200, body: { status: done } };
    });
    // Every write is an event of this watch (an informer of a client of its own), so no value
    // written can slip between two reads, as it could when polling.
    const watcher = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    const services = watcher.informer(RawServices, {
      namespace: ns,
      fieldSelector: 'metadata.name=traced',
    });
    const seen = lifecycle(services);
    let gone = false;
    services.on('delete', () => {
      gone = true;
    });
    await services.start();
    try {
      await createService('traced', { host: 't.internal' });
      await waitService('traced', (s) => s.status?.status === 'active');
      const del = await kubectl(cluster, [
        'delete',
        'service.platform.nrn.dev',
        'traced',
        '-n',
        ns,
        '--timeout=30s',
      ]);
      expect(del.code).toBe(0);
      await expect.poll(() => gone, { timeout: 10_000 }).toBe(true);
      expect(seen).toEqual([
        'pending_create',
        'pending',
        'creating',
        'active',
        'deleting',
        'deleted',
      ]);
      expect(await eventReasons('traced', 6)).toEqual([
        'Accepted',
        'Validated',
        'Provisioning',
        'Provisioned',
        'Deleting',
        'Deleted',
      ]);
    } finally {
      await services.stop();
      watcher.close();
    }
  });

  it('a refused service is tried again on a retry annotation, once per value', async () => {
    provider.on('retried', (_call, nth) =>
      nth <= 2
        ? { status: 422, body: { message: 'region full' } }
        : { status: 200, body: { status: 'active' } },
    );
    const retry = async (...pairs: string[]) => {
      const result = await kubectl(cluster, [
        'annotate',
        'service.platform.nrn.dev',
        'retried',
        '-n',
        ns,
        '--overwrite',
        ...pairs,
      ]);
      expect(result.code, result.stderr).toBe(0);
    };
    await createService('retried', { host: 'h' });
    await waitService('retried', (s) => s.status?.status === 'failed');
    expect(provider.callsOf('retried')).toHaveLength(1);

    // Refused again: failed with the same message, and not called again.
    await retry('platform.nrn.dev/retry=1');
    const seen: string[] = [];
    const again = await waitService(
      'retried',
      (s) => s.status?.observedRetry === '1' && s.status.status === 'failed',
      seen,
    );
    expect(again.status?.messages?.[0]).toEqual({ level: 'error', message: 'region full' });
    await sleep(700);
    expect(provider.callsOf('retried')).toHaveLength(2);
    expect((await getService('retried')).metadata.resourceVersion).toBe(
      again.metadata.resourceVersion,
    );
    expect(seen.at(-1)).toBe('failed');

    await retry('platform.nrn.dev/retry=2');
    const active = await waitService(
      'retried',
      (s) => s.status?.status === 'active' && s.status.observedRetry === '2',
    );
    expect(provider.callsOf('retried')).toHaveLength(3);
    expect(provider.callsOf('retried').at(-1)?.action).toBe('create');
    expect(active.status?.observedGeneration).toBe(1);

    // The same value applied again, with other changes to the object: no provider call.
    await retry('platform.nrn.dev/retry=2', 'example.com/synced=1');
    await sleep(700);
    expect(provider.callsOf('retried')).toHaveLength(3);
    // A new value on an active service is recorded, nothing more.
    await retry('platform.nrn.dev/retry=3');
    await waitService('retried', (s) => s.status?.observedRetry === '3');
    await sleep(500);
    expect(provider.callsOf('retried')).toHaveLength(3);
    expect((await getService('retried')).status?.status).toBe('active');
    expect(await eventReasons('retried', 10)).toEqual([
      'Accepted',
      'Validated',
      'Provisioning',
      'ProvisionRefused',
      'Retrying',
      'Provisioning',
      'ProvisionRefused',
      'Retrying',
      'Provisioning',
      'Provisioned',
    ]);
  });

  it('a change of the attribute Secret re-validates and re-provisions the service', async () => {
    const first = 'pw-first-7d1e';
    const second = 'pw-second-93ab';
    const invalidPort = 'port-9f3c-not-a-number';
    const secrets = kube.resource(Secrets);
    await secrets.create({
      metadata: { name: 'rotating', namespace: ns },
      data: { password: b64(first) },
    });
    await createService('rotated', { host: 'h' }, { secret_attributes_ref: { name: 'rotating' } });
    const active = await waitService('rotated', (s) => s.status?.status === 'active');
    const hash = active.status?.secretAttributesHash ?? '';
    expect(hash).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(provider.callsOf('rotated')).toHaveLength(1);
    // The Secret is labelled, so the operator's label-selected watch sees it.
    const labelled = await secrets.get({ namespace: ns, name: 'rotating' });
    expect(labelled.metadata.labels?.['platform.nrn.dev/attributes-secret']).toBe('true');

    // New data: validated again, and the provider gets an update with the new value.
    const rotatedEvents = (await readEventReasons('rotated')).length;
    await secrets.patch({ namespace: ns, name: 'rotating' }, { data: { password: b64(second) } });
    const seen: string[] = [];
    const updated = await waitService(
      'rotated',
      (s) =>
        s.status?.status === 'active' &&
        s.status.secretAttributesHash !== hash &&
        provider.callsOf('rotated').length === 2,
      seen,
    );
    expect(provider.callsOf('rotated').at(-1)).toMatchObject({
      action: 'update',
      body: { attributes: { host: 'h', password: second } },
    });
    expect(updated.metadata.generation).toBe(active.metadata.generation);
    expect((await eventReasons('rotated', rotatedEvents + 2)).slice(-2)).toEqual([
      'Updating',
      'Provisioned',
    ]);

    // Only the labels change: the content is the same, nothing is called.
    await secrets.patch(
      { namespace: ns, name: 'rotating' },
      { metadata: { labels: { 'example.com/team': 'a' } } },
    );
    await sleep(700);
    expect(provider.callsOf('rotated')).toHaveLength(2);

    // Data the specification refuses: failed, naming the field, and no call.
    await secrets.patch({ namespace: ns, name: 'rotating' }, { data: { port: b64(invalidPort) } });
    const failed = await waitService('rotated', (s) => s.status?.status === 'failed');
    expect(failed.status?.messages?.[0]?.message).toBe('attributes.port: must be integer');
    expect(condition(failed, 'Stalled')?.reason).toBe('InvalidAttributes');
    expect(provider.callsOf('rotated')).toHaveLength(2);

    // Fixed in the Secret alone: provisioned again.
    await secrets.patch({ namespace: ns, name: 'rotating' }, { data: { port: b64('5432') } });
    await waitService(
      'rotated',
      (s) => s.status?.status === 'active' && provider.callsOf('rotated').length === 3,
    );
    expect(provider.callsOf('rotated').at(-1)).toMatchObject({
      action: 'update',
      body: { attributes: { host: 'h', password: second, port: 5432 } },
    });

    // No value in the Service, its Events or the operator's logs.
    const raw = await kubectl(cluster, [
      'get',
      'service.platform.nrn.dev',
      'rotated',
      '-n',
      ns,
      '-o',
      'json',
    ]);
    const events = await kubectl(cluster, ['get', 'events', '-n', ns, '-o', 'json']);
    for (const value of [first, second, invalidPort]) {
      expect(raw.stdout).not.toContain(value);
      expect(events.stdout).not.toContain(value);
      expect(logged.filter((line) => line.includes(value))).toEqual([]);
    }
    expect(logged.some((line) => line.includes('service attribute secret changed'))).toBe(true);
  });

  it('every call the provider received was signed correctly', () => {
    const all = [...provider.calls, ...late.calls];
    expect(all.length).toBeGreaterThan(5);
    expect(all.every((c) => c.verified)).toBe(true);
  });
});
