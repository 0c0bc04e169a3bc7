// Compiles a support script of bench/ and the part of src it imports to JavaScript, as
// `npm run build` would, so a benchmark measures what `node dist/...` runs rather than code
// behind tsx's loader (which alone adds memory and keeps esbuild's name helpers in hot paths).
import { execFileSync } from 'node:child_process';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** Compiles bench/support/<name>.ts into node_modules/.cache/<cacheName>; returns the .js path. */
export async function compileSupportScript(name: string, cacheName: string): Promise<string> {
  const build = join(ROOT, 'node_modules', '.cache', cacheName);
  const source = join(import.meta.dirname, `${name}.ts`);
  await rm(build, { recursive: true, force: true });
  await mkdir(build, { recursive: true });
  // Outside the repository's own package.json scope only by path: say again that it is ESM.
  await writeFile(join(build, 'package.json'), '{ "type": "module" }\n');
  const tsconfig = join(build, 'tsconfig.json');
  await writeFile(
    tsconfig,
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.json'),
      compilerOptions: { rootDir: ROOT, outDir: build, noEmit: false, sourceMap: false },
      files: [source],
      include: [],
    }),
  );
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfig],
    { stdio: 'inherit' },
  );
  // The facade serves the status page from ui/ beside its compiled sources, as the package ships it.
  await symlink(join(ROOT, 'ui'), join(build, 'ui'));
  return join(build, relative(ROOT, source)).replace(/\.ts$/, '.js');
}
