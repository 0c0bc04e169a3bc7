// The store's data directory: its lock never outlives its holder, and what it holds is private.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../../src/local/storage/store.js';
import { asPrivate, walk } from '../../support/modes.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const HOLDER = join(ROOT, 'test/support/store-holder.ts');
const linux = process.platform === 'linux';
const python = spawnSync('python3', ['--version']).status === 0;

// A process whose leader thread exits first (pthread_exit) while another thread keeps the lock
// socket open for argv[2] seconds: what a holder killed with -9 looks like while the kernel
// is still taking down its other threads. Node cannot end its main thread alone; Python can.
const LINGERING = `
import ctypes, os, socket, sys, threading, time
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sys.argv[1])
srv.listen(16)
def linger():
    time.sleep(float(sys.argv[2]))
    srv.close()
threading.Thread(target=linger).start()
print('ready', os.getpid(), flush=True)
ctypes.CDLL(None).pthread_exit(None)
`;

const dirs: string[] = [];
const stores: Store[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nrn-store-dir-'));
  dirs.push(dir);
  return dir;
}

async function open(dir: string): Promise<Store> {
  const store = await Store.open(dir, { fsync: false });
  stores.push(store);
  return store;
}

/** Starts `command`, resolving with the pid the holder prints once its store is open. */
function startHolder(
  command: string,
  args: string[],
): Promise<{ child: ChildProcess; pid: number }> {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`holder not ready in 20 s: ${err}`)), 20_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^ready (\d+)$/m.exec(out);
      if (match?.[1] === undefined) return;
      clearTimeout(timer);
      resolve({ child, pid: Number(match[1]) });
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`holder ended (${code ?? signal}) before ready: ${err}`));
    });
  });
}

/** The one-letter state of `pid` in /proc (`Z` for a zombie), or undefined once it is gone. */
async function procState(pid: number): Promise<string | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  // The command name, field 2, is in parentheses and may hold spaces or parentheses itself.
  return stat?.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

/**
 * Waits until `pid`'s leader thread is a zombie (state Z), with no other thread left when
 * `alone` (the whole process is gone but its exit status, kept for its parent) or with some
 * other thread still running otherwise (the leader shows Z while the others exit).
 */
async function waitForZombie(pid: number, alone: boolean): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    const threads = (await readdir(`/proc/${pid}/task`).catch(() => [])).length;
    if ((await procState(pid)) === 'Z' && (alone ? threads === 1 : threads > 1)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

describe('the data directory lock', () => {
  it.runIf(linux)(
    'is taken over from a holder killed with -9 that is still a zombie, and holds while it lives',
    async () => {
      const dir = await tempDir();
      // The holder runs under a shell that becomes `sleep`, which never reaps it: killed, it
      // stays a zombie with its pid, as when its parent is slow to wait for it.
      const { pid } = await startHolder('sh', [
        '-c',
        '"$1" --import tsx "$2" "$3" & exec sleep 120',
        'sh',
        process.execPath,
        HOLDER,
        dir,
      ]);
      await expect(Store.open(dir)).rejects.toThrow(`is in use by process ${pid}`);

      process.kill(pid, 'SIGKILL');
      expect(await waitForZombie(pid, true)).toBe(true);
      // The zombie still answers kill(pid, 0), which is what a pid-only check sees.
      expect(() => process.kill(pid, 0)).not.toThrow();

      const store = await open(dir);
      expect(store.revision).toBe(0);
      expect((await readFile(join(dir, 'LOCK'), 'utf8')).trim()).toBe(String(process.pid));
      // Still held, now by this process.
      await expect(Store.open(dir)).rejects.toThrow(/already open in this process/);
      expect(await procState(pid)).toBe('Z');
    },
  );

  it.runIf(linux && python)(
    'waits for a holder killed a moment ago whose other threads still hold the socket',
    async () => {
      const dir = await tempDir();
      const { pid } = await startHolder('python3', ['-c', LINGERING, join(dir, 'LOCK.sock'), '1']);
      await writeFile(join(dir, 'LOCK'), `${pid}\n`);
      expect(await waitForZombie(pid, false)).toBe(true);

      const store = await open(dir);
      expect(store.revision).toBe(0);
      expect((await readFile(join(dir, 'LOCK'), 'utf8')).trim()).toBe(String(process.pid));
    },
  );

  it('is taken over when LOCK names a live process that is not its holder (a reused pid)', async () => {
    const dir = await tempDir();
    const stranger = spawn('sleep', ['120'], { stdio: 'ignore' });
    children.push(stranger);
    const pid = stranger.pid;
    if (pid === undefined) throw new Error('sleep did not start');
    await writeFile(join(dir, 'LOCK'), `${pid}\n`);

    const store = await open(dir);
    expect(store.revision).toBe(0);
    expect((await readFile(join(dir, 'LOCK'), 'utf8')).trim()).toBe(String(process.pid));
    expect(stranger.exitCode).toBeNull();
  });

  it.runIf(linux)(
    'holds for a live process on a path too long for a socket address, and is freed when it dies',
    async () => {
      const dir = join(await tempDir(), 'd'.repeat(60), 'e'.repeat(60));
      expect(Buffer.byteLength(join(dir, 'LOCK.sock'))).toBeGreaterThan(108);
      const holder = await startHolder(process.execPath, ['--import', 'tsx', HOLDER, dir]);
      await expect(Store.open(dir)).rejects.toThrow(`is in use by process ${holder.pid}`);

      holder.child.kill('SIGKILL');
      await exited(holder.child);
      const store = await open(dir);
      expect(store.revision).toBe(0);
      await store.close();
      // Closing removes the socket: libuv unlinks it through the directory's fd, still open.
      expect(await readdir(dir)).not.toContain('LOCK.sock');
    },
  );
});

describe('the data directory modes', () => {
  it('are 0700 for the directory and 0600 for every file, whatever the umask and what was there', async () => {
    const previous = process.umask(0);
    try {
      const dir = join(await tempDir(), 'store');
      await mkdir(dir);
      await chmod(dir, 0o755);

      let store = await open(dir);
      for (let i = 0; i < 50; i++) {
        store.commit([
          {
            resource: 'secrets',
            namespace: 'ns',
            name: `s${i}`,
            json: '{"data":{"k":"c2VjcmV0"}}',
          },
        ]);
      }
      await store.flush();
      await store.compact();
      store.commit([{ resource: 'secrets', namespace: 'ns', name: 'after', json: '{}' }]);
      await store.flush();

      const open1 = await walk(dir);
      expect(open1.map((e) => e.path)).toEqual(
        expect.arrayContaining(['.', '/LOCK', '/LOCK.sock', '/snapshot']),
      );
      expect(open1.some((e) => /^\/wal-\d+\.log$/.test(e.path))).toBe(true);
      expect(open1).toEqual(asPrivate(open1));

      // A directory left by an older version, or opened up by hand: narrowed at the next open.
      await store.close();
      stores.splice(stores.indexOf(store), 1);
      for (const e of await walk(dir))
        await chmod(join(dir, e.path), e.kind === 'dir' ? 0o777 : 0o666);
      store = await open(dir);
      expect(store.count('secrets')).toBe(51);
      const open2 = await walk(dir);
      expect(open2.length).toBeGreaterThan(3);
      expect(open2).toEqual(asPrivate(open2));
    } finally {
      process.umask(previous);
    }
  });
});
