// The API machinery of the local control plane, request by request over real HTTP: what a
// real API server answers for each case, Status bodies included. Raw HTTP needs the local
// control plane's bearer token and plain HTTP, so this file runs against it only; the
// kubectl and informer suites cover the same behaviour through real clients on any cluster.
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCrdFiles } from '../../src/api/index.js';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import type { Fetch } from '../support/https.js';
import { type RawApi, rawApi } from '../support/raw-api.js';

let plane: ControlPlane;
let dataDir: string;
let fetch: Fetch;
let call: RawApi['call'];
let watchEvents: RawApi['watchEvents'];

const SCOPES = '/apis/platform.nrn.dev/v1alpha1/namespaces/default/scopes';
const scope = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'platform.nrn.dev/v1alpha1',
  kind: 'Scope',
  metadata: { name },
  spec: { name, type: 'web_pool', application_id: 1, requested_spec: {}, ...spec },
});

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-api-'));
  plane = await startControlPlane({
    dataDir,
    fsync: false,
    watchWindow: 40,
    bookmarkIntervalMs: 200,
  });
  ({ fetch, call, watchEvents } = rawApi(plane));
  for (const [, text] of renderCrdFiles()) {
    const res = await call(
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      text,
      { 'Content-Type': 'application/yaml' },
    );
    expect(res.status).toBe(201);
  }
});
afterAll(async () => {
  await plane?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('safety', () => {
  it('takes a request without a token as system:anonymous (403) and refuses a wrong token (401), with a Status', async () => {
    // kube-apiserver's --anonymous-auth default: no credentials is system:anonymous, whom RBAC
    // refuses anything but the health checks and /version.
    const res = await fetch(`${plane.url}/api/v1/namespaces`);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      message:
        'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
    });
    const wrong = await fetch(`${plane.url}/api/v1/namespaces`, {
      headers: { Authorization: 'Bearer nope' },
    });
    expect(wrong.status).toBe(401);
  });

  it('answers bad JSON and bad YAML with 400, and a body too large with 413', async () => {
    const json = await call('POST', SCOPES, '{"metadata":');
    expect(json.status).toBe(400);
    expect(json.json).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    const yaml = await call('POST', SCOPES, 'a: [b', { 'Content-Type': 'application/yaml' });
    expect(yaml.status).toBe(400);
    const big = await call('POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'big' },
      data: { a: 'x'.repeat(4 * 1024 * 1024) },
    });
    expect(big.status).toBe(413);
    expect(big.json.reason).toBe('RequestEntityTooLarge');
  });
});

describe('shutdown', () => {
  it('ends connections that sent no request yet instead of waiting for them', async () => {
    // A client's pool may open a connection ahead of any request; a server that only ends
    // connections it has seen a request on would wait for it forever.
    const dir = await mkdtemp(join(tmpdir(), 'nrn-api-close-'));
    const other = await startControlPlane({ dataDir: dir, fsync: false });
    try {
      const port = Number(new URL(other.url).port);
      const bare = connect({ host: '127.0.0.1', port });
      const handshaken = tlsConnect({ host: '127.0.0.1', port, ca: other.ca });
      await Promise.all([once(bare, 'connect'), once(handshaken, 'secureConnect')]);
      const ended = Promise.all([once(bare, 'close'), once(handshaken, 'close')]);
      const started = Date.now();
      await other.close();
      await ended;
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('discovery and OpenAPI', () => {
  it('serves /version, the core and group discovery documents', async () => {
    expect((await call('GET', '/version')).json).toMatchObject({ major: '1', minor: '32' });
    const core = await call('GET', '/api/v1');
    expect(core.json.resources.map((r: { name: string }) => r.name)).toEqual(
      expect.arrayContaining([
        'namespaces',
        'namespaces/status',
        'secrets',
        'configmaps',
        'events',
        'serviceaccounts',
        'resourcequotas',
        'limitranges',
      ]),
    );
    const groups = await call('GET', '/apis');
    expect(groups.json.groups.map((g: { name: string }) => g.name)).toEqual(
      expect.arrayContaining(['apiextensions.k8s.io', 'coordination.k8s.io', 'platform.nrn.dev']),
    );
    const ours = await call('GET', '/apis/platform.nrn.dev/v1alpha1');
    const services = ours.json.resources.find((r: { name: string }) => r.name === 'services');
    expect(services).toMatchObject({
      kind: 'Service',
      namespaced: true,
      shortNames: ['nsvc'],
      categories: ['nrn'],
    });
    expect(ours.json.resources.map((r: { name: string }) => r.name)).toContain('scopes/status');
  });

  it('serves OpenAPI v3 with our schemas and PATCH operations that take fieldValidation', async () => {
    const root = await call('GET', '/openapi/v3');
    const url = root.json.paths['apis/platform.nrn.dev/v1alpha1'].serverRelativeURL as string;
    const doc = await call('GET', url);
    const schema = doc.json.components.schemas['dev.nrn.platform.v1alpha1.Scope'];
    expect(schema['x-kubernetes-group-version-kind']).toEqual([
      { group: 'platform.nrn.dev', version: 'v1alpha1', kind: 'Scope' },
    ]);
    const patch =
      doc.json.paths['/apis/platform.nrn.dev/v1alpha1/namespaces/{namespace}/scopes/{name}'].patch;
    expect(patch.parameters.map((p: { name: string }) => p.name)).toContain('fieldValidation');
  });
});

describe('writes', () => {
  it('assigns uid, creationTimestamp, generation and an increasing resourceVersion; generateName', async () => {
    const a = await call('POST', SCOPES, scope('meta-a'));
    const b = await call('POST', SCOPES, { ...scope('x'), metadata: { generateName: 'meta-' } });
    expect(a.status).toBe(201);
    expect(a.json.metadata).toMatchObject({ generation: 1, namespace: 'default' });
    expect(a.json.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.json.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Number(b.json.metadata.resourceVersion)).toBeGreaterThan(
      Number(a.json.metadata.resourceVersion),
    );
    expect(b.json.metadata.name).toMatch(/^meta-[a-z0-9]{5}$/);
  });

  it('refuses a namespaced object in a namespace that does not exist', async () => {
    const res = await call(
      'POST',
      '/apis/platform.nrn.dev/v1alpha1/namespaces/nowhere/scopes',
      scope('lost'),
    );
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({
      reason: 'NotFound',
      message: 'namespaces "nowhere" not found',
    });
  });

  it('answers a stale resourceVersion with 409 Conflict', async () => {
    const created = await call('POST', SCOPES, scope('occ'));
    const first = { ...created.json, spec: { ...created.json.spec, name: 'occ-2' } };
    expect((await call('PUT', `${SCOPES}/occ`, first)).status).toBe(200);
    const stale = await call('PUT', `${SCOPES}/occ`, {
      ...created.json,
      spec: { ...created.json.spec, name: 'occ-3' },
    });
    expect(stale.status).toBe(409);
    expect(stale.json).toMatchObject({ reason: 'Conflict', code: 409 });
    expect(stale.json.message).toContain('the object has been modified');
  });

  it('bumps generation on spec changes only, and splits the status subresource', async () => {
    const created = await call('POST', SCOPES, { ...scope('gen'), status: { status: 'active' } });
    expect(created.json.status).toBeUndefined(); // status is the subresource's
    const labelled = await call(
      'PATCH',
      `${SCOPES}/gen`,
      { metadata: { labels: { a: 'b' } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(labelled.json.metadata.generation).toBe(1);
    const status = await call(
      'PATCH',
      `${SCOPES}/gen/status`,
      { status: { status: 'creating' }, spec: { application_id: 99 } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(status.json.status).toEqual({ status: 'creating' });
    expect(status.json.spec.application_id).toBe(1);
    expect(status.json.metadata.generation).toBe(1);
    const spec = await call(
      'PATCH',
      `${SCOPES}/gen`,
      { spec: { name: 'gen-2' }, status: { status: 'failed' } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(spec.json.metadata.generation).toBe(2);
    expect(spec.json.status).toEqual({ status: 'creating' });
  });

  it('does not write when nothing changes', async () => {
    const created = await call('POST', SCOPES, scope('noop'));
    const again = await call(
      'PATCH',
      `${SCOPES}/noop`,
      { spec: { name: 'noop' } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(again.json.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion);
  });

  it('patches with JSON patch, refuses strategic merge on custom resources with 415', async () => {
    await call('POST', SCOPES, scope('patchy'));
    const json = await call(
      'PATCH',
      `${SCOPES}/patchy`,
      [{ op: 'add', path: '/spec/tier', value: 'critical' }],
      { 'Content-Type': 'application/json-patch+json' },
    );
    expect(json.json.spec.tier).toBe('critical');
    const failed = await call(
      'PATCH',
      `${SCOPES}/patchy`,
      [{ op: 'test', path: '/spec/tier', value: 'testing' }],
      { 'Content-Type': 'application/json-patch+json' },
    );
    expect(failed.status).toBe(422);
    const smp = await call(
      'PATCH',
      `${SCOPES}/patchy`,
      { spec: {} },
      { 'Content-Type': 'application/strategic-merge-patch+json' },
    );
    expect(smp.status).toBe(415);
    expect(smp.json.reason).toBe('UnsupportedMediaType');
  });

  it('creates with server-side apply when missing, and records field managers', async () => {
    const res = await call('PATCH', `${SCOPES}/applied?fieldManager=me`, scope('applied'), {
      'Content-Type': 'application/apply-patch+yaml',
    });
    expect(res.status).toBe(201);
    expect(res.json.metadata.managedFields).toEqual([
      expect.objectContaining({ manager: 'me', operation: 'Apply' }),
    ]);
    // ValidatePatchOptions: an apply names its manager.
    const missing = await call('PATCH', `${SCOPES}/applied`, scope('applied'), {
      'Content-Type': 'application/apply-patch+yaml',
    });
    expect(missing.status).toBe(422);
    expect(missing.json.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
  });

  it('validates against the CRD schema: types, bounds, enums, patterns, required, defaults, pruning', async () => {
    const bad = await call(
      'POST',
      SCOPES,
      scope('bad', { name: 'x'.repeat(61), type: 'vm', application_id: 'one' }),
    );
    expect(bad.status).toBe(422);
    expect(bad.json.reason).toBe('Invalid');
    const fields = bad.json.details.causes.map((c: { field: string }) => c.field).sort();
    // And kube's cause with no field: the CEL rules were not run on an invalid object.
    expect(fields).toEqual(['<nil>', 'spec.application_id', 'spec.name', 'spec.type']);
    const missing = await call('POST', SCOPES, { ...scope('req'), spec: { name: 'req' } });
    expect(missing.status).toBe(422);
    expect(missing.json.message).toContain('spec.type: Required value');

    const withUnknown = scope('pruned', { extra: 1 });
    const strict = await call('POST', `${SCOPES}?fieldValidation=Strict`, withUnknown);
    expect(strict.status).toBe(400);
    expect(strict.json.message).toContain('unknown field "spec.extra"');
    const warn = await call('POST', `${SCOPES}?fieldValidation=Warn`, withUnknown);
    expect(warn.status).toBe(201);
    expect(warn.headers.get('warning')).toContain('unknown field \\"spec.extra\\"');
    expect(warn.json.spec.extra).toBeUndefined();
    const ignore = await call(
      'POST',
      `${SCOPES}?fieldValidation=Ignore`,
      scope('pruned2', { extra: 1 }),
    );
    expect(ignore.status).toBe(201);
    expect(ignore.headers.get('warning')).toBeNull();

    const spec = await call(
      'POST',
      '/apis/platform.nrn.dev/v1alpha1/namespaces/default/servicespecifications',
      {
        metadata: { name: 'pg' },
        spec: {
          id: '4f0e2a36-5f43-4a4b-9bf3-1c1e0f4f7d11',
          name: 'pg',
          type: 'dependency',
          attributes: { schema: { type: 'object', properties: { a: { type: 'string' } } } },
        },
      },
    );
    expect(spec.status).toBe(201);
    expect(spec.json.spec.provisioner).toEqual({ type: 'none', deadline_seconds: 1800 }); // defaulted
    expect(spec.json.spec.attributes.schema.properties.a).toEqual({ type: 'string' }); // preserved
  });

  it('makes nothing on dryRun=All', async () => {
    const res = await call('POST', `${SCOPES}?dryRun=All`, scope('dry'));
    expect(res.status).toBe(201);
    expect((await call('GET', `${SCOPES}/dry`)).status).toBe(404);
  });
});

describe('deletion', () => {
  it('holds an object with finalizers, with deletionTimestamp, until they are removed', async () => {
    await call('POST', SCOPES, { ...scope('fin'), metadata: { name: 'fin', finalizers: ['x/y'] } });
    const del = await call('DELETE', `${SCOPES}/fin`);
    expect(del.status).toBe(200);
    expect(del.json.metadata.deletionTimestamp).toBeDefined();
    const added = await call(
      'PATCH',
      `${SCOPES}/fin`,
      { metadata: { finalizers: ['x/y', 'x/z'] } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(added.status).toBe(422);
    const released = await call(
      'PATCH',
      `${SCOPES}/fin`,
      { metadata: { finalizers: null } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(released.status).toBe(200);
    expect((await call('GET', `${SCOPES}/fin`)).status).toBe(404);
  });

  it('checks delete preconditions', async () => {
    await call('POST', SCOPES, scope('pre'));
    const res = await call('DELETE', `${SCOPES}/pre`, {
      preconditions: { uid: '00000000-0000-0000-0000-000000000000' },
    });
    expect(res.status).toBe(409);
  });

  it('collects dependents in the background, keeps them with Orphan, and waits for them with Foreground', async () => {
    const cms = '/api/v1/namespaces/default/configmaps';
    const owner = async (name: string) =>
      (await call('POST', SCOPES, scope(name))).json.metadata.uid as string;
    const child = (name: string, ownerName: string, uid: string) =>
      call('POST', cms, {
        metadata: {
          name,
          ownerReferences: [
            { apiVersion: 'platform.nrn.dev/v1alpha1', kind: 'Scope', name: ownerName, uid },
          ],
        },
      });

    await child('bg-child', 'bg', await owner('bg'));
    await call('DELETE', `${SCOPES}/bg`);
    await plane.idle();
    expect((await call('GET', `${cms}/bg-child`)).status).toBe(404);

    await child('orphan-child', 'orphaned', await owner('orphaned'));
    await call('DELETE', `${SCOPES}/orphaned`, { propagationPolicy: 'Orphan' });
    await plane.idle();
    const orphan = await call('GET', `${cms}/orphan-child`);
    expect(orphan.status).toBe(200);
    expect(orphan.json.metadata.ownerReferences).toBeUndefined();
    expect((await call('GET', `${SCOPES}/orphaned`)).status).toBe(404);

    await call('POST', cms, {
      metadata: {
        name: 'fg-child',
        finalizers: ['x/hold'],
        ownerReferences: [
          {
            apiVersion: 'platform.nrn.dev/v1alpha1',
            kind: 'Scope',
            name: 'fg',
            uid: await owner('fg'),
          },
        ],
      },
    });
    await call('DELETE', `${SCOPES}/fg`, { propagationPolicy: 'Foreground' });
    await plane.idle();
    expect((await call('GET', `${SCOPES}/fg`)).json.metadata.finalizers).toEqual([
      'foregroundDeletion',
    ]);
    await call(
      'PATCH',
      `${cms}/fg-child`,
      { metadata: { finalizers: null } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    await plane.idle();
    expect((await call('GET', `${SCOPES}/fg`)).status).toBe(404);
  });

  it('empties a deleted namespace before removing it', async () => {
    const cms = '/api/v1/namespaces/doomed/configmaps';
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'doomed' } });
    await call('POST', cms, { metadata: { name: 'held', finalizers: ['x/hold'] } });
    await call('POST', '/apis/platform.nrn.dev/v1alpha1/namespaces/doomed/scopes', scope('s'));
    const del = await call('DELETE', '/api/v1/namespaces/doomed');
    expect(del.json.status.phase).toBe('Terminating');
    await plane.idle();
    // The held config map keeps the namespace terminating, and nothing new may enter it.
    expect(
      (await call('GET', '/apis/platform.nrn.dev/v1alpha1/namespaces/doomed/scopes/s')).status,
    ).toBe(404);
    expect((await call('GET', `${cms}/held`)).json.metadata.deletionTimestamp).toBeDefined();
    expect((await call('POST', cms, { metadata: { name: 'b' } })).status).toBe(403);
    await call(
      'PATCH',
      `${cms}/held`,
      { metadata: { finalizers: null } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    await plane.idle();
    expect((await call('GET', '/api/v1/namespaces/doomed')).status).toBe(404);
  });
});

describe('lists', () => {
  beforeAll(async () => {
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'paging' } });
    for (let i = 0; i < 7; i++) {
      await call('POST', '/api/v1/namespaces/paging/configmaps', {
        metadata: { name: `p${i}`, labels: { parity: i % 2 ? 'odd' : 'even' } },
      });
    }
  });

  it('pages with limit and continue, counting what remains', async () => {
    const seen: string[] = [];
    const remaining: unknown[] = [];
    let token: string | undefined;
    do {
      const res = await call(
        'GET',
        `/api/v1/namespaces/paging/configmaps?limit=3${token ? `&continue=${token}` : ''}`,
      );
      seen.push(...res.json.items.map((i: { metadata: { name: string } }) => i.metadata.name));
      remaining.push(res.json.metadata.remainingItemCount);
      token = res.json.metadata.continue;
    } while (token);
    expect(seen).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
    expect(remaining).toEqual([4, 1, undefined]);
    // A list a selector narrows has a next page, but no count of what remains in it.
    const odd = await call(
      'GET',
      '/api/v1/namespaces/paging/configmaps?labelSelector=parity%3Dodd&limit=1',
    );
    expect(odd.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
      'p1',
    ]);
    expect(odd.json.metadata.continue).toEqual(expect.any(String));
    expect(odd.json.metadata.remainingItemCount).toBeUndefined();
  });

  it('filters by label and field selectors, across namespaces too', async () => {
    const odd = await call(
      'GET',
      '/api/v1/namespaces/paging/configmaps?labelSelector=parity%3Dodd',
    );
    expect(odd.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
      'p1',
      'p3',
      'p5',
    ]);
    const byName = await call('GET', '/api/v1/configmaps?fieldSelector=metadata.name%3Dp4');
    expect(
      byName.json.items.map((i: { metadata: { namespace: string } }) => i.metadata.namespace),
    ).toEqual(['paging']);
    const bad = await call('GET', '/api/v1/configmaps?fieldSelector=data.x%3D1');
    expect(bad.status).toBe(400);
    const badLabel = await call('GET', '/api/v1/configmaps?labelSelector=a%20in%20b');
    expect(badLabel.status).toBe(400);
  });

  it('answers kubectl with a Table carrying the printer columns', async () => {
    const res = await call('GET', SCOPES, undefined, {
      Accept:
        'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
    });
    expect(res.json.kind).toBe('Table');
    expect(res.json.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
      'Name',
      'ID',
      'Type',
      'Status',
      'Ready',
      'Class',
      'App',
      'Domain',
      'Age',
    ]);
  });
});

describe('watch', () => {
  const cms = '/api/v1/namespaces/default/configmaps';

  it('replays every change after a resourceVersion, then follows live ones', async () => {
    const a = await call('POST', cms, { metadata: { name: 'w-a' } });
    const from = a.json.metadata.resourceVersion;
    await call(
      'PATCH',
      `${cms}/w-a`,
      { data: { x: '1' } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    await call('DELETE', `${cms}/w-a`);
    const events = watchEvents(`${cms}?watch=true&resourceVersion=${from}`, 3);
    setTimeout(() => void call('POST', cms, { metadata: { name: 'w-b' } }), 100);
    expect((await events).map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'MODIFIED w-a',
      'DELETED w-a',
      'ADDED w-b',
    ]);
  });

  it('shows each watcher the version it watches, whatever version wrote the object', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.versions.example.com' },
      spec: {
        group: 'versions.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: ['v1', 'v2'].map((name) => ({
          name,
          served: true,
          storage: name === 'v1',
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
            },
          },
        })),
      },
    };
    expect(
      (await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status,
    ).toBe(201);
    const path = (version: string) =>
      `/apis/versions.example.com/${version}/namespaces/default/widgets`;
    const list = await call('GET', path('v1'));
    const from = list.json.metadata.resourceVersion;
    const v1 = watchEvents(`${path('v1')}?watch=true&resourceVersion=${from}`, 2);
    const v2 = watchEvents(`${path('v2')}?watch=true&resourceVersion=${from}`, 2);
    const w1 = { apiVersion: 'versions.example.com/v1', kind: 'Widget', metadata: { name: 'one' } };
    const w2 = { apiVersion: 'versions.example.com/v2', kind: 'Widget', metadata: { name: 'two' } };
    expect((await call('POST', path('v1'), { ...w1, spec: { size: 1 } })).status).toBe(201);
    expect((await call('POST', path('v2'), { ...w2, spec: { size: 2 } })).status).toBe(201);
    for (const [events, version] of [
      [await v1, 'v1'],
      [await v2, 'v2'],
    ] as const) {
      expect(
        events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.apiVersion}`),
      ).toEqual([
        `ADDED one versions.example.com/${version}`,
        `ADDED two versions.example.com/${version}`,
      ]);
    }
  });

  it('sends synthetic ADDED events for resourceVersion 0, and ends at timeoutSeconds', async () => {
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'watch0' } });
    await call('POST', '/api/v1/namespaces/watch0/configmaps', { metadata: { name: 'one' } });
    const started = Date.now();
    const events = await watchEvents(
      '/api/v1/namespaces/watch0/configmaps?watch=true&resourceVersion=0&timeoutSeconds=1',
      100,
    );
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED one']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('sends bookmarks when asked', async () => {
    const events = await watchEvents(
      '/api/v1/namespaces/watch0/configmaps?watch=true&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=1',
      100,
    );
    expect(
      events.some((e) => e.type === 'BOOKMARK' && Number(e.object.metadata.resourceVersion) > 0),
    ).toBe(true);
  });

  it('answers a resourceVersion older than the window with an ERROR event carrying 410', async () => {
    const events = await watchEvents(`${cms}?watch=true&resourceVersion=1`, 1);
    expect(events[0]).toMatchObject({
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired' },
    });
  });

  it('sends the changes of one commit to a watcher in one write', async () => {
    for (let i = 0; i < 5; i++) {
      await call('POST', cms, { metadata: { name: `grouped-${i}`, labels: { group: 'g' } } });
    }
    const url = new URL(plane.url);
    const socket = tlsConnect({
      host: url.hostname,
      port: Number(url.port),
      ca: plane.ca,
      servername: 'localhost',
    });
    await once(socket, 'secureConnect');
    // Each TLS record the server writes reaches the socket as one 'data' event.
    const records: string[] = [];
    socket.on('data', (chunk: Buffer) => records.push(chunk.toString()));
    const from = (await call('GET', cms)).json.metadata.resourceVersion;
    socket.write(
      `GET ${cms}?watch=true&labelSelector=group%3Dg&resourceVersion=${from} HTTP/1.1\r\n` +
        `Host: localhost\r\nAuthorization: Bearer ${plane.token}\r\n\r\n`,
    );
    while (records.length === 0) await new Promise((r) => setTimeout(r, 10));
    const afterHeaders = records.length;
    // A collection delete commits its deletes together and they are published in one tick;
    // Node's http holds a response's writes until the tick ends, so they leave as one write,
    // as kube-apiserver flushes a watch only once no further event is waiting. A flush per
    // event would cost a syscall (and a wake-up of the reader) each.
    expect((await call('DELETE', `${cms}?labelSelector=group%3Dg`)).status).toBe(200);
    const deleted = () => records.join('').split('"type":"DELETED"').length - 1;
    for (let i = 0; i < 100 && deleted() < 5; i++) await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    expect(deleted()).toBe(5);
    expect(records.length - afterHeaders).toBe(1);
  });

  it('cuts off a watcher that does not read, rather than buffering without bound', async () => {
    const { request } = await import('node:https');
    const url = new URL(
      `${plane.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0`,
    );
    let received = 0;
    const ended = new Promise<string>((resolve) => {
      const req = request(
        url,
        { headers: { Authorization: `Bearer ${plane.token}` }, ca: plane.ca },
        (res) => {
          res.pause(); // a watcher that stopped reading
          res.on('data', (chunk: Buffer) => {
            received += chunk.length;
          });
          res.on('end', () => resolve('end'));
          res.on('error', () => resolve('error'));
          res.on('close', () => resolve('close'));
          setTimeout(() => res.resume(), 3000);
        },
      );
      req.on('error', () => resolve('error'));
      req.end();
    });
    await new Promise((r) => setTimeout(r, 200));
    const big = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 40; i++) {
      expect(
        (await call('POST', cms, { metadata: { name: `big-${i}` }, data: { v: big } })).status,
      ).toBe(201);
    }
    expect(['close', 'error']).toContain(await ended);
    // Far less than the 40 MiB written arrived: the server dropped the watcher instead of queueing it all.
    expect(received).toBeLessThan(30 * 1024 * 1024);
    for (let i = 0; i < 40; i++) await call('DELETE', `${cms}/big-${i}`);
  });

  it('turns selector transitions into ADDED and DELETED', async () => {
    await call('POST', cms, { metadata: { name: 'sel', labels: { on: 'no' } } });
    const rv = (await call('GET', cms)).json.metadata.resourceVersion;
    const events = watchEvents(`${cms}?watch=true&resourceVersion=${rv}&labelSelector=on%3Dyes`, 2);
    await new Promise((r) => setTimeout(r, 100));
    await call(
      'PATCH',
      `${cms}/sel`,
      { metadata: { labels: { on: 'yes' } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    await call(
      'PATCH',
      `${cms}/sel`,
      { metadata: { labels: { on: 'no' } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect((await events).map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'ADDED sel',
      'DELETED sel',
    ]);
  });
});
