// ListOptions and DELETE answers, request by request over raw HTTPS, as kube-apiserver gives
// them: resourceVersionMatch rules (ValidateListOptions: 422 on ListOptions.meta.k8s.io), a
// resourceVersion that is not a number (422 on the resource), versions this server cannot
// serve (410, 504); DELETE answering the object or a Status by kind; deletecollection with a
// propagation policy.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCrdFiles } from '../../src/api/index.js';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { type RawApi, rawApi } from '../support/raw-api.js';

let plane: ControlPlane;
let dataDir: string;
let api: RawApi;

const CMS = '/api/v1/namespaces/default/configmaps';

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-list-'));
  plane = await startControlPlane({ dataDir, fsync: false, namespaceDeletionGraceMs: 0 });
  api = rawApi(plane);
  for (const [, text] of renderCrdFiles()) {
    const res = await api.call(
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      text,
      {
        'Content-Type': 'application/yaml',
      },
    );
    expect(res.status).toBe(201);
  }
  await api.call('POST', CMS, { metadata: { name: 'a' } });
});
afterAll(async () => {
  await plane?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('ListOptions', () => {
  const refused: ReadonlyArray<readonly [string, string]> = [
    [
      'resourceVersionMatch=Exact',
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    ],
    [
      'resourceVersion=0&resourceVersionMatch=Exact',
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
    ],
    [
      'resourceVersion=1&resourceVersionMatch=Newest',
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
    ],
    [
      'resourceVersionMatch=NotOlderThan&continue=x',
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided]',
    ],
    [
      'sendInitialEvents=true',
      'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list',
    ],
    [
      'watch=true&resourceVersionMatch=NotOlderThan',
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    ],
    [
      'watch=true&sendInitialEvents=true',
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    ],
    [
      'resourceVersion=abc',
      'configmaps "" is invalid: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    ],
    [
      'watch=1&resourceVersion=-5',
      'configmaps "" is invalid: resourceVersion: Invalid value: "-5": strconv.ParseUint: parsing "-5": invalid syntax',
    ],
  ];
  for (const [query, message] of refused) {
    it(`${query}: 422, ${message.slice(0, 40)}...`, async () => {
      const answer = await api.call('GET', `${CMS}?${query}`);
      expect(answer.status).toBe(422);
      expect(answer.json).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422, message });
    });
  }

  it('the list at the current version with Exact; an older one is gone (410), a newer one not reached (504)', async () => {
    const current = (await api.call('GET', CMS)).json.metadata.resourceVersion as string;
    const exact = await api.call(
      'GET',
      `${CMS}?resourceVersion=${current}&resourceVersionMatch=Exact`,
    );
    expect(exact.status).toBe(200);
    expect(exact.json.metadata.resourceVersion).toBe(current);
    const old = await api.call('GET', `${CMS}?resourceVersion=1&resourceVersionMatch=Exact`);
    expect(old.status).toBe(410);
    expect(old.json).toMatchObject({
      reason: 'Expired',
      message: 'The resourceVersion for the provided list is too old.',
    });
    const ahead = Number(current) + 1000;
    const future = await api.call('GET', `${CMS}?resourceVersion=${ahead}`);
    expect(future.status).toBe(504);
    expect(future.json).toMatchObject({
      reason: 'Timeout',
      message: `Timeout: Too large resource version: ${ahead}, current: ${current}`,
      details: { causes: [{ reason: 'ResourceVersionTooLarge' }], retryAfterSeconds: 1 },
    });
    // NotOlderThan an older version is any state at least that new: the current one.
    expect(
      (await api.call('GET', `${CMS}?resourceVersion=1&resourceVersionMatch=NotOlderThan`)).status,
    ).toBe(200);
  });
});

describe('DELETE answers', () => {
  it('a Status for a ConfigMap gone at once, naming it', async () => {
    const made = await api.call('POST', CMS, { metadata: { name: 'gone' } });
    const answer = await api.call('DELETE', `${CMS}/gone`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'gone', kind: 'configmaps', uid: made.json.metadata.uid },
    });
  });

  it('the object for a ConfigMap its finalizers keep, and for kinds that return deleted objects', async () => {
    await api.call('POST', CMS, { metadata: { name: 'kept', finalizers: ['x/hold'] } });
    const kept = await api.call('DELETE', `${CMS}/kept`);
    expect(kept.json).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'kept' } });
    expect(kept.json.metadata.deletionTimestamp).toBeDefined();
    await api.call('POST', '/api/v1/namespaces/default/serviceaccounts', {
      metadata: { name: 'sa' },
    });
    const sa = await api.call('DELETE', '/api/v1/namespaces/default/serviceaccounts/sa');
    expect(sa.json).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'sa' } });
    const scopes = '/apis/platform.nrn.dev/v1alpha1/namespaces/default/scopes';
    await api.call('POST', scopes, {
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'Scope',
      metadata: { name: 's' },
      spec: { name: 's', type: 'web_pool', application_id: 1, requested_spec: {} },
    });
    const scope = await api.call('DELETE', `${scopes}/s`);
    expect(scope.json).toMatchObject({ kind: 'Scope', metadata: { name: 's' } });
  });

  it('deletecollection takes propagationPolicy: Orphan leaves dependents, Background removes them', async () => {
    const owner = (name: string) =>
      api.call('POST', CMS, { metadata: { name, labels: { role: 'owner' } } });
    const dependent = (name: string, ownerName: string, uid: string) =>
      api.call('POST', CMS, {
        metadata: {
          name,
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: ownerName, uid }],
        },
      });
    const o1 = await owner('o1');
    await dependent('d1', 'o1', o1.json.metadata.uid);
    const orphaned = await api.call(
      'DELETE',
      `${CMS}?labelSelector=role%3Downer&propagationPolicy=Orphan`,
    );
    expect(orphaned.status).toBe(200);
    await plane.idle();
    const d1 = await api.call('GET', `${CMS}/d1`);
    expect(d1.status).toBe(200);
    expect(d1.json.metadata.ownerReferences).toBeUndefined();

    const o2 = await owner('o2');
    await dependent('d2', 'o2', o2.json.metadata.uid);
    const background = await api.call(
      'DELETE',
      CMS,
      {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy: 'Background',
      },
      {},
    );
    expect(background.status).toBe(200);
    await plane.idle();
    expect((await api.call('GET', `${CMS}/d2`)).status).toBe(404);
  });

  it('deletecollection refuses an unknown propagationPolicy as DELETE does', async () => {
    const answer = await api.call('DELETE', `${CMS}?propagationPolicy=Sideways`);
    expect(answer.status).toBe(400);
    expect(answer.json.message).toBe(
      'propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan"',
    );
  });
});
