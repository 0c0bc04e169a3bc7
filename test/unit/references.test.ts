// Every path the repository's documents and comments point at is in the repository: nothing
// refers to a file a clone does not have (issue 19 point 1), and no rename leaves a dangling
// mention behind.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const TOP = ['docs', 'src', 'test', 'examples', 'deploy', 'bench', 'crds', 'scripts', '.ci'];
// A path under one of the top folders, as written in prose or a comment: letters, digits,
// dots, dashes, underscores and slashes, ending in a letter, digit or slash.
const PATH = new RegExp(
  `(?<![\\w./-])(?:${TOP.map((t) => t.replace('.', '\\.')).join('|')})/[\\w./-]*[\\w/]`,
  'g',
);

// Words shaped like paths that are not: storage keys of a test resource group named `test`.
const NOT_PATHS = new Set(['test/counters', 'test/items']);
// kubernetes/kubernetes' own test folders, which the kubectl replays cite (test/cmd/apply.sh).
const UPSTREAM = /^test\/(cmd|fixtures|e2e)(\/|$)/;

/**
 * Whether a match names a file of ours, not a glob (`kubectl-cmd-*.test.ts`) nor kubernetes'
 * own test folders; kubectl's `deploy/web` and `examples/x` (a kind and a
 * name) are not, so under deploy/, examples/ and crds/ only a name with an extension counts.
 */
function namesOurFile(path: string, after: string): boolean {
  if (/^[-\w.]*\*/.test(after) || UPSTREAM.test(path) || NOT_PATHS.has(path)) return false;
  const extension = /\.[a-z]+$/.test(path) || path.endsWith('/');
  return extension || !/^(deploy|examples|crds)\//.test(path);
}

/** A module named without its extension, or as compiled (`.js`), is its `.ts` source. */
function exists(path: string): boolean {
  const candidates = [path, `${path}.ts`, `${path}.test.ts`, path.replace(/\.js$/, '.ts')];
  return candidates.some((candidate) => existsSync(join(ROOT, candidate)));
}

async function trackedTextFiles(): Promise<string[]> {
  const { stdout } = await promisify(execFile)('git', ['ls-files'], { cwd: ROOT });
  return stdout
    .split('\n')
    .filter((f) => /\.(md|ts|cjs|mjs|js|ya?ml|json|lua)$|^\.ci\/run$|^Dockerfile$/.test(f))
    .filter((f) => f !== 'package-lock.json');
}

describe('references', () => {
  it('nothing points outside the repository (../shared, the issue notes)', async () => {
    const outside: string[] = [];
    for (const file of await trackedTextFiles()) {
      const text = await readFile(join(ROOT, file), 'utf8');
      for (const [i, line] of text.split('\n').entries()) {
        if (/\.\.\/shared\/|DESIGN\.md|issue notes/.test(line))
          outside.push(`${file}:${i + 1}: ${line.trim()}`);
      }
    }
    // This file names what it looks for.
    expect(outside.filter((l) => !l.startsWith('test/unit/references.test.ts'))).toEqual([]);
  });

  it('every repository path a document or comment names exists', async () => {
    const missing: string[] = [];
    for (const file of await trackedTextFiles()) {
      const text = await readFile(join(ROOT, file), 'utf8');
      for (const [i, line] of text.split('\n').entries()) {
        for (const match of line.matchAll(PATH)) {
          const path = match[0].replace(/\.$/, '');
          const after = line.slice((match.index ?? 0) + match[0].length);
          if (namesOurFile(path, after) && !exists(path)) missing.push(`${file}:${i + 1}: ${path}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
