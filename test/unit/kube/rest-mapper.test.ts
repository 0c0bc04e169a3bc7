// The REST mapper's error and bound rules, with a scripted discovery transport: what a real
// API server rarely answers (403, 500) and what is hard to time against one (a caller
// aborting while others wait on the same request).
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../../src/kube/errors.js';
import { type DiscoveryTransport, RestMapper } from '../../../src/kube/rest-mapper.js';
import type { RequestOptions } from '../../../src/kube/transport.js';

const APPS = {
  kind: 'APIResourceList',
  groupVersion: 'apps/v1',
  resources: [
    { name: 'deployments', kind: 'Deployment', namespaced: true, verbs: ['get', 'list'] },
    { name: 'deployments/status', kind: 'Deployment', namespaced: true, verbs: ['get'] },
    { name: 'deployments/scale', kind: 'Scale', group: 'autoscaling', namespaced: true, verbs: [] },
  ],
};

/** Answers each path by the script; counts requests; `gate` holds answers until released. */
function scripted(answer: (path: string) => unknown) {
  const paths: string[] = [];
  let release: () => void = () => {};
  let gate: Promise<void> | undefined;
  const transport: DiscoveryTransport = {
    async request<T>(options: RequestOptions): Promise<T> {
      paths.push(options.path);
      if (gate !== undefined) await gate;
      const value = answer(options.path);
      if (value instanceof Error) throw value;
      return value as T;
    },
  };
  return {
    transport,
    paths,
    hold() {
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
    },
    release: () => release(),
  };
}

const notFound = () =>
  new KubeApiError(404, 'NotFound', 'the server could not find the requested resource');

describe('RestMapper rules', () => {
  it('skips subresources: deployments/status and deployments/scale are not kinds', async () => {
    const script = scripted(() => APPS);
    const mapper = new RestMapper(script.transport);
    expect(await mapper.mappingFor('apps/v1', 'Deployment')).toEqual({
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      plural: 'deployments',
      namespaced: true,
      verbs: ['get', 'list'],
    });
    expect(await mapper.mappingFor('apps/v1', 'Scale')).toBeUndefined();
  });

  it('says a 403 on discovery, naming the path, and does not cache it', async () => {
    let answer: unknown = new KubeApiError(
      403,
      'Forbidden',
      'forbidden: User "x" cannot get path "/apis/apps/v1"',
    );
    const script = scripted(() => answer);
    const mapper = new RestMapper(script.transport);
    const error = await mapper.mappingFor('apps/v1', 'Deployment').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).code).toBe(403);
    expect((error as KubeApiError).message).toMatch(
      /API discovery GET \/apis\/apps\/v1 failed \(403 Forbidden\)/,
    );
    answer = APPS;
    expect(await mapper.mappingFor('apps/v1', 'Deployment')).toBeDefined();
    expect(script.paths).toEqual(['/apis/apps/v1', '/apis/apps/v1']);
  });

  it('asks again after a transient error (500), which stays transient', async () => {
    let answer: unknown = new KubeApiError(500, 'InternalError', 'etcd is gone');
    const script = scripted(() => answer);
    const mapper = new RestMapper(script.transport);
    const error = await mapper.mappingFor('v1', 'Pod').catch((e: unknown) => e);
    expect((error as KubeApiError).transient).toBe(true);
    answer = { resources: [{ name: 'pods', kind: 'Pod', namespaced: true, verbs: [] }] };
    expect((await mapper.mappingFor('v1', 'Pod'))?.plural).toBe('pods');
    expect(script.paths).toEqual(['/api/v1', '/api/v1']);
  });

  it('keeps a 404 group-version as an answer until the interval passes', async () => {
    let now = 0;
    const script = scripted(notFound);
    const mapper = new RestMapper(script.transport, { refreshIntervalMs: 5_000, now: () => now });
    expect(await mapper.mappingFor('x.example.com/v1', 'X')).toBeUndefined();
    now = 4_999;
    expect(await mapper.mappingFor('x.example.com/v1', 'X')).toBeUndefined();
    expect(script.paths).toHaveLength(1);
    now = 5_000;
    expect(await mapper.mappingFor('x.example.com/v1', 'X')).toBeUndefined();
    expect(script.paths).toHaveLength(2);
  });

  it('lets one caller abort without failing the others waiting on the same request', async () => {
    const script = scripted(() => APPS);
    const mapper = new RestMapper(script.transport);
    script.hold();
    const controller = new AbortController();
    const aborted = mapper.mappingFor('apps/v1', 'Deployment', controller.signal);
    const waiting = mapper.mappingFor('apps/v1', 'Deployment');
    controller.abort(new Error('reconcile halted'));
    await expect(aborted).rejects.toThrow('reconcile halted');
    script.release();
    expect((await waiting)?.plural).toBe('deployments');
    expect(script.paths).toHaveLength(1);
  });

  it('keeps at most maxGroupVersions, dropping the least recently used', async () => {
    const script = scripted(notFound);
    const mapper = new RestMapper(script.transport, { maxGroupVersions: 2, now: () => 0 });
    await mapper.mappingFor('a.example.com/v1', 'A');
    await mapper.mappingFor('b.example.com/v1', 'B');
    await mapper.mappingFor('a.example.com/v1', 'A'); // a is now the most recent
    await mapper.mappingFor('c.example.com/v1', 'C'); // drops b
    await mapper.mappingFor('a.example.com/v1', 'A');
    expect(script.paths).toHaveLength(3);
    await mapper.mappingFor('b.example.com/v1', 'B');
    expect(script.paths).toHaveLength(4);
  });
});

describe('RestMapper maxAgeMs (ADR 0031)', () => {
  it('asks a hit again once its document is that old: a kind that went is seen', async () => {
    let served = true;
    let now = 0;
    const script = scripted(() => (served ? APPS : { ...APPS, resources: [] }));
    const mapper = new RestMapper(script.transport, { now: () => now });
    expect(await mapper.mappingFor('apps/v1', 'Deployment')).toBeDefined();
    served = false;
    now = 10_000;
    // Without a bound a hit is kept; with one it is asked again.
    expect(await mapper.mappingFor('apps/v1', 'Deployment')).toBeDefined();
    expect(
      await mapper.mappingFor('apps/v1', 'Deployment', undefined, { maxAgeMs: 20_000 }),
    ).toBeDefined();
    expect(script.paths).toHaveLength(1);
    expect(
      await mapper.mappingFor('apps/v1', 'Deployment', undefined, { maxAgeMs: 5_000 }),
    ).toBeUndefined();
    expect(script.paths).toEqual(['/apis/apps/v1', '/apis/apps/v1']);
  });
});
