// Scope ids from the counter in the API: allocators on separate connections (as two operator
// processes would be) racing on one counter never hand out one id twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdAllocator } from '../../src/domain/scopes/id-allocator.js';
import { ConfigMaps, connect, type Kube, Namespaces } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import { startCluster, type TestCluster, uniqueName } from '../support/cluster.js';

const log = silentLogger();

describe('scope id allocation', () => {
  let cluster: TestCluster;
  let kubes: Kube[] = [];
  let ns: string;

  beforeAll(async () => {
    cluster = await startCluster();
    kubes = await Promise.all(
      [0, 1, 2].map(() => connect({ kubeconfigPath: cluster.kubeconfigPath, log })),
    );
    ns = uniqueName('operator-ids');
    await kubes[0]?.resource(Namespaces).create({ metadata: { name: ns } });
  });
  afterAll(async () => {
    if (cluster !== undefined && cluster.kind !== 'local') {
      await kubes[0]?.resource(Namespaces).delete({ name: ns });
    }
    for (const kube of kubes) kube.close();
    await cluster?.close();
  });

  it('three allocators racing from an absent counter hand out each id exactly once', async () => {
    const perAllocator = 30;
    const allocators = kubes.map((kube) => new IdAllocator(kube, { namespace: ns }));
    // Several in flight per allocator too, so reads of one version really collide.
    const runs = allocators.flatMap((allocator) =>
      [0, 1, 2].map(async () => {
        const got: number[] = [];
        for (let i = 0; i < perAllocator / 3; i++) got.push(await allocator.allocate());
        return got;
      }),
    );
    const ids = (await Promise.all(runs)).flat();
    const total = perAllocator * allocators.length;
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
    // No id lost either when nothing failed: every id below the counter was handed out once,
    // or is still held in reserve by exactly one allocator.
    const reserved = allocators.flatMap((allocator) => allocator.reserved());
    const counter = await (kubes[0] as Kube)
      .resource(ConfigMaps)
      .get({ namespace: ns, name: 'nrn-scope-ids' });
    const next = Number((counter.data as Record<string, string>).next);
    expect([...ids, ...reserved].sort((a, b) => a - b)).toEqual(
      Array.from({ length: next - 1 }, (_, i) => i + 1),
    );
  });

  it('reserves ahead under a burst, from the demand of the last second, and nothing when idle', async () => {
    const kube = kubes[0] as Kube;
    const allocator = new IdAllocator(kube, { namespace: ns, name: 'burst' });
    const first = await allocator.allocate();
    expect(allocator.reserved()).toEqual([]);
    const before = kube.stats.requests;
    // 200 callers one after another, as a burst of scopes would ask: swaps grow with the
    // demand, so far fewer than one per id.
    const ids: number[] = [];
    for (let i = 0; i < 200; i++) ids.push(await allocator.allocate());
    const swaps = kube.stats.requests - before;
    expect(new Set([first, ...ids]).size).toBe(201);
    expect(swaps).toBeLessThan(40);
    // Once the burst is a second old, its spare ids are dropped (a gap) and the next caller
    // reserves only what it asks for.
    await new Promise((r) => setTimeout(r, 2_100));
    const counter = async () =>
      Number(
        (
          (await kube.resource(ConfigMaps).get({ namespace: ns, name: 'burst' })).data as Record<
            string,
            string
          >
        ).next,
      );
    const next = await counter();
    expect(await allocator.allocate()).toBe(next);
    expect(allocator.reserved()).toEqual([]);
    expect(await counter()).toBe(next + 1);
  });

  it('callers of one allocator asking together share a swap, which reserves just their ids', async () => {
    const kube = kubes[1] as Kube;
    const allocator = new IdAllocator(kube, { namespace: ns, name: 'shared' });
    const before = kube.stats.requests;
    // The first caller's swap is in flight (GET 404, create) while the other 19 queue up: the
    // second swap is one PUT on the counter the first left, for all 19.
    const ids = await Promise.all(Array.from({ length: 20 }, () => allocator.allocate()));
    expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(kube.stats.requests - before).toBe(3);
    const counter = await kube.resource(ConfigMaps).get({ namespace: ns, name: 'shared' });
    expect((counter.data as Record<string, string>).next).toBe('21');

    // Someone else moves the counter: the remembered one is refused (409), read again, no
    // id handed out twice.
    await new IdAllocator(kubes[2] as Kube, { namespace: ns, name: 'shared' }).allocate();
    expect(await allocator.allocate()).toBe(22);
  });

  it('refuses to allocate from a counter broken by hand rather than restart at 1', async () => {
    const kube = kubes[0] as Kube;
    await kube.resource(ConfigMaps).create({
      metadata: { name: 'broken', namespace: ns },
      data: { next: 'x' },
    });
    const allocator = new IdAllocator(kube, { namespace: ns, name: 'broken' });
    await expect(allocator.allocate()).rejects.toMatchObject({
      code: 'SCOPE_ID_ALLOCATION_FAILED',
    });
  });
});
