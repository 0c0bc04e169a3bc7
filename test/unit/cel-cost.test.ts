// The meter every CEL evaluation runs under stops one that would hold the event loop, whatever
// units it was allowed: nested loops given a budget they would take minutes to spend.
import { describe, expect, it } from 'vitest';
import { compileCel, metered } from '../../src/cel/index.js';

describe('the CEL meter', () => {
  it('ends an evaluation that runs past its time, however many units remain', () => {
    const compiled = compileCel(
      'self.all(a, self.all(b, self.all(c, self.all(d, a + b + c + d >= 0))))',
      ['self'],
    );
    if (!compiled.ok) throw new Error(compiled.errors.join('; '));
    const list = Array.from({ length: 200 }, (_, i) => i);
    // 200^4 = 1.6e9 steps: minutes of work, within a budget of 1e12 units.
    const run = metered(1e12, () => compiled.program({ self: list }));
    expect(run.exceeded).toBe(true);
    expect(run.cost).toBeLessThan(1e12);
  });
});
