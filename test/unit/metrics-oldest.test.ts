// nrn_resources_oldest_seconds as a scrape computes it from the informer caches: per kind and
// status, the oldest object's time in its state (the lifecycle condition that is True, since
// its last transition; a delete since its deletionTimestamp; no conditions yet, since its
// creation), leaving out a paused scope, whose stillness a person chose.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/kube/index.js';
import { OperatorMetrics } from '../../src/observability.js';

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

function object(
  kind: string,
  name: string,
  status: Record<string, unknown> | undefined,
  metadata: Record<string, string> = {},
): KubeObject {
  return {
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind,
    metadata: { name, namespace: 'team-a', creationTimestamp: ago(10_000), ...metadata },
    ...(status !== undefined ? { status } : {}),
  };
}

const condition = (type: string, status: string, seconds: number) => ({
  type,
  status,
  reason: 'Test',
  message: '',
  lastTransitionTime: ago(seconds),
});

async function oldest(objects: KubeObject[]): Promise<Record<string, number>> {
  const metrics = new OperatorMetrics();
  metrics.observe({
    controllers: [],
    caches: [{ list: () => objects }],
    stats: { requests: 0, connections: 0 },
    events: { backlog: 0, dropped: 0 },
    ready: () => true,
    leading: () => true,
  });
  const metric = await metrics.registry.getSingleMetric('nrn_resources_oldest_seconds')?.get();
  return Object.fromEntries(
    // Down to whole tens: the scrape comes a moment after the timestamps were made.
    (metric?.values ?? []).map((v) => [
      `${v.labels.kind}/${v.labels.status}`,
      Math.floor(v.value / 10) * 10,
    ]),
  );
}

describe('nrn_resources_oldest_seconds', () => {
  it('takes the oldest of each kind and status, from the condition that is True', async () => {
    const creating = (name: string, seconds: number) =>
      object('Scope', name, {
        status: 'creating',
        conditions: [
          condition('Ready', 'False', 5),
          condition('Reconciling', 'True', seconds),
          condition('Stalled', 'False', 5),
        ],
      });
    expect(
      await oldest([
        creating('a', 100),
        creating('b', 4000),
        object('Scope', 'c', {
          status: 'failed',
          conditions: [condition('Ready', 'False', 9), condition('Stalled', 'True', 300)],
        }),
        object('Service', 'd', {
          status: 'active',
          conditions: [condition('Ready', 'True', 60), condition('Reconciling', 'False', 60)],
        }),
      ]),
    ).toEqual({ 'Scope/creating': 4000, 'Scope/failed': 300, 'Service/active': 60 });
  });

  it('counts a delete from its deletionTimestamp, and an object without conditions from its creation', async () => {
    expect(
      await oldest([
        object(
          'Service',
          'e',
          { status: 'deleting', conditions: [condition('Reconciling', 'True', 5000)] },
          { deletionTimestamp: ago(120) },
        ),
        object('Service', 'f', undefined),
      ]),
    ).toEqual({ 'Service/deleting': 120, 'Service/unknown': 10_000 });
  });

  it('leaves out a paused scope', async () => {
    expect(
      await oldest([
        object('Scope', 'g', {
          status: 'creating',
          conditions: [condition('Reconciling', 'True', 9000), condition('Paused', 'True', 8000)],
        }),
      ]),
    ).toEqual({});
  });
});
