// The data directory's LOCK file: one process (and one Store in it) owns a directory at a time.

import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

export const LOCK_FILE = 'LOCK';

// A lock's pid may equal ours after a restart (a container's pid 1), so a pid check alone cannot
// tell our own live lock from a dead process's: this process remembers which it holds.
const held = new Set<string>();

export interface DirLock {
  release(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function createLockFile(dir: string, path: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await open(path, 'wx');
      try {
        await fh.writeFile(`${process.pid}\n`);
      } finally {
        await fh.close();
      }
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
    }
    const pid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
    if (pid > 0 && pid !== process.pid && alive(pid)) {
      throw new Error(
        `data directory ${dir} is in use by process ${pid} (remove ${path} if that is wrong)`,
      );
    }
    await rm(path, { force: true });
  }
}

/**
 * Takes `dir`'s lock: a file created exclusively, holding our pid. A lock left by a process that
 * no longer runs (it was killed) is taken over.
 */
export async function lockDir(dir: string): Promise<DirLock> {
  const path = join(dir, LOCK_FILE);
  if (held.has(path)) throw new Error(`data directory ${dir} is already open in this process`);
  // Claimed before the first await, so two opens racing in this process cannot both win.
  held.add(path);
  try {
    await createLockFile(dir, path);
  } catch (error) {
    held.delete(path);
    throw error;
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      held.delete(path);
      await rm(path, { force: true });
    },
  };
}
