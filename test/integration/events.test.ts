// The Event recorder against a real API: record() returns at once and the Events follow in
// the background, those of one object in the order they were recorded; while reconciles wait,
// few are written at once, and all as soon as they stop waiting, the backlog grows or someone
// flushes; past the queue's bound Events are dropped (never the caller), and a write the API
// refuses stops nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_WRITERS, EVENT_WRITERS_UNDER_LOAD } from '../../src/domain/concurrency.js';
import { EventRecorder } from '../../src/domain/event-recorder.js';
import { Events, type Kube, type KubeObject } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import {
  type ClusterWithNamespace,
  startClusterWithNamespace,
  uniqueName,
} from '../support/cluster.js';

const log = silentLogger();

describe('event recorder', () => {
  let fixture: ClusterWithNamespace;
  let kube: Kube;
  let ns: string;

  beforeAll(async () => {
    fixture = await startClusterWithNamespace('events', log);
    ({ kube, ns } = fixture);
  });
  afterAll(() => fixture?.close());

  const about = (name: string, namespace = ns): KubeObject => ({
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'Scope',
    metadata: { name, namespace, uid: `uid-${namespace}-${name}` },
  });
  const reasonsByObject = async () => {
    const items = (await kube.resource(Events).list({ namespace: ns })).items as unknown as {
      involvedObject: { name: string };
      reason: string;
      metadata: { creationTimestamp: string; resourceVersion: string };
    }[];
    const by = new Map<string, string[]>();
    // In the order the API stored them: resourceVersion grows with every write.
    for (const e of items.sort(
      (a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion),
    )) {
      by.set(e.involvedObject.name, [...(by.get(e.involvedObject.name) ?? []), e.reason]);
    }
    return by;
  };

  it('returns at once, and writes the Events of one object in the order recorded', async () => {
    const recorder = new EventRecorder(kube, 'test', 'test-instance', log);
    const objects = ['a', 'b', 'c', 'd', 'e'];
    const steps = Array.from({ length: 12 }, (_, i) => `Step${i}`);
    for (const step of steps) {
      for (const name of objects) recorder.record(about(name), 'Normal', step, `${name} ${step}`);
    }
    await recorder.flush();
    const by = await reasonsByObject();
    for (const name of objects) expect(by.get(name), name).toEqual(steps);
  });

  it('writes the object, reason and time of the transition as recorded', async () => {
    const recorder = new EventRecorder(kube, 'test', 'test-instance', log);
    const before = Math.floor(Date.now() / 1000) * 1000;
    recorder.record(about('shape'), 'Warning', 'Shaped', 'as recorded');
    const after = Date.now();
    await recorder.flush();
    const items = (await kube.resource(Events).list({ namespace: ns })).items as unknown as {
      metadata: { name: string };
      involvedObject: Record<string, unknown>;
      firstTimestamp: string;
      lastTimestamp: string;
    }[];
    const event = items.find((e) => e.involvedObject.name === 'shape');
    expect(event).toMatchObject({
      metadata: { name: expect.stringMatching(/^shape\.[0-9a-f]+$/) },
      involvedObject: {
        apiVersion: 'platform.nrn.dev/v1alpha1',
        kind: 'Scope',
        name: 'shape',
        namespace: ns,
        uid: `uid-${ns}-shape`,
      },
      type: 'Warning',
      reason: 'Shaped',
      message: 'as recorded',
      source: { component: 'test' },
      reportingComponent: 'test',
      reportingInstance: 'test-instance',
      count: 1,
    });
    const at = Date.parse(event?.firstTimestamp ?? '');
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
    expect(event?.lastTimestamp).toBe(event?.firstTimestamp);
  });

  it('writes few at once while reconciles wait, and all once they stop waiting', async () => {
    const recorder = new EventRecorder(kube, 'test', 'test-instance', log);
    let busy = true;
    recorder.yieldTo(() => busy);
    for (let i = 0; i < 100; i++) {
      recorder.record(about(`yield-${i}`), 'Normal', 'Yield', String(i));
    }
    /** The most writes seen in flight at once, polled until `done()`. */
    const mostInFlight = async (done: () => boolean) => {
      let most = 0;
      while (!done()) {
        most = Math.max(most, recorder.inFlight);
        await new Promise((resolve) => setImmediate(resolve));
      }
      return most;
    };
    expect(await mostInFlight(() => recorder.backlog <= 80)).toBe(EVENT_WRITERS_UNDER_LOAD);
    busy = false;
    expect(await mostInFlight(() => recorder.backlog === 0)).toBeGreaterThan(
      EVENT_WRITERS_UNDER_LOAD,
    );
    const by = await reasonsByObject();
    expect([...by].filter(([name]) => name.startsWith('yield-'))).toHaveLength(100);
  });

  it('writes at full speed, busy or not, while someone waits for the queue', async () => {
    const recorder = new EventRecorder(kube, 'test', 'test-instance', log);
    recorder.yieldTo(() => true);
    for (let i = 0; i < 100; i++) {
      recorder.record(about(`flush-${i}`), 'Normal', 'Flush', String(i));
    }
    expect(recorder.inFlight).toBe(EVENT_WRITERS_UNDER_LOAD);
    const flushed = recorder.flush(60_000);
    expect(recorder.inFlight).toBe(EVENT_WRITERS);
    await flushed;
    const by = await reasonsByObject();
    expect([...by].filter(([name]) => name.startsWith('flush-'))).toHaveLength(100);
  });

  it('writes at full speed, busy or not, once the backlog passes its mark', async () => {
    const recorder = new EventRecorder(kube, 'test', 'test-instance', log, { yieldingUpTo: 50 });
    recorder.yieldTo(() => true);
    for (let i = 0; i < 100; i++) {
      recorder.record(about(`backlog-${i}`), 'Normal', 'Backlog', String(i));
    }
    expect(recorder.inFlight).toBe(EVENT_WRITERS);
    await recorder.flush(60_000);
    const by = await reasonsByObject();
    expect([...by].filter(([name]) => name.startsWith('backlog-'))).toHaveLength(100);
  });

  it('drops what comes past the bound, and a refused write stops nothing', async () => {
    const capacity = 200;
    const recorder = new EventRecorder(kube, 'test', 'test-instance', log, { capacity });
    // First in the queue: refused by the API (no such namespace), logged, and the rest follow.
    recorder.record(about('lost', uniqueName('missing')), 'Warning', 'Refused', 'no namespace');
    // Recorded in one go, before any write can finish: the queue fills, then drops.
    for (let i = 0; i < capacity + 10; i++) {
      recorder.record(about(`bulk-${i % 50}`), 'Normal', 'Bulk', String(i));
    }
    expect(recorder.backlog).toBe(capacity);
    await recorder.flush(60_000);
    const by = await reasonsByObject();
    const bulk = [...by].filter(([name]) => name.startsWith('bulk-'));
    expect(bulk.reduce((n, [, reasons]) => n + reasons.length, 0)).toBe(capacity - 1);
  }, 90_000);
});
