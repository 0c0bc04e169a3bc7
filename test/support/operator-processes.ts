// The local control plane and operator replicas as separate `nrn-operator` processes, for tests
// that kill them: the control plane's ready line, the operator's JSON log lines (stderr).
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const CLI = join(import.meta.dirname, '../../src/cli.ts');

export interface ControlPlaneProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly kubeconfigPath: string;
  readonly exited: Promise<number | null>;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** `nrn-operator local --no-operator`: resolves at its ready line. */
export function startControlPlaneProcess(dataDir: string): Promise<ControlPlaneProcess> {
  return startLocalProcess(dataDir, ['--no-operator', '--no-facade']);
}

/**
 * `nrn-operator local --data-dir DIR --api-port 0 ARGS`: resolves at its ready line, with
 * every line it printed up to it (the facade's token line comes first), and what it has
 * logged so far (warnings and worse unless `logLevel` says otherwise) whenever asked.
 */
export async function startLocalProcess(
  dataDir: string,
  args: readonly string[],
  { logLevel = 'warn' }: { logLevel?: string } = {},
): Promise<
  ControlPlaneProcess & { readonly lines: readonly string[]; readonly stderr: () => string }
> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CLI, 'local', '--data-dir', dataDir, '--api-port', '0', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: logLevel } },
  );
  const exited = exitOf(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (/ready: .*\n/.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before ready: ${err}`)));
  });
  const lines = out.trim().split('\n');
  const ready = lines.find((line) => line.includes('ready:')) ?? '';
  const url = /at (https:\/\/[^;\s]+)/.exec(ready)?.[1];
  const kubeconfigPath = /KUBECONFIG=(\S+)/.exec(ready)?.[1];
  if (url === undefined || kubeconfigPath === undefined) throw new Error(`bad ready line ${ready}`);
  return { child, url, kubeconfigPath, exited, lines, stderr: () => err };
}

/** One pino line of an operator process. */
export interface LogLine {
  readonly level: number;
  readonly time: number;
  readonly msg: string;
  readonly identity?: string;
  readonly scope?: string;
  readonly id?: number;
  readonly [field: string]: unknown;
}

export interface OperatorProcess {
  readonly child: ChildProcess;
  readonly logs: readonly LogLine[];
  readonly exited: Promise<number | null>;
  /** The first log line that `match` accepts, waiting up to `timeoutMs` for it. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
}

/** Where `run` finds its cluster: a --kubeconfig flag, KUBECONFIG, or a pod's service account. */
export type KubeconfigSource =
  | { readonly flag: string }
  | { readonly environment: string }
  /** No kubeconfig (HOME without one): the in-cluster config of the service account files. */
  | { readonly inCluster: { readonly host: string; readonly port: string; readonly home: string } };

/**
 * `nrn-operator run --kubeconfig F [--namespace NS]` with info logs, parsed as they come;
 * without a namespace the operator must pick its default (not the kubeconfig's). A source
 * other than a path gives the cluster as KUBECONFIG or as a pod's environment instead.
 */
export function startOperatorProcess(
  source: string | KubeconfigSource,
  namespace?: string,
): OperatorProcess {
  const from = typeof source === 'string' ? { flag: source } : source;
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
  if ('environment' in from) env.KUBECONFIG = from.environment;
  if ('inCluster' in from) {
    delete env.KUBECONFIG;
    env.HOME = from.inCluster.home;
    env.KUBERNETES_SERVICE_HOST = from.inCluster.host;
    env.KUBERNETES_SERVICE_PORT = from.inCluster.port;
  }
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      CLI,
      'run',
      ...('flag' in from ? ['--kubeconfig', from.flag] : []),
      // Several replicas share this machine: each serves metrics and facade on free ports.
      '--metrics-port',
      '0',
      '--facade-port',
      '0',
      ...(namespace !== undefined ? ['--namespace', namespace] : []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env },
  );
  const logs: LogLine[] = [];
  const waiters = new Set<() => void>();
  let buffer = '';
  child.stderr?.on('data', (d: Buffer) => {
    buffer += d.toString();
    let i = buffer.indexOf('\n');
    while (i >= 0) {
      const text = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      i = buffer.indexOf('\n');
      try {
        logs.push(JSON.parse(text) as LogLine);
      } catch {
        // A crash prints a plain stack trace: keep it readable in the failure message.
        logs.push({ level: 60, time: Date.now(), msg: text });
      }
    }
    for (const wake of [...waiters]) wake();
  });
  const exited = exitOf(child);
  const waitForLog = (match: (line: LogLine) => boolean, timeoutMs = 30_000) =>
    new Promise<LogLine>((resolve, reject) => {
      const check = () => {
        const found = logs.find(match);
        if (found === undefined) return;
        cleanup();
        resolve(found);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no such log line in ${timeoutMs} ms; got:\n${tail(logs)}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  return { child, logs, exited, waitForLog };
}

function tail(logs: readonly LogLine[]): string {
  return logs
    .slice(-20)
    .map((l) => JSON.stringify(l).slice(0, 300))
    .join('\n');
}

/** SIGTERM (a clean stop) and its exit code; the code it had if it already ended. */
export async function terminate(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = exitOf(child);
  child.kill('SIGTERM');
  return exited;
}

/** SIGKILL (a crash: no drain, no lease release) and wait for the exit. */
export async function crash(target: {
  readonly child: ChildProcess;
  readonly exited: Promise<unknown>;
}): Promise<void> {
  if (target.child.exitCode === null && target.child.signalCode === null) {
    target.child.kill('SIGKILL');
  }
  await target.exited;
}
