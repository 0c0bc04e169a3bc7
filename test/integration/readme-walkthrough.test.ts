// The README's walkthrough, pasted as a newcomer pastes it: the `walkthrough: server` block runs
// in one terminal (`npm start`, in a copy of the repository's sources, as from a fresh clone),
// and every `walkthrough` block, in order, in one shell of a second terminal. The only change
// made to them: the servers take free ports (NRN_API_PORT=0 and NRN_FACADE_PORT=0, which the
// README documents), so the facade's address replaces `http://127.0.0.1:8080` in the blocks.
// What the blocks' comments show of the answers (`"key":value` pairs) must be what they print.
import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const README_FACADE = 'http://127.0.0.1:8080';

interface Blocks {
  readonly server: string;
  readonly walkthrough: readonly string[];
}

function blocksOf(readme: string): Blocks {
  const fenced = (marker: string) =>
    [
      ...readme.matchAll(new RegExp(`<!-- ${marker} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\`\\n`, 'g')),
    ].map((m) => m[1] ?? '');
  const [server, ...more] = fenced('walkthrough: server');
  if (server === undefined || more.length > 0) throw new Error('one walkthrough: server block');
  return { server, walkthrough: fenced('walkthrough') };
}

/** The `"key":value` pairs the blocks' comments show, leaving out elided ones (`...`). */
function shownPairs(block: string): string[] {
  return block
    .split('\n')
    .filter((line) => /^\s*#/.test(line) || /\s#\s/.test(line))
    .flatMap((line) => [...line.matchAll(/"[a-z_]+":(?:"[^"]*"|\d+|true|false)/g)].map((m) => m[0]))
    .filter((pair) => !pair.includes('...'));
}

/** Env without our own settings: a newcomer's shell has no NRN_*, LOG_* or KUBECONFIG. */
function newcomerEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('NRN_') && !['KUBECONFIG', 'LOG_LEVEL', 'LOG_FORMAT'].includes(k),
    ),
  );
  return { ...env, ...extra };
}

function run(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('the README walkthrough, pasted block by block', () => {
  let work: string;
  let blocks: Blocks;
  let server: ChildProcess | undefined;
  let serverOutput = '';
  let facade: string;

  beforeAll(async () => {
    blocks = blocksOf(await readFile(join(ROOT, 'README.md'), 'utf8'));
    work = await mkdtemp(join(tmpdir(), 'nrn-readme-'));
    // What a fresh clone has for `npm start`; node_modules is the one `npm ci` made here.
    for (const entry of [
      'package.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'src',
      'examples',
      'deploy',
    ]) {
      await cp(join(ROOT, entry), join(work, entry), { recursive: true });
    }
    await symlink(join(ROOT, 'node_modules'), join(work, 'node_modules'), 'dir');
    const env = newcomerEnv({ NRN_API_PORT: '0', NRN_FACADE_PORT: '0' });
    const started = spawn('bash', ['-c', blocks.server], {
      cwd: work,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: Ctrl-C reaches npm and the node it started.
      detached: true,
    });
    server = started;
    const ready = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 150_000);
      const seen = (d: Buffer) => {
        serverOutput += d.toString();
        const line = /^nrn-operator local ready: .*$/m.exec(serverOutput)?.[0];
        if (line !== undefined) {
          clearTimeout(timer);
          resolve(line);
        }
      };
      started.stdout.on('data', seen);
      started.stderr.on('data', seen);
      started.once('exit', () => resolve(undefined));
    });
    if (ready === undefined) throw new Error(`npm start printed no ready line:\n${serverOutput}`);
    facade = /facade at (http:\/\/\S+)/.exec(ready)?.[1] ?? '';
  }, 180_000);

  afterAll(async () => {
    if (server?.pid !== undefined && server.exitCode === null) {
      const exited = new Promise((resolve) => server?.once('exit', resolve));
      process.kill(-server.pid, 'SIGINT');
      await exited;
    }
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  it('says whether the data dir is new, and where each part is', () => {
    expect(serverOutput).toContain(`data dir ${join(work, '.data/local')} created`);
    expect(facade).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('runs every walkthrough block as written, and prints what its comments show', async () => {
    expect(blocks.walkthrough.length).toBeGreaterThanOrEqual(3);
    expect(blocks.walkthrough.join('\n')).toContain(README_FACADE);
    const script = [
      'set -euo pipefail',
      ...blocks.walkthrough.map(
        (block, i) =>
          `echo '--- walkthrough block ${i + 1}'\n${block.replaceAll(README_FACADE, facade)}`,
      ),
    ].join('\n');
    const { code, output } = await run(script, work, newcomerEnv({}), 240_000);
    expect(code, output).toBe(0);
    for (const [i, block] of blocks.walkthrough.entries()) {
      const printed =
        output.split(`--- walkthrough block ${i + 1}\n`)[1]?.split('--- walkthrough block')[0] ??
        '';
      for (const pair of shownPairs(block))
        expect(printed, `block ${i + 1} shows ${pair}`).toContain(pair);
    }
    expect(output).toContain('scope.platform.nrn.dev/checkout-web condition met');
    expect(output).toContain('service.platform.nrn.dev/checkout-db condition met');
    // A scope whose slug another holds is refused by the operator's webhook, and not stored.
    expect(output).toMatch(
      /Error from server \(Forbidden\): error when creating "STDIN": admission webhook "validate\.platform\.nrn\.dev" denied the request: spec\.name: slug checkout-web is already used by scope team-a\/checkout-web \(id 1\) of application 10\n/,
    );
    expect(output).toContain('refused, as it must be\n');
    expect(output).toContain('scopes.platform.nrn.dev "checkout-web-copy" not found');
  }, 300_000);
});
