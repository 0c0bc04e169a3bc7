// How `nrn-operator local` logs, as a person at a terminal and a log collector each see it:
// coloured lines when stderr is a terminal (a pseudo-terminal made by util-linux `script`),
// JSON lines on a pipe, and --log-format / --log-level (or LOG_FORMAT / LOG_LEVEL) over both.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const CLI = join(import.meta.dirname, '../../src/cli.ts');
const TSX = join(import.meta.dirname, '../../node_modules/tsx/dist/loader.mjs');
const SCRIPT = ['/usr/bin/script', '/bin/script'].find((path) => existsSync(path));

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

// Without NRN_*, LOG_* or colour settings of ours; `local` alone, on a free port, in its own dir.
const inherited = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) =>
      !k.startsWith('NRN_') && !['LOG_LEVEL', 'LOG_FORMAT', 'NO_COLOR', 'FORCE_COLOR'].includes(k),
  ),
);

/**
 * Starts `local --no-operator --no-facade` (on a terminal when `tty`), waits for its ready
 * line, stops it, and gives what it wrote: on a terminal stdout and stderr are one stream.
 */
async function logsOf(
  args: readonly string[],
  options: { tty: boolean; env?: Record<string, string> },
): Promise<{ stderr: string; all: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'nrn-cli-logs-'));
  dirs.push(dir);
  const argv = [
    process.execPath,
    '--import',
    TSX,
    CLI,
    'local',
    '--no-operator',
    '--no-facade',
    '--api-port',
    '0',
    '--data-dir',
    dir,
    ...args,
  ];
  const quoted = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const [command, ...rest] =
    options.tty && SCRIPT !== undefined ? [SCRIPT, '-qec', quoted, '/dev/null'] : argv;
  const child = spawn(command as string, rest, {
    cwd: dir,
    env: { ...inherited, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so that the whole group (script and node) is stopped.
    detached: true,
  });
  let all = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    all += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    all += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await Promise.race([
    new Promise<boolean>((resolve) => {
      const check = () => {
        if (/ready: API server at/.test(all)) resolve(true);
      };
      child.stdout.on('data', check);
      child.stderr.on('data', check);
    }),
    exited.then(() => false),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 30_000)),
  ]);
  if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
  await exited;
  expect(ready, `no ready line; it wrote:\n${all}`).toBe(true);
  return { stderr, all };
}

const JSON_LINE =
  /^\{"level":30,"time":\d+,"name":"nrn-operator",.*"msg":"local control plane ready"\}\r?$/m;
// [HH:MM:ss.l] INFO: <message> {fields}
const PRETTY_LINE = /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: local control plane ready \{"url":"https:/m;
const ESC = String.fromCharCode(27);
const COLOURED = new RegExp(`${ESC}\\[32mINFO${ESC}\\[39m`);
const COLOUR_CODE = new RegExp(`${ESC}\\[\\d+m`, 'g');

describe('logs of nrn-operator local', () => {
  it('on a pipe: JSON lines', async () => {
    const { stderr } = await logsOf([], { tty: false });
    expect(stderr).toMatch(JSON_LINE);
    expect(stderr).not.toMatch(COLOURED);
  });

  it.skipIf(SCRIPT === undefined)('on a terminal: coloured lines, one per record', async () => {
    const { all } = await logsOf([], { tty: true });
    expect(all).toMatch(COLOURED);
    // Without the colour codes, the line a person reads.
    expect(all.replace(COLOUR_CODE, '').replaceAll('\r', '')).toMatch(PRETTY_LINE);
    expect(all).not.toMatch(JSON_LINE);
  });

  it.skipIf(SCRIPT === undefined)('--log-format json on a terminal: JSON', async () => {
    const { all } = await logsOf(['--log-format', 'json'], { tty: true });
    expect(all.replaceAll('\r', '')).toMatch(JSON_LINE);
    expect(all).not.toMatch(COLOURED);
  });

  it('LOG_FORMAT=pretty on a pipe: the lines, without colour', async () => {
    const { stderr } = await logsOf([], { tty: false, env: { LOG_FORMAT: 'pretty' } });
    expect(stderr).toMatch(PRETTY_LINE);
    expect(stderr).not.toMatch(COLOURED);
  });

  it('--log-level warn leaves out info; LOG_LEVEL does the same, and the flag wins over it', async () => {
    const quiet = await logsOf(['--log-level', 'warn'], { tty: false });
    expect(quiet.stderr).not.toMatch(/"level":30/);
    const fromEnv = await logsOf([], { tty: false, env: { LOG_LEVEL: 'warn' } });
    expect(fromEnv.stderr).not.toMatch(/"level":30/);
    const flagWins = await logsOf(['--log-level', 'info'], {
      tty: false,
      env: { LOG_LEVEL: 'warn' },
    });
    expect(flagWins.stderr).toMatch(JSON_LINE);
  });
});
