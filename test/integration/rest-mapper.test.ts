// The REST mapper against "a cluster": built-in kinds and our CRDs found by discovery, with
// their plural and scope; subresources and unknown kinds are not kinds; a CRD installed
// after the first lookup is found once the refresh interval has passed (a clock the test
// moves), not before; concurrent lookups of one group-version share one request.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadClusterAccess } from '../../src/kube/config.js';
import { connect, type Kube, Namespaces } from '../../src/kube/index.js';
import { RestMapper } from '../../src/kube/rest-mapper.js';
import { Transport } from '../../src/kube/transport.js';
import { silentLogger } from '../../src/log.js';
import { kubectl, startCluster, type TestCluster, uniqueName } from '../support/cluster.js';

const log = silentLogger();

describe('RestMapper', () => {
  let cluster: TestCluster;
  let kube: Kube;

  beforeAll(async () => {
    cluster = await startCluster();
    const crds = join(import.meta.dirname, '../../crds');
    const applied = await kubectl(cluster, [
      'apply',
      '-f',
      join(crds, 'scopes.platform.nrn.dev.yaml'),
      '-f',
      join(crds, 'applications.platform.nrn.dev.yaml'),
    ]);
    expect(applied.code, applied.stderr).toBe(0);
    const established = await kubectl(cluster, [
      'wait',
      '--for=condition=Established',
      'crd/scopes.platform.nrn.dev',
      'crd/applications.platform.nrn.dev',
    ]);
    expect(established.code, established.stderr).toBe(0);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
  });
  afterAll(async () => {
    kube?.close();
    await cluster?.close();
  });

  it('maps built-in kinds to their resource, scope and verbs', async () => {
    const deployment = await kube.mapper.mappingFor('apps/v1', 'Deployment');
    expect(deployment).toMatchObject({
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      plural: 'deployments',
      namespaced: true,
    });
    expect(deployment?.verbs).toEqual(
      expect.arrayContaining(['create', 'patch', 'watch', 'delete']),
    );
    expect(await kube.mapper.mappingFor('autoscaling/v2', 'HorizontalPodAutoscaler')).toMatchObject(
      {
        group: 'autoscaling',
        plural: 'horizontalpodautoscalers',
        namespaced: true,
      },
    );
    expect(await kube.mapper.mappingFor('networking.k8s.io/v1', 'NetworkPolicy')).toMatchObject({
      plural: 'networkpolicies',
      namespaced: true,
    });
    expect(await kube.mapper.mappingFor('v1', 'Namespace')).toMatchObject({
      group: '',
      version: 'v1',
      plural: 'namespaces',
      namespaced: false,
    });
  });

  it('gives a ResourceType the typed client reads with', async () => {
    const namespaces = await kube.mapper.resourceFor('v1', 'Namespace');
    expect(namespaces).toBeDefined();
    if (namespaces === undefined) return;
    const name = uniqueName('mapper');
    await kube.resource(Namespaces).create({ metadata: { name } });
    const read = await kube.resource(namespaces).get({ name });
    expect(read.metadata.name).toBe(name);
  });

  it('maps our CRDs', async () => {
    expect(await kube.mapper.mappingFor('platform.nrn.dev/v1alpha1', 'Scope')).toMatchObject({
      group: 'platform.nrn.dev',
      version: 'v1alpha1',
      plural: 'scopes',
      namespaced: true,
    });
    expect(await kube.mapper.mappingFor('platform.nrn.dev/v1alpha1', 'Application')).toMatchObject({
      plural: 'applications',
    });
  });

  it('finds no kind for a subresource or an unknown kind, and asks again only after the interval', async () => {
    // apps/v1 lists deployments/scale with kind Scale: a subresource, not a kind of apps/v1.
    expect(await kube.mapper.mappingFor('apps/v1', 'Scale')).toBeUndefined();
    expect(await kube.mapper.mappingFor('apps/v1', 'Frobnicator')).toBeUndefined();
    expect(await kube.mapper.mappingFor('nope.example.com/v1', 'Thing')).toBeUndefined();
    const before = kube.mapper.stats.discoveryRequests;
    for (let i = 0; i < 20; i++) {
      expect(await kube.mapper.mappingFor('apps/v1', 'Frobnicator')).toBeUndefined();
      expect(await kube.mapper.mappingFor('nope.example.com/v1', 'Thing')).toBeUndefined();
    }
    expect(kube.mapper.stats.discoveryRequests).toBe(before);
  });

  it('shares one discovery request among concurrent lookups of a group-version', async () => {
    const mapperBefore = kube.mapper.stats.discoveryRequests;
    const requestsBefore = kube.stats.requests;
    const found = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        kube.mapper.mappingFor('batch/v1', i % 2 === 0 ? 'Job' : 'CronJob'),
      ),
    );
    expect(found.map((m) => m?.plural)).toEqual(
      Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? 'jobs' : 'cronjobs')),
    );
    expect(kube.mapper.stats.discoveryRequests - mapperBefore).toBe(1);
    expect(kube.stats.requests - requestsBefore).toBe(1);
  });

  it('finds a CRD installed after the first lookup once the refresh interval has passed', async () => {
    let now = 1_000_000;
    const transport = Transport.connect(await loadClusterAccess({ path: cluster.kubeconfigPath }), {
      log,
    });
    try {
      const mapper = new RestMapper(transport, { refreshIntervalMs: 5_000, now: () => now });
      // A group of its own (404) and a new kind in a group already served.
      expect(await mapper.mappingFor('widgets.example.com/v1', 'Widget')).toBeUndefined();
      expect(await mapper.mappingFor('platform.nrn.dev/v1alpha1', 'Gadget')).toBeUndefined();
      const widget = crd('widgets.example.com', 'Widget', 'widgets', 'Namespaced');
      const gadget = crd('platform.nrn.dev', 'Gadget', 'gadgets', 'Cluster', 'v1alpha1');
      const applied = await kubectl(cluster, ['apply', '-f', '-'], {
        // kubectl reads the input as a stream of JSON documents.
        input: `${widget}\n${gadget}`,
      });
      expect(applied.code, applied.stderr).toBe(0);
      const established = await kubectl(cluster, [
        'wait',
        '--for=condition=Established',
        'crd/widgets.widgets.example.com',
        'crd/gadgets.platform.nrn.dev',
      ]);
      expect(established.code, established.stderr).toBe(0);

      const requests = mapper.stats.discoveryRequests;
      now += 4_999;
      expect(await mapper.mappingFor('widgets.example.com/v1', 'Widget')).toBeUndefined();
      expect(await mapper.mappingFor('platform.nrn.dev/v1alpha1', 'Gadget')).toBeUndefined();
      expect(mapper.stats.discoveryRequests).toBe(requests);

      now += 1;
      expect(await mapper.mappingFor('widgets.example.com/v1', 'Widget')).toMatchObject({
        plural: 'widgets',
        namespaced: true,
      });
      expect(await mapper.mappingFor('platform.nrn.dev/v1alpha1', 'Gadget')).toMatchObject({
        plural: 'gadgets',
        namespaced: false,
      });
      expect(mapper.stats.discoveryRequests).toBe(requests + 2);
    } finally {
      transport.close();
    }
  });

  it('refuses a malformed apiVersion or kind, naming it', async () => {
    await expect(kube.mapper.mappingFor('a/b/c', 'Thing')).rejects.toThrow(/apiVersion "a\/b\/c"/);
    await expect(kube.mapper.mappingFor('apps/v1', 'deployments/status')).rejects.toThrow(
      /kind "deployments\/status"/,
    );
  });
});

function crd(
  group: string,
  kind: string,
  plural: string,
  scope: 'Namespaced' | 'Cluster',
  version = 'v1',
): string {
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope,
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
        },
      ],
    },
  });
}
