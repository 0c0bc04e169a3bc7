// The controller loop against a cluster: each object reconciled once per change and seeing
// its latest state, changes during a reconcile folded into one more, owned objects mapped to
// their owner's key, deletes seen as NotFound.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigMaps, isNotFound, type Kube, Secrets } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import { Controller, ownerKeys } from '../../src/runtime/index.js';
import { type ClusterWithNamespace, startClusterWithNamespace } from '../support/cluster.js';

const log = silentLogger();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

describe('runtime controller', () => {
  let fixture: ClusterWithNamespace;
  let kube: Kube;
  let ns: string;

  beforeAll(async () => {
    fixture = await startClusterWithNamespace('runtime-controller', log);
    ({ kube, ns } = fixture);
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('reconciles each object once per change, with its latest state, and owners by mapping', async () => {
    const configMaps = kube.resource(ConfigMaps);
    const secrets = kube.resource(Secrets);
    /** key -> the `v` each reconcile read ('gone' when the object was not found) */
    const seen = new Map<string, string[]>();
    let slowKey = '';
    let slowInFlight = 0;
    let maxSlowInFlight = 0;
    const record = (key: string, value: string) => seen.set(key, [...(seen.get(key) ?? []), value]);

    const configMapInformer = kube.informer(ConfigMaps, { namespace: ns, resyncMs: 0 });
    const secretInformer = kube.informer(Secrets, { namespace: ns, resyncMs: 0 });
    const controller = new Controller({
      name: 'configmaps',
      log,
      workers: 4,
      reconciler: async (key) => {
        const [namespace, name = ''] = key.split('/');
        const slow = key === slowKey;
        if (slow) {
          slowInFlight++;
          maxSlowInFlight = Math.max(maxSlowInFlight, slowInFlight);
        }
        try {
          // Re-read: the event that queued the key is gone, and may be stale.
          const object = await configMaps.get({ name, ...(namespace ? { namespace } : {}) });
          record(key, String((object.data as Record<string, string> | undefined)?.v));
          if (slow) await sleep(500);
        } catch (error) {
          if (!isNotFound(error)) throw error;
          record(key, 'gone');
        } finally {
          if (slow) slowInFlight--;
        }
      },
    })
      .watch(configMapInformer)
      .watch(secretInformer, ownerKeys('ConfigMap'));
    await controller.start();
    try {
      const total = () => [...seen.values()].reduce((n, values) => n + values.length, 0);
      const names = ['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4'];
      const created = new Map<string, string>();
      for (const name of names) {
        const object = await configMaps.create({
          metadata: { name, namespace: ns },
          data: { v: '1' },
        });
        created.set(name, object.metadata.uid ?? '');
      }
      await until(() => total() >= names.length);
      await sleep(300); // time for any duplicate to show
      for (const name of names) expect(seen.get(`${ns}/${name}`)).toEqual(['1']);

      // One change, one reconcile, and it reads the new state.
      await configMaps.patch({ namespace: ns, name: 'cm-0' }, { data: { v: '2' } });
      await until(() => (seen.get(`${ns}/cm-0`)?.length ?? 0) >= 2);
      await sleep(200);
      expect(seen.get(`${ns}/cm-0`)).toEqual(['1', '2']);

      // Changes made while the key's reconcile runs fold into a single further reconcile,
      // never a second one in parallel, and it ends on the latest state.
      slowKey = `${ns}/cm-3`;
      await configMaps.patch({ namespace: ns, name: 'cm-3' }, { data: { v: '2' } });
      await until(() => slowInFlight === 1);
      for (const v of ['3', '4', '5', '6']) {
        await configMaps.patch({ namespace: ns, name: 'cm-3' }, { data: { v } });
      }
      await until(() => seen.get(`${ns}/cm-3`)?.at(-1) === '6');
      await sleep(400);
      expect(seen.get(`${ns}/cm-3`)).toEqual(['1', '2', '6']);
      expect(maxSlowInFlight).toBe(1);

      // An owned Secret's change reconciles its owner.
      await secrets.create({
        metadata: {
          name: 'owned',
          namespace: ns,
          ownerReferences: [
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              name: 'cm-2',
              uid: created.get('cm-2') ?? '',
              controller: true,
            },
          ],
        },
        stringData: { x: 'y' },
      });
      await until(() => (seen.get(`${ns}/cm-2`)?.length ?? 0) >= 2);
      expect(seen.get(`${ns}/cm-2`)).toEqual(['1', '1']);
      expect(seen.has(`${ns}/owned`)).toBe(false);

      // A delete is reconciled too: the reconciler finds the object gone.
      await configMaps.delete({ namespace: ns, name: 'cm-1' });
      await until(() => seen.get(`${ns}/cm-1`)?.at(-1) === 'gone');
      await sleep(200);
      expect(seen.get(`${ns}/cm-1`)).toEqual(['1', 'gone']);
      expect(seen.get(`${ns}/cm-4`)).toEqual(['1']);
    } finally {
      await Promise.all([configMapInformer.stop(), secretInformer.stop()]);
      expect(await controller.stop(2_000)).toBe(true);
    }
  });

  it('many workers passing the run signal to their requests at once: no listener-leak warning', async () => {
    // Each request listens to the run's signal while it is in flight; 24 at once is no leak,
    // and Node must not say "possible EventTarget memory leak" in the operator's logs.
    const configMaps = kube.resource(ConfigMaps);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    const informer = kube.informer(ConfigMaps, {
      namespace: ns,
      resyncMs: 0,
      labelSelector: 'burst=yes',
    });
    let inFlight = 0;
    let most = 0;
    let done = 0;
    const controller = new Controller({
      name: 'burst',
      log,
      workers: 24,
      reconciler: async (key, { signal }) => {
        const [namespace, name = ''] = key.split('/');
        inFlight++;
        most = Math.max(most, inFlight);
        try {
          for (let i = 0; i < 3; i++) {
            await configMaps.get({ name, ...(namespace ? { namespace } : {}) }, { signal });
          }
        } finally {
          inFlight--;
          done++;
        }
      },
    }).watch(informer);
    try {
      await Promise.all(
        Array.from({ length: 48 }, (_, i) =>
          configMaps.create({
            metadata: { name: `burst-${i}`, namespace: ns, labels: { burst: 'yes' } },
          }),
        ),
      );
      await informer.start();
      await controller.start();
      await until(() => done >= 48);
      expect(most).toBeGreaterThan(10);
      expect(warnings.filter((w) => w.includes('MaxListeners'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await informer.stop();
      expect(await controller.stop(2_000)).toBe(true);
    }
  });
});
