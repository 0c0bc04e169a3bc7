// What the benchmarks share to run their servers: a TypeScript script in its own Node process
// (so no server shares the load generator's event loop), its stdout read line by line, and
// work spread over a fixed number of concurrent workers.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export interface Lines {
  next(): Promise<string>;
}

export function linesOf(child: ChildProcess): Lines {
  const iterator = (async function* () {
    let buffer = '';
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      buffer += chunk.toString();
      let i = buffer.indexOf('\n');
      while (i >= 0) {
        yield buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        i = buffer.indexOf('\n');
      }
    }
  })();
  return {
    next: async () => {
      const { value, done } = await iterator.next();
      if (done === true) throw new Error('the process ended');
      return value;
    },
  };
}

/** `node --import tsx bench/<script> args` with stdout piped, stderr shown. */
export function node(
  script: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; nodeArgs?: string[] } = {},
): ChildProcess {
  return spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      '--import',
      'tsx',
      join(import.meta.dirname, '..', script),
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...options.env } },
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
