// The `nrn-operator` command line as a user meets it: each command's --help (flags, env vars,
// defaults), one-line refusals with exit 2, environment variables standing in for flags, and
// the README's configuration table kept equal to the schemas.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS, configurationTable } from '../../src/command-line.js';
import { DEFAULT_BASE_DOMAIN } from '../../src/domain/names.js';
import { DEFAULT_FACADE_PORT } from '../../src/facade/index.js';
import { DEFAULT_METRICS_PORT } from '../../src/observability.js';
import { DEFAULT_OPERATOR_NAMESPACE } from '../../src/operator.js';
import { DEFAULT_HEAP_GROWTH_PERCENT } from '../../src/runtime/index.js';
import { terminate } from '../support/operator-processes.js';

const CLI = join(import.meta.dirname, '../../src/cli.ts');
const TSX = join(import.meta.dirname, '../../node_modules/tsx/dist/loader.mjs');
// Run elsewhere than the repository: a command line wrongly taken as valid would start
// `local` with its default data dir (.data/local) here, not in the working tree.
const cwd = await mkdtemp(join(tmpdir(), 'nrn-cli-cwd-'));
afterAll(() => rm(cwd, { recursive: true, force: true }));

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The real command, through tsx, with `env` added to (or, undefined, taken from) ours. */
function cli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', TSX, CLI, ...args],
      { cwd, env: { ...process.env, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

// Our own NRN_* would change what the commands below take as their defaults.
const clean = Object.fromEntries(
  Object.keys(process.env)
    .filter((k) => k.startsWith('NRN_') || ['POD_NAMESPACE', 'LOG_LEVEL', 'LOG_FORMAT'].includes(k))
    .map((k) => [k, undefined]),
);

describe('nrn-operator --help', () => {
  it('lists the commands, exit 0', async () => {
    const { code, stdout } = await cli(['--help'], clean);
    expect(code).toBe(0);
    for (const command of ['local', 'run', 'crds', 'generate crds', 'version']) {
      expect(stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    }
  });

  it("local --help shows local's own flags with their env var and default, exit 0", async () => {
    const { code, stdout } = await cli(['local', '--help'], clean);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: nrn-operator local \[options\]/);
    expect(stdout).toMatch(/--api-port PORT .*\n\s+\(default 6443; env NRN_API_PORT\)/);
    expect(stdout).toMatch(/--host HOST .*\n\s+\(default 127\.0\.0\.1; env NRN_API_HOST\)/);
    expect(stdout).toMatch(/--data-dir DIR .*\n\s+\(default \.data\/local; env NRN_DATA_DIR\)/);
    expect(stdout).toMatch(/--facade-auth MODE .*\n\s+\(default static; env NRN_FACADE_AUTH\)/);
    expect(stdout).toContain('--no-operator');
    expect(stdout).not.toContain('--base-domain');
    expect(stdout).not.toContain('--kubeconfig');
  });

  it("run --help shows run's own flags with their env var and default, exit 0", async () => {
    const { code, stdout } = await cli(['run', '--help'], clean);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: nrn-operator run \[options\]/);
    expect(stdout).toMatch(/--namespace NS .*\n\s+\(default nrn-system; env POD_NAMESPACE\)/);
    expect(stdout).toMatch(/--metrics-port PORT .*\n\s+\(default 8081; env NRN_METRICS_PORT\)/);
    expect(stdout).toMatch(/--facade-auth MODE .*\n\s+\(default kubernetes; env NRN_FACADE_AUTH\)/);
    expect(stdout).toMatch(/--kubeconfig FILE .*\n\s+\(default KUBECONFIG, .*; env KUBECONFIG\)/);
    expect(stdout).toContain('--no-leader-election');
    expect(stdout).not.toContain('--data-dir');
    expect(stdout).not.toContain('--api-port');
  });

  it('generate crds --help shows --out and its default', async () => {
    const { code, stdout } = await cli(['generate', 'crds', '--help'], clean);
    expect(code).toBe(0);
    expect(stdout).toMatch(/--out DIR .*\n\s+\(default crds\)/);
  });
});

describe('nrn-operator refuses a bad command line', () => {
  const cases: ReadonlyArray<readonly [string[], RegExp, string]> = [
    [['local', '--bogus'], /^nrn-operator local: unknown flag --bogus$/, 'local'],
    [['local', '--base-domain', 'x'], /--base-domain is a flag of run, not of local$/, 'local'],
    [['run', '--data-dir', 'x'], /--data-dir is a flag of local, not of run$/, 'run'],
    [['local', '--api-port'], /^nrn-operator local: --api-port needs a value/, 'local'],
    [['local', '--api-port', '--no-facade'], /--api-port needs a value/, 'local'],
    [['local', '--api-port', 'abc'], /^nrn-operator local: --api-port "abc": not a port/, 'local'],
    [['run', '--metrics-port', '65536'], /--metrics-port "65536": not a port/, 'run'],
    [['run', '--facade-auth', 'open'], /--facade-auth "open": not one of kubernetes/, 'run'],
    [['run', '--no-facade=yes'], /--no-facade takes no value$/, 'run'],
    [
      ['run', '--heap-growth', '301'],
      /--heap-growth "301": not a whole percent from 0 to 300$/,
      'run',
    ],
    [
      ['local', '--heap-growth', '-5'],
      /--heap-growth "-5": not a whole percent from 0 to 300$/,
      'local',
    ],
    [
      ['local', '--log-level', 'loud'],
      /--log-level "loud": not one of trace, debug, info/,
      'local',
    ],
    [['run', '--log-format', 'xml'], /--log-format "xml": not one of auto, json, pretty$/, 'run'],
    [['local', 'extra'], /unexpected argument "extra"$/, 'local'],
    [['nonsense'], /^nrn-operator: unknown command "nonsense"$/, ''],
  ];
  for (const [args, line, command] of cases) {
    it(`${args.join(' ')}: one line naming it, the usage line, exit 2`, async () => {
      const { code, stdout, stderr } = await cli(args, clean);
      expect(code).toBe(2);
      expect(stdout).toBe('');
      const lines = stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(line);
      expect(lines[1]).toBe(
        command === ''
          ? 'usage: nrn-operator <command> [options]; see nrn-operator --help'
          : `usage: nrn-operator ${command} [options]; see nrn-operator ${command} --help`,
      );
    });
  }

  it('a bad value from the environment names the variable and its flag', async () => {
    const { code, stderr } = await cli(['local', '--no-operator'], {
      ...clean,
      NRN_API_PORT: 'abc',
    });
    expect(code).toBe(2);
    expect(stderr.split('\n')[0]).toBe(
      'nrn-operator local: NRN_API_PORT="abc" (for --api-port): not a port number, 0-65535',
    );
  });
});

describe('environment variables set flags', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children) await terminate(child);
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('--help shows the value a variable sets; a flag given wins over it', async () => {
    const { stdout } = await cli(['local', '--help'], { ...clean, NRN_FACADE_PORT: '9191' });
    expect(stdout).toMatch(
      /--facade-port PORT .*\n\s+\(default 8080; env NRN_FACADE_PORT, now 9191\)/,
    );
    // Were the variable read despite the flag, the bad value would be refused.
    const { code } = await cli(['local', '--api-port', '0', '--help'], {
      ...clean,
      NRN_API_PORT: 'abc',
    });
    expect(code).toBe(0);
  });

  it('local takes its data dir and port from NRN_DATA_DIR and NRN_API_PORT', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nrn-cli-env-'));
    dirs.push(dir);
    const child = spawn(
      process.execPath,
      ['--import', TSX, CLI, 'local', '--no-operator', '--no-facade'],
      {
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...clean, NRN_DATA_DIR: dir, NRN_API_PORT: '0', LOG_LEVEL: 'warn' },
      },
    );
    children.push(child);
    const ready = await new Promise<string>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
      });
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const line = /^.*ready: .*$/m.exec(out)?.[0];
        if (line !== undefined) resolve(line);
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code} before ready: ${err}`)));
    });
    expect(ready).toContain(`KUBECONFIG=${join(dir, 'kubeconfig')}`);
    // Port 0 took a free port, not 6443.
    expect(ready).toMatch(/at https:\/\/127\.0\.0\.1:(?!6443\b)\d+/);
    expect(await terminate(child)).toBe(0);
  });
});

describe('the defaults', () => {
  it("are the ones the code falls back to when embedded (src/main's callers)", () => {
    const run = COMMANDS.run.schema.parse({});
    expect(run['facade-port']).toBe(DEFAULT_FACADE_PORT);
    expect(run['metrics-port']).toBe(DEFAULT_METRICS_PORT);
    expect(run.namespace).toBe(DEFAULT_OPERATOR_NAMESPACE);
    expect(run['base-domain']).toBeUndefined();
    expect(configurationTable()).toContain(`| ${DEFAULT_BASE_DOMAIN} |`);
    expect(COMMANDS.local.schema.parse({})['facade-port']).toBe(DEFAULT_FACADE_PORT);
    expect(run['heap-growth']).toBe(DEFAULT_HEAP_GROWTH_PERCENT);
    expect(COMMANDS.local.schema.parse({})['heap-growth']).toBe(DEFAULT_HEAP_GROWTH_PERCENT);
  });
});

describe('the README', () => {
  it('has the configuration table the schemas make (flag, env var, default, meaning)', async () => {
    const readme = await readFile(join(import.meta.dirname, '../../README.md'), 'utf8');
    expect(readme).toContain(configurationTable());
  });
});
