// `npm run bench:report`: every benchmark and the full reliability suite, one after another on
// this machine, then one table — each benchmark figure beside what it is measured against in
// the same run (a ratio), each reliability scenario with what it tried and what it found.
// `--write FILE` also writes that table as Markdown with the date and the machine
// (docs/benchmarks.md holds a real run's). `--only a,b` picks benchmarks (local-api, reconcile,
// facade); `--no-reliability` leaves the suite out; `--bounded` runs its bounded form.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Figure } from './support/report.js';

const BENCHES = ['local-api', 'reconcile', 'facade'] as const;
/** The heading from which a file written with --write is kept by hand (docs/benchmarks.md). */
const HAND_KEPT_FROM = '## Notes on this run';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    'no-reliability': { type: 'boolean', default: false },
    bounded: { type: 'boolean', default: false },
    write: { type: 'string' },
  },
});

interface Scenario {
  readonly scenario: string;
  readonly form: string;
  readonly tried: string;
  readonly found: string;
  readonly figures?: Record<string, number>;
}

const root = join(import.meta.dirname, '..');

/** Runs a command with its output passed through; resolves to its exit code. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit', env });
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'nrn-bench-report-'));
  const file = join(dir, 'figures.jsonl');
  const env = { ...process.env, NRN_REPORT_FILE: file };
  const only = values.only?.split(',').map((s) => s.trim());
  const failures: string[] = [];
  const started = new Date();
  try {
    for (const bench of BENCHES) {
      if (only !== undefined && !only.includes(bench)) continue;
      process.stdout.write(`\n=== bench ${bench} ===\n`);
      const code = await run(process.execPath, ['--import', 'tsx', `bench/${bench}.ts`], env);
      if (code !== 0) failures.push(`bench ${bench} exited ${code}`);
    }
    if (!values['no-reliability']) {
      process.stdout.write('\n=== reliability suite ===\n');
      const code = await run(
        process.execPath,
        [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--project', 'reliability'],
        { ...env, NRN_RELIABILITY: values.bounded ? '' : 'full' },
      );
      if (code !== 0) failures.push(`reliability suite exited ${code}`);
    }
    const lines = (await readFile(file, 'utf8').catch(() => ''))
      .split('\n')
      .filter((l) => l !== '')
      .map(
        (l) => JSON.parse(l) as ({ kind: 'bench' } & Figure) | ({ kind: 'reliability' } & Scenario),
      );
    const figures = lines.filter((l): l is { kind: 'bench' } & Figure => l.kind === 'bench');
    const scenarios = lines.filter(
      (l): l is { kind: 'reliability' } & Scenario => l.kind === 'reliability',
    );
    const table = render(figures, scenarios, failures, started);
    process.stdout.write(`\n${table}\n`);
    if (values.write !== undefined) {
      // What the file keeps by hand, from its notes on, stays: only the report above is new.
      const kept = await readFile(values.write, 'utf8').catch(() => '');
      const notes = kept.indexOf(`\n${HAND_KEPT_FROM}`);
      await writeFile(values.write, `${table}\n${notes >= 0 ? kept.slice(notes) : ''}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  if (failures.length > 0) process.exitCode = 1;
}

const number = (v: number) =>
  Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);

/** The figure as a share of what it is held against: over 100% is better, whichever way. */
function ratio(f: Figure): string {
  const a = f.against;
  if (a === undefined || a.value === 0 || f.value === 0) return '';
  const share = a.higherIsBetter ? f.value / a.value : a.value / f.value;
  return `${(share * 100).toFixed(0)}%`;
}

function render(
  figures: readonly Figure[],
  scenarios: readonly Scenario[],
  failures: readonly string[],
  started: Date,
): string {
  const cpu = cpus();
  const out: string[] = [
    '# Figures',
    '',
    `Run of \`npm run bench:report\` on ${started.toISOString().slice(0, 10)}: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${platform()} ${release()}, Node ${process.version}. A shared machine: each figure is read against what it is measured against in the same run.`,
    '',
    '## Benchmarks',
    '',
    '| benchmark | figure | value | against | its value | ratio |',
    '|---|---|---|---|---|---|',
  ];
  for (const f of figures) {
    const a = f.against;
    out.push(
      `| ${f.bench} | ${f.name} | ${number(f.value)} ${f.unit} | ${a === undefined ? '—' : a.kind === 'goal' ? 'goal' : `${a.name} (ceiling, same run)`} | ${a ? `${number(a.value)} ${f.unit}` : ''} | ${ratio(f)} |`,
    );
  }
  out.push(
    '',
    'Ratio: the figure as a share of what it is held against, oriented so that over 100% is',
    'better than that (for latencies and memory: the bound divided by the figure).',
    '',
    '## Reliability scenarios',
    '',
    '| scenario | form | tried | found |',
    '|---|---|---|---|',
  );
  for (const s of scenarios) {
    const extra = Object.entries(s.figures ?? {})
      .map(([k, v]) => `${k} ${number(v)}`)
      .join(', ');
    const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
    out.push(
      `| ${s.scenario} | ${s.form} | ${cell(s.tried)} | ${cell(s.found)}${extra ? ` (${extra})` : ''} |`,
    );
  }
  if (failures.length > 0) out.push('', '## Failures', '', ...failures.map((f) => `- ${f}`));
  return out.join('\n');
}

await main();
