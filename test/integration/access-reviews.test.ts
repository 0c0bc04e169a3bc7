// The review kinds and requests without credentials, as kube-apiserver 1.32 serves them, driven
// through kubectl and raw HTTPS: the six review kinds and serviceaccounts/token in discovery with
// their one verb (`kubectl api-resources`), `kubectl create -f` of each, LocalSubjectAccessReview
// held to its namespace, go-restful's 405 on any other method, TokenReview's audiences and
// errors, and system:anonymous (--anonymous-auth's default) authorized like any other user.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { kubectlAt, uniqueName } from '../support/cluster.js';
import { fetchTrusting } from '../support/https.js';
import { type RawApi, rawApi } from '../support/raw-api.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';

let plane: ControlPlane;
let dataDir: string;
let raw: RawApi;
let run: ReturnType<typeof kubectlAt>;
let ns: string;

/** A user the plane knows by token, with no rights of its own. */
const jane = {
  token: `jane-${Math.random().toString(36).slice(2)}`,
  username: 'jane',
  groups: ['dev', 'system:authenticated'],
};

async function ok(args: string[], input?: string): Promise<string> {
  const result = await run(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

/** kubectl create -f of one manifest, its answer as JSON. */
async function create(manifest: object, args: string[] = []): Promise<Record<string, any>> {
  const file = join(dataDir, `${uniqueName('review')}.json`);
  await writeFile(file, JSON.stringify(manifest));
  return JSON.parse(await ok(['create', '-f', file, '-o', 'json', ...args]));
}

/** A raw request with the given Authorization header (none when undefined). */
async function as(
  authorization: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, any>; text: string }> {
  const response = await fetchTrusting(plane.ca)(`${plane.url}${path}`, {
    method,
    headers: {
      'Content-Type': 'application/json',
      ...(authorization !== undefined ? { Authorization: authorization } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let json: Record<string, any> = {};
  try {
    json = JSON.parse(text);
  } catch {
    // health checks answer plain text
  }
  return { status: response.status, json, text };
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-reviews-'));
  plane = await startControlPlane({ dataDir, fsync: false, users: [jane] });
  raw = rawApi(plane);
  run = kubectlAt(plane.kubeconfigPath);
  ns = uniqueName('reviews');
  await ok(['create', 'namespace', ns]);
  await ok(['create', 'serviceaccount', 'bot', '-n', ns]);
  await ok(['create', 'role', 'pod-reader', '--verb=get', '--resource=pods', '-n', ns]);
  await ok(['create', 'rolebinding', 'jane-pods', '--role=pod-reader', '--user=jane', '-n', ns]);
});

afterAll(async () => {
  await plane?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

describe('discovery', () => {
  it('kubectl api-resources lists the review kinds, create only', async () => {
    const authorization = await ok([
      'api-resources',
      '--api-group=authorization.k8s.io',
      '-o',
      'wide',
      '--no-headers',
    ]);
    const rows = authorization
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/));
    expect(rows).toEqual([
      [
        'localsubjectaccessreviews',
        'authorization.k8s.io/v1',
        'true',
        'LocalSubjectAccessReview',
        'create',
      ],
      [
        'selfsubjectaccessreviews',
        'authorization.k8s.io/v1',
        'false',
        'SelfSubjectAccessReview',
        'create',
      ],
      [
        'selfsubjectrulesreviews',
        'authorization.k8s.io/v1',
        'false',
        'SelfSubjectRulesReview',
        'create',
      ],
      ['subjectaccessreviews', 'authorization.k8s.io/v1', 'false', 'SubjectAccessReview', 'create'],
    ]);
    const authentication = await ok([
      'api-resources',
      '--api-group=authentication.k8s.io',
      '-o',
      'name',
    ]);
    expect(authentication.trim().split('\n')).toEqual([
      'selfsubjectreviews.authentication.k8s.io',
      'tokenreviews.authentication.k8s.io',
    ]);
    // Listed with verbs a list or get could use: none.
    const listable = await ok(['api-resources', '--verbs=list', '-o', 'name']);
    expect(listable).not.toContain('review');
  });

  it('serves the discovery documents as kube-apiserver writes them', async () => {
    const groups = await raw.call('GET', '/apis');
    const names = (groups.json.groups as Array<{ name: string }>).map((g) => g.name);
    expect(names).toEqual(
      expect.arrayContaining(['authentication.k8s.io', 'authorization.k8s.io']),
    );
    const group = await raw.call('GET', '/apis/authorization.k8s.io');
    expect(group.json.preferredVersion).toEqual({
      groupVersion: 'authorization.k8s.io/v1',
      version: 'v1',
    });
    const list = await raw.call('GET', '/apis/authorization.k8s.io/v1');
    expect(list.json.resources[0]).toEqual({
      name: 'localsubjectaccessreviews',
      singularName: 'localsubjectaccessreview',
      namespaced: true,
      kind: 'LocalSubjectAccessReview',
      verbs: ['create'],
    });
    const core = await raw.call('GET', '/api/v1');
    const names2 = (core.json.resources as Array<{ name: string }>).map((r) => r.name);
    const at = names2.indexOf('serviceaccounts/token');
    expect(names2[at - 1]).toBe('serviceaccounts');
    expect(core.json.resources[at]).toEqual({
      name: 'serviceaccounts/token',
      singularName: '',
      namespaced: true,
      group: 'authentication.k8s.io',
      version: 'v1',
      kind: 'TokenRequest',
      verbs: ['create'],
    });
  });
});

describe('kubectl create -f of each review kind', () => {
  it('SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview', async () => {
    const resourceAttributes = { namespace: ns, verb: 'get', resource: 'pods' };
    const sar = await create({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: 'jane', resourceAttributes },
    });
    expect(sar.status.allowed).toBe(true);
    expect(sar.status.reason).toBe(
      `RBAC: allowed by RoleBinding "jane-pods/${ns}" of Role "pod-reader" to User "jane"`,
    );
    expect(sar.metadata).toEqual({ creationTimestamp: null });

    const lsar = await create(
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'LocalSubjectAccessReview',
        spec: { user: 'jane', resourceAttributes },
      },
      ['-n', ns],
    );
    expect(lsar.kind).toBe('LocalSubjectAccessReview');
    expect(lsar.metadata).toEqual({ creationTimestamp: null, namespace: ns });
    expect(lsar.status.allowed).toBe(true);
    const denied = await create({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'LocalSubjectAccessReview',
      metadata: { namespace: ns },
      spec: { user: 'jane', resourceAttributes: { ...resourceAttributes, verb: 'delete' } },
    });
    expect(denied.status).toEqual({ allowed: false });

    const ssar = await create({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes },
    });
    expect(ssar.status.allowed).toBe(true);

    const ssrr = await create({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: ns },
    });
    expect(ssrr.status.resourceRules).toContainEqual({
      verbs: ['*'],
      apiGroups: ['*'],
      resources: ['*'],
    });
  });

  it('TokenReview and SelfSubjectReview', async () => {
    const review = await create({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: jane.token },
    });
    expect(review.status).toEqual({
      authenticated: true,
      user: { username: 'jane', groups: ['dev', 'system:authenticated'] },
      audiences: [ISSUER],
    });
    const self = await create({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    expect(self.status.userInfo.groups).toContain('system:masters');
  });

  it('kubectl auth can-i answers as before', async () => {
    const yes = await run(['auth', 'can-i', 'get', 'pods', '-n', ns, '--as=jane']);
    expect(yes.stdout.trim()).toBe('yes');
    const no = await run(['auth', 'can-i', 'delete', 'pods', '-n', ns, '--as=jane']);
    expect(no.stdout.trim()).toBe('no');
    expect(no.code).toBe(1);
  });
});

describe('LocalSubjectAccessReview is held to its namespace', () => {
  const path = (namespace: string) =>
    `/apis/authorization.k8s.io/v1/namespaces/${namespace}/localsubjectaccessreviews`;
  const review = (spec: object, metadata: object = {}) => ({
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'LocalSubjectAccessReview',
    metadata,
    spec,
  });

  it('refuses spec.resourceAttributes.namespace other than its own (kubectl create -f: 422)', async () => {
    const file = join(dataDir, 'elsewhere.json');
    await writeFile(
      file,
      JSON.stringify(
        review(
          {
            user: 'jane',
            resourceAttributes: { namespace: 'other', verb: 'get', resource: 'pods' },
          },
          { namespace: ns },
        ),
      ),
    );
    const refused = await run(['create', '-f', file]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'The LocalSubjectAccessReview "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace',
    );
  });

  it('answers as ValidateLocalSubjectAccessReview and the create handler do', async () => {
    const other = await raw.call(
      'POST',
      path(ns),
      review(
        { user: 'jane', resourceAttributes: { namespace: ns, verb: 'get' } },
        { namespace: 'x' },
      ),
    );
    expect(other.status).toBe(400);
    expect(other.json.message).toBe(
      'the namespace of the provided object does not match the namespace sent on the request',
    );

    const nonResource = await raw.call(
      'POST',
      path(ns),
      review({ user: 'jane', nonResourceAttributes: { path: '/healthz', verb: 'get' } }),
    );
    expect(nonResource.status).toBe(422);
    expect(nonResource.json.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.nonResourceAttributes',
        message:
          'Invalid value: authorization.NonResourceAttributes{Path:"/healthz", Verb:"get"}: disallowed on this kind of request',
      },
    ]);

    const named = await raw.call(
      'POST',
      path(ns),
      review({ user: 'jane', resourceAttributes: { namespace: ns, verb: 'get' } }, { name: 'a' }),
    );
    expect(named.status).toBe(422);
    expect(named.json.details.causes[0].field).toBe('metadata');
    expect(named.json.details.causes[0].message).toBe(
      `Invalid value: v1.ObjectMeta{Name:"a", GenerateName:"", Namespace:"${ns}", SelfLink:"", UID:"", ResourceVersion:"", Generation:0, CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC), DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), Labels:map[string]string(nil), Annotations:map[string]string(nil), OwnerReferences:[]v1.OwnerReference(nil), Finalizers:[]string(nil), ManagedFields:[]v1.ManagedFieldsEntry(nil)}: must be empty except for namespace`,
    );

    // Namespaced only; the cluster-scoped kinds have no namespaced path.
    const clusterWide = await raw.call(
      'POST',
      '/apis/authorization.k8s.io/v1/localsubjectaccessreviews',
      review({ user: 'jane' }),
    );
    expect(clusterWide.status).toBe(404);
    const namespacedSar = await raw.call(
      'POST',
      `/apis/authorization.k8s.io/v1/namespaces/${ns}/subjectaccessreviews`,
      {},
    );
    expect(namespacedSar.status).toBe(404);
  });

  it('a SubjectAccessReview with metadata is invalid as ValidateSubjectAccessReview words it', async () => {
    const answer = await raw.call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      metadata: { labels: { a: 'b' } },
      spec: { user: 'jane', resourceAttributes: { verb: 'get' } },
    });
    expect(answer.status).toBe(422);
    expect(answer.json.message).toContain('Labels:map[string]string{"a":"b"}');
    expect(answer.json.message).toMatch(/: must be empty$/);
  });
});

describe('any method but create', () => {
  it('is go-restful 405 on the review kinds and serviceaccounts/token; a name on a review path is a 404', async () => {
    const listed = await run(['get', 'subjectaccessreviews']);
    expect(listed.stderr).toContain(
      'Error from server (MethodNotAllowed): the server does not allow this method on the requested resource',
    );
    const paths = [
      '/apis/authentication.k8s.io/v1/tokenreviews',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
      `/apis/authorization.k8s.io/v1/namespaces/${ns}/localsubjectaccessreviews`,
      `/api/v1/namespaces/${ns}/serviceaccounts/bot/token`,
    ];
    for (const path of paths) {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
        const answer = await raw.call(method, path, method === 'GET' ? undefined : {});
        expect(answer.status, `${method} ${path}`).toBe(405);
        expect(answer.json).toEqual({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'the server does not allow this method on the requested resource',
          reason: 'MethodNotAllowed',
          details: {},
          code: 405,
        });
      }
    }
    const named = await raw.call('GET', '/apis/authorization.k8s.io/v1/subjectaccessreviews/x');
    expect(named.status).toBe(404);
    // Whoever may not list them is refused first, as authorization comes before routing.
    const jane403 = await as(`Bearer ${jane.token}`, 'GET', paths[2] as string);
    expect(jane403.status).toBe(403);
  });
});

describe('TokenReview', () => {
  const tokenReview = async (spec: object) =>
    (
      await raw.call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec,
      })
    ).json;

  it("an unknown token: no user, the bearer token authenticator's error", async () => {
    const review = await tokenReview({ token: 'no-such-token' });
    expect(review.status).toEqual({ user: {}, error: 'invalid bearer token' });
    const empty = await raw.call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      spec: {},
    });
    expect(empty.status).toBe(400);
    expect(empty.json.message).toBe('token is required for TokenReview in authentication');
  });

  it('checks spec.audiences as kube-apiserver does', async () => {
    // A static token is audience-agnostic: taken for the API server's audience only.
    expect(
      (await tokenReview({ token: jane.token, audiences: ['vault', ISSUER] })).status.audiences,
    ).toEqual([ISSUER]);
    expect((await tokenReview({ token: jane.token, audiences: ['vault'] })).status).toEqual({
      user: {},
      error: 'invalid bearer token',
    });
    // A ServiceAccount token is taken for the audiences it was issued for, among those asked.
    const token = (
      await ok(['create', 'token', 'bot', '-n', ns, '--audience=vault', '--audience=db'])
    ).trim();
    const forApi = await tokenReview({ token });
    expect(forApi.status).toEqual({
      user: {},
      error: `token audiences ["vault" "db"] is invalid for the target audiences ["${ISSUER}"]`,
    });
    const forDb = await tokenReview({ token, audiences: ['db', 'other'] });
    expect(forDb.status.authenticated).toBe(true);
    expect(forDb.status.user.username).toBe(`system:serviceaccount:${ns}:bot`);
    expect(forDb.status.audiences).toEqual(['db']);
    // Not for the API server: such a token does not authenticate a request.
    expect((await as(`Bearer ${token}`, 'GET', '/api')).status).toBe(401);
  });
});

describe('requests without credentials (--anonymous-auth=true)', () => {
  it('are system:anonymous: the health checks and /version, and a 403 naming it elsewhere', async () => {
    for (const path of ['/version', '/healthz', '/readyz', '/livez']) {
      expect((await as(undefined, 'GET', path)).status, path).toBe(200);
    }
    const list = await as(undefined, 'GET', '/api/v1/namespaces');
    expect(list.status).toBe(403);
    expect(list.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
      reason: 'Forbidden',
      details: { kind: 'namespaces' },
      code: 403,
    });
    // Discovery and basic-user are system:authenticated's, not system:unauthenticated's.
    const discovery = await as(undefined, 'GET', '/api');
    expect(discovery.json.message).toBe(
      'forbidden: User "system:anonymous" cannot get path "/api"',
    );
    const whoami = await as(
      undefined,
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      {},
    );
    expect(whoami.status).toBe(403);
    // Another scheme, or none, carries no bearer token: anonymous too.
    const basic = await as(
      `Basic ${Buffer.from('a:b').toString('base64')}`,
      'GET',
      '/api/v1/namespaces',
    );
    expect(basic.status).toBe(403);
    const bare = await as(plane.token, 'GET', '/api/v1/namespaces');
    expect(bare.status).toBe(403);
  });

  it('a bearer token no authenticator takes is still a 401', async () => {
    const wrong = await as('Bearer nope', 'GET', '/api/v1/namespaces');
    expect(wrong.status).toBe(401);
    expect(wrong.json).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('are authorized like any other user: RBAC may grant system:unauthenticated', async () => {
    const name = uniqueName('anonymous-ns');
    await ok(['create', 'clusterrole', name, '--verb=get', '--resource=namespaces']);
    await ok([
      'create',
      'clusterrolebinding',
      name,
      `--clusterrole=${name}`,
      '--group=system:unauthenticated',
    ]);
    try {
      const got = await as(undefined, 'GET', `/api/v1/namespaces/${ns}`);
      expect(got.status).toBe(200);
      expect(got.json.metadata.name).toBe(ns);
      const review = await raw.call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        spec: {
          user: 'system:anonymous',
          groups: ['system:unauthenticated'],
          resourceAttributes: { verb: 'get', resource: 'namespaces', name: ns },
        },
      });
      expect(review.json.status.allowed).toBe(true);
    } finally {
      await ok(['delete', 'clusterrolebinding', name]);
      await ok(['delete', 'clusterrole', name]);
    }
  });
});
