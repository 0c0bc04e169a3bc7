// The ScopeClass check against the cluster (ADR 0031) when the cluster cannot answer: discovery
// or the OpenAPI document failing refuses the class saying what failed (ClusterUnavailable),
// never admits it unchecked. A scripted transport stands for an API server that fails, which
// the local plane does not do on demand; the answering cases run through kubectl against the
// local plane (test/integration/scope-class-against-cluster.test.ts).
import { describe, expect, it } from 'vitest';
import { checkClassAgainstCluster } from '../../src/admission/class-against-cluster.js';
import { ScopeClassSpec } from '../../src/api/index.js';
import { KubeApiError, KubeTransportError } from '../../src/kube/errors.js';
import { OpenApiSchemas } from '../../src/kube/openapi-schemas.js';
import { RestMapper } from '../../src/kube/rest-mapper.js';
import type { RequestOptions } from '../../src/kube/transport.js';

const CORE = {
  kind: 'APIResourceList',
  groupVersion: 'v1',
  resources: [{ name: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: ['get'] }],
};

const cluster = (answer: (path: string) => unknown) => {
  const transport = {
    async request<T>(options: RequestOptions): Promise<T> {
      const value = answer(options.path);
      if (value instanceof Error) throw value;
      return value as T;
    },
  };
  return { mapper: new RestMapper(transport), openapi: new OpenApiSchemas(transport) };
};

const spec = ScopeClassSpec.parse({
  scope_type: 'web_pool',
  resources: [
    {
      name: 'settings',
      manifest: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } },
    },
  ],
});

describe('a class checked against a cluster that cannot answer', () => {
  it('refuses when discovery fails, naming the group-version and the path', async () => {
    const verdict = await checkClassAgainstCluster(
      spec,
      cluster(() => new KubeTransportError('connect ECONNREFUSED', 'ECONNREFUSED')),
    );
    expect(verdict).toEqual({
      allowed: false,
      reason: 'ClusterUnavailable',
      message:
        'cannot read API discovery for v1 (spec.resources[0].manifest): connect ECONNREFUSED',
    });
  });

  it('refuses when the OpenAPI document cannot be read', async () => {
    const verdict = await checkClassAgainstCluster(
      spec,
      cluster((path) =>
        path === '/api/v1' ? CORE : new KubeApiError(503, 'ServiceUnavailable', 'try later'),
      ),
    );
    expect(verdict).toMatchObject({
      allowed: false,
      reason: 'ClusterUnavailable',
      message:
        'cannot read the OpenAPI schema of v1 from the API server (spec.resources[0].manifest): try later',
    });
  });

  it('admits a served kind whose document publishes no schema for it (the API server judges at apply)', async () => {
    const verdict = await checkClassAgainstCluster(
      spec,
      cluster((path) => (path === '/api/v1' ? CORE : { openapi: '3.0.0', components: {} })),
    );
    expect(verdict).toEqual({ allowed: true });
  });

  it('refuses a malformed apiVersion as the class’s error, not the cluster’s', async () => {
    const bad = ScopeClassSpec.parse({
      scope_type: 'web_pool',
      resources: [
        {
          name: 'x',
          manifest: { apiVersion: 'a/b/c', kind: 'ConfigMap', metadata: { name: 'x' } },
        },
      ],
    });
    const verdict = await checkClassAgainstCluster(
      bad,
      cluster(() => CORE),
    );
    expect(verdict).toMatchObject({
      allowed: false,
      reason: 'KindNotServed',
      message: expect.stringMatching(
        /^spec\.resources\[0\]\.manifest: apiVersion "a\/b\/c" is not/,
      ),
    });
  });
});
