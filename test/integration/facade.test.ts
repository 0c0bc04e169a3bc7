// The facade from the outside: real HTTP against a cluster with the operator running, as an
// existing client of the platform API would call it — list services with every filter, create
// scopes and follow them to `active`, and every error in the spec's shape.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ErrorBody,
  Scope,
  ServiceItem,
  ServicePage,
  type ServiceSpec,
} from '../../src/api/index.js';
import { type Facade, StaticAuthenticator, startFacade } from '../../src/facade/index.js';
import {
  Applications,
  connect,
  type Kube,
  Namespaces,
  Scopes,
  Secrets,
  ServiceSpecifications,
  Services,
} from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import { type Operator, startOperator } from '../../src/operator.js';
import {
  installCrdsAndClasses,
  kubectl,
  type StartedCluster,
  startCluster,
  uniqueName,
} from '../support/cluster.js';
import { refusalLog } from '../support/operator-identity.js';
import { sleep } from '../support/wait.js';

const log = silentLogger();
const operatorLog = refusalLog();
const ADMIN = 'admin-token-0123456789abcdef';
const READER = 'reader-token-0123456789abcdef';
const CREATOR = 'creator-token-0123456789abcdef';

interface Answer<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

describe('facade', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  /** The operator's and the facade's client: deploy/'s ServiceAccount, deploy/rbac.yaml's rights. */
  let operatorKube: Kube;
  let operator: Operator;
  let facade: Facade;
  let ns: string;
  // Random ids keep this suite apart from others on a shared cluster.
  const org = 100_000 + Math.floor(Math.random() * 800_000);
  const appId = 100_000 + Math.floor(Math.random() * 800_000);
  const appNrn = `organization=${org}:account=8:namespace=9:application=${appId}`;
  const specId = crypto.randomUUID();

  const call = async <T = unknown>(
    method: string,
    path: string,
    options: { token?: string | null; body?: unknown; raw?: string; contentType?: string } = {},
  ): Promise<Answer<T>> => {
    const token = options.token === undefined ? ADMIN : options.token;
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.raw !== undefined || options.body !== undefined) {
      body = options.raw ?? JSON.stringify(options.body);
      headers['content-type'] = options.contentType ?? 'application/json';
    }
    const response = await fetch(`${facade.url}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) as T, headers: response.headers };
  };
  const list = (query: string, token?: string) =>
    call<ServicePage>('GET', `/service${query === '' ? '' : `?${query}`}`, {
      ...(token !== undefined ? { token } : {}),
    });
  /** Names of the services a query returns, in the order returned. */
  const names = async (query: string): Promise<string[]> => {
    const answer = await list(query);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.results.map((s) => s.name ?? '');
  };
  const expectError = (answer: Answer, status: number, code: string) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    const body = ErrorBody.parse(answer.body);
    expect(body).toMatchObject({ statusCode: status, code });
    expect(JSON.stringify(body)).not.toMatch(/\n\s+at /);
    return body;
  };
  const createScope = (name: string, extra: Record<string, unknown> = {}, token?: string) =>
    call<Scope>('POST', '/scope', {
      body: {
        name,
        type: 'web_pool',
        application_id: appId,
        requested_spec: { memory_in_gb: 1, cpu_profile: 'standard', local_storage_in_gb: 2 },
        ...extra,
      },
      ...(token !== undefined ? { token } : {}),
    });

  const service = (name: string, entity: string, fields: Record<string, unknown> = {}) => ({
    metadata: { name, namespace: ns },
    spec: {
      name,
      type: 'dependency',
      specification_id: specId,
      entity_nrn: entity,
      attributes: { size: 'small' },
      ...fields,
    } as ServiceSpec,
  });

  beforeAll(async () => {
    const opNs = uniqueName('facade-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await installCrdsAndClasses(cluster);
    await kubectl(cluster, ['wait', '--for=condition=Established', 'crd/scopes.platform.nrn.dev']);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    operatorKube = await connect({
      kubeconfigPath: cluster.operatorKubeconfigPath,
      log: operatorLog.log,
    });
    ns = uniqueName('facade');
    await kube.resource(Namespaces).create({ metadata: { name: ns } });
    operator = await startOperator({
      kube: operatorKube,
      log: operatorLog.log,
      namespace: opNs,
      leaderElection: false,
    });
    await kube.resource(Applications).create({
      metadata: { name: 'shop', namespace: ns },
      spec: { id: appId, name: 'shop', nrn: appNrn },
    });
    await kube.resource(ServiceSpecifications).create({
      metadata: { name: 'database', namespace: ns },
      spec: {
        id: specId,
        name: 'database',
        type: 'dependency',
        attributes: {
          schema: {
            type: 'object',
            properties: { size: { type: 'string' }, password: { type: 'string', secret: true } },
          },
        },
        provisioner: { type: 'none', deadline_seconds: 60 },
      },
    });
    await kube.resource(Secrets).create({
      metadata: { name: 'db-secrets', namespace: ns },
      stringData: { password: 's3cret-value' },
    });
    // The example of docs/interface.md's NRN filter, plus one linked in from another organization
    // and one whose specification does not exist (it stays pending).
    const services = kube.resource(Services);
    await services.create(
      service('a-org', `organization=${org}`, { secret_attributes_ref: { name: 'db-secrets' } }),
    );
    await services.create(service('b-account', `organization=${org}:account=8`, { type: 'scope' }));
    await services.create(service('c-app', appNrn));
    await services.create(service('d-other-account', `organization=${org}:account=99`));
    await services.create(
      service('e-linked', 'organization=5', { linkable_to: [`organization=${org}:account=8`] }),
    );
    await services.create(
      service('p-pending', `organization=${org}:account=8`, {
        specification_id: crypto.randomUUID(),
      }),
    );
    facade = await startFacade({
      kube: operatorKube,
      log: operatorLog.log,
      namespace: opNs,
      port: 0,
      auth: new StaticAuthenticator({
        tokens: [
          { name: 'admin', token: ADMIN, operations: ['*'] },
          { name: 'reader', token: READER, operations: ['services:list', 'scopes:get'] },
          { name: 'creator', token: CREATOR, operations: ['scopes:create', 'scopes:get'] },
        ],
      }),
    });
    // The catalog follows the API: wait until it holds all six, settled by the operator.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const all = await list(`id=organization=${org}:account=*&limit=100`);
      const settled = all.body.results.filter(
        (s) => s.status === 'active' || s.status === 'pending',
      );
      if (
        settled.length === 6 &&
        all.body.results.find((s) => s.name === 'a-org')?.status === 'active'
      )
        break;
      if (Date.now() > deadline)
        throw new Error(`services not settled: ${JSON.stringify(all.body)}`);
      await sleep(50);
    }
  });

  afterAll(async () => {
    await facade?.close();
    await operator?.stop();
    // Whatever the operator and the facade did, deploy/rbac.yaml allowed.
    expect(operatorLog.refusals()).toEqual([]);
    if (cluster !== undefined && cluster.kind !== 'local') {
      await kubectl(cluster, ['delete', 'namespace', ns, '--wait=false']);
    }
    operatorKube?.close();
    kube?.close();
    await cluster?.close();
  });

  describe('GET /service', () => {
    it('answers the spec shape: paging and items with snake_case fields, no nulls', async () => {
      const answer = await list(`id=organization=${org}:account=*`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      const page = ServicePage.parse(answer.body);
      expect(page.paging).toEqual({ limit: 30, offset: 0 });
      const item = page.results.find((s) => s.name === 'a-org');
      expect(ServiceItem.parse(item)).toMatchObject({
        name: 'a-org',
        slug: 'a-org',
        type: 'dependency',
        status: 'active',
        specification_id: specId,
        entity_nrn: `organization=${org}`,
        attributes: { size: 'small' },
      });
      expect(item?.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(Date.parse(item?.created_at ?? '')).not.toBeNaN();
      expect(JSON.stringify(answer.body)).not.toContain('null');
    });

    it('filters by NRN as docs/interface.md says: what is visible at it, and subtrees with *', async () => {
      expect(await names(`id=organization=${org}`)).toEqual(['a-org']);
      expect((await names(`id=organization=${org}:account=8`)).sort()).toEqual([
        'a-org',
        'b-account',
        'e-linked',
        'p-pending',
      ]);
      expect((await names(`id=${appNrn}`)).sort()).toEqual([
        'a-org',
        'b-account',
        'c-app',
        'e-linked',
        'p-pending',
      ]);
      expect((await names(`id=organization=${org}:account=*`)).sort()).toEqual([
        'a-org',
        'b-account',
        'c-app',
        'd-other-account',
        'e-linked',
        'p-pending',
      ]);
      // nrn is an alias of id
      expect(await names(`nrn=organization=${org}:account=8`)).toEqual(
        await names(`id=organization=${org}:account=8`),
      );
    });

    it('filters by entity_nrn, status and type, alone and combined', async () => {
      expect((await names(`entity_nrn=organization=${org}:account=8`)).sort()).toEqual([
        'b-account',
        'p-pending',
      ]);
      expect((await names(`entity_nrn=organization=${org}:account=*`)).sort()).toEqual([
        'b-account',
        'd-other-account',
        'p-pending',
      ]);
      expect(await names(`id=organization=${org}:account=*&status=pending`)).toEqual(['p-pending']);
      expect(await names(`id=organization=${org}:account=*&type=scope`)).toEqual(['b-account']);
      expect(await names(`id=organization=${org}:account=8&type=scope&status=active`)).toEqual([
        'b-account',
      ]);
      expect(
        await names(`entity_nrn=organization=${org}:account=8&status=active&type=dependency`),
      ).toEqual([]);
      expect(await names(`id=organization=${org}:account=*&status=deleting`)).toEqual([]);
    });

    it('orders by created_at then id, and pages with limit and offset', async () => {
      const all = (await list(`id=organization=${org}:account=*&limit=1500`)).body.results;
      const sorted = [...all].sort(
        (a, b) =>
          (a.created_at ?? '').localeCompare(b.created_at ?? '') ||
          (a.id ?? '').localeCompare(b.id ?? ''),
      );
      expect(all.map((s) => s.id)).toEqual(sorted.map((s) => s.id));
      const ids = all.map((s) => s.name);
      expect(await names(`id=organization=${org}:account=*&limit=2`)).toEqual(ids.slice(0, 2));
      expect(await names(`id=organization=${org}:account=*&limit=2&offset=2`)).toEqual(
        ids.slice(2, 4),
      );
      expect(await names(`id=organization=${org}:account=*&limit=4&offset=4`)).toEqual(
        ids.slice(4),
      );
      expect(await names(`id=organization=${org}:account=*&offset=6`)).toEqual([]);
      expect(await names(`id=organization=${org}:account=*&offset=600000`)).toEqual([]);
      const page = await list(`id=organization=${org}:account=*&limit=1&offset=5`);
      expect(page.body.paging).toEqual({ limit: 1, offset: 5 });
    });

    it('refuses bad queries with 400 in the spec shape', async () => {
      for (const query of [
        'limit=1501',
        'limit=0',
        'limit=',
        'limit=abc',
        'offset=-1',
        'status=sleeping',
        'type=other',
        'id=org=1',
        'entity_nrn=organization=x',
        'include_secret_attributes=yes',
        'colour=blue',
        'id=organization=1&nrn=organization=2',
        'limit=1&limit=2',
      ]) {
        const body = expectError(await list(query), 400, 'VALIDATION_FAILED');
        expect(body.message.length, query).toBeGreaterThan(5);
      }
    });

    it('shows secret attribute values only when asked and allowed', async () => {
      const find = async (query: string, token?: string) =>
        (await list(`entity_nrn=organization=${org}&${query}`, token)).body.results[0]?.attributes;
      expect(await find('include_secret_attributes=true')).toEqual({
        size: 'small',
        password: 's3cret-value',
      });
      expect(await find('include_secret_attributes=false')).toEqual({ size: 'small' });
      expect(await find('limit=30')).toEqual({ size: 'small' });
      // The reader may list services but not read secrets: the key is left out, no error.
      expect(await find('include_secret_attributes=true', READER)).toEqual({ size: 'small' });
    });

    it('never shows a secret attribute someone put in the plain spec', async () => {
      await kube.resource(Services).create(
        service('leaky', `organization=${org}:account=77`, {
          attributes: { size: 'big', password: 'in-plain-sight' },
        }),
      );
      const deadline = Date.now() + 5000;
      let attributes: Record<string, unknown> | undefined;
      while (attributes === undefined && Date.now() < deadline) {
        attributes = (await list(`entity_nrn=organization=${org}:account=77`)).body.results[0]
          ?.attributes;
        if (attributes === undefined) await sleep(25);
      }
      expect(attributes).toEqual({ size: 'big' });
      await kube.resource(Services).delete({ namespace: ns, name: 'leaky' });
    });

    it('shows a change applied with kubectl within a second', async () => {
      // Asked twice first, so the facade keeps the rendered page: the change must replace it.
      for (let i = 0; i < 2; i++) {
        const before = await list(`entity_nrn=organization=${org}:account=99`);
        expect(before.body.results[0]?.category).not.toBe('relational');
      }
      const started = Date.now();
      const patched = await kubectl(cluster, [
        'patch',
        'nsvc',
        'd-other-account',
        '-n',
        ns,
        '--type=merge',
        '-p',
        '{"spec":{"category":"relational"}}',
      ]);
      expect(patched.code, patched.stderr).toBe(0);
      let category: string | undefined;
      while (category !== 'relational' && Date.now() - started < 5000) {
        const found = await list(`entity_nrn=organization=${org}:account=99`);
        category = found.body.results[0]?.category;
        if (category !== 'relational') await sleep(10);
      }
      expect(category).toBe('relational');
      expect(Date.now() - started).toBeLessThan(1000);
    });
  });

  describe('POST /scope and GET /scope/{id}', () => {
    it('creates a scope, answers the spec Scope object, and GET follows it to active, with its class', async () => {
      const answer = await createScope('Checkout API', { capabilities: { logs: true } });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const scope = Scope.parse(answer.body);
      expect(scope).toMatchObject({
        name: 'Checkout API',
        type: 'web_pool',
        status: 'pending',
        slug: 'checkout-api',
        application_id: appId,
        requested_spec: { memory_in_gb: 1, cpu_profile: 'standard', local_storage_in_gb: 2 },
        capabilities: { logs: true },
        messages: {},
        external_created: false,
        tags: [],
        profiles: [],
        dimensions: {},
        runtime_configurations: [],
      });
      expect(Number.isInteger(scope.id)).toBe(true);
      expect(scope.domain?.length).toBeLessThanOrEqual(60);
      expect(scope.domain).toMatch(/^shop-checkout-api-[0-9a-f]{5}\./);

      const deadline = Date.now() + 20_000;
      let current: Scope = scope;
      while (current.status !== 'active' && Date.now() < deadline) {
        await sleep(50);
        const got = await call<Scope>('GET', `/scope/${scope.id}`);
        expect(got.status).toBe(200);
        current = Scope.parse(got.body);
      }
      expect(current).toMatchObject({ id: scope.id, status: 'active', domain: scope.domain });
      // What kubectl shows is the same scope.
      const shown = await kubectl(cluster, [
        'get',
        'scope',
        `${appId}-checkout-api`,
        '-n',
        ns,
        '-o',
        'jsonpath={.status.id} {.status.status} {.status.scopeClass}',
      ]);
      // Its class is chosen as for a scope kubectl applies: the default of its type.
      expect(shown.stdout).toBe(`${scope.id} active web-pool-default`);
      const namespace = await kubectl(cluster, [
        'get',
        'networkpolicy',
        'scope-default-deny',
        '-n',
        `nrn-scope-${scope.id}`,
        '-o',
        'name',
      ]);
      expect(namespace.stdout.trim()).toBe('networkpolicy.networking.k8s.io/scope-default-deny');
    });

    it('serves a duplicate slug that got in without the webhook as failed, naming the holder', async () => {
      // No admission webhook runs here (as when it is down): kubectl's write is stored, and the
      // reconciler reports it. The interface's rule holds at GET /scope/{id}.
      const first = await createScope('Billing');
      expect(first.status).toBe(200);
      const holder = first.body as Scope;
      const applied = await kubectl(cluster, ['apply', '-f', '-'], {
        input: `apiVersion: platform.nrn.dev/v1alpha1
kind: Scope
metadata: {name: billing-again, namespace: ${ns}}
spec: {name: billing, type: web_pool, application_id: ${appId}, requested_spec: {}}
`,
      });
      expect(applied.code, applied.stderr).toBe(0);
      let id: number | undefined;
      const deadline = Date.now() + 20_000;
      while (id === undefined && Date.now() < deadline) {
        await sleep(50);
        const shown = await kubectl(cluster, [
          'get',
          'scope',
          'billing-again',
          '-n',
          ns,
          '-o',
          'jsonpath={.status.id}',
        ]);
        if (/^\d+$/.test(shown.stdout)) id = Number(shown.stdout);
      }
      let current: Scope | undefined;
      while (current?.status !== 'failed' && Date.now() < deadline) {
        await sleep(50);
        current = Scope.parse((await call<Scope>('GET', `/scope/${id}`)).body);
      }
      expect(current).toMatchObject({ id, status: 'failed', slug: 'billing' });
      const lifecycle = (current?.messages as { lifecycle?: { message: string }[] } | undefined)
        ?.lifecycle;
      expect(lifecycle?.[0]?.message).toContain(
        `slug billing is already used by scope ${ns}/${appId}-billing`,
      );
      expect(holder.slug).toBe('billing');
    });

    it('refuses a second scope of the same name in the application (409)', async () => {
      const first = await createScope('Payments');
      expect(first.status).toBe(200);
      const id = (first.body as Scope).id;
      const again = expectError(await createScope('Payments'), 409, 'SCOPE_ALREADY_EXISTS');
      expect(again.message).toContain('Payments');
      // A name with the same slug is the same scope name here; the 409 names the scope that
      // holds the slug, not the request's.
      const alike = expectError(await createScope('PAYMENTS!'), 409, 'SCOPE_ALREADY_EXISTS');
      expect(alike.message).toContain(
        `scope "Payments" (id ${id}), resource ${ns}/${appId}-payments`,
      );
      expect(alike.message).toContain('"PAYMENTS!" would take');
    });

    it('takes the longest names to active: 60 characters, 60 multi-byte ones', async () => {
      // 60 characters: `<application id>-<slug>` is past a label value's 63.
      const long = `Long ${'n'.repeat(55)}`;
      const multiByte = '東京'.repeat(30);
      const accented = 'é'.repeat(60);
      for (const name of [long, multiByte, accented]) {
        expect(name.length).toBe(60);
        const answer = await createScope(name);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        const scope = Scope.parse(answer.body);
        const deadline = Date.now() + 20_000;
        let current: Scope = scope;
        while (
          current.status !== 'active' &&
          current.status !== 'failed' &&
          Date.now() < deadline
        ) {
          await sleep(50);
          current = Scope.parse((await call<Scope>('GET', `/scope/${scope.id}`)).body);
        }
        expect(current.status, JSON.stringify(current.messages)).toBe('active');
      }
    });

    it('refuses a name of spaces or punctuation alone: it makes no slug (400)', async () => {
      for (const name of ['   ', '---', '¡!¿?', '\t']) {
        const body = expectError(await createScope(name), 400, 'VALIDATION_FAILED');
        expect(body.message, JSON.stringify(name)).toContain('name');
        expect(body.message).toContain('must contain a letter or a digit');
      }
    });

    it('refuses an application that does not exist (400) and creates nothing', async () => {
      const before = (await kube.resource(Scopes).list({ namespace: ns })).items.length;
      const answer = await createScope('Orphan', { application_id: appId + 1 });
      expectError(answer, 400, 'APPLICATION_NOT_FOUND');
      const after = (await kube.resource(Scopes).list({ namespace: ns })).items.length;
      expect(after).toBe(before);
    });

    it('refuses invalid bodies naming the field (400)', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ name: 'x'.repeat(61) }, 'name'],
        [{ type: 'batch' }, 'type'],
        [{ colour: 'blue' }, 'colour'],
        [{ requested_spec: { memory_in_gb: 1, gpu: 2 } }, 'gpu'],
        [{ requested_spec: { cpu_profile: 'turbo' } }, 'requested_spec.cpu_profile'],
        [{ application_id: 'one' }, 'application_id'],
      ];
      for (const [extra, field] of cases) {
        const body = expectError(await createScope('Valid', extra), 400, 'VALIDATION_FAILED');
        expect(body.message, field).toContain(field);
      }
      const missing = expectError(
        await call('POST', '/scope', { body: { name: 'x', type: 'web_pool', application_id: 1 } }),
        400,
        'VALIDATION_FAILED',
      );
      expect(missing.message).toContain('requested_spec');
    });

    it('answers 404 for a scope id that does not exist, 400 for one that is not an id', async () => {
      expectError(await call('GET', '/scope/987654321'), 404, 'SCOPE_NOT_FOUND');
      expectError(await call('GET', '/scope/abc'), 400, 'VALIDATION_FAILED');
      expectError(await call('GET', '/scope/-1'), 400, 'VALIDATION_FAILED');
    });

    it('50 parallel creates of one name: one 200 and 49 × 409, one resource', async () => {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => createScope('Race Track')),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(49);
      for (const a of answers.filter((x) => x.status === 409)) {
        expectError(a, 409, 'SCOPE_ALREADY_EXISTS');
      }
      const scopes = (await kube.resource(Scopes).list({ namespace: ns })).items.filter(
        (s) => s.spec?.name === 'Race Track',
      );
      expect(scopes).toHaveLength(1);
    });

    it('500 parallel distinct creates: 500 distinct ids', { timeout: 120_000 }, async () => {
      const answers = await Promise.all(
        Array.from({ length: 500 }, (_, i) => createScope(`bulk ${i}`)),
      );
      const failed = answers.filter((a) => a.status !== 200);
      expect(failed.map((a) => a.body)).toEqual([]);
      const ids = new Set(answers.map((a) => (a.body as Scope).id));
      expect(ids.size).toBe(500);
      expect([...ids].every((id) => Number.isInteger(id))).toBe(true);
    });
  });

  describe('errors and auth', () => {
    it('401 without a token or with a wrong one; 403 when the token may not', async () => {
      expectError(await call('GET', '/service', { token: null }), 401, 'UNAUTHENTICATED');
      expectError(await call('GET', '/service', { token: 'wrong-token' }), 401, 'UNAUTHENTICATED');
      const bad = await fetch(`${facade.url}/service`, {
        headers: { authorization: 'Basic eDp5' },
      });
      expect(bad.status).toBe(401);
      expectError(await createScope('Not Mine', {}, READER), 403, 'FORBIDDEN');
      expectError(await list('', CREATOR), 403, 'FORBIDDEN');
      // The creator may create and read scopes.
      const made = await createScope('Creator Scope', {}, CREATOR);
      expect(made.status).toBe(200);
      expect((await call('GET', `/scope/${made.body.id}`, { token: CREATOR })).status).toBe(200);
    });

    it("Fastify's own errors come in the spec shape too", async () => {
      expectError(await call('GET', '/nowhere'), 404, 'ROUTE_NOT_FOUND');
      // Without a token too: an unknown route is a 404, not a 401.
      expectError(await call('GET', '/nowhere', { token: null }), 404, 'ROUTE_NOT_FOUND');
      expectError(await call('DELETE', '/service'), 404, 'ROUTE_NOT_FOUND');
      expectError(await call('POST', '/scope', { raw: '{"name": ' }), 400, 'INVALID_JSON');
      expectError(await call('POST', '/scope', { raw: '' }), 400, 'INVALID_JSON');
      expectError(
        await call('POST', '/scope', { raw: 'name=x', contentType: 'text/plain' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      );
      expectError(
        await call('POST', '/scope', { raw: JSON.stringify({ name: 'x'.repeat(300_000) }) }),
        413,
        'BODY_TOO_LARGE',
      );
    });

    it('refuses a body nested past 100 levels with 400 BODY_TOO_DEEP, and creates nothing', async () => {
      const before = await kube.resource(Scopes).list({ namespace: ns });
      for (const levels of [101, 5_000, 40_000]) {
        const capabilities = `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
        const raw = `{"name":"Deep ${levels}","type":"web_pool","application_id":${appId},"requested_spec":{"memory_in_gb":1,"cpu_profile":"standard","local_storage_in_gb":1},"capabilities":${capabilities}}`;
        expectError(await call('POST', '/scope', { raw }), 400, 'BODY_TOO_DEEP');
      }
      const after = await kube.resource(Scopes).list({ namespace: ns });
      expect(after.items.length).toBe(before.items.length);
      expect((await call('GET', '/openapi.json', { token: null })).status).toBe(200);
    });

    it('serves its OpenAPI document without a token', async () => {
      const answer = await call<{ openapi: string; paths: Record<string, unknown> }>(
        'GET',
        '/openapi.json',
        { token: null },
      );
      expect(answer.status).toBe(200);
      expect(answer.body.openapi).toMatch(/^3\./);
      expect(Object.keys(answer.body.paths).sort()).toEqual([
        '/scope',
        '/scope/{id}',
        '/service',
        '/status/resources',
        '/status/resources/{kind}/{namespace}/{name}',
        '/status/tree',
        '/ui',
        '/ui/{asset}',
        '/watch',
      ]);
    });

    it('random queries and bodies get 200 or a spec-shaped 4XX, never a 5XX', async () => {
      const known = ['id', 'nrn', 'limit', 'offset', 'status', 'entity_nrn', 'type'];
      const value = fc.oneof(
        fc.string(),
        fc.nat().map(String),
        fc.constantFrom('active', 'pending', 'scope', 'true', `organization=${org}:account=*`),
      );
      const query = fc.dictionary(
        fc.oneof(fc.constantFrom(...known, 'include_secret_attributes'), fc.string()),
        value,
        { maxKeys: 4 },
      );
      const body = fc.oneof(
        fc.jsonValue(),
        fc.record(
          {
            name: fc.oneof(fc.string({ maxLength: 70 }), fc.integer()),
            type: fc.constantFrom('web_pool', 'serverless', 'nope'),
            application_id: fc.oneof(fc.constant(appId + 7), fc.integer(), fc.string()),
            requested_spec: fc.oneof(
              fc.record({ memory_in_gb: fc.double() }, { requiredKeys: [] }),
              fc.jsonValue(),
            ),
            capabilities: fc.jsonValue(),
          },
          { requiredKeys: [] },
        ),
      );
      await fc.assert(
        fc.asyncProperty(query, body, async (q, b) => {
          const search = new URLSearchParams(q).toString();
          const listed = await facade.app.inject({
            method: 'GET',
            url: `/service?${search}`,
            headers: { authorization: `Bearer ${ADMIN}` },
          });
          expect([200, 400]).toContain(listed.statusCode);
          if (listed.statusCode === 400) ErrorBody.parse(listed.json());
          else ServicePage.parse(listed.json());
          const created = await facade.app.inject({
            method: 'POST',
            url: '/scope',
            headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
            payload: JSON.stringify(b),
          });
          expect(created.statusCode).toBeLessThan(500);
          if (created.statusCode !== 200) ErrorBody.parse(created.json());
        }),
        { numRuns: 150 },
      );
    });
  });
});
