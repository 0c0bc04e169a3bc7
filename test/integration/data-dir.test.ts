// The local control plane's data directory keeps its secrets to its owner: directories 0700 and
// files 0600 under any umask, on a first start in a directory made beforehand and on a restart.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { asPrivate, walk } from '../support/modes.js';

const run = promisify(execFile);

const dirs: string[] = [];
const planes: ControlPlane[] = [];
afterEach(async () => {
  for (const plane of planes.splice(0)) await plane.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

async function start(dataDir: string): Promise<ControlPlane> {
  const plane = await startControlPlane({ dataDir, port: 0, fsync: false });
  planes.push(plane);
  return plane;
}

async function stop(plane: ControlPlane): Promise<void> {
  planes.splice(planes.indexOf(plane), 1);
  await plane.close();
}

describe('the data directory of the local control plane', () => {
  it('holds only 0700 directories and 0600 files, with umask 0, in a 0755 directory, and after a restart', async () => {
    const previous = process.umask(0);
    try {
      const dataDir = await tempDir('nrn-data-dir-');
      await chmod(dataDir, 0o755);
      // kubectl's discovery cache stays out of the home directory while the umask is 0.
      const cacheDir = await tempDir('nrn-data-dir-kubectl-');

      let plane = await start(dataDir);
      await run(
        'kubectl',
        [
          ...['--kubeconfig', plane.kubeconfigPath, '--cache-dir', cacheDir],
          ...['create', 'secret', 'generic', 'db', '--from-literal=password=hunter2'],
        ],
        { timeout: 30_000 },
      );
      const first = await walk(dataDir);
      expect(first.map((e) => e.path)).toEqual(
        expect.arrayContaining([
          '.',
          '/apiserver-token',
          '/kubeconfig',
          '/tls',
          '/tls/apiserver.key',
          '/store',
          '/store/LOCK',
        ]),
      );
      expect(first.some((e) => /^\/store\/wal-\d+\.log$/.test(e.path))).toBe(true);
      expect(first).toEqual(asPrivate(first));

      // Opened up by hand, or left by an older version: put right by the next start.
      await stop(plane);
      for (const e of await walk(dataDir)) {
        await chmod(join(dataDir, e.path), e.kind === 'dir' ? 0o777 : 0o666);
      }
      plane = await start(dataDir);
      const { stdout } = await run(
        'kubectl',
        [
          ...['--kubeconfig', plane.kubeconfigPath, '--cache-dir', cacheDir],
          ...['get', 'secret', 'db', '-o', 'jsonpath={.data.password}'],
        ],
        { timeout: 30_000 },
      );
      expect(Buffer.from(stdout, 'base64').toString()).toBe('hunter2');
      const second = await walk(dataDir);
      expect(second.length).toBeGreaterThanOrEqual(first.length);
      expect(second).toEqual(asPrivate(second));
    } finally {
      process.umask(previous);
    }
  });
});
