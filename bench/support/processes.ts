// What the benchmarks share to run their servers: a TypeScript script in its own Node process
// (so no server shares the load generator's event loop), its stdout read line by line, and
// work spread over a fixed number of concurrent workers.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { compileSupportScript } from './compile.js';

export interface Lines {
  next(): Promise<string>;
}

/** What every support script prints starts so; V8's tracing flags also print to stdout. */
const PROTOCOL_LINE = /^[A-Z]+( |$)/;

/**
 * The process's protocol lines (see PROTOCOL_LINE), skipping whatever else reaches stdout. Read
 * as they come, not when asked for: a child tracing to stdout would block on a full pipe.
 */
export function linesOf(child: ChildProcess): Lines {
  const lines: string[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const input = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  input.on('line', (line) => {
    if (!PROTOCOL_LINE.test(line)) return;
    lines.push(line);
    wake?.();
  });
  input.on('close', () => {
    ended = true;
    wake?.();
  });
  return {
    next: async () => {
      while (lines.length === 0) {
        if (ended) throw new Error('the process ended');
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
      return lines.shift() as string;
    },
  };
}

export interface SupportOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly nodeArgs?: readonly string[];
  /** A pipe to the process's stdin (scripts that take commands there); ignored otherwise. */
  readonly stdin?: boolean;
}

const TSX = process.env.BENCH_TSX === '1';
/** BENCH_NODE_FLAGS (e.g. `--cpu-prof --cpu-prof-dir=DIR`) go to every server's node. */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');
const compiled = new Map<string, Promise<string>>();

/**
 * Runs bench/support/<name>.ts in its own Node process, stdout piped, stderr shown: compiled
 * to JavaScript first (once per run), as `node dist/...` runs the product, or through tsx when
 * BENCH_TSX=1.
 */
export async function support(
  name: string,
  args: readonly string[],
  options: SupportOptions = {},
): Promise<ChildProcess> {
  let script: string;
  const loader: string[] = [];
  if (TSX) {
    script = join(import.meta.dirname, `${name}.ts`);
    loader.push('--import', 'tsx');
  } else {
    let compiling = compiled.get(name);
    if (compiling === undefined) {
      compiling = compileSupportScript(name, `nrn-bench-${name}`);
      compiled.set(name, compiling);
    }
    script = await compiling;
  }
  return spawn(
    process.execPath,
    [...NODE_FLAGS, ...(options.nodeArgs ?? []), ...loader, script, ...args],
    {
      stdio: [options.stdin === true ? 'pipe' : 'ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...options.env },
    },
  );
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Runs `count` operations over `workers` concurrent workers. */
export async function concurrently(
  count: number,
  workers: number,
  op: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = next++; i < count; i = next++) await op(i);
    }),
  );
}
