// Discovery documents carry what kube-apiserver's carry: for each resource, the
// storageVersionHash real clusters publish (configmaps' is qFsyl6wFWjQ= on every cluster), and,
// for a custom resource, the hash of its CRD's storage version.
import { createHash } from 'node:crypto';
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

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-discovery-'));
  plane = await startControlPlane({ dataDir, fsync: false });
  api = rawApi(plane);
  for (const [, text] of renderCrdFiles()) {
    await api.call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', text, {
      'Content-Type': 'application/yaml',
    });
  }
});
afterAll(async () => {
  await plane?.close();
  await rm(dataDir, { recursive: true, force: true });
});

type Resource = { name: string; storageVersionHash?: string };
const resource = async (path: string, name: string) =>
  ((await api.call('GET', path)).json.resources as Resource[]).find((r) => r.name === name);

describe('storageVersionHash', () => {
  it('is the one real clusters publish for built-in kinds', async () => {
    expect((await resource('/api/v1', 'configmaps'))?.storageVersionHash).toBe('qFsyl6wFWjQ=');
    expect((await resource('/api/v1', 'namespaces'))?.storageVersionHash).toBe('Q3oi5N2YM8M=');
    expect((await resource('/apis/coordination.k8s.io/v1', 'leases'))?.storageVersionHash).toBe(
      'gqkMMb/YqFM=',
    );
  });

  it("is a custom resource's storage version's, and subresources have none", async () => {
    const expected = createHash('sha256')
      .update('platform.nrn.dev/v1alpha1/Scope')
      .digest()
      .subarray(0, 8)
      .toString('base64');
    expect((await resource('/apis/platform.nrn.dev/v1alpha1', 'scopes'))?.storageVersionHash).toBe(
      expected,
    );
    const status = await resource('/apis/platform.nrn.dev/v1alpha1', 'scopes/status');
    expect(status).toBeDefined();
    expect(status?.storageVersionHash).toBeUndefined();
  });
});

describe('/api and /version', () => {
  it('/api advertises the address the server is reached at', async () => {
    const answer = await api.call('GET', '/api');
    expect(answer.json).toEqual({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [
        { clientCIDR: '0.0.0.0/0', serverAddress: new URL(plane.url).host },
      ],
    });
  });

  it("/version's platform is GOOS/GOARCH, as a Go server's", async () => {
    const platform = (await api.call('GET', '/version')).json.platform as string;
    expect(platform).toMatch(/^(linux|darwin|windows)\/(amd64|arm64|arm|386|ppc64le|s390x)$/);
  });
});
