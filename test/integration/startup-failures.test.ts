// `local` and `run` failing to start, as a user meets it: one line on stderr naming the flag or
// path to change, exit 1, and nothing left running (the process ends; its data dir opens again).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kubectlAt } from '../support/cluster.js';
import {
  startControlPlaneProcess,
  startLocalProcess,
  terminate,
} from '../support/operator-processes.js';

const CLI = join(import.meta.dirname, '../../src/cli.ts');
const TSX = join(import.meta.dirname, '../../node_modules/tsx/dist/loader.mjs');
/** Long enough for a start and its rollback; a process still up after it has hung. */
const EXIT_WITHIN_MS = 20_000;

const root = await mkdtemp(join(tmpdir(), 'nrn-startup-failures-'));
afterAll(() => rm(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, `data-${++dirs}`);

interface Failure {
  readonly code: number | null;
  readonly killed: boolean;
  readonly stderr: string;
  /** stderr's last non-empty line: the one meant for the user. */
  readonly line: string;
}

/** The real command, killed (and reported so) if it has not exited in EXIT_WITHIN_MS. */
function cli(args: readonly string[]): Promise<Failure> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', TSX, CLI, ...args],
      {
        cwd: root,
        env: { ...process.env, LOG_LEVEL: 'info' },
        timeout: EXIT_WITHIN_MS,
        killSignal: 'SIGKILL',
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, _stdout, stderr) => {
        const lines = stderr.split('\n').filter((l) => l.trim() !== '');
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
          killed: error?.killed === true,
          stderr,
          line: lines.at(-1) ?? '',
        });
      },
    );
  });
}

/** A port on 127.0.0.1 that something else listens on, for as long as the test needs it. */
async function occupiedPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, server };
}

function expectOneLine(failure: Failure, command: string, expected: string): void {
  expect(failure.killed, `still running after ${EXIT_WITHIN_MS} ms:\n${failure.stderr}`).toBe(
    false,
  );
  expect(failure.code).toBe(1);
  expect(failure.line).toBe(`nrn-operator ${command}: ${expected}`);
  expect(failure.stderr).not.toMatch(/^\s+at /m);
}

/** The failed process released its data dir: another `local` opens it and gets ready. */
async function expectDataDirFree(dataDir: string): Promise<void> {
  const next = await startLocalProcess(dataDir, ['--no-operator', '--no-facade']);
  expect(await terminate(next.child)).toBe(0);
}

describe('nrn-operator local: a start-up failure', () => {
  it.each(['--api-port', '--metrics-port', '--facade-port'])(
    'with %s taken names it in one line, exits 1 and leaves nothing running',
    async (flag) => {
      const { port, server } = await occupiedPort();
      const dataDir = freshDir();
      try {
        const failure = await cli([
          'local',
          '--data-dir',
          dataDir,
          '--api-port',
          '0',
          '--facade-port',
          '0',
          // Served only with the operator, which `local` runs by default.
          '--metrics-port',
          '0',
          flag,
          String(port),
        ]);
        expectOneLine(
          failure,
          'local',
          `${flag} ${port} is in use (EADDRINUSE); pick another or 0 for any free port`,
        );
      } finally {
        server.close();
      }
      await expectDataDirFree(dataDir);
    },
    60_000,
  );

  it('with --data-dir held by another local names the dir and its holder', async () => {
    const dataDir = freshDir();
    const first = await startControlPlaneProcess(dataDir);
    try {
      const failure = await cli(['local', '--data-dir', dataDir, '--api-port', '0']);
      expectOneLine(
        failure,
        'local',
        `--data-dir ${dataDir} is in use by process ${first.child.pid}`,
      );
    } finally {
      await terminate(first.child);
    }
    await expectDataDirFree(dataDir);
  }, 60_000);

  it('with --facade-tls-cert unreadable names the file', async () => {
    const dataDir = freshDir();
    const cert = join(root, 'missing-cert.pem');
    // The key is there (its content is never reached): only the certificate can be named.
    const key = join(root, 'key.pem');
    await writeFile(key, 'not read as a key\n');
    const failure = await cli([
      'local',
      '--data-dir',
      dataDir,
      '--api-port',
      '0',
      '--facade-port',
      '0',
      '--facade-tls-cert',
      cert,
      '--facade-tls-key',
      key,
    ]);
    expectOneLine(failure, 'local', `--facade-tls-cert ${cert} is unreadable (ENOENT)`);
    await expectDataDirFree(dataDir);
  }, 60_000);
});

describe('nrn-operator run: a start-up failure', () => {
  it('with --kubeconfig unreadable names the file', async () => {
    const kubeconfig = join(root, 'missing-kubeconfig');
    const failure = await cli(['run', '--kubeconfig', kubeconfig, '--metrics-port', '0']);
    expect(failure.killed, failure.stderr).toBe(false);
    expect(failure.code).toBe(1);
    expect(failure.line).toMatch(
      new RegExp(`^nrn-operator run: --kubeconfig ${kubeconfig} cannot be used: .*ENOENT`),
    );
    expect(failure.stderr).not.toMatch(/^\s+at /m);
  }, 60_000);

  it.each(['--metrics-port', '--facade-port'])(
    'with %s taken names it in one line, exits 1 and leaves nothing running',
    async (flag) => {
      // With its own operator, which applies the CRDs that the facade's informers list.
      const plane = await startLocalProcess(freshDir(), ['--no-facade']);
      // Served, not only stored: else the facade waits for its informers before it even listens.
      const established = await kubectlAt(plane.kubeconfigPath)([
        'wait',
        '--for=condition=Established',
        'crd',
        '--all',
        '--timeout=30s',
      ]);
      expect(established.code, established.stderr).toBe(0);
      const { port, server } = await occupiedPort();
      try {
        const failure = await cli([
          'run',
          '--kubeconfig',
          plane.kubeconfigPath,
          '--metrics-port',
          '0',
          '--facade-port',
          '0',
          flag,
          String(port),
        ]);
        expectOneLine(
          failure,
          'run',
          `${flag} ${port} is in use (EADDRINUSE); pick another or 0 for any free port`,
        );
      } finally {
        server.close();
        await terminate(plane.child);
      }
    },
    60_000,
  );
});
