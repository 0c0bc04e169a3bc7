// What every reliability scenario shares: its size (the bounded form `npm test` runs, or the
// full form `npm run test:reliability` runs), and its report — what it tried and what it found —
// written where `npm run bench:report` collects it.
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/** `full` when NRN_RELIABILITY=full: the sizes the issue names; otherwise a few minutes in all. */
export const FULL = process.env.NRN_RELIABILITY === 'full';

/** The bounded or the full value of a size. */
export const size = <T>(bounded: T, full: T): T => (FULL ? full : bounded);

export interface ScenarioReport {
  /** Short and stable: the report's row. */
  readonly scenario: string;
  /** What was done to the system, with its sizes. */
  readonly tried: string;
  /** What was seen: the checks that held, and the figures. */
  readonly found: string;
  /** Figures worth a column of their own (p99 ms, RSS MiB...). */
  readonly figures?: Readonly<Record<string, number>>;
}

/**
 * Records a scenario's outcome: printed for a person reading the test output, and appended as
 * one JSON line to NRN_REPORT_FILE when `npm run bench:report` set it.
 */
export async function report(entry: ScenarioReport): Promise<void> {
  const line = JSON.stringify({ kind: 'reliability', form: FULL ? 'full' : 'bounded', ...entry });
  process.stdout.write(`reliability: ${entry.scenario}: ${entry.found}\n`);
  const file = process.env.NRN_REPORT_FILE;
  if (file === undefined || file === '') return;
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${line}\n`);
}
