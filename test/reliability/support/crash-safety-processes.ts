// The crash-safety scenario's processes: a control plane with the facade (`nrn-operator local
// --no-operator`) that can be restarted on the same data directory and ports, and operators
// (`nrn-operator run --no-leader-election --no-facade`) started and killed one after another;
// every child is tracked from its spawn, so that a test that fails or times out leaves none.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { sleep } from '../../support/wait.js';

const CLI = join(import.meta.dirname, '../../../src/cli.ts');

/** Every child spawned here that has not exited yet. */
const living = new Set<ChildProcess>();
/** Set by killAll: a loop of the test still running after it must not leave a new child. */
let closed = false;

function track(child: ChildProcess): Promise<number | null> {
  living.add(child);
  if (closed) child.kill('SIGKILL');
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      living.delete(child);
      resolve(code);
    }),
  );
}

/** SIGKILLs every child still running and waits for their exits (afterAll). */
export async function killAll(): Promise<void> {
  closed = true;
  await Promise.all(
    [...living].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/** Keeps the last lines of a stream for failure messages: a whole run's log is too much. */
class Tail {
  private readonly lines: string[] = [];
  private partial = '';
  constructor(private readonly keep: number) {}
  push(chunk: string, onLine?: (line: string) => void): void {
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) {
      onLine?.(line);
      this.lines.push(line);
      if (this.lines.length > this.keep) this.lines.shift();
    }
  }
  text(): string {
    return [...this.lines, this.partial].join('\n').trim();
  }
}

export interface PlaneProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  readonly apiPort: number;
  readonly facadeUrl: string;
  readonly kubeconfigPath: string;
}

/**
 * `nrn-operator local --no-operator` on `dataDir`, serving the facade: on free ports the first
 * time, on `ports` when restarted (the operators' kubeconfig and the creators' URL stay
 * right). Resolves at the ready line; rejects, after killing it, when it exits or is not
 * ready within `timeoutMs`.
 */
export async function startPlane(
  dataDir: string,
  ports: { readonly api: number; readonly facade: number } = { api: 0, facade: 0 },
  timeoutMs = 60_000,
): Promise<PlaneProcess> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      CLI,
      'local',
      '--no-operator',
      '--data-dir',
      dataDir,
      '--api-port',
      String(ports.api),
      '--facade-port',
      String(ports.facade),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } },
  );
  const exited = track(child);
  const err = new Tail(40);
  child.stderr?.on('data', (d: Buffer) => err.push(d.toString()));
  let out = '';
  const ready = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`control plane not ready in ${timeoutMs} ms: ${err.text()}`));
    }, timeoutMs);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = /^.*ready: .*$/m.exec(out)?.[0];
      if (line === undefined) return;
      clearTimeout(timer);
      resolve(line);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`control plane exited with ${code} before ready: ${err.text()}`));
    });
  });
  const api = /at https:\/\/127\.0\.0\.1:(\d+)/.exec(ready)?.[1];
  const facadeUrl = /facade at (http:\/\/\S+?)[;\s]/.exec(ready)?.[1];
  const kubeconfigPath = /KUBECONFIG=(\S+)/.exec(ready)?.[1];
  if (api === undefined || facadeUrl === undefined || kubeconfigPath === undefined) {
    child.kill('SIGKILL');
    throw new Error(`unexpected ready line: ${ready}`);
  }
  return { child, exited, apiPort: Number(api), facadeUrl, kubeconfigPath };
}

export interface OperatorChild {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  /** Resolves at its 'operator started' line (informers listed, controllers running). */
  readonly started: Promise<void>;
  /** Its last log lines. */
  tail(): string;
}

/**
 * `nrn-operator run --no-leader-election --no-facade`: the only operator at any time (the one
 * before it is dead when it starts), so no Lease has to expire before it works.
 */
export function startOperator(kubeconfigPath: string): OperatorChild {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      CLI,
      'run',
      '--kubeconfig',
      kubeconfigPath,
      '--no-leader-election',
      '--no-facade',
      '--metrics-port',
      '0',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LOG_LEVEL: 'info' } },
  );
  const exited = track(child);
  const err = new Tail(30);
  let onStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    onStarted = resolve;
  });
  child.stderr?.on('data', (d: Buffer) =>
    err.push(d.toString(), (line) => {
      if (line.includes('"msg":"operator started"')) onStarted();
    }),
  );
  return { child, exited, started, tail: () => err.text() };
}

export { crash } from '../../support/operator-processes.js';

/**
 * Starts the plane again on the same data directory and ports after a crash (its exit already
 * seen). Only a port some other socket of this shared machine took meanwhile is tried again;
 * a data directory still "in use" after its holder exited is a bug, and fails at once.
 */
export async function restartPlane(
  dataDir: string,
  ports: { readonly api: number; readonly facade: number },
): Promise<{ plane: PlaneProcess; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return { plane: await startPlane(dataDir, ports), attempts: attempt };
    } catch (error) {
      const transient = /EADDRINUSE/.test(String(error));
      if (!transient || attempt >= 10) throw error;
      await sleep(500);
    }
  }
}
