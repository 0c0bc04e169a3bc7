// Every status the operator really wrote (test/fixtures/statuses/, recorded by
// test/integration/recorded-statuses.test.ts) read through kstatus (src/domain/kstatus.ts, a
// port of kubernetes-sigs/cli-utils pkg/kstatus/status: the rules Flux's health checks use)
// and through `kubectl wait --for=condition=Ready`'s rule: each case gets the answer a user
// expects, and a fixture without an expectation (or an expectation without a fixture) fails.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { computeKStatus, type KStatus, type KStatusObject } from '../../src/domain/kstatus.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/statuses');

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
}
interface Recorded extends KStatusObject {
  kind: string;
  metadata: { name: string; generation: number; deletionTimestamp?: string };
  status: { status?: string; observedGeneration?: number; conditions: Condition[] };
}

/**
 * What kstatus says of each case (cli-utils generic.go checkGenericProperties, in order: a
 * deletionTimestamp is Terminating; an observedGeneration behind metadata.generation is
 * InProgress; Reconciling=True is InProgress; Stalled=True is Failed; else, for a kind it has
 * no rule for, Current). `paused` is Current: kstatus has no notion of a pause (only
 * Reconciling and Stalled), and a paused scope whose spec is all applied is done; one holding
 * back a change keeps its old observedGeneration, so it is InProgress (see the integration
 * test). Argo CD shows it Suspended instead, from the annotation.
 */
const EXPECTED: Record<string, KStatus> = {
  'application/active': 'Current',
  'application/failed': 'Failed',
  'application/stale': 'InProgress',
  'scope/pending': 'InProgress',
  'scope/creating': 'InProgress',
  'scope/active': 'Current',
  'scope/updating': 'InProgress',
  'scope/failed': 'Failed',
  'scope/deleting': 'Terminating',
  'scope/paused': 'Current',
  'scope/stale': 'InProgress',
  'service/pending': 'InProgress',
  'service/creating': 'InProgress',
  'service/active': 'Current',
  'service/updating': 'InProgress',
  'service/failed': 'Failed',
  'service/deleting': 'Terminating',
  'service/stale': 'InProgress',
  'servicespecification/ready': 'Current',
  'servicespecification/failed': 'Failed',
  'servicespecification/stale': 'InProgress',
  'scopeclass/ready': 'Current',
  'scopeclass/stalled': 'Failed',
  'scopeclass/stale': 'InProgress',
};

function recorded(): [string, Recorded][] {
  return readdirSync(FIXTURES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((kind) =>
      readdirSync(join(FIXTURES, kind.name))
        .filter((file) => file.endsWith('.json'))
        .map((file): [string, Recorded] => [
          `${kind.name}/${file.slice(0, -'.json'.length)}`,
          JSON.parse(readFileSync(join(FIXTURES, kind.name, file), 'utf8')) as Recorded,
        ]),
    )
    .sort(([a], [b]) => (a < b ? -1 : 1));
}

const conditionOf = (object: Recorded, type: string) =>
  object.status.conditions.find((c) => c.type === type);

/**
 * Whether `kubectl wait --for=condition=Ready` is done with the object: kubectl's
 * pkg/cmd/wait/wait.go ConditionalWait.checkCondition — the first condition of that type (case
 * folded), not met while its observedGeneration (else status.observedGeneration) is below
 * metadata.generation, else met when its status is True.
 */
function kubectlWaitReady(object: Recorded): boolean {
  const ready = object.status.conditions.find((c) => c.type.toLowerCase() === 'ready');
  if (ready === undefined) return false;
  const observed = ready.observedGeneration ?? object.status.observedGeneration;
  if (observed !== undefined && observed < object.metadata.generation) return false;
  return ready.status.toLowerCase() === 'true';
}

const cases = recorded();

describe('kstatus over every recorded status', () => {
  it('every fixture has an expectation, and every expectation a fixture', () => {
    expect(cases.map(([name]) => name)).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(cases)('%s', (name, object) => {
    const result = computeKStatus(object);
    expect(result.status, `${name}: ${result.message}`).toBe(EXPECTED[name]);

    // The message is the one the condition that decided carries.
    const reconciling = conditionOf(object, 'Reconciling');
    const stalled = conditionOf(object, 'Stalled');
    if (result.status === 'Terminating') {
      expect(object.metadata.deletionTimestamp).toBeDefined();
      expect(result.message).toBe('Resource scheduled for deletion');
    } else if (object.status.observedGeneration !== object.metadata.generation) {
      expect(result.message).toBe(
        `${object.kind} generation is ${object.metadata.generation}, but latest observed generation is ${object.status.observedGeneration}`,
      );
    } else if (result.status === 'InProgress') {
      expect(reconciling?.status).toBe('True');
      expect(result.message).toBe(reconciling?.message);
    } else if (result.status === 'Failed') {
      expect(result.message).toBe(stalled?.message);
    }
    // kubectl wait's rule agrees: done exactly when kstatus says Current.
    expect(kubectlWaitReady(object)).toBe(result.status === 'Current');
  });

  it.each(cases)('%s: the three kstatus conditions, each at a generation', (_name, object) => {
    for (const type of ['Ready', 'Reconciling', 'Stalled']) {
      expect(object.status.conditions.filter((c) => c.type === type)).toHaveLength(1);
    }
    for (const condition of object.status.conditions) {
      expect(condition.observedGeneration, condition.type).toEqual(expect.any(Number));
      expect(condition.observedGeneration).toBeLessThanOrEqual(object.metadata.generation);
    }
    // At most one of the abnormal-true pair, and never with Ready.
    const on = (type: string) => conditionOf(object, type)?.status === 'True';
    expect([on('Ready'), on('Reconciling'), on('Stalled')].filter(Boolean)).toHaveLength(
      object.metadata.deletionTimestamp !== undefined && !on('Reconciling') && !on('Stalled')
        ? 0
        : 1,
    );
  });

  it.each(cases.filter(([, o]) => conditionOf(o, 'Stalled')?.status === 'True'))(
    "%s: Ready carries the failure's reason and message",
    (_name, object) => {
      const stalled = conditionOf(object, 'Stalled');
      expect(conditionOf(object, 'Ready')).toMatchObject({
        status: 'False',
        reason: stalled?.reason,
        message: stalled?.message,
      });
      expect(stalled?.message).not.toBe('');
    },
  );
});
