// The facade's `kubernetes` auth against a real API (TokenReview + SubjectAccessReview), and
// what a caller sees when the API server goes away: 503 for writes, reads from the cache.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ErrorBody } from '../../src/api/index.js';
import {
  type Facade,
  KubernetesAuthenticator,
  NoAuthenticator,
  startFacade,
} from '../../src/facade/index.js';
import { Applications, connect, type Kube, Namespaces } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import {
  installCrdsAndClasses,
  kubectl,
  type StartedCluster,
  startCluster,
  uniqueName,
} from '../support/cluster.js';
import { refusalLog } from '../support/operator-identity.js';

const log = silentLogger();
const facadeLog = refusalLog();

describe('facade: kubernetes auth and an API server that goes away', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  /** The facade's client: deploy/'s ServiceAccount, with the rights of deploy/rbac.yaml. */
  let facadeKube: Kube;
  let facade: Facade;
  let token: string;
  let ns: string;
  let clusterClosed = false;
  const appId = 100_000 + Math.floor(Math.random() * 800_000);

  // A user the local control plane knows but whom no RBAC binding lets do anything.
  const viewer = {
    token: `viewer-${Math.random().toString(36).slice(2)}-token`,
    username: 'jane',
    groups: ['system:authenticated'],
  };
  // A user allowed to create scopes in the test's namespace only (a RoleBinding there).
  const teamMember = {
    token: `member-${Math.random().toString(36).slice(2)}-token`,
    username: 'ann',
    groups: ['system:authenticated'],
  };

  beforeAll(async () => {
    const facadeNs = uniqueName('facade-auth-system');
    cluster = await startCluster({ users: [viewer, teamMember], operatorNamespace: facadeNs });
    await installCrdsAndClasses(cluster);
    await kubectl(cluster, ['wait', '--for=condition=Established', 'crd/scopes.platform.nrn.dev']);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    facadeKube = await connect({
      kubeconfigPath: cluster.operatorKubeconfigPath,
      log: facadeLog.log,
    });
    ns = uniqueName('facade-auth');
    await kube.resource(Namespaces).create({ metadata: { name: ns } });
    await kube.resource(Applications).create({
      metadata: { name: 'app', namespace: ns },
      spec: { id: appId, name: 'app', nrn: `organization=1:application=${appId}` },
    });
    const config = parseYaml(await readFile(cluster.kubeconfigPath, 'utf8')) as {
      users: { user: { token?: string } }[];
    };
    token = config.users[0]?.user.token ?? '';
    facade = await startFacade({
      kube: facadeKube,
      log: facadeLog.log,
      namespace: facadeNs,
      port: 0,
      // Its TokenReviews and SubjectAccessReviews are the ServiceAccount's, as in a pod.
      auth: new KubernetesAuthenticator(facadeKube.reviews),
    });
  });
  afterAll(async () => {
    await facade?.close();
    // Whatever the facade did, deploy/rbac.yaml allowed.
    expect(facadeLog.refusals()).toEqual([]);
    facadeKube?.close();
    kube?.close();
    if (!clusterClosed) await cluster?.close();
  });

  const get = (path: string, bearer?: string) =>
    fetch(`${facade.url}${path}`, {
      headers: bearer !== undefined ? { authorization: `Bearer ${bearer}` } : {},
    });

  it('lets in the token the cluster knows, and only that', async (context) => {
    // Only the local control plane's token is known here; a real cluster's users vary.
    if (cluster.kind !== 'local' || token === '') context.skip();
    const ok = await get('/service', token);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ paging: { limit: 30, offset: 0 }, results: [] });
    const bad = await get('/service', 'not-a-token-the-cluster-knows');
    expect(bad.status).toBe(401);
    expect(ErrorBody.parse(await bad.json()).code).toBe('UNAUTHENTICATED');
  });

  it('refuses (403) a caller the cluster knows but does not authorize, naming the operation', async (context) => {
    if (cluster.kind !== 'local') context.skip();
    const refused = await get('/service', viewer.token);
    expect(refused.status).toBe(403);
    const body = ErrorBody.parse(await refused.json());
    expect(body.code).toBe('FORBIDDEN');
    expect(body.message).toContain('jane');
    expect(body.message).toContain('services:list');
    const create = await fetch(`${facade.url}/scope`, {
      method: 'POST',
      headers: { authorization: `Bearer ${viewer.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'not allowed',
        type: 'web_pool',
        application_id: appId,
        requested_spec: {},
      }),
    });
    expect(create.status).toBe(403);
    expect(ErrorBody.parse(await create.json()).code).toBe('FORBIDDEN');
    // Nothing was written for the refused create.
    const scopes = await kubectl(cluster, ['get', 'scopes', '-n', ns, '-o', 'name']);
    expect(scopes.stdout.trim()).toBe('');
    // The API server itself refuses that user with a Status, as a cluster without bindings would.
    const direct = await kubectl(cluster, ['get', 'namespaces', '--token', viewer.token]);
    expect(direct.code).not.toBe(0);
    expect(direct.stderr).toMatch(/Forbidden|forbidden/);
  });

  it('POST /scope: a caller without the right cannot tell an application that exists from one that does not', async (context) => {
    if (cluster.kind !== 'local') context.skip();
    for (const args of [
      ['create', 'role', 'scope-maker', '--verb=create', '--resource=scopes.platform.nrn.dev'],
      ['create', 'rolebinding', 'ann-makes-scopes', '--role=scope-maker', '--user=ann'],
    ]) {
      const made = await kubectl(cluster, ['-n', ns, ...args]);
      expect(made.code, made.stderr).toBe(0);
    }
    const canI = await kubectl(cluster, [
      'auth',
      'can-i',
      'create',
      'scopes.platform.nrn.dev',
      '-n',
      ns,
      '--as',
      'ann',
    ]);
    expect(canI.stdout.trim()).toBe('yes');
    const post = (bearer: string, applicationId: number) =>
      fetch(`${facade.url}/scope`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'probe',
          type: 'web_pool',
          application_id: applicationId,
          requested_spec: {},
        }),
      });
    const missing = appId + 1;
    // No right anywhere: the same 403 for the application of `ns` and for no application.
    const existing = await post(viewer.token, appId);
    const absent = await post(viewer.token, missing);
    expect([existing.status, absent.status]).toEqual([403, 403]);
    const existingBody = ErrorBody.parse(await existing.json());
    const absentBody = ErrorBody.parse(await absent.json());
    expect(existingBody.message).toBe(`jane may not scopes:create for application ${appId}`);
    expect(absentBody.message).toBe(`jane may not scopes:create for application ${missing}`);
    expect(existingBody.message).not.toContain(ns);
    // The right in one namespace only: an application elsewhere or nowhere is the same 403.
    const elsewhere = await post(teamMember.token, missing);
    expect(elsewhere.status).toBe(403);
    expect(ErrorBody.parse(await elsewhere.json()).message).toBe(
      `ann may not scopes:create for application ${missing}`,
    );
    // A caller allowed everywhere (the admin) is told the application does not exist.
    const admin = await post(token, missing);
    expect(admin.status).toBe(400);
    expect(ErrorBody.parse(await admin.json()).code).toBe('APPLICATION_NOT_FOUND');
    // Nothing was written for any of them.
    const scopes = await kubectl(cluster, ['get', 'scopes', '-n', ns, '-o', 'name']);
    expect(scopes.stdout.trim()).toBe('');
  });

  it('runs without auth only on loopback', async () => {
    const options = {
      kube: facadeKube,
      log: facadeLog.log,
      namespace: uniqueName('facade-none'),
      port: 0,
    };
    await expect(
      startFacade({ ...options, host: '0.0.0.0', auth: new NoAuthenticator() }),
    ).rejects.toThrow(/loopback/);
    const open = await startFacade({ ...options, host: '127.0.0.1', auth: new NoAuthenticator() });
    try {
      expect((await fetch(`${open.url}/service`)).status).toBe(200);
    } finally {
      await open.close();
    }
  });

  it('answers 503 while the API server is unreachable, and lists from its cache', async (context) => {
    if (cluster.kind !== 'local' || token === '') context.skip();
    // Authenticated while the server is up: the answer is cached for the next requests.
    expect((await get('/service', token)).status).toBe(200);
    await cluster.close();
    clusterClosed = true;
    const created = await fetch(`${facade.url}/scope`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'while down',
        type: 'web_pool',
        application_id: appId,
        requested_spec: {},
      }),
    });
    expect(created.status).toBe(503);
    expect(ErrorBody.parse(await created.json()).code).toBe('API_SERVER_UNAVAILABLE');
    expect((await get('/service', token)).status).toBe(200);
    // A token never seen needs the API server to be reviewed: 503, not 401.
    const unseen = await get('/service', 'another-token-never-seen');
    expect(unseen.status).toBe(503);
    expect(ErrorBody.parse(await unseen.json()).code).toBe('API_SERVER_UNAVAILABLE');
  });
});
