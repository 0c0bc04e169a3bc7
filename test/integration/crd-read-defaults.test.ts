// A custom resource stored under an older schema of its CRD is read as apiextensions-apiserver
// reads it from etcd: pruned and defaulted by the CRD's schema of today, without a write.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { type RawApi, rawApi } from '../support/raw-api.js';

let plane: ControlPlane;
let dataDir: string;
let api: RawApi;

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const WIDGETS = '/apis/example.test/v1/namespaces/default/widgets';

const crd = (spec: Record<string, unknown>) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.test' },
  spec: {
    group: 'example.test',
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', properties: spec } },
          },
        },
      },
    ],
  },
});

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-crd-read-'));
  plane = await startControlPlane({ dataDir, fsync: false });
  api = rawApi(plane);
});
afterAll(async () => {
  await plane?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('a custom resource after its CRD changed', () => {
  it('is read with the new default and without the dropped field, and written so next time', async () => {
    expect((await api.call('POST', CRDS, crd({ size: { type: 'string' } }))).status).toBe(201);
    await plane.idle();
    const made = await api.call('POST', WIDGETS, {
      apiVersion: 'example.test/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { size: 'S' },
    });
    expect(made.status).toBe(201);
    const current = (await api.call('GET', `${CRDS}/widgets.example.test`)).json;
    const changed = crd({ colour: { type: 'string', default: 'blue' } });
    const updated = await api.call('PUT', `${CRDS}/widgets.example.test`, {
      ...changed,
      metadata: { ...changed.metadata, resourceVersion: current.metadata.resourceVersion },
    });
    expect(updated.status).toBe(200);
    await plane.idle();

    const read = await api.call('GET', `${WIDGETS}/w`);
    expect(read.json.spec).toEqual({ colour: 'blue' });
    // Read, not written: the object keeps its resourceVersion until a write.
    expect(read.json.metadata.resourceVersion).toBe(made.json.metadata.resourceVersion);
    const listed = await api.call('GET', WIDGETS);
    expect(listed.json.items.map((w: { spec: unknown }) => w.spec)).toEqual([{ colour: 'blue' }]);

    const labelled = await api.call(
      'PATCH',
      `${WIDGETS}/w`,
      { metadata: { labels: { a: 'b' } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(labelled.json.spec).toEqual({ colour: 'blue' });
    expect(labelled.json.metadata.resourceVersion).not.toBe(made.json.metadata.resourceVersion);
  });
});
