// client-node informers against "a cluster": list+watch, re-watch when the server ends a
// watch, and a fresh list when the server answers 410 (too old a resourceVersion).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  makeInformer,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCrdFiles } from '../../src/api/index.js';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { kubectl, startCluster, type TestCluster, uniqueName } from '../support/cluster.js';

const GROUP = 'platform.nrn.dev';
const VERSION = 'v1alpha1';

function scope(name: string) {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Scope',
    metadata: { name },
    spec: { name, type: 'serverless', application_id: 1, requested_spec: {} },
  };
}

function clientFor(kubeconfigPath: string) {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return { kc, api: kc.makeApiClient(CustomObjectsApi) };
}

function scopeInformer(kubeconfigPath: string, namespace: string) {
  const { kc, api } = clientFor(kubeconfigPath);
  let lists = 0;
  const informer = makeInformer(
    kc,
    `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/scopes`,
    async () => {
      lists++;
      return api.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: 'scopes',
      });
    },
  );
  const events: string[] = [];
  const errors: unknown[] = [];
  informer.on('add', (o: KubernetesObject) => events.push(`add ${o.metadata?.name}`));
  informer.on('update', (o: KubernetesObject) => events.push(`update ${o.metadata?.name}`));
  informer.on('delete', (o: KubernetesObject) => events.push(`delete ${o.metadata?.name}`));
  informer.on('error', (e: unknown) => errors.push(e));
  return { informer, events, errors, api, lists: () => lists };
}

const names = (objects: readonly KubernetesObject[]) => objects.map((o) => o.metadata?.name).sort();

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('client-node informer', () => {
  let cluster: TestCluster;
  let ns: string;

  beforeAll(async () => {
    cluster = await startCluster();
    await kubectl(cluster, ['apply', '-f', join(import.meta.dirname, '../../crds')]);
    await kubectl(cluster, ['wait', '--for=condition=Established', 'crd/scopes.platform.nrn.dev']);
    ns = uniqueName('informer');
    await kubectl(cluster, ['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
    });
  });
  afterAll(async () => {
    await kubectl(cluster, ['delete', 'namespace', ns, '--wait=false']);
    await cluster?.close();
  });

  it('lists, then follows adds, updates and deletes', async () => {
    const { api } = clientFor(cluster.kubeconfigPath);
    const create = (name: string) =>
      api.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: ns,
        plural: 'scopes',
        body: scope(name),
      });
    await create('before-1');
    await create('before-2');
    const watched = scopeInformer(cluster.kubeconfigPath, ns);
    await watched.informer.start();
    try {
      expect(names(watched.informer.list())).toEqual(['before-1', 'before-2']);
      await create('after');
      await until(() => watched.events.includes('add after'));
      await api.patchNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: ns,
        plural: 'scopes',
        name: 'after',
        body: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }],
      });
      await until(() => watched.events.includes('update after'));
      await api.deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: ns,
        plural: 'scopes',
        name: 'after',
      });
      await until(() => watched.events.includes('delete after'));
      expect(names(watched.informer.list())).toEqual(['before-1', 'before-2']);
      expect(watched.errors).toEqual([]);
    } finally {
      await watched.informer.stop();
    }
  });
});

// These two need to end watches and shrink the watch window at will: the local control plane only.
describe('client-node informer when the server ends watches (local control plane)', () => {
  let plane: ControlPlane;
  let dataDir: string;
  const ns = 'default';

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'nrn-informer-'));
    plane = await startControlPlane({
      dataDir,
      fsync: false,
      watchWindow: 4,
      bookmarkIntervalMs: 3_600_000,
    });
    const crd = renderCrdFiles().get('scopes.platform.nrn.dev.yaml') as string;
    const cluster = {
      kind: 'local' as const,
      kubeconfigPath: plane.kubeconfigPath,
      settle: async () => {},
      close: async () => {},
    };
    const applied = await kubectl(cluster, ['apply', '-f', '-'], { input: crd });
    expect(applied.code).toBe(0);
    await kubectl(cluster, ['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'elsewhere' },
      }),
    });
  });
  afterAll(async () => {
    await plane?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('re-watches when the server closes the watch, and lists again after a 410', async () => {
    const watched = scopeInformer(plane.kubeconfigPath, ns);
    const create = (namespace: string, name: string) =>
      watched.api.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: 'scopes',
        body: scope(name),
      });
    await create(ns, 'first');
    await watched.informer.start();
    try {
      expect(watched.lists()).toBe(1);
      plane.dropWatches();
      await create(ns, 'after-close');
      await until(() => watched.events.includes('add after-close'));
      expect(watched.lists()).toBe(1); // it resumed the watch; no new list was needed

      // Changes elsewhere push the informer's resourceVersion out of the 4-event window ...
      for (let i = 0; i < 8; i++) await create('elsewhere', `other-${i}`);
      // ... so when its watch ends, resuming it answers 410 and the informer lists again.
      plane.dropWatches();
      await until(() => watched.lists() >= 2);
      await create(ns, 'after-relist');
      await until(() => watched.events.includes('add after-relist'));
      expect(names(watched.informer.list())).toEqual(['after-close', 'after-relist', 'first']);
      expect(watched.errors).toEqual([]);
    } finally {
      await watched.informer.stop();
    }
  });
});
