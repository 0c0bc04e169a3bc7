// A failure stands while what caused it stands (ADR 0032): failureStands lifts a sticky
// failure whose cause moved on (the scope's class at another generation), never one of the
// scope's own making, and never a failure that is not sticky in the first place.
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../../src/api/index.js';
import { failureStands } from '../../../src/domain/lifecycle.js';

const STICKY = new Set(['ProvisionRefused', 'DuplicateSlug']);
const failed = (reason: string): { status: string; conditions: Condition[] } => ({
  status: 'failed',
  conditions: [
    {
      type: 'Stalled',
      status: 'True',
      reason,
      message: `refused: ${reason}`,
      lastTransitionTime: '2026-11-28T10:00:00Z',
      observedGeneration: 1,
    },
  ],
});

describe('failureStands', () => {
  it('a sticky failure stands while neither the spec nor its cause moved', () => {
    expect(failureStands(failed('ProvisionRefused'), false, STICKY)?.reason).toBe(
      'ProvisionRefused',
    );
    expect(failureStands(failed('ProvisionRefused'), false, STICKY, () => false)).toBeDefined();
  });

  it('a spec change or a moved cause lifts it; only the reasons said moved are lifted', () => {
    expect(failureStands(failed('ProvisionRefused'), true, STICKY)).toBeUndefined();
    const classMoved = (reason: string) => reason !== 'DuplicateSlug';
    expect(failureStands(failed('ProvisionRefused'), false, STICKY, classMoved)).toBeUndefined();
    expect(failureStands(failed('DuplicateSlug'), false, STICKY, classMoved)?.reason).toBe(
      'DuplicateSlug',
    );
  });

  it('nothing stands for an object not failed, or failed for a reason that is not sticky', () => {
    expect(failureStands({ ...failed('ProvisionRefused'), status: 'active' }, false, STICKY)).toBe(
      undefined,
    );
    expect(failureStands(failed('RenderFailed'), false, STICKY)).toBeUndefined();
    expect(failureStands({ status: 'failed' }, false, STICKY)).toBeUndefined();
  });
});
