// A benchmark's figures, as `npm run bench:report` collects them: each figure with what it is
// measured against in the same run (a ceiling this machine allows, or the goal when no ceiling
// is measured), appended as a JSON line to NRN_REPORT_FILE when that is set.
import { appendFileSync } from 'node:fs';

export interface Figure {
  /** The benchmark: local-api, reconcile, facade, facade-catalog. */
  readonly bench: string;
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** What the figure is held against, measured in the same run where one exists. */
  readonly against?: {
    readonly name: string;
    readonly value: number;
    /** `ceiling`: measured here (a ratio of it is what counts); `goal`: a fixed bound. */
    readonly kind: 'ceiling' | 'goal';
    /** Whether more is better (rates) or less (latencies, memory). */
    readonly higherIsBetter: boolean;
  };
}

/** Records a figure for bench:report; a no-op when the benchmark runs on its own. */
export function emit(figure: Figure): void {
  const file = process.env.NRN_REPORT_FILE;
  if (file === undefined || file === '') return;
  appendFileSync(file, `${JSON.stringify({ kind: 'bench', ...figure })}\n`);
}
