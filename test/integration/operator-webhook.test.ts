// The operator's validating admission webhook, driven as kube-apiserver drives it: HTTPS POSTs
// of admission.k8s.io/v1 AdmissionReviews to /validate, against the local control plane's
// objects as the server's informers see them. Each rule refuses with a 403 Status naming the
// field; what it cannot judge yet (a specification or Secret not there) is admitted; a
// malformed or oversized review is a 400 or 413 and a log line, never a crash.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdmissionServer,
  loadOrCreateWebhookTls,
  MAX_REVIEW_BYTES,
  startAdmissionServer,
} from '../../src/admission/index.js';
import { connect, type Kube, Namespaces, rawResource } from '../../src/kube/index.js';
import { applyCrds } from '../../src/operator.js';
import { type StartedCluster, startCluster, uniqueName } from '../support/cluster.js';
import { type Fetch, fetchTrusting } from '../support/https.js';
import { sleep } from '../support/wait.js';

const Scopes = rawResource('Scope');
const DB_SPEC = randomUUID();
const Specifications = rawResource('ServiceSpecification');
const Secrets = { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true };

interface Answer {
  apiVersion: string;
  kind: string;
  response: {
    uid: string;
    allowed: boolean;
    warnings?: string[];
    status?: { code: number; reason: string; message: string; status: string };
  };
}

describe('operator admission webhook', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  let server: AdmissionServer;
  let dir: string;
  let post: Fetch;
  const logged: string[] = [];
  const ns = uniqueName('webhook');

  const review = (kind: string, object: unknown, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: { group: 'platform.nrn.dev', version: 'v1alpha1', kind },
      resource: {
        group: 'platform.nrn.dev',
        version: 'v1alpha1',
        resource: `${kind.toLowerCase()}s`,
      },
      operation: 'CREATE',
      namespace: ns,
      name: (object as { metadata: { name: string } }).metadata.name,
      object,
      userInfo: { username: 'tester' },
      dryRun: false,
      ...extra,
    },
  });
  const send = async (body: unknown): Promise<{ code: number; body: unknown }> => {
    const res = await post(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { code: res.status, body: await res.json() };
  };
  const ask = async (kind: string, object: unknown, extra: Record<string, unknown> = {}) => {
    const sent = review(kind, object, extra);
    const { code, body } = await send(sent);
    expect(code).toBe(200);
    const answer = body as Answer;
    expect(answer).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect(answer.response.uid).toBe(sent.request.uid);
    return answer.response;
  };
  /** Asks until the answer is a refusal: the server's cache follows the API by a watch. */
  const refusal = async (kind: string, object: unknown, extra: Record<string, unknown> = {}) => {
    for (let i = 0; i < 200; i++) {
      const response = await ask(kind, object, extra);
      if (!response.allowed) return response;
      await sleep(25);
    }
    throw new Error(`${kind} never refused`);
  };
  const scope = (name: string, specName: string, applicationId = 10) => ({
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'Scope',
    metadata: { name, namespace: ns },
    spec: {
      name: specName,
      type: 'web_pool',
      application_id: applicationId,
      requested_spec: { memory_in_gb: 1, cpu_profile: 'standard', local_storage_in_gb: 5 },
    },
  });
  const schema = {
    type: 'object',
    properties: {
      host: { type: 'string' },
      port: { type: 'integer', minimum: 1, maximum: 65535 },
      password: { type: 'string', secret: true },
    },
    required: ['host'],
  };
  const specification = (name: string, id: string, attributeSchema: unknown = schema) => ({
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'ServiceSpecification',
    metadata: { name, namespace: ns },
    spec: {
      id,
      name,
      type: 'dependency',
      attributes: { schema: attributeSchema },
      provisioner: { type: 'none' },
    },
  });
  const service = (
    name: string,
    specificationId: string,
    attributes: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) => ({
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'Service',
    metadata: { name, namespace: ns },
    spec: {
      name,
      type: 'dependency',
      specification_id: specificationId,
      entity_nrn: 'organization=1:account=2',
      attributes,
      ...extra,
    },
  });

  beforeAll(async () => {
    cluster = await startCluster();
    const log = pino({ level: 'info' }, { write: (line: string) => void logged.push(line) });
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    await applyCrds(kube);
    await kube.resource(Namespaces).create({ metadata: { name: ns } });
    dir = await mkdtemp(join(tmpdir(), 'nrn-webhook-'));
    const tls = await loadOrCreateWebhookTls(dir);
    server = await startAdmissionServer({
      kube,
      log,
      tls: { certFile: tls.certFile, keyFile: tls.keyFile },
      port: 0,
    });
    post = fetchTrusting(tls.ca);
    // Made before the server's first reviews; they come to its cache by its watch.
    await kube.resource(Scopes).create(scope('holder', 'web'));
    await kube.resource(Specifications).create(specification('db', DB_SPEC));
  });
  afterAll(async () => {
    await server?.close();
    kube?.close();
    await cluster?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('made its CA and serving certificate in the data dir, and reuses them', async () => {
    const first = await readFile(join(dir, 'webhook', 'tls.crt'), 'utf8');
    const again = await loadOrCreateWebhookTls(dir);
    expect(await readFile(again.certFile, 'utf8')).toBe(first);
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/validate$/);
  });

  it('refuses a scope whose slug another scope of the application holds, naming it', async () => {
    const response = await refusal('Scope', scope('copy', 'Web'));
    expect(response.status).toEqual({
      status: 'Failure',
      code: 403,
      reason: 'Forbidden',
      message: `spec.name: slug web is already used by scope ${ns}/holder of application 10`,
    });
    // The same slug in another application, and another slug in this one, are admitted.
    expect((await ask('Scope', scope('other-app', 'web', 11))).allowed).toBe(true);
    expect((await ask('Scope', scope('api', 'api'))).allowed).toBe(true);
  });

  it('an update keeping its slug is admitted; one taking a held slug is judged', async () => {
    const holder = await kube.resource(Scopes).get({ namespace: ns, name: 'holder' });
    // Its own slug: no conflict with itself (a finalizer removed, a label added).
    const same = await ask('Scope', holder, { operation: 'UPDATE', oldObject: holder });
    expect(same.allowed).toBe(true);
    const created = await kube.resource(Scopes).create(scope('newer', 'newer'));
    const renamed = { ...created, spec: { ...(created.spec as object), name: 'web' } };
    const response = await refusal('Scope', renamed, { operation: 'UPDATE', oldObject: created });
    expect(response.status?.message).toBe(
      `spec.name: slug web is already used by scope ${ns}/holder of application 10`,
    );
  });

  it('refuses a service whose attributes its specification refuses, naming the field', async () => {
    const response = await refusal('Service', service('bad-port', DB_SPEC, { host: 'h', port: 0 }));
    expect(response.status).toMatchObject({ code: 403, reason: 'Forbidden' });
    expect(response.status?.message).toBe('spec.attributes.port: must be >= 1');
    const missing = await ask('Service', service('no-host', DB_SPEC, { port: 5432 }));
    expect(missing.status?.message).toBe('spec.attributes.host: required');
    expect((await ask('Service', service('good', DB_SPEC, { host: 'h' }))).allowed).toBe(true);
  });

  it('refuses a secret attribute given in plain spec.attributes', async () => {
    const response = await ask('Service', service('leak', DB_SPEC, { host: 'h', password: 'p' }));
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toMatch(
      /^spec\.attributes\.password is secret: put it in the Secret named by spec\.secret_attributes_ref/,
    );
  });

  it('reads the Secret a service names; one not there yet is admitted', async () => {
    const withSecret = (name: string, secret: string, attributes: Record<string, unknown>) =>
      service(name, DB_SPEC, attributes, { secret_attributes_ref: { name: secret } });
    // GitOps applies the Secret and the Service together: the reconciler waits for it.
    expect((await ask('Service', withSecret('early', 'not-yet', { port: 5432 }))).allowed).toBe(
      true,
    );
    await kube.resource(Secrets).create({
      metadata: { name: 'db-creds', namespace: ns },
      stringData: { host: 'from-secret', password: 'p' },
    } as never);
    expect((await ask('Service', withSecret('ok', 'db-creds', { port: 5432 }))).allowed).toBe(true);
    const both = await ask('Service', withSecret('both', 'db-creds', { host: 'h' }));
    expect(both.status?.message).toBe(
      'spec.attributes.host set both in spec.attributes and in secret db-creds',
    );
  });

  it('admits a service whose specification does not exist yet (GitOps applies both at once)', async () => {
    const response = await ask('Service', service('later', randomUUID(), { anything: true }));
    expect(response).toEqual({ uid: expect.any(String), allowed: true });
  });

  it('refuses a specification whose schema does not compile or marks a secret it cannot place', async () => {
    const broken = await ask(
      'ServiceSpecification',
      specification('broken', randomUUID(), { type: 'nope' }),
    );
    expect(broken.allowed).toBe(false);
    expect(broken.status?.message).toMatch(/^spec\.attributes\.schema: /);
    const unplaced = await ask(
      'ServiceSpecification',
      specification('unplaced', randomUUID(), {
        type: 'object',
        additionalProperties: { type: 'string', secret: true },
      }),
    );
    expect(unplaced.status?.message).toMatch(
      /^spec\.attributes\.schema: secret: true at .* has no fixed path/,
    );
    expect((await ask('ServiceSpecification', specification('fine', randomUUID()))).allowed).toBe(
      true,
    );
  });

  it('refuses a ScopeClass whose placeholder does not compile, naming its path', async () => {
    const scopeClass = (name: string, value: string) => ({
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'ScopeClass',
      metadata: { name },
      spec: {
        scope_type: 'web_pool',
        provisioner: { type: 'namespace' },
        namespace: { labels: { team: value } },
      },
    });
    const bad = await ask('ScopeClass', scopeClass('bad', '${scope.name +}'), {
      namespace: undefined,
    });
    expect(bad.allowed).toBe(false);
    expect(bad.status?.message).toMatch(/^spec\.namespace\.labels\.team: /);
    // A misspelt field is refused here too, not found later scope by scope.
    const misspelt = await ask(
      'ScopeClass',
      scopeClass('misspelt', '${string(scope.requested_spec.memroy)}'),
      { namespace: undefined },
    );
    expect(misspelt.allowed).toBe(false);
    expect(misspelt.status?.message).toMatch(
      /^spec\.namespace\.labels\.team: .*unknown field 'memroy' of scope\.requested_spec \(known: memory_in_gb, cpu_profile, local_storage_in_gb\)/,
    );
    // A class makes only what its author could (ADR 0029): the admin may make it all.
    const good = await ask('ScopeClass', scopeClass('good', '${scope.name}'), {
      namespace: undefined,
      userInfo: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
    });
    expect(good.allowed).toBe(true);
    const unbound = await ask('ScopeClass', scopeClass('unbound', '${scope.name}'), {
      namespace: undefined,
    });
    expect(unbound.status?.message).toBe(
      'spec.namespace: user tester may not create namespaces (cluster-wide); a class may make only what its author could make',
    );
  });

  it('a malformed review is a 400 and a log line; the server goes on answering', async () => {
    for (const body of [
      '{not json',
      '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}',
      '[]',
    ]) {
      const { code, body: answer } = await send(body);
      expect(code).toBe(400);
      expect((answer as { message: string }).message).toBeTruthy();
    }
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    expect((await send(deep)).code).toBe(400);
    expect(logged.some((line) => line.includes('admission review refused'))).toBe(true);
    expect((await ask('Scope', scope('still', 'still'))).allowed).toBe(true);
  });

  it('a review over the size bound is a 413, unread', async () => {
    const huge = JSON.stringify(
      review('Scope', { ...scope('huge', 'huge'), pad: 'x'.repeat(MAX_REVIEW_BYTES) }),
    );
    const { code } = await send(huge);
    expect(code).toBe(413);
    expect((await ask('Scope', scope('after', 'after'))).allowed).toBe(true);
  });
});
