// Abuse: what a hostile or careless client sends the product, against `nrn-operator local`
// (API server, operator and facade in one process): every facade input and the API server's
// request parsing fuzzed with fast-check (paths, query values, headers, content types, bodies of
// every patch type, raw bytes), and every route without a token, with a wrong one and with one
// lacking permission. Only 4XX in the right shape, never a 5XX or a stack trace; nothing stored
// by what was refused; no secret value in any answer, log line or Event; the process alive and
// serving afterwards.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody, ScopeName, ServicePage } from '../../src/api/index.js';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { kubectlAt } from '../support/cluster.js';
import { applicationYaml, namespaceYaml } from '../support/manifests.js';
import { crash, startLocalProcess, terminate } from '../support/operator-processes.js';
import { sleep } from '../support/wait.js';
import {
  anyBodyText,
  apiPath,
  apiQuery,
  BAD_ESCAPES,
  Body,
  brokenMetadata,
  contentType,
  excess,
  extraFields,
  failingJsonPatch,
  headerText,
  PATCH_TYPES,
  refusedObject,
  urlText,
  withExcess,
} from './support/abuse-arbitraries.js';
import {
  type Answer,
  expectFacadeAnswer,
  expectFacadeRefusal,
  expectStatusAnswer,
  expectStatusRefusal,
  type Request,
  sendRaw,
  Wire,
} from './support/abuse-http.js';
import { FULL, report, size } from './support/scenario.js';

const RUNS = size(100, 2000);
// A failure prints its seed: ABUSE_SEED=<seed> with `-t <test name>` replays that property.
if (process.env.ABUSE_SEED !== undefined)
  fc.configureGlobal({ seed: Number(process.env.ABUSE_SEED) });
/** Properties that create (scopes the operator then provisions): fewer runs. */
const CREATE_RUNS = size(25, 300);

const NS = 'abuse';
/** Where the properties that may be accepted create things; left out of the snapshots. */
const SANDBOX = 'abuse-sandbox';
const APP_ID = 4242;
const SPEC_ID = randomUUID();
/** Recognisable and random: found only where it was put, or where it leaked. */
const SECRET = `abuse-secret-${randomBytes(12).toString('hex')}`;
const SECRET_B64 = Buffer.from(SECRET).toString('base64');

const TOKENS = {
  admin: randomBytes(24).toString('hex'),
  lister: randomBytes(24).toString('hex'),
  creator: randomBytes(24).toString('hex'),
  reader: randomBytes(24).toString('hex'),
};
const OPERATIONS: Record<keyof typeof TOKENS, string[]> = {
  admin: ['*'],
  lister: ['services:list'],
  creator: ['scopes:create'],
  reader: ['scopes:get'],
};
type Caller = keyof typeof TOKENS | 'none' | 'wrong';

let dir: string;
let plane: Awaited<ReturnType<typeof startLocalProcess>>;
let api: Wire;
let facade: Wire;
let apiToken: string;
let ca: string;
let scopeId: number;
/** Plural paths of every kind the API serves (for snapshots and route lists), but Leases and
 * Events: the operator's leader election renews a Lease every few seconds whatever we do. */
let kinds: { path: string; namespaced: boolean; resource: string }[] = [];
const held: string[] = [];
const raw = { sent: 0, closed: 0 };
const started = Date.now();

const admin = () => ({ authorization: `Bearer ${apiToken}` });
const facadeAuth = (caller: Caller): Record<string, string> =>
  caller === 'none'
    ? {}
    : caller === 'wrong'
      ? { authorization: `Bearer ${randomBytes(24).toString('hex')}` }
      : { authorization: `Bearer ${TOKENS[caller]}` };

const WORLD = [
  namespaceYaml(NS),
  namespaceYaml(SANDBOX),
  applicationYaml(NS, 'abuse-app', APP_ID),
  `
apiVersion: platform.nrn.dev/v1alpha1
kind: ServiceSpecification
metadata: {name: abuse-postgres, namespace: ${NS}}
spec:
  id: ${SPEC_ID}
  name: abuse-postgres
  type: dependency
  attributes:
    schema:
      type: object
      required: [size]
      properties:
        size: {type: string, enum: [small, medium, large]}
        password: {type: string, secret: true}
  provisioner: {type: none}
`,
  `
apiVersion: v1
kind: Secret
metadata: {name: abuse-db-secrets, namespace: ${NS}}
stringData: {password: ${SECRET}}
`,
  `
apiVersion: platform.nrn.dev/v1alpha1
kind: Service
metadata: {name: abuse-db, namespace: ${NS}}
spec:
  name: abuse db
  type: dependency
  specification_id: ${SPEC_ID}
  entity_nrn: organization=1:account=2:namespace=3:application=${APP_ID}
  linkable_to: ["organization=1:account=2"]
  provider: aws
  category: database
  attributes: {size: small}
  secret_attributes_ref: {name: abuse-db-secrets}
`,
  `
apiVersion: v1
kind: ConfigMap
metadata: {name: abuse-target, namespace: ${NS}}
data: {a: b}
`,
  `
apiVersion: v1
kind: ServiceAccount
metadata: {name: abuse-sa, namespace: ${NS}}
secrets: [{name: abuse-db-secrets}]
`,
].join('---');

const validScope = (name: string) => ({
  name,
  type: 'web_pool',
  application_id: APP_ID,
  requested_spec: { memory_in_gb: 1, cpu_profile: 'standard', local_storage_in_gb: 1 },
});

async function json<T>(answer: Promise<Answer>): Promise<T> {
  const got = await answer;
  if (got.status < 200 || got.status >= 300) throw new Error(`${got.status}: ${got.text}`);
  return JSON.parse(got.text) as T;
}

/** Every kind the API lists (discovery), so that a snapshot misses nothing a request touched. */
async function discoverKinds(): Promise<typeof kinds> {
  type Resources = { resources: { name: string; namespaced: boolean; verbs: string[] }[] };
  const groupVersions = ['/api/v1'];
  const groups = await json<{ groups: { preferredVersion: { groupVersion: string } }[] }>(
    api.send({ method: 'GET', path: '/apis', headers: admin() }),
  );
  for (const g of groups.groups) groupVersions.push(`/apis/${g.preferredVersion.groupVersion}`);
  const found: typeof kinds = [];
  for (const gv of groupVersions) {
    const list = await json<Resources>(api.send({ method: 'GET', path: gv, headers: admin() }));
    for (const r of list.resources) {
      if (r.name.includes('/') || !r.verbs.includes('list')) continue;
      if (r.name === 'leases' || r.name === 'events') continue;
      found.push({ path: `${gv}/${r.name}`, namespaced: r.namespaced, resource: r.name });
    }
  }
  return found;
}

/** Name and resourceVersion of every stored object outside the sandbox. */
async function snapshot(): Promise<Map<string, string>> {
  const all = new Map<string, string>();
  for (const kind of kinds) {
    const list = await json<{
      items: { metadata: { name: string; namespace?: string; resourceVersion: string } }[];
    }>(api.send({ method: 'GET', path: kind.path, headers: admin() }));
    for (const { metadata: m } of list.items) {
      if (m.namespace === SANDBOX) continue;
      all.set(`${kind.resource}/${m.namespace ?? ''}/${m.name}`, m.resourceVersion);
    }
  }
  return all;
}

/** Waits for `check` to hold, up to a minute. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not so within a minute: ${what}`);
    await sleep(250);
  }
}

/** A scope created through the facade, once active: its id. */
async function createScope(name: string): Promise<number> {
  const created = await facade.send({
    method: 'POST',
    path: '/scope',
    headers: { ...facadeAuth('admin'), 'content-type': 'application/json' },
    body: JSON.stringify(validScope(name)),
  });
  if (created.status !== 200) throw new Error(`create ${name}: ${created.status} ${created.text}`);
  const id = (JSON.parse(created.text) as { id: number }).id;
  await until(`scope ${id} active`, async () =>
    (
      await facade.send({ method: 'GET', path: `/scope/${id}`, headers: facadeAuth('admin') })
    ).text.includes('"status":"active"'),
  );
  return id;
}

/** A snapshot once two in a row agree: the operator's work of the setup is done. */
async function settled(): Promise<Map<string, string>> {
  let last = await snapshot();
  for (let i = 0; i < 30; i++) {
    await sleep(1_000);
    const next = await snapshot();
    if (sameState(last, next)) return next;
    last = next;
  }
  throw new Error('the stored objects never stopped changing');
}

/** Sends each (path, patch type, patch) as admin: each a 400 Status, and nothing stored changes. */
async function refusedWith400(cases: readonly [string, string, unknown][]): Promise<void> {
  const before = await snapshot();
  for (const [path, type, patch] of cases) {
    const request: Request = {
      method: 'PATCH',
      path,
      headers: { ...admin(), 'content-type': type },
      body: JSON.stringify(patch),
    };
    const answer = await apiSend(request);
    expectStatusRefusal(request, answer);
    expect(answer.status, answer.text).toBe(400);
  }
  expect(sameState(before, await snapshot())).toBe(true);
}

function sameState(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

/** Runs a property of requests that must all be refused, and checks that nothing changed. */
async function refusedOnly<Ts extends [unknown, ...unknown[]]>(
  property: fc.IAsyncProperty<Ts>,
  runs = RUNS,
): Promise<void> {
  const before = await snapshot();
  await fc.assert(property, { numRuns: runs });
  const after = await snapshot();
  const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
    (k) => before.get(k) !== after.get(k),
  );
  expect(changed, 'stored objects changed by refused requests').toEqual([]);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nrn-abuse-'));
  const tokenFile = join(dir, 'tokens.yaml');
  await writeFile(
    tokenFile,
    JSON.stringify({
      tokens: Object.entries(TOKENS).map(([name, token]) => ({
        name,
        token,
        operations: OPERATIONS[name as keyof typeof TOKENS],
      })),
    }),
    { mode: 0o600 },
  );
  const dataDir = join(dir, 'data');
  plane = await startLocalProcess(
    dataDir,
    ['--facade-port', '0', '--facade-token-file', tokenFile],
    { logLevel: 'info' },
  );
  const ready = plane.lines.find((l) => l.includes('ready:')) ?? '';
  const facadeUrl = /facade at (http:\/\/[^;\s]+)/.exec(ready)?.[1];
  if (facadeUrl === undefined) throw new Error(`no facade in ${ready}`);
  apiToken = (await readFile(join(dataDir, 'apiserver-token'), 'utf8')).trim();
  ca = await readFile(join(dataDir, 'tls', 'ca.crt'), 'utf8');
  api = new Wire(plane.url, ca);
  facade = new Wire(facadeUrl);

  const k = kubectlAt(plane.kubeconfigPath);
  await until(
    'the CRDs',
    async () => (await k(['get', 'crd', 'services.platform.nrn.dev'])).code === 0,
  );
  await k(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=30s']);
  const applied = await k(['apply', '-f', '-'], WORLD);
  if (applied.code !== 0) throw new Error(`kubectl apply: ${applied.stderr}`);

  // The service is listed once the operator made it active; the scope once it was provisioned.
  const services = `/service?entity_nrn=organization=1:account=2:namespace=3:application=${APP_ID}`;
  await until('the service active', async () =>
    (
      await facade.send({ method: 'GET', path: services, headers: facadeAuth('admin') })
    ).text.includes('"status":"active"'),
  );
  scopeId = await createScope('abuse target');
  kinds = await discoverKinds();
  // The snapshot sees what the properties aim at, or "nothing changed" would mean nothing.
  const state = await settled();
  for (const key of [
    `configmaps/${NS}/abuse-target`,
    `secrets/${NS}/abuse-db-secrets`,
    `services/${NS}/abuse-db`,
    `applications/${NS}/abuse-app`,
    `namespaces//${NS}`,
    `serviceaccounts/${NS}/abuse-sa`,
    'customresourcedefinitions//scopes.platform.nrn.dev',
  ]) {
    if (!state.has(key)) throw new Error(`the snapshot misses ${key}`);
  }
});

afterAll(async () => {
  await facade?.close();
  await api?.close();
  if (plane !== undefined) {
    // A clean stop, bounded: a plane that does not stop in time is killed.
    const stopped = await Promise.race([terminate(plane.child), sleep(20_000).then(() => 'late')]);
    if (stopped === 'late') await crash(plane);
  }
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  const facadeAnswers = facade?.total ?? 0;
  const apiAnswers = api?.total ?? 0;
  await report({
    scenario: 'abuse',
    tried:
      `${RUNS} runs per property (${CREATE_RUNS} for creates that may be accepted): ` +
      `${facadeAnswers} facade requests, ${apiAnswers} API requests, ${raw.sent} raw byte streams` +
      ' — bodies, paths, queries, headers, content types, patches; every route unauthenticated, wrongly authenticated and unauthorised',
    found:
      `${held.length} checks held (${held.join('; ')}); ` +
      `facade 2xx/4xx/5xx ${facade?.count('2xx')}/${facade?.count('4xx')}/${facade?.count('5xx')}, ` +
      `API ${api?.count('2xx')}/${api?.count('4xx')}/${api?.count('5xx')}, raw closed without answer ${raw.closed}`,
    figures: {
      facadeRequests: facadeAnswers,
      apiRequests: apiAnswers,
      rawStreams: raw.sent,
      answers5xx: (facade?.count('5xx') ?? 0) + (api?.count('5xx') ?? 0),
      seconds: Math.round((Date.now() - started) / 1000),
      full: FULL ? 1 : 0,
    },
  });
});

/** A target with a byte outside printable ASCII: Node's HTTP parser refuses it (400). */
const unparsable = (request: Request) => /[^\x21-\x7e]/.test(request.path);

/**
 * 401 — or 400 for a request that cannot be read far enough to look for a token: a byte
 * outside ASCII in its target (Node's parser) or a malformed escape in its path (Fastify's
 * router), as kube-apiserver's Go server refuses a bad request line before any handler.
 */
function expectUnauthenticated(request: Request, answer: Answer): void {
  if (answer.status === 400) {
    const code = (JSON.parse(answer.text) as { code?: string }).code;
    expect(code, answer.text).toBe('BAD_REQUEST');
    return;
  }
  expect(unparsable(request), `${request.path} was read`).toBe(false);
  expect(answer.status, answer.text).toBe(401);
}

/** A facade request built and sent, then judged. */
async function facadeRefused(request: Request, label: string): Promise<Answer> {
  const answer = await facade.send(request, label);
  expectFacadeRefusal(request, answer);
  return answer;
}

// --- the facade ------------------------------------------------------------------------------

const wrongAppId = fc
  .oneof(fc.integer(), fc.double(), fc.string({ maxLength: 12 }), fc.constant(null), fc.nat())
  .filter((v) => v !== APP_ID);
const scopeName = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.integer(),
  fc.nat({ max: 300_000 }).map((n) => 'n'.repeat(n)),
  fc.constant(''),
);
/** A create-scope body that names no application there is, wrong types besides. */
const refusedScopeBody = fc.oneof(
  anyBodyText,
  fc
    .constantFrom(
      `{"__proto__":{"application_id":${APP_ID}},"name":"p","type":"web_pool","requested_spec":{}}`,
      '{"constructor":{"prototype":{"polluted":true}},"application_id":-1}',
      `{"name":"dup","name":"dup","application_id":"${APP_ID}","type":"web_pool","requested_spec":{}}`,
    )
    .map((text) => new Body(text)),
  fc
    .tuple(
      fc.record(
        {
          name: scopeName,
          type: fc.oneof(fc.constantFrom('web_pool', 'serverless', 'nope'), fc.jsonValue()),
          application_id: wrongAppId,
          requested_spec: fc.oneof(
            fc.constant({ memory_in_gb: 1, cpu_profile: 'standard', local_storage_in_gb: 1 }),
            fc.record(
              {
                memory_in_gb: fc.oneof(fc.double(), fc.string()),
                cpu_profile: fc.oneof(fc.string(), fc.integer()),
                local_storage_in_gb: fc.oneof(fc.double(), fc.jsonValue()),
              },
              { requiredKeys: [] },
            ),
            fc.jsonValue({ maxDepth: 3 }),
          ),
          capabilities: fc.jsonValue({ maxDepth: 4 }),
          messages: fc.jsonValue({ maxDepth: 2 }),
        },
        { requiredKeys: ['application_id'] },
      ),
      excess,
    )
    .map(([body, more]) => withExcess(body, more)),
);

const NRNS = [
  'organization=1',
  'organization=1:account=2',
  `organization=1:account=2:namespace=3:application=${APP_ID}`,
  'organization=1:account=*',
  'organization=*:account=*:namespace=*',
  'organization=1:*',
  'organization=1:account=2:namespace=3:application=4242:scope=1',
  'organization=',
  '=1',
  'organization=1::account=2',
  `organization=${'9'.repeat(40)}`,
  `${'organization=1:'.repeat(200)}account=2`,
] as const;

const serviceQuery = fc
  .array(
    fc.tuple(
      fc.oneof(
        {
          weight: 6,
          arbitrary: fc.constantFrom(
            'id',
            'nrn',
            'entity_nrn',
            'status',
            'type',
            'limit',
            'offset',
            'include_secret_attributes',
          ),
        },
        urlText,
      ),
      fc.oneof(
        {
          weight: 3,
          arbitrary: fc.constantFrom(
            ...NRNS.map(encodeURIComponent),
            'active',
            'pending',
            'failed',
            'dependency',
            'scope',
            'true',
            'false',
            '0',
            '1',
            '1500',
            '1501',
            '-1',
            '9007199254740993',
            '1e3',
            '',
          ),
        },
        urlText,
      ),
    ),
    { maxLength: 5 },
  )
  .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));

const callers = fc.constantFrom<Caller>('admin', 'lister', 'creator', 'reader', 'none', 'wrong');

describe('abuse: the facade', () => {
  it(`POST /scope: ${RUNS} bodies that name no application (arbitrary JSON, wrong types, huge, nested deep), each a 4XX in the spec shape; nothing stored, no id used`, async () => {
    await refusedOnly(
      fc.asyncProperty(refusedScopeBody, async (body) => {
        await facadeRefused(
          {
            method: 'POST',
            path: '/scope',
            headers: { ...facadeAuth('admin'), 'content-type': 'application/json' },
            body: body.text,
          },
          'admin',
        );
      }),
    );
    held.push('facade bodies refused');
  });

  it('POST /scope: well-formed bodies without a token (401), a wrong one (401) or a token that may not create (403); nothing stored', async () => {
    await refusedOnly(
      fc.asyncProperty(
        fc.constantFrom<Caller>('none', 'wrong', 'lister', 'reader'),
        // Well-formed: a name the schema takes (a letter or a digit among 1 to 60 characters).
        fc.string({ minLength: 1, maxLength: 60 }).filter((n) => ScopeName.safeParse(n).success),
        async (caller, name) => {
          const answer = await facadeRefused(
            {
              method: 'POST',
              path: '/scope',
              headers: { ...facadeAuth(caller), 'content-type': 'application/json' },
              body: JSON.stringify(validScope(name)),
            },
            caller,
          );
          expect(answer.status).toBe(caller === 'none' || caller === 'wrong' ? 401 : 403);
        },
      ),
    );
    held.push('facade creates unauthorised refused');
  });

  it('POST /scope with arbitrary content types and headers: a 4XX in the spec shape; nothing stored', async () => {
    const header = fc.tuple(
      fc.constantFrom(
        'content-encoding',
        'accept',
        'accept-encoding',
        'accept-charset',
        'x-http-method-override',
        'x-forwarded-for',
        'x-forwarded-proto',
        'cookie',
        'origin',
        'range',
        'if-match',
      ),
      headerText,
    );
    await refusedOnly(
      fc.asyncProperty(
        contentType,
        fc.array(header, { maxLength: 3 }),
        refusedScopeBody,
        async (type, more, body) => {
          await facadeRefused(
            {
              method: 'POST',
              path: '/scope',
              headers: {
                ...Object.fromEntries(more),
                ...facadeAuth('admin'),
                'content-type': type,
              },
              body: body.text,
            },
            'admin',
          );
        },
      ),
    );
    held.push('facade content types refused');
  });

  it('GET /service: every filter at arbitrary values, by every caller: 200 with a page, or a 4XX in the spec shape', async () => {
    await refusedOnly(
      fc.asyncProperty(callers, serviceQuery, async (caller, query) => {
        const request = { method: 'GET', path: `/service?${query}`, headers: facadeAuth(caller) };
        const answer = await facade.send(request, caller);
        expectFacadeAnswer(request, answer);
        if (unparsable(request) || caller === 'none' || caller === 'wrong')
          expectUnauthenticated(request, answer);
        else if (caller === 'creator' || caller === 'reader')
          expect(answer.status, answer.text).toBe(403);
        else expect([200, 400], answer.text).toContain(answer.status);
        if (answer.status === 200) {
          const page = ServicePage.safeParse(JSON.parse(answer.text));
          expect(page.success, answer.text.slice(0, 300)).toBe(true);
        }
      }),
    );
    held.push('service queries answered in shape');
  });

  it('GET /scope/{id}: arbitrary ids, escaped or not: 200, 400 or 404 in the spec shape (401/403 for callers who may not)', async () => {
    const id = fc.oneof(
      fc.nat().map(String),
      fc.integer().map(String),
      fc.double().map(String),
      fc.nat({ max: 400 }).map((n) => '9'.repeat(n)),
      fc.constant(String(scopeId)),
      fc.constant(`${scopeId}.0`),
      fc.constant(`0${scopeId}`),
      urlText,
      fc.constantFrom(...BAD_ESCAPES),
    );
    await refusedOnly(
      fc.asyncProperty(callers, id, async (caller, scope) => {
        const request = { method: 'GET', path: `/scope/${scope}`, headers: facadeAuth(caller) };
        const answer = await facade.send(request, caller);
        expectFacadeAnswer(request, answer);
        // A raw `/` or a dot segment in the id (before any `?` or `#`) makes the path another
        // one, which no route serves: 404 for every caller, as for any unknown path.
        const id = scope.split(/[?#]/)[0] ?? '';
        if (id.includes('/') || id === '.' || id === '..') {
          if (answer.status !== 400) {
            expect(answer.status, answer.text).toBe(404);
            expect(JSON.parse(answer.text).code, answer.text).toBe('ROUTE_NOT_FOUND');
          }
        } else if (unparsable(request) || caller === 'none' || caller === 'wrong')
          expectUnauthenticated(request, answer);
        else expect([200, 400, 403, 404], answer.text).toContain(answer.status);
      }),
    );
    held.push('scope ids answered in shape');
  });

  it('arbitrary methods and paths: 2XX only on a route, otherwise a 4XX in the spec shape', async () => {
    const segment = fc.oneof(
      fc.constantFrom('service', 'scope', 'openapi.json', String(scopeId), '', '.', '..'),
      urlText,
      fc.constantFrom(...BAD_ESCAPES),
    );
    await refusedOnly(
      fc.asyncProperty(
        fc.constantFrom(
          'GET',
          'HEAD',
          'OPTIONS',
          'PUT',
          'PATCH',
          'DELETE',
          'POST',
          'PROPFIND',
          'X-ABUSE',
        ),
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.option(serviceQuery, { nil: undefined }),
        anyBodyText,
        async (method, segments, query, body) => {
          const request: Request = {
            method,
            path: `/${segments.join('/')}${query !== undefined ? `?${query}` : ''}`,
            headers: { ...facadeAuth('admin'), 'content-type': 'application/json' },
            // The only route that writes is POST /scope: its body names no application here.
            ...(method !== 'GET' && method !== 'HEAD'
              ? { body: method === 'POST' ? JSON.stringify({ application_id: -1 }) : body.text }
              : {}),
          };
          expectFacadeAnswer(request, await facade.send(request, 'admin'));
        },
      ),
    );
    held.push('facade paths answered in shape');
  });

  it('every route without a token or with a wrong one is refused (401), and with one lacking the operation (403)', async () => {
    const routes: { method: string; path: string; body?: string; lacking: Caller }[] = [
      { method: 'GET', path: '/service', lacking: 'creator' },
      { method: 'GET', path: '/service?include_secret_attributes=true', lacking: 'reader' },
      {
        method: 'POST',
        path: '/scope',
        body: JSON.stringify(validScope('abuse unauthorised')),
        lacking: 'lister',
      },
      { method: 'GET', path: `/scope/${scopeId}`, lacking: 'lister' },
    ];
    const tokens = Object.values(TOKENS);
    const oddAuthorization = fc.oneof(
      headerText,
      fc.constantFrom(
        'Bearer',
        'Bearer ',
        'bearer',
        'Basic YWRtaW46YWRtaW4=',
        'Bearer  ',
        'Token x',
      ),
      fc.string({ maxLength: 64 }).map((s) => `Bearer ${s}`),
      fc.constantFrom(...tokens).map((t) => `Bearer ${t.slice(0, -1)}`),
      fc.constantFrom(...tokens).map((t) => `Bearer ${t}x`),
      fc
        .constantFrom(...tokens)
        .map((t) => `Basic ${Buffer.from(`admin:${t}`).toString('base64')}`),
      fc.constantFrom(...tokens).map((t) => t),
    );
    await refusedOnly(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.option(oddAuthorization, { nil: undefined }),
        async (route, authorization) => {
          const request: Request = {
            method: route.method,
            path: route.path,
            headers: {
              'content-type': 'application/json',
              ...(authorization !== undefined ? { authorization } : {}),
            },
            ...(route.body !== undefined ? { body: route.body } : {}),
          };
          const answer = await facadeRefused(request, 'wrong');
          expect(answer.status, authorization).toBe(401);
        },
      ),
    );
    for (const route of routes) {
      const request: Request = {
        method: route.method,
        path: route.path,
        headers: { 'content-type': 'application/json', ...facadeAuth(route.lacking) },
        ...(route.body !== undefined ? { body: route.body } : {}),
      };
      const answer = await facadeRefused(request, route.lacking);
      // Asking for secret values is no operation of its own: a caller who may not list is 403.
      expect(answer.status, `${route.method} ${route.path}`).toBe(403);
    }
    held.push('facade routes refuse missing, wrong and lacking tokens');
  });

  it('what never reaches a route — a body over 256 KiB, a target the HTTP parser refuses — is answered in the spec shape, and the connection closed', async () => {
    const large = await sendRaw(
      facade.origin,
      Buffer.from(
        `POST /scope HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKENS.admin}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${8 << 20}\r\n\r\n{"name":"`,
      ),
    );
    expect(large.status).toBe(413);
    expect(errorOf(large.received).code).toBe('BODY_TOO_LARGE');
    const unparsable = await sendRaw(
      facade.origin,
      Buffer.from('GET /service?id=\u00e9 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 'latin1'),
    );
    expect(unparsable.status).toBe(400);
    expect(errorOf(unparsable.received).code).toBe('BAD_REQUEST');
    expect(unparsable.received.toLowerCase()).toContain('connection: close');
    held.push('facade refuses what no route sees in the spec shape');
  });

  it('raw bytes on the facade socket: a 4XX or a closed connection, never a 5XX', async () => {
    await refusedOnly(
      fc.asyncProperty(rawRequest('facade'), async (bytes) => rawCheck(facade.origin, bytes)),
    );
    held.push('facade raw bytes refused');
  });
});

// --- the API server --------------------------------------------------------------------------

/** What the API arbitraries aim at: collections and objects that exist. */
function apiTargets() {
  const nsPath = `/api/v1/namespaces/${NS}`;
  const crPath = `/apis/platform.nrn.dev/v1alpha1/namespaces/${NS}`;
  const collections = [
    `${nsPath}/configmaps`,
    `${nsPath}/secrets`,
    `${nsPath}/events`,
    `${nsPath}/serviceaccounts`,
    `${crPath}/scopes`,
    `${crPath}/services`,
    `${crPath}/applications`,
    `${crPath}/servicespecifications`,
    '/api/v1/namespaces',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
    '/apis/authentication.k8s.io/v1/tokenreviews',
    '/apis/authorization.k8s.io/v1/subjectaccessreviews',
  ];
  const objects = [
    `${nsPath}/configmaps/abuse-target`,
    `${nsPath}/secrets/abuse-db-secrets`,
    `${nsPath}/serviceaccounts/abuse-sa`,
    `${crPath}/services/abuse-db`,
    `${crPath}/services/abuse-db/status`,
    `${crPath}/applications/abuse-app`,
    `${crPath}/servicespecifications/abuse-postgres`,
    nsPath,
    `${nsPath}/status`,
    `${nsPath}/finalize`,
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/scopes.platform.nrn.dev',
    `${nsPath}/configmaps/does-not-exist`,
  ];
  return { collections, objects };
}

const API_KNOWN = [NS, 'abuse-target', 'abuse-db', 'abuse-db-secrets', 'abuse-app'];

async function apiSend(request: Request, label = 'admin'): Promise<Answer> {
  return api.send(request, label);
}

describe('abuse: the API server', () => {
  it('arbitrary paths (bad percent-escapes included) and query values: a 2XX or a 4XX Status, never a 5XX; writes dry-run or refused store nothing', async () => {
    await refusedOnly(
      fc.asyncProperty(
        fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom('GET', 'HEAD', 'OPTIONS') },
          fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE'),
        ),
        apiPath(API_KNOWN),
        apiQuery,
        contentType,
        refusedObject,
        async (method, path, query, type, body) => {
          const reads = method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
          // A write that finds a real route must change nothing: dry run, and a body refused.
          const q = reads ? query : `${query}&dryRun=All`;
          const request: Request = {
            method,
            path: `${path}?${q}`,
            headers: { ...admin(), 'content-type': type },
            ...(reads ? {} : { body: body.text }),
          };
          expectStatusAnswer(request, await apiSend(request));
        },
      ),
    );
    held.push('API paths answered in shape');
  });

  it('list, get and watch with every query parameter at arbitrary values, as JSON or as a Table: a 2XX or a 4XX Status', async () => {
    const { collections, objects } = apiTargets();
    await refusedOnly(
      fc.asyncProperty(
        fc.constantFrom(...collections, ...objects),
        apiQuery,
        fc.constantFrom(
          'application/json',
          'application/json;as=Table;v=v1;g=meta.k8s.io',
          'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
          'application/vnd.kubernetes.protobuf',
          'application/yaml',
          '*/*',
          'text/html',
          '',
        ),
        async (path, query, accept) => {
          const request = {
            method: 'GET',
            path: `${path}?${query}`,
            headers: { ...admin(), accept },
          };
          expectStatusAnswer(request, await apiSend(request));
        },
      ),
    );
    held.push('API reads answered in shape');
  });

  it('creates whose bodies must be refused (metadata of the wrong types, deep, large, not JSON, protobuf garbage): a 4XX Status; nothing stored', async () => {
    const { collections } = apiTargets();
    const body = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.tuple(fc.constantFrom('application/json', 'application/yaml'), refusedObject),
      },
      fc.tuple(
        fc.constantFrom('application/json', 'application/yaml', 'application/json; charset=utf-8'),
        anyBodyText.filter((b) => !/metadata/.test(b.text)),
      ),
      fc.tuple(
        fc.constant('application/vnd.kubernetes.protobuf'),
        fc
          .tuple(fc.boolean(), fc.uint8Array({ maxLength: 300 }))
          .map(
            ([magic, bytes]) =>
              new Body(
                Buffer.concat([
                  magic ? Buffer.from('k8s\0', 'latin1') : Buffer.alloc(0),
                  bytes,
                ]).toString('latin1'),
              ),
          ),
      ),
      fc.tuple(contentType, refusedObject),
    );
    await refusedOnly(
      fc.asyncProperty(
        fc.constantFrom(...collections.filter((c) => !c.endsWith('reviews'))),
        body,
        fc.constantFrom(
          '',
          'fieldValidation=Strict',
          'fieldValidation=Ignore',
          'fieldManager=abuse',
        ),
        async (path, [type, text], query) => {
          const request: Request = {
            method: 'POST',
            path: `${path}?${query}`,
            headers: { ...admin(), 'content-type': type },
            body: type.includes('protobuf') ? Buffer.from(text.text, 'latin1') : text.text,
          };
          expectStatusRefusal(request, await apiSend(request));
        },
      ),
    );
    held.push('API creates refused');
  });

  it('updates with a stale resourceVersion or metadata of the wrong types: a 4XX Status; nothing stored', async () => {
    const { objects } = apiTargets();
    const current = new Map<string, Record<string, unknown>>();
    for (const path of objects) {
      const got = await apiSend({
        method: 'GET',
        path: path.replace(/\/(status|finalize)$/, ''),
        headers: admin(),
      });
      if (got.status === 200) current.set(path, JSON.parse(got.text) as Record<string, unknown>);
    }
    const existing = [...current.keys()];
    await refusedOnly(
      fc.asyncProperty(
        fc.constantFrom(...existing),
        fc.oneof(
          fc
            .tuple(extraFields, excess)
            .map(([extra, more]) => ({ stale: true, extra, metadata: undefined, more })),
          fc.tuple(extraFields, brokenMetadata, excess).map(([extra, metadata, more]) => ({
            stale: false,
            extra,
            metadata,
            more,
          })),
        ),
        async (path, change) => {
          const object = current.get(path) as { metadata: Record<string, unknown> };
          const metadata =
            change.metadata !== undefined
              ? change.metadata
              : { ...object.metadata, resourceVersion: '1' };
          const text = withExcess({ ...object, ...change.extra, metadata }, change.more);
          const request: Request = {
            method: 'PUT',
            path,
            headers: { ...admin(), 'content-type': 'application/json' },
            body: text.text,
          };
          expectStatusRefusal(request, await apiSend(request));
        },
      ),
    );
    held.push('API updates refused');
  });

  it('patches of every type that must be refused (a failing test op, metadata of the wrong types, apply without a manager, other content types): a 4XX Status; nothing stored', async () => {
    const { objects } = apiTargets();
    const patch = fc.oneof(
      fc.tuple(
        fc.constant('application/json-patch+json'),
        failingJsonPatch.map((p) => new Body(JSON.stringify(p))),
        fc.constant(''),
      ),
      fc.tuple(
        fc.constantFrom(...PATCH_TYPES),
        fc
          .tuple(brokenMetadata, extraFields, excess)
          .map(([metadata, extra, more]) => withExcess({ ...extra, metadata }, more)),
        fc.constantFrom('fieldManager=abuse', 'fieldManager=abuse&force=true', ''),
      ),
      fc.tuple(
        fc.constant('application/apply-patch+yaml'),
        fc.constant(new Body(JSON.stringify({ metadata: { labels: { a: 'b' } } }))),
        fc.constantFrom('', 'force=true'),
      ),
      fc.tuple(
        contentType.filter(
          (t) => !(PATCH_TYPES as readonly string[]).includes(t.split(';')[0] ?? ''),
        ),
        fc.constant(new Body(JSON.stringify({ metadata: { labels: { a: 'b' } } }))),
        fc.constant('fieldManager=abuse'),
      ),
    );
    await refusedOnly(
      fc.asyncProperty(fc.constantFrom(...objects), patch, async (path, [type, text, query]) => {
        const request: Request = {
          method: 'PATCH',
          path: `${path}?${query}`,
          headers: { ...admin(), 'content-type': type },
          body: text.text,
        };
        expectStatusRefusal(request, await apiSend(request));
      }),
    );
    held.push('API patches refused');
  });

  it("patches kube-apiserver answers with a 500 (a list's items of mixed types, an item without its merge key, an applied item without its key): a 400 Status; nothing stored", async () => {
    const sa = `/api/v1/namespaces/${NS}/serviceaccounts/abuse-sa`;
    const crd = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/scopes.platform.nrn.dev';
    const apply = 'application/apply-patch+yaml';
    const strategic = 'application/strategic-merge-patch+json';
    const saApplied = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'abuse-sa' } };
    const cases: [string, string, unknown][] = [
      [crd, strategic, { metadata: { finalizers: [0] } }],
      [sa, strategic, { secrets: [{ namespace: NS }] }],
      [`${sa}?fieldManager=abuse`, apply, { ...saApplied, secrets: [{ namespace: NS }] }],
      [`${sa}?fieldManager=abuse`, apply, { ...saApplied, secrets: [[1]] }],
      [
        `${sa}?fieldManager=abuse`,
        apply,
        { ...saApplied, metadata: { name: 'abuse-sa', ownerReferences: [{ name: 'x' }] } },
      ],
    ];
    await refusedWith400(cases);
    held.push('patches kube answers 500 are 400');
  });

  it("patches that rename the object, of every type and on /status: a 400 Status, as kube-apiserver's patcher checks the name; nothing stored", async () => {
    const cm = `/api/v1/namespaces/${NS}/configmaps/abuse-target`;
    const cases: [string, string, unknown][] = [
      [cm, 'application/merge-patch+json', { metadata: { name: 'abuse-renamed' } }],
      [cm, 'application/strategic-merge-patch+json', { metadata: { name: 'abuse-renamed' } }],
      [cm, 'application/json-patch+json', [{ op: 'replace', path: '/metadata/name', value: 'x' }]],
      [cm, 'application/json-patch+json', [{ op: 'remove', path: '/metadata/name' }]],
      [
        `/api/v1/namespaces/${NS}/status`,
        'application/merge-patch+json',
        { metadata: { name: 'abuse-x', finalizers: [null] } },
      ],
      [
        `/apis/platform.nrn.dev/v1alpha1/namespaces/${NS}/services/abuse-db/status`,
        'application/merge-patch+json',
        { metadata: { name: 'abuse-renamed' } },
      ],
    ];
    await refusedWith400(cases);
    held.push('renaming patches refused');
  });

  it("YAML the parser warns about (unknown directives, tags): answered, and nothing written to the server's stderr", async () => {
    for (const text of [
      '%FOO bar\n---\nmetadata: {name: 5}\n',
      '%YAML 1.1\n%TAG ! tag:x:\n---\nmetadata: {name: [1]}\n',
      '!!foo\nmetadata: {name: {}}\n',
      '%xp{#.\n---\n{metadata: 5}\n',
    ]) {
      const request: Request = {
        method: 'POST',
        path: `/api/v1/namespaces/${NS}/configmaps`,
        headers: { ...admin(), 'content-type': 'application/yaml' },
        body: text,
      };
      expectStatusRefusal(request, await apiSend(request));
    }
    // stderr is the log: JSON lines only, none of them carrying a client's text as a warning.
    const notJson = plane
      .stderr()
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('{'));
    expect(notJson).toEqual([]);
    held.push('YAML warnings kept off stderr');
  });

  it('deletes with a bad policy, a wrong precondition or dry run, whatever their body: never a 5XX; nothing deleted', async () => {
    const { collections, objects } = apiTargets();
    await refusedOnly(
      fc.asyncProperty(
        fc.constantFrom(...objects, ...collections),
        fc.oneof(
          fc
            .tuple(apiQuery, anyBodyText)
            .map(([q, b]) => ({ query: `${q}&dryRun=All`, body: b.text })),
          fc
            .string({ maxLength: 20 })
            .filter((p) => !['Orphan', 'Background', 'Foreground'].includes(p))
            .map((p) => ({ query: `propagationPolicy=${encodeURIComponent(p)}`, body: '' })),
          fc.jsonValue({ maxDepth: 2 }).map((v) => ({
            query: '',
            body: JSON.stringify({ preconditions: { uid: `not-${JSON.stringify(v)}` } }),
          })),
        ),
        contentType,
        async (path, { query, body }, type) => {
          // A collection's DELETE deletes everything in it: only ever as a dry run here.
          const q = collections.includes(path) ? `${query}&dryRun=All` : query;
          const request: Request = {
            method: 'DELETE',
            path: `${path}?${q}`,
            headers: { ...admin(), 'content-type': type },
            ...(body !== '' ? { body } : {}),
          };
          expectStatusAnswer(request, await apiSend(request));
        },
      ),
    );
    held.push('API deletes never 5XX and delete nothing');
  });

  it('raw bytes on the TLS connection: a 4XX or a closed connection, never a 5XX', async () => {
    await refusedOnly(
      fc.asyncProperty(rawRequest('api'), async (bytes) => rawCheck(plane.url, bytes, ca)),
    );
    held.push('API raw bytes refused');
  });

  it('every route with a wrong bearer token: a 401 Status; without one (system:anonymous): a 403 Status (but /version and the health checks)', async () => {
    const routes = apiRoutes();
    const wrong = fc.oneof(
      fc.constant(undefined),
      headerText.filter((h) => !h.includes(apiToken)),
      fc.string({ maxLength: 64 }).map((s) => `Bearer ${s}`),
      fc.constant(`Bearer ${apiToken.slice(0, -1)}`),
      fc.constant(`Bearer ${apiToken}x`),
      fc.constant(apiToken),
      fc.constant(`Basic ${Buffer.from(`admin:${apiToken}`).toString('base64')}`),
    );
    await refusedOnly(
      fc.asyncProperty(fc.constantFrom(...routes), wrong, async (route, authorization) => {
        const request: Request = {
          ...route,
          headers: {
            'content-type': 'application/json',
            ...(authorization !== undefined ? { authorization } : {}),
          },
        };
        const answer = await apiSend(request, 'wrong');
        expectStatusRefusal(request, answer);
        // bearertoken.go reads a token only after `Bearer ` (a space); anything else (no
        // header, another scheme, a bare token) is no credentials: system:anonymous, refused
        // by RBAC, as with kube-apiserver's --anonymous-auth default.
        const bearer = authorization !== undefined && /^Bearer +\S/i.test(authorization.trim());
        expect(answer.status, authorization).toBe(bearer ? 401 : 403);
        if (!bearer) expect(answer.text, authorization).toContain('User \\"system:anonymous\\"');
      }),
      Math.max(RUNS, routes.length * 2),
    );
    for (const path of ['/version', '/healthz', '/livez', '/readyz']) {
      expect((await apiSend({ method: 'GET', path }, 'none')).status).toBe(200);
    }
    held.push('API routes refuse missing and wrong tokens');
  });

  it('a user the plane knows but who is not system:masters: a 403 Status on every route', async () => {
    // `nrn-operator local` knows only its admin; users besides are an embedder's option, so
    // this runs against a plane of its own, in-process, with the same routes.
    const viewer = {
      token: randomBytes(24).toString('hex'),
      username: 'abuse-viewer',
      groups: ['system:authenticated'],
    };
    const viewerDir = await mkdtemp(join(tmpdir(), 'nrn-abuse-viewer-'));
    let other: ControlPlane | undefined;
    try {
      other = await startControlPlane({ dataDir: viewerDir, fsync: false, users: [viewer] });
      const viewerWire = new Wire(other.url, other.ca);
      try {
        // Discovery and OpenAPI are every authenticated user's (RBAC's system:discovery).
        const discovery = new Set(['/api', '/api/v1', '/apis', '/apis/platform.nrn.dev']);
        for (const route of apiRoutes()) {
          const open =
            discovery.has(route.path) || /^\/(apis\/[^/]+\/[^/]+|openapi\/.*)$/.test(route.path);
          if (route.method === 'GET' && open) continue;
          const request: Request = {
            ...route,
            headers: {
              authorization: `Bearer ${viewer.token}`,
              'content-type': 'application/json',
            },
          };
          const answer = await viewerWire.send(request, 'viewer');
          expectStatusRefusal(request, answer);
          expect(answer.status, `${route.method} ${route.path}`).toBe(403);
        }
        // It is a user all the same: a TokenReview of its token by the admin names it.
        const review = await viewerWire.send({
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/tokenreviews',
          headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            spec: { token: viewer.token },
          }),
        });
        expect(review.status).toBe(201);
        expect(review.text).toContain('abuse-viewer');
      } finally {
        await viewerWire.close();
      }
    } finally {
      await other?.close();
      await rm(viewerDir, { recursive: true, force: true });
    }
    held.push('API routes refuse a user without permission');
  });
});

/** Every route of the API: each kind's collection and object, each verb, and the rest. */
function apiRoutes(): Request[] {
  const routes: Request[] = [];
  const body = JSON.stringify({ metadata: { name: 'abuse-unauthorised' } });
  for (const kind of kinds) {
    const collection = kind.namespaced
      ? kind.path.replace(/\/([^/]+)$/, `/namespaces/${NS}/$1`)
      : kind.path;
    const object = `${collection}/abuse-unauthorised`;
    routes.push(
      { method: 'GET', path: collection },
      { method: 'GET', path: `${collection}?watch=true` },
      { method: 'POST', path: collection, body },
      { method: 'DELETE', path: collection },
      { method: 'GET', path: object },
      { method: 'PUT', path: object, body },
      { method: 'PATCH', path: object, body },
      { method: 'DELETE', path: object },
    );
    if (kind.namespaced) routes.push({ method: 'GET', path: kind.path });
  }
  routes.push(
    { method: 'GET', path: '/api' },
    { method: 'GET', path: '/api/v1' },
    { method: 'GET', path: '/apis' },
    { method: 'GET', path: '/apis/platform.nrn.dev' },
    { method: 'GET', path: '/apis/platform.nrn.dev/v1alpha1' },
    { method: 'GET', path: '/openapi/v3' },
    { method: 'GET', path: '/openapi/v3/api/v1' },
    { method: 'GET', path: '/metrics' },
    { method: 'GET', path: '/does-not-exist' },
    { method: 'PUT', path: `/api/v1/namespaces/${NS}/finalize`, body },
    { method: 'PATCH', path: `/api/v1/namespaces/${NS}/status`, body },
    { method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews', body },
    { method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', body },
  );
  return routes;
}

// --- raw bytes -------------------------------------------------------------------------------

function rawRequest(target: 'facade' | 'api'): fc.Arbitrary<Uint8Array> {
  const path =
    target === 'facade'
      ? fc.constantFrom('/service', '/scope', `/scope/1`, '/')
      : apiPath(API_KNOWN);
  const token = target === 'facade' ? TOKENS.admin : '';
  const line = fc.oneof(
    fc
      .tuple(
        fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'get', 'G ET', '', 'CONNECT', 'TRACE'),
        fc.oneof(path, fc.string({ unit: 'binary', maxLength: 60 })),
        fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9', '', 'HTTP/1.1 extra'),
      )
      .map(([m, p, v]) => `${m} ${p} ${v}`),
    fc.string({ unit: 'binary', maxLength: 100 }),
  );
  const headers = fc.array(
    fc.oneof(
      fc
        .tuple(
          fc.constantFrom(
            'Host',
            'Content-Length',
            'Transfer-Encoding',
            'Content-Type',
            'Authorization',
            'Expect',
            'Connection',
          ),
          fc.oneof(
            fc.constantFrom(
              '-1',
              '99999999999999999999',
              'chunked',
              'chunked, gzip',
              '100-continue',
              'x',
              '',
            ),
            fc.string({ unit: 'binary', maxLength: 40 }),
          ),
        )
        .map(([k, v]) => `${k}: ${v}`),
      fc.string({ unit: 'binary', maxLength: 60 }),
    ),
    { maxLength: 5 },
  );
  return fc
    .tuple(line, headers, fc.string({ unit: 'binary', maxLength: 200 }), fc.boolean())
    .map(([l, h, body, end]) => {
      // Some end their head properly, with the host and credentials a real client sends.
      const head = end
        ? [l, 'Host: 127.0.0.1', ...(token ? [`Authorization: Bearer ${token}`] : []), ...h]
        : [l, ...h];
      return Buffer.from(`${head.join('\r\n')}${end ? '\r\n\r\n' : '\r\n'}${body}`, 'utf8');
    });
}

/** The spec-shaped error body of a raw HTTP answer. */
function errorOf(received: string): ErrorBody {
  return ErrorBody.parse(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)));
}

async function rawCheck(url: string, bytes: Uint8Array, withCa?: string): Promise<void> {
  raw.sent++;
  const { status, received } = await sendRaw(url, bytes, withCa);
  if (status === 0) raw.closed++;
  if (status >= 500) {
    throw new Error(
      `a ${status} for raw bytes ${JSON.stringify(Buffer.from(bytes).toString('latin1').slice(0, 300))}: ${received.slice(0, 300)}`,
    );
  }
}

// --- what may be accepted --------------------------------------------------------------------

describe('abuse: inputs that may be accepted', () => {
  it(`POST /scope with arbitrary names and specs (${CREATE_RUNS} runs): 200 or a 4XX in the spec shape, and what was answered 200 is readable`, async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ minLength: 1, maxLength: 60 }),
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }),
        ),
        fc.record(
          {
            memory_in_gb: fc.double({ min: 0, noNaN: true }),
            cpu_profile: fc.constantFrom('standard', 'intensive'),
            local_storage_in_gb: fc.oneof(fc.nat(), fc.double({ min: 0, max: 1e300, noNaN: true })),
          },
          { requiredKeys: [] },
        ),
        fc.option(fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 })), {
          nil: undefined,
        }),
        async (name, spec, capabilities) => {
          const request: Request = {
            method: 'POST',
            path: '/scope',
            headers: { ...facadeAuth('admin'), 'content-type': 'application/json' },
            body: JSON.stringify({
              ...validScope(name),
              requested_spec: spec,
              ...(capabilities !== undefined ? { capabilities } : {}),
            }),
          };
          const answer = await facade.send(request, 'admin');
          expectFacadeAnswer(request, answer);
          if (answer.status !== 200) return;
          accepted++;
          const id = (JSON.parse(answer.text) as { id: number }).id;
          const read = { method: 'GET', path: `/scope/${id}`, headers: facadeAuth('admin') };
          const got = await facade.send(read, 'admin');
          expectFacadeAnswer(read, got);
          expect(got.status).toBe(200);
        },
      ),
      { numRuns: CREATE_RUNS },
    );
    expect(accepted).toBeGreaterThan(0);
    held.push(`arbitrary scopes answered in shape (${accepted} created)`);
  });

  it('ConfigMaps with arbitrary labels, annotations and data: a 201 or a 4XX Status', async () => {
    const text = fc.oneof(
      fc.string({ maxLength: 70 }),
      fc.constantFrom('a', 'a.b/c', 'x/y/z', '-a', 'A_b', `${'a'.repeat(64)}`),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(text, text, { maxKeys: 3 }),
        fc.dictionary(text, fc.string({ maxLength: 100 }), { maxKeys: 3 }),
        fc.dictionary(text, fc.string({ maxLength: 100 }), { maxKeys: 3 }),
        fc.constantFrom('', 'fieldValidation=Strict', 'fieldValidation=Warn'),
        async (labels, annotations, data, query) => {
          const request: Request = {
            method: 'POST',
            path: `/api/v1/namespaces/${SANDBOX}/configmaps?${query}`,
            headers: { ...admin(), 'content-type': 'application/json' },
            body: JSON.stringify({
              metadata: { generateName: 'abuse-', labels, annotations },
              data,
            }),
          };
          expectStatusAnswer(request, await apiSend(request));
        },
      ),
      { numRuns: RUNS },
    );
    held.push('arbitrary ConfigMaps answered in shape');
  });
});

// --- secrets, and the process afterwards -----------------------------------------------------

describe('abuse: secrets and health afterwards', () => {
  it('the secret value is in no facade answer but those a caller allowed to read it asked for, in no refusal, no log line and no Event; no token is logged', async () => {
    // Positive control: the one caller allowed sees it when asking; one who may not, does not.
    const path = `/service?entity_nrn=organization=1:account=2:namespace=3:application=${APP_ID}&include_secret_attributes=true`;
    expect(
      (await facade.send({ method: 'GET', path, headers: facadeAuth('admin') }, 'admin')).text,
    ).toContain(SECRET);
    expect(
      (await facade.send({ method: 'GET', path, headers: facadeAuth('lister') }, 'lister')).text,
    ).not.toContain(SECRET);

    const leaks = facade.answers.filter(
      ({ request, answer, label }) =>
        answer.text.includes(SECRET) &&
        !(label === 'admin' && request.path.includes('include_secret_attributes')),
    );
    expect(leaks.map(({ request, label }) => `${label} ${request.method} ${request.path}`)).toEqual(
      [],
    );
    const apiLeaks = api.answers.filter(
      ({ answer }) =>
        answer.status >= 300 && (answer.text.includes(SECRET) || answer.text.includes(SECRET_B64)),
    );
    expect(apiLeaks.map(({ request }) => `${request.method} ${request.path}`)).toEqual([]);
    // Nor does any answer echo a bearer token back.
    const tokens = [apiToken, ...Object.values(TOKENS)];
    const echoes = [...facade.answers, ...api.answers].filter(({ answer }) =>
      tokens.some((token) => answer.text.includes(token)),
    );
    expect(echoes.map(({ request }) => `${request.method} ${request.path}`)).toEqual([]);

    const logs = plane.stderr();
    expect(logs.length).toBeGreaterThan(0);
    for (const [what, value] of Object.entries({
      secret: SECRET,
      secretBase64: SECRET_B64,
      apiToken,
      ...TOKENS,
    })) {
      expect(logs.includes(value), `${what} in the log`).toBe(false);
    }
    for (const events of ['/api/v1/events', '/apis/events.k8s.io/v1/events']) {
      const answer = await apiSend({ method: 'GET', path: events, headers: admin() });
      if (answer.status === 404) continue;
      expect(answer.status).toBe(200);
      expect(answer.text.includes(SECRET) || answer.text.includes(SECRET_B64), events).toBe(false);
    }
    held.push('no secret in answers, logs or Events');
  });

  it('afterwards the process is alive, /healthz answers, nothing was logged as an error, and a normal create works', async () => {
    expect(plane.child.exitCode).toBeNull();
    expect(plane.child.signalCode).toBeNull();
    expect((await apiSend({ method: 'GET', path: '/healthz' }, 'none')).status).toBe(200);
    expect(await createScope('abuse after')).toBeGreaterThan(scopeId);
    const k = kubectlAt(plane.kubeconfigPath);
    const cm = await k(['create', 'configmap', 'abuse-after', '-n', NS, '--from-literal=a=b']);
    expect(cm.code, cm.stderr).toBe(0);
    const errors = plane
      .stderr()
      .split('\n')
      .filter((line) => {
        try {
          return (JSON.parse(line) as { level: number }).level >= 50;
        } catch {
          return line.trim() !== '';
        }
      });
    expect(errors).toEqual([]);
    expect(api.count('5xx') + facade.count('5xx')).toBe(0);
    held.push('healthy afterwards');
  });
});
