// kstatus conditions and status writes: lastTransitionTime moves only when a condition's status
// does, the three conditions follow the health, and equal statuses compare equal.
import { describe, expect, it } from 'vitest';
import {
  canonical,
  canonicallyEqual,
  healthConditions,
  messagesFor,
  setCondition,
} from '../../../src/domain/status.js';

const t0 = new Date('2025-01-01T00:00:00.123Z');
const t1 = new Date('2025-01-01T00:05:00Z');

describe('conditions', () => {
  it('keeps lastTransitionTime while the status stays, moves it when the status changes', () => {
    const first = setCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'A', message: 'a' },
      t0,
    );
    expect(first[0]?.lastTransitionTime).toBe('2025-01-01T00:00:00Z');
    const same = setCondition(
      first,
      { type: 'Ready', status: 'False', reason: 'B', message: 'b' },
      t1,
    );
    expect(same[0]).toMatchObject({ reason: 'B', lastTransitionTime: '2025-01-01T00:00:00Z' });
    const flipped = setCondition(
      same,
      { type: 'Ready', status: 'True', reason: 'C', message: 'c' },
      t1,
    );
    expect(flipped[0]?.lastTransitionTime).toBe('2025-01-01T00:05:00Z');
    expect(flipped).toHaveLength(1);
  });

  it('sets Ready, Reconciling and Stalled from the health, with observedGeneration', () => {
    const byType = (list: ReturnType<typeof healthConditions>) =>
      Object.fromEntries(list.map((c) => [c.type, c.status]));
    const reconciling = healthConditions(
      undefined,
      { health: 'reconciling', reason: 'Provisioning', message: 'm' },
      3,
      t0,
    );
    expect(byType(reconciling)).toEqual({ Ready: 'False', Reconciling: 'True', Stalled: 'False' });
    expect(reconciling.every((c) => c.observedGeneration === 3)).toBe(true);
    const stalled = healthConditions(
      reconciling,
      { health: 'stalled', reason: 'Bad', message: 'm' },
      3,
      t1,
    );
    expect(byType(stalled)).toEqual({ Ready: 'False', Reconciling: 'False', Stalled: 'True' });
    // Ready stayed False: its transition time did not move.
    expect(stalled.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe(
      '2025-01-01T00:00:00Z',
    );
    const ready = healthConditions(
      stalled,
      { health: 'ready', reason: 'Provisioned', message: 'ok' },
      4,
      t1,
    );
    expect(byType(ready)).toEqual({ Ready: 'True', Reconciling: 'False', Stalled: 'False' });
  });

  it('recomputing an unchanged status gives an equal status, so no write happens', () => {
    const report = { health: 'ready', reason: 'Provisioned', message: 'ok' } as const;
    const a = {
      status: 'active',
      conditions: healthConditions(undefined, report, 1, t0),
      messages: messagesFor(report),
    };
    const b = {
      messages: messagesFor(report),
      conditions: healthConditions(a.conditions, report, 1, t1),
      status: 'active',
    };
    expect(canonical(a)).toBe(canonical(b));
    expect(canonicallyEqual(a, b)).toBe(true);
  });

  it('canonicallyEqual says what comparing canonical forms says', () => {
    const values: unknown[] = [
      {},
      { a: 1 },
      { a: 1, b: undefined },
      { b: undefined, a: 1 },
      { a: '1' },
      { a: null },
      { a: [1, 2] },
      { a: [2, 1] },
      { a: [1, undefined] },
      { a: [1, null] },
      // biome-ignore lint/suspicious/noSparseArray: a hole is written as null
      { a: [1, , 3] },
      { a: [1, null, 3] },
      { a: { x: 1, y: [{ z: true }] } },
      { a: { y: [{ z: true }], x: 1 } },
      { a: { y: [{ z: false }], x: 1 } },
      { a: new Date(0) },
      { a: new Date(0).toISOString() },
      { a: Number.NaN },
      { a: () => 1 },
      [],
      [{}],
      '',
      0,
      null,
      undefined,
    ];
    for (const x of values) {
      for (const y of values) expect(canonicallyEqual(x, y)).toBe(canonical(x) === canonical(y));
    }
  });

  it('messages take the spec shape, at error level when stalled', () => {
    expect(messagesFor({ health: 'stalled', reason: 'X', message: 'no' })).toEqual([
      { level: 'error', message: 'no' },
    ]);
    expect(messagesFor({ health: 'ready', reason: 'X', message: 'yes' })).toEqual([
      { level: 'info', message: 'yes' },
    ]);
  });
});
