// The statuses the operator really writes, one per kind and lifecycle case, recorded from a run:
// one local control plane and one operator, every kind driven through kubectl (a signed fake
// agent answers the webhook provisioning protocol for scopes and services), each object read
// back with `kubectl get -o json` and normalised (test/fixtures/statuses/README.md). With
// NRN_RECORD_STATUSES=1 the fixtures are written; otherwise each must equal its fixture, so
// what the Argo CD health checks and the kstatus test read can never drift from what the
// operator writes.

import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifySignature,
} from '../../src/controllers/provisioners/webhook/index.js';
import { computeKStatus, type KStatusObject } from '../../src/domain/kstatus.js';
import { connect, type Kube, rawResource } from '../../src/kube/index.js';
import { type Operator, startOperator } from '../../src/operator.js';
import { kubectl, type StartedCluster, startCluster, uniqueName } from '../support/cluster.js';
import { applicationYaml, scopeYaml } from '../support/manifests.js';
import { readUntil } from '../support/wait.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const FIXTURES = join(ROOT, 'test/fixtures/statuses');
const RECORD = process.env.NRN_RECORD_STATUSES === '1';
const RECORD_COMMAND =
  'NRN_RECORD_STATUSES=1 npx vitest run test/integration/recorded-statuses.test.ts';
/** Fixed, so the fixtures' namespaces, NRNs and domains are the same on every run. */
const NS = 'recorded';
/** What every timestamp the API server or the operator chose is replaced with. */
const FIXED_TIME = '2000-01-01T00:00:00Z';
/** What the agent's origin (its port differs per run) is replaced with in every string. */
const AGENT_ORIGIN = 'http://agent.test';
const SIGNING_KEY = 'recorded-statuses-signing-key';
const SPEC_ID = '6f1d2c3b-4a59-4e68-9d7c-8b9a0f1e2d3c';
const STALE_SPEC_ID = '7a2e3d4c-5b6a-4f79-8e8d-9cab1f2e3d4e';
const MISSING_SPEC_ID = '8b3f4e5d-6c7b-4a8a-9f9e-adbc2a3f4e5f';
/** An in-progress answer is polled again after this: never, within a run. */
const LATER = { 'retry-after': '3600' };

type Kind = 'application' | 'scope' | 'service' | 'servicespecification' | 'scopeclass';
type Json = Record<string, unknown>;
interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
}
interface View {
  metadata: { name: string; generation?: number; deletionTimestamp?: string };
  status?: {
    status?: string;
    observedGeneration?: number;
    conditions?: Condition[];
  };
}

const conditionOf = (view: View, type: string) =>
  view.status?.conditions?.find((c) => c.type === type);
const observed = (view: View) => view.status?.observedGeneration === view.metadata.generation;

/**
 * The object with what differs from run to run replaced or removed (the README's list); keys
 * sorted, so a re-recording gives the same bytes.
 */
function normalise(object: Json): Json {
  const copy = structuredClone(object) as {
    metadata: Record<string, unknown>;
    status?: { conditions?: { lastTransitionTime?: string }[]; updated_at?: string };
  };
  for (const field of ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields'])
    delete copy.metadata[field];
  if (copy.metadata.deletionTimestamp !== undefined) copy.metadata.deletionTimestamp = FIXED_TIME;
  for (const condition of copy.status?.conditions ?? []) condition.lastTransitionTime = FIXED_TIME;
  // Service: when the phase last changed, to the millisecond.
  if (copy.status?.updated_at !== undefined) copy.status.updated_at = '2000-01-01T00:00:00.000Z';
  return sorted(copy) as Json;
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value as Json)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => [k, sorted(v)]),
  );
}

interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}
interface Call {
  readonly action: string;
  readonly metadata: { name: string; generation?: number };
}

/**
 * The provisioning agent: checks each call's signature, then answers as the case named by the
 * object's name wants (default: active at once).
 */
class Agent {
  private server: Server | undefined;
  private readonly handlers = new Map<string, (call: Call) => Reply>();
  port = 0;

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const header = (h: string) => {
          const v = req.headers[h];
          return Array.isArray(v) ? v[0] : v;
        };
        const signed = verifySignature(
          SIGNING_KEY,
          header(TIMESTAMP_HEADER),
          header(SIGNATURE_HEADER),
          raw,
        );
        const call = JSON.parse(raw) as Call;
        const reply: Reply = !signed
          ? { status: 401, body: { message: 'bad signature' } }
          : (this.handlers.get(`${req.url}/${call.metadata.name}`)?.(call) ?? {
              status: 200,
              body: { status: call.action === 'delete' ? 'deleted' : 'active' },
            });
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    this.port = (server.address() as AddressInfo).port;
  }

  /** Where it listens: a port chosen per run. */
  origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  url(path: 'scopes' | 'services'): string {
    return `${this.origin()}/${path}`;
  }

  on(path: 'scopes' | 'services', name: string, handler: (call: Call) => Reply): void {
    this.handlers.set(`/${path}/${name}`, handler);
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const inProgress = (status: string, message: string): Reply => ({
  status: 202,
  body: { status, messages: [message] },
  headers: LATER,
});

const PLURAL: Record<Kind, string> = {
  application: 'applications',
  scope: 'scopes',
  service: 'services',
  servicespecification: 'servicespecifications',
  scopeclass: 'scopeclasses',
};
const KIND_NAME = {
  application: 'Application',
  scope: 'Scope',
  service: 'Service',
  servicespecification: 'ServiceSpecification',
  scopeclass: 'ScopeClass',
} as const;

/**
 * A cluster the suite did not start (KUBECONFIG) has its own scope id counter and may hold
 * namespace `recorded` already: the fixtures' ids and names would not be reproduced there.
 */
const foreign =
  process.env.KUBECONFIG !== undefined && process.env.KUBECONFIG !== ''
    ? 'a KUBECONFIG cluster is not fresh: scope ids and the fixed namespace would differ'
    : undefined;
if (foreign !== undefined) console.error(`recorded-statuses.test.ts: skipped: ${foreign}`);

describe.skipIf(foreign !== undefined)('recorded statuses', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  let operatorKube: Kube;
  let operator: Operator | undefined;
  const agent = new Agent();
  const log = pino({ level: 'silent' });

  const k = async (args: string[], input?: string) => {
    const result = await kubectl(cluster, args, input !== undefined ? { input } : {});
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const create = (yaml: string) => k(['create', '-f', '-'], yaml);
  const where = (kind: Kind) => (kind === 'scopeclass' ? [] : ['-n', NS]);
  /** Reads through the API (cheap) until `check` holds: no fixed sleeps. */
  const waitFor = (kind: Kind, name: string, check: (view: View) => boolean) =>
    readUntil(
      `${kind} ${name}`,
      async () =>
        (await kube
          .resource(rawResource(KIND_NAME[kind]))
          .get({ namespace: kind === 'scopeclass' ? '' : NS, name })) as unknown as View,
      check,
      { timeoutMs: 20_000 },
    );
  /** Reads the object with kubectl, as a user does, and records or checks it. */
  const record = async (kind: Kind, name: string, fixture: string) => {
    const raw = await k([
      'get',
      `${PLURAL[kind]}.platform.nrn.dev/${name}`,
      ...where(kind),
      '-o',
      'json',
    ]);
    const live = normalise(JSON.parse(raw.replaceAll(agent.origin(), AGENT_ORIGIN)) as Json);
    const file = join(FIXTURES, kind, `${fixture}.json`);
    if (RECORD) {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, `${JSON.stringify(live, null, 2)}\n`);
      return live;
    }
    const committed = JSON.parse(await readFile(file, 'utf8')) as Json;
    expect(
      live,
      `${kind}/${fixture}.json is not what the operator writes now; if the change is meant, re-record with: ${RECORD_COMMAND}`,
    ).toEqual(committed);
    return live;
  };
  const scope = (name: string, type: string, extra = '', labels?: Record<string, string>) => {
    const yaml = scopeYaml(NS, name, 1, { extra }).replace('type: web_pool', `type: ${type}`);
    return labels === undefined
      ? yaml
      : yaml.replace(
          `metadata: {name: ${name},`,
          `metadata: {labels: ${JSON.stringify(labels)}, name: ${name},`,
        );
  };
  const service = (name: string, specificationId = SPEC_ID) => `
apiVersion: platform.nrn.dev/v1alpha1
kind: Service
metadata: {name: ${name}, namespace: ${NS}}
spec:
  name: ${name}
  type: dependency
  specification_id: ${specificationId}
  entity_nrn: "organization=1:account=2"
  attributes: {host: ${name}.internal}
`;

  beforeAll(async () => {
    const opNs = uniqueName('operator-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await k(['apply', '-f', join(ROOT, 'crds')]);
    await k(['wait', '--for=condition=Established', '--timeout=60s', '-f', join(ROOT, 'crds')]);
    // The default web_pool class only: a scheduled_tasks scope has no class (the pending case).
    await k(['apply', '-f', join(ROOT, 'deploy/scopeclasses/web-pool.yaml')]);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    operatorKube = await connect({ kubeconfigPath: cluster.operatorKubeconfigPath, log });
    await k(['create', 'namespace', NS]);
    // A webhook class's signing Secret lives in the operator's namespace, a specification's
    // beside it.
    for (const namespace of [NS, opNs]) {
      await k([
        'create',
        'secret',
        'generic',
        'agent-signing',
        '-n',
        namespace,
        `--from-literal=key=${SIGNING_KEY}`,
      ]);
    }
    await agent.start();
    operator = await startOperator({
      kube: operatorKube,
      log,
      namespace: opNs,
      leaderElection: false,
    });
  });
  afterAll(async () => {
    // In the repository's format (biome ci checks every JSON file), so a re-recording of an
    // unchanged status gives the same bytes.
    if (RECORD) await run(join(ROOT, 'node_modules/.bin/biome'), ['format', '--write', FIXTURES]);
    if (operator !== undefined) expect(await operator.stop()).toBe(true);
    await agent.stop();
    operatorKube?.close();
    kube?.close();
    await cluster?.close();
  });

  it('applications: active, failed (a duplicate id)', async () => {
    await create(applicationYaml(NS, 'shop', 1));
    await waitFor('application', 'shop', (a) => conditionOf(a, 'Ready')?.status === 'True');
    await record('application', 'shop', 'active');
    // Created after shop, and after it by name too (a tie within the same second goes by
    // name): shop holds the id whatever the timing.
    await create(applicationYaml(NS, 'shop-copy', 1));
    await waitFor('application', 'shop-copy', (a) => conditionOf(a, 'Stalled')?.status === 'True');
    await record('application', 'shop-copy', 'failed');
    await create(applicationYaml(NS, 'stale-app', 2));
    await waitFor('application', 'stale-app', (a) => conditionOf(a, 'Ready')?.status === 'True');
  });

  it('service specifications: ready, failed (a schema that does not compile)', async () => {
    const specification = (name: string, id: string, schema: string, provisioner: string) => `
apiVersion: platform.nrn.dev/v1alpha1
kind: ServiceSpecification
metadata: {name: ${name}, namespace: ${NS}}
spec:
  id: ${id}
  name: ${name}
  type: dependency
  attributes: {schema: ${schema}}
  provisioner: ${provisioner}
`;
    const schema = '{type: object, properties: {host: {type: string}}, required: [host]}';
    await create(
      specification(
        'db',
        SPEC_ID,
        schema,
        `{type: webhook, url: "${agent.url('services')}", signing_secret_ref: {name: agent-signing}, deadline_seconds: 3600}`,
      ),
    );
    await waitFor('servicespecification', 'db', (s) => conditionOf(s, 'Ready')?.status === 'True');
    await record('servicespecification', 'db', 'ready');
    // The admission webhook refuses this schema; without it (or with failurePolicy Ignore and
    // the webhook down) the CRD's own schema lets it in, and the reconciler says why.
    await create(
      specification(
        'broken',
        '9c4a5f6e-7d8c-4b9b-8a0f-becd3b4a5f60',
        '{type: nope}',
        '{type: none}',
      ),
    );
    await waitFor(
      'servicespecification',
      'broken',
      (s) => conditionOf(s, 'Stalled')?.status === 'True',
    );
    await record('servicespecification', 'broken', 'failed');
    await create(specification('stale-spec', STALE_SPEC_ID, schema, '{type: none}'));
    await waitFor(
      'servicespecification',
      'stale-spec',
      (s) => conditionOf(s, 'Ready')?.status === 'True',
    );
  });

  it('scope classes: ready, stalled (a template that does not compile)', async () => {
    await create(`
apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: agent}
spec:
  scope_type: serverless
  match: {labels: {provisioned-by: agent}}
  provisioner: {type: webhook, url: "${agent.url('scopes')}", signing_secret_ref: {name: agent-signing}, deadline_seconds: 3600}
---
apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: idle}
spec:
  scope_type: scheduled_tasks
  match: {labels: {class: idle}}
---
apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: broken}
spec:
  scope_type: serverless
  match: {labels: {class: broken}}
  namespace: {name: 'fn-\${scop.id}'}
---
apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: stale-class}
spec:
  scope_type: scheduled_tasks
  match: {labels: {class: stale}}
`);
    // A class that serves no scope: its counts do not depend on the order of the cases.
    await waitFor(
      'scopeclass',
      'idle',
      (c) => conditionOf(c, 'Ready')?.status === 'True' && observed(c),
    );
    await record('scopeclass', 'idle', 'ready');
    await waitFor('scopeclass', 'broken', (c) => conditionOf(c, 'Stalled')?.status === 'True');
    await record('scopeclass', 'broken', 'stalled');
    await waitFor('scopeclass', 'agent', (c) => conditionOf(c, 'Ready')?.status === 'True');
    await waitFor('scopeclass', 'stale-class', (c) => conditionOf(c, 'Ready')?.status === 'True');
  });

  // One at a time: ids are handed out in order, so each scope's id is the same on every run.
  it('scopes: pending, active, paused, creating, updating, failed, deleting', async () => {
    const agentScope = (name: string) =>
      scope(name, 'serverless', '', { 'provisioned-by': 'agent' });
    const active = (s: View) => s.status?.status === 'active' && observed(s);

    await create(scope('pending', 'scheduled_tasks'));
    await waitFor(
      'scope',
      'pending',
      (s) => conditionOf(s, 'Reconciling')?.reason === 'WaitingForScopeClass',
    );
    await record('scope', 'pending', 'pending');

    await create(scope('active', 'web_pool'));
    await waitFor('scope', 'active', active);
    await record('scope', 'active', 'active');

    await create(scope('paused', 'web_pool'));
    await waitFor('scope', 'paused', active);
    await k(['annotate', 'scope', 'paused', '-n', NS, 'platform.nrn.dev/reconcile=disabled']);
    await waitFor('scope', 'paused', (s) => conditionOf(s, 'Paused')?.status === 'True');
    await record('scope', 'paused', 'paused');

    await create(scope('stale', 'web_pool'));
    await waitFor('scope', 'stale', active);

    agent.on('scopes', 'creating', () => inProgress('creating', 'agent is creating the scope'));
    await create(agentScope('creating'));
    await waitFor('scope', 'creating', (s) => s.status?.status === 'creating');
    await record('scope', 'creating', 'creating');

    // Active at its first generation; the change the second brings is still being applied.
    agent.on('scopes', 'updating', (call) =>
      call.metadata.generation === 1
        ? { status: 200, body: { status: 'active' } }
        : inProgress('updating', 'agent is resizing the scope'),
    );
    await create(agentScope('updating'));
    await waitFor('scope', 'updating', active);
    await k([
      'patch',
      'scope',
      'updating',
      '-n',
      NS,
      '--type=merge',
      '-p',
      '{"spec":{"requested_spec":{"memory_in_gb":2}}}',
    ]);
    await waitFor(
      'scope',
      'updating',
      (s) =>
        s.status?.status === 'updating' && conditionOf(s, 'Reconciling')?.reason === 'Provisioning',
    );
    await record('scope', 'updating', 'updating');

    agent.on('scopes', 'failed', () => ({
      status: 200,
      body: { status: 'failed', messages: ['no capacity left in region eu-west-1'] },
    }));
    await create(agentScope('failed'));
    await waitFor('scope', 'failed', (s) => s.status?.status === 'failed');
    await record('scope', 'failed', 'failed');

    agent.on('scopes', 'deleting', (call) =>
      call.action === 'delete'
        ? inProgress('deleting', 'agent is tearing the scope down')
        : { status: 200, body: { status: 'active' } },
    );
    await create(agentScope('deleting'));
    await waitFor('scope', 'deleting', active);
    await k(['delete', 'scope', 'deleting', '-n', NS, '--wait=false']);
    await waitFor(
      'scope',
      'deleting',
      (s) =>
        s.status?.status === 'deleting' &&
        conditionOf(s, 'Reconciling')?.reason === 'Deleting' &&
        conditionOf(s, 'Reconciling')?.message.endsWith('agent is tearing the scope down') === true,
    );
    await record('scope', 'deleting', 'deleting');
  });

  it('services: pending, active, creating, updating, failed, deleting', async () => {
    const active = (s: View) => s.status?.status === 'active' && observed(s);

    await create(service('pending', MISSING_SPEC_ID));
    await waitFor(
      'service',
      'pending',
      (s) => conditionOf(s, 'Reconciling')?.reason === 'WaitingForSpecification',
    );
    await record('service', 'pending', 'pending');

    await create(service('active'));
    await waitFor('service', 'active', active);
    await record('service', 'active', 'active');

    await create(service('stale'));
    await waitFor('service', 'stale', active);

    agent.on('services', 'creating', () => inProgress('creating', 'allocating storage'));
    await create(service('creating'));
    await waitFor(
      'service',
      'creating',
      (s) =>
        s.status?.status === 'creating' &&
        conditionOf(s, 'Reconciling')?.message.endsWith('allocating storage') === true,
    );
    await record('service', 'creating', 'creating');

    agent.on('services', 'updating', (call) =>
      call.action === 'update'
        ? inProgress('updating', 'resizing the database')
        : { status: 200, body: { status: 'active' } },
    );
    await create(service('updating'));
    await waitFor('service', 'updating', active);
    await k([
      'patch',
      'service.platform.nrn.dev',
      'updating',
      '-n',
      NS,
      '--type=merge',
      '-p',
      '{"spec":{"attributes":{"host":"updating2.internal"}}}',
    ]);
    await waitFor(
      'service',
      'updating',
      (s) =>
        s.status?.status === 'updating' &&
        conditionOf(s, 'Reconciling')?.message.endsWith('resizing the database') === true,
    );
    await record('service', 'updating', 'updating');

    agent.on('services', 'failed', () => ({
      status: 422,
      body: { message: 'plan xl is not offered in this region' },
    }));
    await create(service('failed'));
    await waitFor('service', 'failed', (s) => s.status?.status === 'failed');
    await record('service', 'failed', 'failed');

    agent.on('services', 'deleting', (call) =>
      call.action === 'delete'
        ? inProgress('deleting', 'dropping the database')
        : { status: 200, body: { status: 'active' } },
    );
    await create(service('deleting'));
    await waitFor('service', 'deleting', active);
    await k(['delete', 'service.platform.nrn.dev', 'deleting', '-n', NS, '--wait=false']);
    await waitFor(
      'service',
      'deleting',
      (s) =>
        s.status?.status === 'deleting' &&
        conditionOf(s, 'Reconciling')?.message.endsWith('dropping the database') === true,
    );
    await record('service', 'deleting', 'deleting');
  });

  it('a scope paused with a change not applied is InProgress for kstatus, until resumed', async () => {
    await create(scope('held', 'web_pool'));
    await waitFor('scope', 'held', (s) => s.status?.status === 'active' && observed(s));
    // Paused and changed in one write: the operator sees both at once.
    await k([
      'patch',
      'scope',
      'held',
      '-n',
      NS,
      '--type=merge',
      '-p',
      JSON.stringify({
        metadata: { annotations: { 'platform.nrn.dev/reconcile': 'disabled' } },
        spec: { requested_spec: { memory_in_gb: 2 } },
      }),
    ]);
    const paused = await waitFor(
      'scope',
      'held',
      (s) => conditionOf(s, 'Paused')?.status === 'True',
    );
    expect(paused.metadata.generation).toBe(2);
    expect(paused.status?.observedGeneration).toBe(1);
    expect(conditionOf(paused, 'Paused')?.observedGeneration).toBe(2);
    expect(computeKStatus(paused as unknown as KStatusObject)).toEqual({
      status: 'InProgress',
      message: 'Scope generation is 2, but latest observed generation is 1',
    });
    // kubectl wait reads Ready's observedGeneration too (pkg/cmd/wait/wait.go checkCondition).
    const wait = await kubectl(cluster, [
      'wait',
      '--for=condition=Ready',
      'scope/held',
      '-n',
      NS,
      '--timeout=1s',
    ]);
    expect(wait.stderr).toContain('timed out waiting for the condition');
    await k(['annotate', 'scope', 'held', '-n', NS, 'platform.nrn.dev/reconcile-']);
    const resumed = await waitFor(
      'scope',
      'held',
      (s) => s.status?.status === 'active' && observed(s) && conditionOf(s, 'Paused') === undefined,
    );
    expect(computeKStatus(resumed as unknown as KStatusObject).status).toBe('Current');
  });

  it('kubectl wait --for=condition=Ready: done for an active scope, times out for a pending one', async () => {
    const wait = (name: string, timeout: string) =>
      kubectl(cluster, [
        'wait',
        '--for=condition=Ready',
        `scope/${name}`,
        '-n',
        NS,
        `--timeout=${timeout}`,
      ]);
    const done = await wait('active', '10s');
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('scope.platform.nrn.dev/active condition met');
    const pending = await wait('pending', '1s');
    expect(pending.code).not.toBe(0);
    expect(pending.stderr).toContain('timed out waiting for the condition');
  });

  it('stale: a spec changed while no operator runs', async () => {
    expect(await operator?.stop()).toBe(true);
    operator = undefined;
    const patch = async (kind: Kind, name: string, spec: Json) => {
      const resource = kind === 'service' ? 'service.platform.nrn.dev' : kind;
      await k([
        'patch',
        resource,
        name,
        ...where(kind),
        '--type=merge',
        '-p',
        JSON.stringify({ spec }),
      ]);
    };
    await patch('application', 'stale-app', { name: 'stale-app-renamed' });
    await patch('servicespecification', 'stale-spec', { name: 'stale-spec-renamed' });
    await patch('scopeclass', 'stale-class', { match: { labels: { class: 'stale-renamed' } } });
    await patch('scope', 'stale', { requested_spec: { memory_in_gb: 2 } });
    await patch('service', 'stale', { attributes: { host: 'stale2.internal' } });
    const cases: [Kind, string][] = [
      ['application', 'stale-app'],
      ['servicespecification', 'stale-spec'],
      ['scopeclass', 'stale-class'],
      ['scope', 'stale'],
      ['service', 'stale'],
    ];
    for (const [kind, name] of cases) {
      const live = (await record(kind, name, 'stale')) as unknown as View;
      expect(live.metadata.generation).toBeGreaterThan(live.status?.observedGeneration ?? 0);
    }
    // Ready=True, but of an older generation: kubectl wait is not done with it.
    const wait = await kubectl(cluster, [
      'wait',
      '--for=condition=Ready',
      'scope/stale',
      '-n',
      NS,
      '--timeout=1s',
    ]);
    expect(wait.code).not.toBe(0);
    expect(wait.stderr).toContain('timed out waiting for the condition');
  });
});
