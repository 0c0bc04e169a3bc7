// The retry schedule: doubling from the initial delay, capped, with jitter inside its bounds.
import { describe, expect, it } from 'vitest';
import { backoffDelay, between, DEFAULT_BACKOFF } from '../../../src/kube/backoff.js';

describe('backoffDelay', () => {
  const exact = { initialMs: 100, maxMs: 3_000, jitter: 0 };

  it('doubles from the initial delay up to the cap', () => {
    const delays = [0, 1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, exact));
    expect(delays).toEqual([100, 200, 400, 800, 1600, 3000, 3000]);
  });

  it('never exceeds the cap, even after very many attempts', () => {
    expect(backoffDelay(1_000, DEFAULT_BACKOFF)).toBeLessThanOrEqual(30_000);
    expect(backoffDelay(Number.MAX_SAFE_INTEGER, exact, () => 0)).toBe(3000);
  });

  it('draws each delay from [(1 - jitter) * d, d]', () => {
    const options = { initialMs: 1_000, maxMs: 30_000, jitter: 0.5 };
    expect(backoffDelay(2, options, () => 0)).toBe(4_000);
    expect(backoffDelay(2, options, () => 1)).toBe(2_000);
    for (let attempt = 0; attempt < 12; attempt++) {
      const ceiling = Math.min(30_000, 1_000 * 2 ** attempt);
      for (let i = 0; i < 200; i++) {
        const d = backoffDelay(attempt, options);
        expect(d).toBeGreaterThanOrEqual(ceiling / 2);
        expect(d).toBeLessThanOrEqual(ceiling);
      }
    }
  });

  it('spreads delays: jittered retries of many clients do not line up', () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoffDelay(5, DEFAULT_BACKOFF)));
    expect(delays.size).toBeGreaterThan(10);
  });

  it('treats a negative attempt as the first', () => {
    expect(backoffDelay(-3, exact)).toBe(100);
  });
});

describe('between', () => {
  it('stays within its bounds', () => {
    expect(between(240, 300, () => 0)).toBe(240);
    expect(between(240, 300, () => 1)).toBe(300);
    for (let i = 0; i < 100; i++) {
      const n = between(240, 300);
      expect(n).toBeGreaterThanOrEqual(240);
      expect(n).toBeLessThanOrEqual(300);
    }
  });
});
