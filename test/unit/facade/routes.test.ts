// The facade's routes through buildFacade() and Fastify's inject(), with no cluster: auth (401,
// 403) on every operation, validation (400), 404, 413, 415 and BODY_TOO_DEEP, each error body in
// the spec's ErrorBody shape, and the routes Fastify serves held to those /openapi.json lists.
// The authenticator and the catalog are the real ones; the ScopeStore is a small in-memory fake
// of its public methods, because the integration suite (test/integration/facade*.test.ts)
// drives the real one against the local control plane, and these tests are about the routes.
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CreateScopeRequest,
  ErrorBody,
  type Scope,
  ServicePage,
} from '../../../src/api/index.js';
import { buildFacade, MAX_BODY_DEPTH } from '../../../src/facade/app.js';
import { StaticAuthenticator } from '../../../src/facade/auth.js';
import { ServiceCatalog, type ServiceObject } from '../../../src/facade/catalog/index.js';
import { openApiDocument } from '../../../src/facade/openapi.js';
import type { ScopeStore } from '../../../src/facade/scopes.js';
import { silentLogger } from '../../../src/log.js';

const ADMIN = 'admin-token-0123456789abcdef';
const LISTER = 'lister-token-0123456789abcdef';
const NOBODY = 'nobody-token-0123456789abcdef';
const WRONG = 'wrong-token-0123456789abcdef';
const BODY_LIMIT = 4096;
const APP_ID = 7;
const FAILING_APP_ID = 13;

/** An application this fake knows, and the scopes created in it, by id. */
class FakeScopeStore implements Pick<ScopeStore, 'applicationNamespace' | 'create' | 'get'> {
  readonly scopes = new Map<number, Scope>();
  private nextId = 1;

  applicationNamespace(applicationId: number): string | undefined {
    return applicationId === APP_ID || applicationId === FAILING_APP_ID ? 'team' : undefined;
  }

  async create(request: CreateScopeRequest): Promise<Scope> {
    // A failure of ours, not the caller's: the facade must answer 500 without its details.
    if (request.application_id === FAILING_APP_ID) throw new Error('store exploded: secret-detail');
    const scope: Scope = { id: this.nextId++, ...request, status: 'pending' };
    this.scopes.set(scope.id ?? 0, scope);
    return scope;
  }

  async get(id: number): Promise<{ scope: Scope; namespace: string } | undefined> {
    const scope = this.scopes.get(id);
    return scope === undefined ? undefined : { scope, namespace: 'team' };
  }
}

function service(name: string, entity: string): ServiceObject {
  return {
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'Service',
    metadata: {
      name,
      namespace: 'team',
      uid: crypto.randomUUID(),
      resourceVersion: '1',
      creationTimestamp: '2024-01-01T00:00:00Z',
    },
    spec: {
      name,
      type: 'dependency',
      specification_id: '11111111-1111-4111-8111-111111111111',
      entity_nrn: entity,
    },
  };
}

const VALID_SCOPE = {
  name: 'web',
  type: 'web_pool',
  application_id: APP_ID,
  requested_spec: { memory_in_gb: 1 },
};

/** The operations of the spec, each with a request that passes validation. */
const OPERATIONS = [
  { method: 'GET', url: '/service', operation: 'services:list' },
  { method: 'POST', url: '/scope', operation: 'scopes:create', payload: VALID_SCOPE },
  { method: 'GET', url: '/scope/1', operation: 'scopes:get' },
] as const;

let app: FastifyInstance;

beforeAll(async () => {
  const catalog = new ServiceCatalog();
  catalog.upsertService(service('db', 'organization=1:account=2'));
  catalog.upsertService(service('cache', 'organization=1:account=3'));
  catalog.upsertService(service('queue', 'organization=4'));
  const store = new FakeScopeStore();
  app = buildFacade({
    log: silentLogger(),
    auth: new StaticAuthenticator({
      tokens: [
        { name: 'admin', token: ADMIN, operations: ['*'] },
        { name: 'lister', token: LISTER, operations: ['services:list'] },
        { name: 'nobody', token: NOBODY, operations: ['secrets:get'] },
      ],
    }),
    catalog,
    // The fake has every method the routes call; the class's private members it cannot have.
    scopes: store as unknown as ScopeStore,
    readSecret: async () => undefined,
    bodyLimit: BODY_LIMIT,
  });
  await app.ready();
  await store.create({ ...VALID_SCOPE, name: 'existing' } as CreateScopeRequest);
});

afterAll(async () => {
  await app?.close();
});

function call(options: InjectOptions & { token?: string | null }): Promise<LightMyRequestResponse> {
  const { token, ...rest } = options;
  const headers: Record<string, string> = { ...(rest.headers as Record<string, string>) };
  const bearer = token === undefined ? ADMIN : token;
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
  return app.inject({ ...rest, headers });
}

/** The answer is an error of this status and code, in the spec's ErrorBody shape exactly. */
function expectError(res: LightMyRequestResponse, status: number, code: string): ErrorBody {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const parsed = ErrorBody.safeParse(res.json());
  expect(parsed.success, res.body).toBe(true);
  const body = parsed.data as ErrorBody;
  expect(body.statusCode).toBe(status);
  expect(body.code).toBe(code);
  return body;
}

describe('facade routes: authentication', () => {
  for (const op of OPERATIONS) {
    const request = {
      method: op.method,
      url: op.url,
      ...('payload' in op ? { payload: op.payload } : {}),
    };

    it(`${op.method} ${op.url} is 401 without a token`, async () => {
      expectError(await call({ ...request, token: null }), 401, 'UNAUTHENTICATED');
    });

    it(`${op.method} ${op.url} is 401 with a wrong token`, async () => {
      expectError(await call({ ...request, token: WRONG }), 401, 'UNAUTHENTICATED');
    });

    it(`${op.method} ${op.url} is 401 with a header that is not a bearer token`, async () => {
      for (const authorization of [`Basic ${ADMIN}`, 'Bearer', `Bearer ${ADMIN} extra`]) {
        expectError(
          await call({ ...request, token: null, headers: { authorization } }),
          401,
          'UNAUTHENTICATED',
        );
      }
    });

    it(`${op.method} ${op.url} is 403 for a token without ${op.operation}`, async () => {
      const body = expectError(await call({ ...request, token: NOBODY }), 403, 'FORBIDDEN');
      expect(body.message).toContain(op.operation);
      expect(body.message).toContain('nobody');
    });

    it(`${op.method} ${op.url} answers a token with ${op.operation}`, async () => {
      const res = await call(request);
      expect(res.statusCode, res.body).toBe(200);
    });
  }

  it('authenticates before reading the body: 401, not 400, 413 or 415', async () => {
    for (const [payload, contentType] of [
      ['{"name": ', 'application/json'],
      ['x'.repeat(BODY_LIMIT + 1), 'application/json'],
      ['[['.repeat(MAX_BODY_DEPTH), 'application/json'],
      ['name=web', 'text/plain'],
    ] as const) {
      expectError(
        await call({
          method: 'POST',
          url: '/scope',
          payload,
          headers: { 'content-type': contentType },
          token: null,
        }),
        401,
        'UNAUTHENTICATED',
      );
    }
  });

  it('a token allowed one operation is refused the others', async () => {
    expect((await call({ method: 'GET', url: '/service', token: LISTER })).statusCode).toBe(200);
    expectError(
      await call({ method: 'POST', url: '/scope', payload: VALID_SCOPE, token: LISTER }),
      403,
      'FORBIDDEN',
    );
    expectError(await call({ method: 'GET', url: '/scope/1', token: LISTER }), 403, 'FORBIDDEN');
  });

  it('/openapi.json needs no token', async () => {
    const res = await call({ method: 'GET', url: '/openapi.json', token: null });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(openApiDocument());
  });
});

describe('facade routes: GET /service', () => {
  it('answers a page of the catalog', async () => {
    const res = await call({ method: 'GET', url: '/service?limit=2&offset=1' });
    expect(res.statusCode, res.body).toBe(200);
    const page = ServicePage.parse(res.json());
    expect(page.paging).toEqual({ limit: 2, offset: 1 });
    expect(page.results).toHaveLength(2);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=1501', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['offset=-1', 'offset'],
    ['status=sleeping', 'status'],
    ['type=thing', 'type'],
    ['id=not-an-nrn', 'id'],
    ['entity_nrn=organization', 'entity_nrn'],
    ['id=organization=1&nrn=organization=2', 'nrn'],
    ['include_secret_attributes=maybe', 'include_secret_attributes'],
    ['colour=blue', 'colour'],
  ])('?%s is a 400 naming %s', async (query, field) => {
    const body = expectError(
      await call({ method: 'GET', url: `/service?${query}` }),
      400,
      'VALIDATION_FAILED',
    );
    expect(body.message).toContain(field);
  });

  it('a repeated query parameter is a 400, not the first or last value', async () => {
    expectError(
      await call({ method: 'GET', url: '/service?limit=1&limit=2' }),
      400,
      'VALIDATION_FAILED',
    );
  });
});

describe('facade routes: POST /scope', () => {
  it('answers the scope created', async () => {
    const res = await call({ method: 'POST', url: '/scope', payload: VALID_SCOPE });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ ...VALID_SCOPE, status: 'pending' });
  });

  it.each([
    ['a missing field', { ...VALID_SCOPE, name: undefined }, 'name'],
    ['an empty name', { ...VALID_SCOPE, name: '' }, 'name'],
    ['a name past 60 characters', { ...VALID_SCOPE, name: 'x'.repeat(61) }, 'name'],
    ['a type not in the spec', { ...VALID_SCOPE, type: 'mainframe' }, 'type'],
    ['a negative application id', { ...VALID_SCOPE, application_id: -1 }, 'application_id'],
    ['a string application id', { ...VALID_SCOPE, application_id: '7' }, 'application_id'],
    ['an unknown field', { ...VALID_SCOPE, colour: 'blue' }, 'colour'],
    ['an unknown nested field', { ...VALID_SCOPE, requested_spec: { gpus: 1 } }, 'requested_spec'],
    ['an array', [VALID_SCOPE], ''],
    ['a number', 42, ''],
    ['null', null, ''],
  ])('a body with %s is a 400', async (_what, payload, field) => {
    const body = expectError(
      await call({
        method: 'POST',
        url: '/scope',
        payload: JSON.stringify(payload),
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'VALIDATION_FAILED',
    );
    expect(body.message).toContain(field);
  });

  it.each([
    ['not JSON', '{"name": '],
    ['empty', ''],
    ['JSON with a __proto__ key', '{"__proto__": {"polluted": true}}'],
  ])('a body that is %s is a 400', async (_what, payload) => {
    expectError(
      await call({
        method: 'POST',
        url: '/scope',
        payload,
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'INVALID_JSON',
    );
  });

  it(`a body nesting past ${MAX_BODY_DEPTH} levels is BODY_TOO_DEEP, within the size limit`, async () => {
    const deep = `${'['.repeat(MAX_BODY_DEPTH + 1)}${']'.repeat(MAX_BODY_DEPTH + 1)}`;
    expect(deep.length).toBeLessThan(BODY_LIMIT);
    expectError(
      await call({
        method: 'POST',
        url: '/scope',
        payload: deep,
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'BODY_TOO_DEEP',
    );
    const nested = {
      ...VALID_SCOPE,
      capabilities: JSON.parse(`${'{"a":'.repeat(200)}1${'}'.repeat(200)}`),
    };
    expectError(
      await call({ method: 'POST', url: '/scope', payload: nested }),
      400,
      'BODY_TOO_DEEP',
    );
  });

  it('a body past the size limit is a 413', async () => {
    const payload = { ...VALID_SCOPE, capabilities: { padding: 'x'.repeat(BODY_LIMIT) } };
    expectError(await call({ method: 'POST', url: '/scope', payload }), 413, 'BODY_TOO_LARGE');
  });

  it.each([
    'text/plain',
    'application/xml',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
  ])('a %s body is a 415', async (contentType) => {
    expectError(
      await call({
        method: 'POST',
        url: '/scope',
        payload: JSON.stringify(VALID_SCOPE),
        headers: { 'content-type': contentType },
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('a caller without scopes:create gets the same 403 whether the application exists or not', async () => {
    const refusal = async (applicationId: number) =>
      expectError(
        await call({
          method: 'POST',
          url: '/scope',
          token: NOBODY,
          payload: { ...VALID_SCOPE, application_id: applicationId },
        }),
        403,
        'FORBIDDEN',
      );
    const existing = await refusal(APP_ID);
    const missing = await refusal(99);
    // Only the application id the caller sent differs; no namespace is named.
    expect(existing.message.replace(String(APP_ID), '<id>')).toBe(
      missing.message.replace('99', '<id>'),
    );
    expect(missing.message).toBe('nobody may not scopes:create for application 99');
  });

  it('an application that does not exist is a 400', async () => {
    expectError(
      await call({
        method: 'POST',
        url: '/scope',
        payload: { ...VALID_SCOPE, application_id: 99 },
      }),
      400,
      'APPLICATION_NOT_FOUND',
    );
  });

  it('a failure of the store is a 500 that shows none of its detail', async () => {
    const body = expectError(
      await call({
        method: 'POST',
        url: '/scope',
        payload: { ...VALID_SCOPE, application_id: FAILING_APP_ID },
      }),
      500,
      'INTERNAL_ERROR',
    );
    expect(body.message).not.toContain('secret-detail');
  });
});

describe('facade routes: GET /scope/{id}', () => {
  it('answers the scope', async () => {
    const res = await call({ method: 'GET', url: '/scope/1' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: 1, name: 'existing' });
  });

  it.each(['abc', '-1', '1.5', '1e3', '0x10', '%20', '9'.repeat(16)])(
    '/scope/%s is a 400',
    async (id) => {
      expectError(await call({ method: 'GET', url: `/scope/${id}` }), 400, 'VALIDATION_FAILED');
    },
  );

  it('a scope that does not exist is a 404', async () => {
    expectError(await call({ method: 'GET', url: '/scope/424242' }), 404, 'SCOPE_NOT_FOUND');
  });
});

describe('facade routes: unknown routes', () => {
  it.each([
    ['GET', '/'],
    ['GET', '/services'],
    ['GET', '/scope'],
    ['GET', '/scope/1/extra'],
    ['DELETE', '/scope/1'],
    ['PUT', '/service'],
    ['POST', '/openapi.json'],
  ] as const)('%s %s is a 404, with or without a token', async (method, url) => {
    for (const token of [ADMIN, null]) {
      const body = expectError(await call({ method, url, token }), 404, 'ROUTE_NOT_FOUND');
      expect(body.message).toContain(url);
    }
  });

  it('a malformed URL is a 400', async () => {
    expectError(await call({ method: 'GET', url: '/scope/%E0%A4%A' }), 400, 'BAD_REQUEST');
  });
});

/**
 * Every method and path of printRoutes()' tree, `:id` spelled `{id}` as OpenAPI does. A line is
 * its depth of 4-character indents, `├── ` or `└── `, the path segment below its parent, and the
 * methods when the node is a route. (Fastify's onRoute hook cannot be used: buildFacade has
 * registered the routes before a test could add it.)
 */
function servedRoutes(tree: string): string[] {
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (match === null) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(match[2] ?? '');
    const path = stack.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of (match[3] ?? '').split(', ').filter(Boolean))
      out.push(`${method} ${path}`);
  }
  return out.sort();
}

describe('facade routes and /openapi.json', () => {
  // HEAD is Fastify's for every GET (exposeHeadRoutes), not an operation of the spec.
  const served = () =>
    servedRoutes(app.printRoutes({ commonPrefix: false })).filter(
      (r) => !r.startsWith('HEAD ') && !r.startsWith('OPTIONS '),
    );

  const documented = () =>
    Object.entries(openApiDocument().paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();

  it('every route served is in the document, and every operation of the document is served', () => {
    // /openapi.json is the document itself, not an operation of the platform API: it is public,
    // answers no error shape of its own, and listing it would put it in generated clients.
    expect(served()).toEqual([...documented(), 'GET /openapi.json'].sort());
  });

  it('reads nested routes out of the printed tree', () => {
    expect(
      servedRoutes('├── /a (GET, HEAD)\n│   └── /:id (GET)\n└── /b\n    └── /c (POST)\n'),
    ).toEqual(['GET /a', 'GET /a/{id}', 'HEAD /a', 'POST /b/c']);
  });
});
