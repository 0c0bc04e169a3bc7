// The Node.js versions this project says it runs on (package.json `engines`) are the ones every
// installed package accepts, and the image's Node is among them: `npm ci` gives no EBADENGINE
// warning on the oldest version we support (ADR 0016).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');

interface LockedPackage {
  readonly version?: string;
  readonly engines?: { readonly node?: string } | readonly string[];
}

async function readJson<T>(file: string): Promise<T> {
  return JSON.parse(await readFile(join(ROOT, file), 'utf8')) as T;
}

describe('Node.js engines', () => {
  it('every locked package accepts the oldest Node.js that package.json allows', async () => {
    const pkg = await readJson<{ engines: { node: string } }>('package.json');
    const oldest = semver.minVersion(pkg.engines.node);
    expect(oldest, 'engines.node is a range with a lowest version').not.toBeNull();
    const lock = await readJson<{ packages: Record<string, LockedPackage> }>('package-lock.json');
    const refusing = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, locked]) => {
        // Very old packages wrote engines as an array of strings, which npm ignores.
        const wanted = Array.isArray(locked.engines)
          ? undefined
          : (locked.engines as { node?: string } | undefined)?.node;
        return wanted && oldest && !semver.satisfies(oldest, wanted)
          ? [`${path}@${locked.version}: node ${wanted}`]
          : [];
      });
    expect(refusing).toEqual([]);
  });

  it('the image runs a Node.js that package.json allows', async () => {
    const dockerfile = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
    const pkg = await readJson<{ engines: { node: string } }>('package.json');
    const majors = [...dockerfile.matchAll(/^FROM\s+node:(\d+)/gm)].map((m) => m[1]);
    expect(majors.length).toBeGreaterThan(0);
    for (const major of majors) expect(semver.intersects(`${major}`, pkg.engines.node)).toBe(true);
  });
});
