// The pace of a class change: each scope reserves the next slot at the configured rate and goes
// ahead when it comes back at it; drift detection's containment rule.
import { describe, expect, it } from 'vitest';
import { contains } from '../../../src/controllers/provisioners/class/provisioner.js';
import { RolloutLimiter } from '../../../src/controllers/scope/rollout.js';

describe('RolloutLimiter', () => {
  it('lets one scope go at once, then one every 1/rate seconds, each keeping its slot', () => {
    let now = 1_000;
    const limiter = new RolloutLimiter(4, () => now);
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('b')).toBe(250);
    expect(limiter.take('c')).toBe(500);
    // Asked again before its slot: the same slot, not a new one.
    expect(limiter.take('b')).toBe(250);
    expect(limiter.waiting).toBe(2);
    now += 250;
    expect(limiter.take('b')).toBe(0);
    expect(limiter.take('c')).toBe(250);
    limiter.forget('c');
    expect(limiter.waiting).toBe(0);
    // Idle for long: the next goes at once again.
    now += 10_000;
    expect(limiter.take('d')).toBe(0);
  });

  it('refuses a rate that is not above zero', () => {
    expect(() => new RolloutLimiter(0)).toThrow(/above zero/);
    expect(() => new RolloutLimiter(Number.NaN)).toThrow(/above zero/);
  });
});

describe('contains (drift)', () => {
  it('holds when every field the manifest states has its value; lists item by item', () => {
    const live = {
      metadata: { name: 'q', labels: { a: '1', extra: 'x' }, uid: 'u' },
      spec: { hard: { cpu: '2' }, scopes: ['A', 'B'] },
      status: { used: {} },
    };
    expect(
      contains(live, { metadata: { name: 'q', labels: { a: '1' } }, spec: { hard: { cpu: '2' } } }),
    ).toBe(true);
    expect(contains(live, { spec: { hard: { cpu: '3' } } })).toBe(false);
    expect(contains(live, { spec: { scopes: ['A'] } })).toBe(false);
    expect(contains(live, { spec: { scopes: ['A', 'B'] } })).toBe(true);
    expect(contains(live, { spec: { missing: null } })).toBe(false);
    expect(contains(live, { metadata: { labels: 'x' } })).toBe(false);
  });
});
