// What a careless or hostile client sends the local control plane, request by request over real
// HTTP: metadata of the wrong shape, objects past kube-apiserver's size limits, bodies nested
// past any walker's stack, malformed paths — each answered with a 4XX Status, nothing stored,
// and the server serving on. Also a data directory holding a record written before such checks
// existed: the plane starts, says where the record is, and serves the rest.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { Store } from '../../src/local/storage/store.js';
import { type Fetch, fetchTrusting } from '../support/https.js';

let plane: ControlPlane;
let dataDir: string;
let fetch: Fetch;

interface Answer {
  status: number;
  json: Record<string, any>;
}

async function call(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<Answer> {
  const response = await fetch(`${plane.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${plane.token}`, 'Content-Type': contentType },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : {} };
}

/** The server still answers, and it never sent a stack trace or an internal error. */
async function healthy(): Promise<void> {
  const version = await call('GET', '/version');
  expect(version.status).toBe(200);
}

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const WIDGETS = '/apis/test.nrn.dev/v1/namespaces/default/widgets';

const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.test.nrn.dev' },
  spec: {
    group: 'test.nrn.dev',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
};

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-bad-input-'));
  plane = await startControlPlane({ dataDir, fsync: false });
  fetch = fetchTrusting(plane.ca);
  const crd = await call(
    'POST',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    WIDGET_CRD,
  );
  expect(crd.status).toBe(201);
});
afterAll(async () => {
  await plane?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('metadata of the wrong shape is refused before anything is stored', () => {
  it('answers ownerReferences: [null] with 422 naming each empty field, and stores nothing', async () => {
    const res = await call('POST', CONFIGMAPS, {
      metadata: { name: 'null-owner', ownerReferences: [null] },
    });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    const fields = (res.json.details.causes as Array<{ field: string }>).map((c) => c.field);
    expect(fields).toEqual([
      'metadata.ownerReferences.apiVersion',
      'metadata.ownerReferences.kind',
      'metadata.ownerReferences.name',
      'metadata.ownerReferences.uid',
    ]);
    expect((await call('GET', `${CONFIGMAPS}/null-owner`)).status).toBe(404);
    await healthy();
  });

  it.each([
    ['a number for name', { name: 5 }, /unmarshal number 5 .*metadata\.name of type string/],
    ['a string for ownerReferences', { name: 'x', ownerReferences: 'me' }, /ownerReferences/],
    ['a number in ownerReferences', { name: 'x', ownerReferences: [7] }, /ownerReferences/],
    ['a number for an owner uid', { name: 'x', ownerReferences: [{ uid: 1 }] }, /uid/],
    ['an object for finalizers', { name: 'x', finalizers: { a: 1 } }, /finalizers/],
    ['a string for managedFields', { name: 'x', managedFields: 'all' }, /managedFields/],
    ['a number for a label', { name: 'x', labels: { a: 5 } }, /labels/],
    ['an array for annotations', { name: 'x', annotations: ['a'] }, /annotations/],
    ['a fraction for generation', { name: 'x', generation: 1.5 }, /generation of type int64/],
    ['a bad creationTimestamp', { name: 'x', creationTimestamp: 'yesterday' }, /parsing time/],
  ])('answers %s with 400 and stores nothing', async (_what, metadata, message) => {
    for (const path of [CONFIGMAPS, WIDGETS]) {
      const res = await call('POST', path, {
        apiVersion: path === WIDGETS ? 'test.nrn.dev/v1' : 'v1',
        kind: path === WIDGETS ? 'Widget' : 'ConfigMap',
        metadata,
      });
      expect(res.status, path).toBe(400);
      expect(res.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
      expect(res.json.message).toMatch(message);
      expect(res.json.message).not.toMatch(/\n\s+at /);
    }
    expect((await call('GET', `${CONFIGMAPS}/x`)).status).toBe(404);
    await healthy();
  });

  it('answers invalid owner references and finalizers with 422, as ValidateObjectMeta does', async () => {
    const owner = (name: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name,
      uid: `uid-${name}`,
      controller: true,
    });
    const twoControllers = await call('POST', CONFIGMAPS, {
      metadata: { name: 'two', ownerReferences: [owner('a'), owner('b')] },
    });
    expect(twoControllers.status).toBe(422);
    expect(twoControllers.json.message).toMatch(
      /Only one reference can have Controller set to true/,
    );
    const eventOwner = await call('POST', CONFIGMAPS, {
      metadata: {
        name: 'event-owned',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u' }],
      },
    });
    expect(eventOwner.status).toBe(422);
    expect(eventOwner.json.message).toMatch(/disallowed from being an owner/);
    const finalizer = await call('POST', CONFIGMAPS, {
      metadata: { name: 'bad-finalizer', finalizers: ['not a/qualified/name'] },
    });
    expect(finalizer.status).toBe(422);
    expect(finalizer.json.details.causes[0].field).toBe('metadata.finalizers');
    const both = await call('POST', CONFIGMAPS, {
      metadata: { name: 'both', finalizers: ['orphan', 'foregroundDeletion'] },
    });
    expect(both.status).toBe(422);
    expect(both.json.message).toMatch(/cannot be both set/);
    for (const name of ['two', 'event-owned', 'bad-finalizer', 'both']) {
      expect((await call('GET', `${CONFIGMAPS}/${name}`)).status).toBe(404);
    }
  });

  it('refuses a patch that would store bad metadata, and leaves the object as it was', async () => {
    const created = await call('POST', CONFIGMAPS, {
      metadata: { name: 'patched' },
      data: { a: '1' },
    });
    expect(created.status).toBe(201);
    const merge = await call(
      'PATCH',
      `${CONFIGMAPS}/patched`,
      { metadata: { ownerReferences: [null] } },
      'application/merge-patch+json',
    );
    expect(merge.status).toBe(422);
    const json = await call(
      'PATCH',
      `${CONFIGMAPS}/patched`,
      [{ op: 'add', path: '/metadata/finalizers', value: [3] }],
      'application/json-patch+json',
    );
    expect(json.status).toBe(400);
    const strategic = await call(
      'PATCH',
      `${CONFIGMAPS}/patched`,
      { metadata: { name: 9 } },
      'application/strategic-merge-patch+json',
    );
    expect(strategic.status).toBe(400);
    const apply = await call(
      'PATCH',
      `${CONFIGMAPS}/patched?fieldManager=t`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'patched', labels: { a: [] } } },
      'application/apply-patch+yaml',
    );
    expect(apply.status).toBe(400);
    const after = await call('GET', `${CONFIGMAPS}/patched`);
    expect(after.json.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion);
    expect(after.json.metadata.ownerReferences).toBeUndefined();
  });
});

describe("kube-apiserver's size limits, on every kind of write", () => {
  const MiB = 1024 * 1024;

  it('refuses a ConfigMap or Secret whose data passes 1 MiB (422 Too long)', async () => {
    const configMap = await call('POST', CONFIGMAPS, {
      metadata: { name: 'big-data' },
      data: { a: 'x'.repeat(MiB / 2), b: 'y'.repeat(MiB / 2 + 1) },
    });
    expect(configMap.status).toBe(422);
    expect(configMap.json.details.causes[0]).toMatchObject({
      reason: 'FieldValueTooLong',
      message: 'Too long: must have at most 1048576 bytes',
    });
    const atLimit = await call('POST', CONFIGMAPS, {
      metadata: { name: 'full-data' },
      data: { a: 'x'.repeat(MiB) },
    });
    expect(atLimit.status).toBe(201);
    const secret = await call('POST', '/api/v1/namespaces/default/secrets', {
      metadata: { name: 'big-secret' },
      data: { a: Buffer.alloc(MiB + 1).toString('base64') },
    });
    expect(secret.status).toBe(422);
    expect(secret.json.details.causes[0].field).toBe('data');
  });

  it('refuses annotations over 256 KiB in total (422 Too long)', async () => {
    const res = await call('POST', CONFIGMAPS, {
      metadata: { name: 'annotated', annotations: { a: 'x'.repeat(256 * 1024) } },
    });
    expect(res.status).toBe(422);
    expect(res.json.details.causes[0]).toMatchObject({
      field: 'metadata.annotations',
      reason: 'FieldValueTooLong',
    });
  });

  it('refuses merge patches that grow an object past 1.5 MiB (413), and its watch lives on', async () => {
    const created = await call('POST', WIDGETS, {
      apiVersion: 'test.nrn.dev/v1',
      kind: 'Widget',
      metadata: { name: 'growing' },
      spec: {},
    });
    expect(created.status).toBe(201);
    const controller = new AbortController();
    const watch = await fetch(
      `${plane.url}${WIDGETS}?watch=true&resourceVersion=${created.json.metadata.resourceVersion}`,
      { headers: { Authorization: `Bearer ${plane.token}` }, signal: controller.signal },
    );
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await call(
        'PATCH',
        `${WIDGETS}/growing`,
        { spec: { [`part${i}`]: 'x'.repeat(MiB / 4) } },
        'application/merge-patch+json',
      );
      statuses.push(res.status);
      if (res.status !== 200) {
        expect(res.json).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge' });
      }
    }
    // Six quarter-MiB parts fit under 1.5 MiB with the rest of the object; the seventh does not.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 413, 413, 413]);
    const stored = await call('GET', `${WIDGETS}/growing`);
    expect(Object.keys(stored.json.spec)).toHaveLength(5);
    // The watch saw every change that was stored, and still delivers the next one.
    const shrink = await call(
      'PATCH',
      `${WIDGETS}/growing`,
      { spec: { part0: null } },
      'application/merge-patch+json',
    );
    expect(shrink.status).toBe(200);
    const events = await readEvents(watch, 6, controller);
    expect(events.map((e) => e.type)).toEqual(Array(6).fill('MODIFIED'));
    expect(events.at(-1)?.object.metadata.resourceVersion).toBe(
      shrink.json.metadata.resourceVersion,
    );
  });

  it('refuses a status write that would pass the limit as well', async () => {
    const res = await call(
      'PATCH',
      `${WIDGETS}/growing/status`,
      { status: { log: 'x'.repeat(MiB) } },
      'application/merge-patch+json',
    );
    expect(res.status).toBe(413);
    await healthy();
  });
});

describe('nesting', () => {
  /** A Widget whose spec nests `levels` objects: the body nests one more. */
  const nested = (name: string, levels: number) =>
    `{"apiVersion":"test.nrn.dev/v1","kind":"Widget","metadata":{"name":"${name}"},"spec":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`;

  it('refuses a body nested past 1,000 levels with 400, on every verb and patch type', async () => {
    const tooDeep = nested('deep', 1000);
    const created = await call('POST', WIDGETS, tooDeep);
    expect(created.status).toBe(400);
    expect(created.json.message).toMatch(/nests more than 1000 levels/);
    expect((await call('POST', WIDGETS, nested('deep', 5000))).status).toBe(400);
    expect((await call('POST', WIDGETS, nested('deep', 1e5))).status).toBe(400);
    const base = await call('POST', WIDGETS, nested('deep', 1));
    expect(base.status).toBe(201);
    const patches: Array<[string, string, string]> = [
      ['PUT', tooDeep, 'application/json'],
      ['PATCH', tooDeep, 'application/merge-patch+json'],
      [
        'PATCH',
        `[{"op":"add","path":"/spec/b","value":${'['.repeat(1000)}${']'.repeat(1000)}}]`,
        'application/json-patch+json',
      ],
      ['PATCH', tooDeep, 'application/apply-patch+yaml'],
    ];
    for (const [method, body, type] of patches) {
      const path = `${WIDGETS}/deep${type.includes('apply') ? '?fieldManager=t' : ''}`;
      const res = await call(method, path, body, type);
      expect(res.status, type).toBe(400);
    }
    const yamlDeep = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\nspec:\n${Array.from({ length: 1001 }, (_, i) => `${'  '.repeat(i + 1)}a:`).join('\n')} 1\n`;
    const yaml = await call('POST', CONFIGMAPS, yamlDeep, 'application/yaml');
    expect(yaml.status).toBe(400);
    const strategic = await call(
      'PATCH',
      `${CONFIGMAPS}/patched`,
      `{"extra":${'{"a":'.repeat(1000)}1${'}'.repeat(1000)}}`,
      'application/strategic-merge-patch+json',
    );
    expect(strategic.status).toBe(400);
    await healthy();
  });

  it('takes a body nested right at the limit through every write path', async () => {
    const levels = 998; // the body itself and the Widget around spec are two more
    const created = await call('POST', WIDGETS, nested('at-limit', levels));
    expect(created.status).toBe(201);
    const read = await call('GET', `${WIDGETS}/at-limit`);
    const put = await call('PUT', `${WIDGETS}/at-limit`, { ...read.json, spec: read.json.spec });
    expect(put.status).toBe(200);
    const merge = await call(
      'PATCH',
      `${WIDGETS}/at-limit`,
      `{"spec":${'{"a":'.repeat(levels)}2${'}'.repeat(levels)}}`,
      'application/merge-patch+json',
    );
    expect(merge.status).toBe(200);
    const json = await call(
      'PATCH',
      `${WIDGETS}/at-limit`,
      `[{"op":"replace","path":"/spec${'/a'.repeat(levels)}","value":3}]`,
      'application/json-patch+json',
    );
    expect(json.status).toBe(200);
    const apply = await call(
      'PATCH',
      `${WIDGETS}/at-limit?fieldManager=deep&force=true`,
      nested('at-limit', levels),
      'application/apply-patch+yaml',
    );
    expect(apply.status).toBe(200);
    const status = await call(
      'PATCH',
      `${WIDGETS}/at-limit/status`,
      `{"status":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`,
      'application/merge-patch+json',
    );
    expect(status.status).toBe(200);
    const configMap = await call(
      'PATCH',
      `${CONFIGMAPS}/patched`,
      `{"extra":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`,
      'application/strategic-merge-patch+json',
    );
    expect(configMap.status).toBe(200);
    const list = await call('GET', WIDGETS);
    expect(list.status).toBe(200);
    const removed = await call('DELETE', `${WIDGETS}/at-limit`);
    expect(removed.status).toBe(200);
    await healthy();
  });
});

describe('paths', () => {
  it('answers a malformed percent-escape with 400, not 500', async () => {
    for (const path of [
      '/api/v1/namespaces/%zz',
      '/api/v1/namespaces/default/configmaps/%E0%A4%A',
      '/apis/%',
    ]) {
      const res = await call('GET', path);
      expect(res.status, path).toBe(400);
      expect(res.json).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    }
    await healthy();
  });
});

describe('a record stored before these checks existed', () => {
  it('is reported, and the plane starts and serves the rest', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nrn-bad-record-'));
    try {
      let first = await startControlPlane({ dataDir: dir, fsync: false });
      fetch = fetchTrusting(first.ca);
      const before = plane;
      plane = first;
      expect((await call('POST', CONFIGMAPS, { metadata: { name: 'good' } })).status).toBe(201);
      await first.close();
      // As an older version could have stored them: a reference that is null, and a record
      // whose JSON is cut short.
      const store = await Store.open(join(dir, 'store'), { fsync: false });
      store.commit([
        {
          resource: 'core/configmaps',
          namespace: 'default',
          name: 'null-owner',
          json: JSON.stringify({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: {
              name: 'null-owner',
              namespace: 'default',
              uid: 'u1',
              ownerReferences: [null],
            },
          }),
        },
        {
          resource: 'core/configmaps',
          namespace: 'default',
          name: 'cut',
          json: '{"apiVersion":"v1",',
        },
      ]);
      await store.close();

      first = await startControlPlane({ dataDir: dir, fsync: false });
      plane = first;
      try {
        expect((await call('GET', `${CONFIGMAPS}/good`)).status).toBe(200);
        const events = await call(
          'GET',
          '/api/v1/namespaces/default/events?fieldSelector=reason%3DInvalidStoredObject',
        );
        const named = (events.json.items as Array<{ involvedObject: { name: string } }>)
          .map((e) => e.involvedObject.name)
          .sort();
        expect(named).toEqual(['cut', 'null-owner']);
        const metrics = await fetch(`${plane.url}/metrics`, {
          headers: { Authorization: `Bearer ${plane.token}` },
        });
        expect(await metrics.text()).toMatch(/^nrn_local_invalid_stored_objects 2$/m);
        // The readable one can be fixed or deleted as any other.
        expect((await call('DELETE', `${CONFIGMAPS}/null-owner`)).status).toBe(200);
        expect((await call('POST', CONFIGMAPS, { metadata: { name: 'after' } })).status).toBe(201);
      } finally {
        await first.close();
        plane = before;
        fetch = fetchTrusting(plane.ca);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

async function readEvents(
  response: Awaited<ReturnType<Fetch>>,
  count: number,
  controller: AbortController,
): Promise<Array<{ type: string; object: Record<string, any> }>> {
  const events: Array<{ type: string; object: Record<string, any> }> = [];
  let buffer = '';
  const timer = setTimeout(() => controller.abort(), 20_000);
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += Buffer.from(chunk).toString();
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        events.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
      }
      if (events.length >= count) break;
    }
  } catch (error) {
    if ((error as Error).name !== 'AbortError') throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return events;
}
