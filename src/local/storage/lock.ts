// The data directory's lock: a socket its holder listens on, closed by the kernel when it dies.
//
// A pid in a file cannot tell a live holder from a zombie (kill(pid, 0) succeeds until the parent
// reaps it), from an unrelated process that got the pid after a restart, or from a process of
// another pid namespace sharing the directory. A listening socket is released by the kernel as
// the process exits, before it is even a zombie, so "someone answers on LOCK.sock" is the
// liveness test; a socket file nobody listens on (ECONNREFUSED) is what a killed holder leaves,
// and is taken over. The LOCK file beside it names the holder's pid, for the error message and
// for people. Why not flock, /proc or a lock library: ADR 0002, "The data directory's lock".

import { type FileHandle, open, readFile, rm } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { chmodPrivate, writePrivate } from '../private.js';

export const LOCK_FILE = 'LOCK';
export const LOCK_SOCKET = 'LOCK.sock';

// sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included.
const MAX_SOCKET_PATH = 103;

// Two opens racing in this process are told apart before either touches the socket, with a
// clearer message than "in use by process <our own pid>".
const held = new Set<string>();

export interface DirLock {
  release(): Promise<void>;
}

interface SocketAddress {
  /** What bind and connect are given: the socket's path, or one through a directory fd. */
  readonly address: string;
  close(): Promise<void>;
}

/**
 * The address of `dir`'s socket. A path longer than sun_path goes through an open fd of the
 * directory on Linux (/proc/self/fd/N/LOCK.sock), which resolves to the same file for everyone.
 */
async function socketAddress(dir: string): Promise<SocketAddress> {
  const direct = join(dir, LOCK_SOCKET);
  if (Buffer.byteLength(direct) <= MAX_SOCKET_PATH) {
    return { address: direct, close: async () => {} };
  }
  if (process.platform !== 'linux') {
    throw new Error(
      `data directory ${dir} is too long a path for its lock socket (${MAX_SOCKET_PATH - LOCK_SOCKET.length - 1} bytes at most here)`,
    );
  }
  const fh: FileHandle = await open(dir, 'r');
  return { address: `/proc/self/fd/${fh.fd}/${LOCK_SOCKET}`, close: () => fh.close() };
}

function listen(server: Server, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(address, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** Whether a process listens on `address`: true, false when none does, throws when unknown. */
function answers(address: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect(address);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.destroy();
      // ECONNREFUSED: the file is there but its listener is gone; ENOENT: it was just removed.
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') resolve(false);
      // EAGAIN: the listener's backlog is full, so it is there.
      else if (error.code === 'EAGAIN') resolve(true);
      else reject(error);
    });
  });
}

async function holderPid(dir: string): Promise<number | undefined> {
  const pid = Number.parseInt(await readFile(join(dir, LOCK_FILE), 'utf8').catch(() => ''), 10);
  return pid > 0 ? pid : undefined;
}

/** Another process holds the data directory: src/main names its flag with the holder's pid. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
  constructor(
    readonly dir: string,
    readonly holder: number | undefined,
  ) {
    super(
      `data directory ${dir} is in use by ${holder === undefined ? 'another process' : `process ${holder}`}`,
    );
  }
}

function inUse(dir: string, pid: number | undefined): Error {
  return new DataDirInUseError(dir, pid);
}

/**
 * Whether `pid` is exiting: its leader thread is a zombie (Linux: state Z or X in
 * /proc/<pid>/stat) while its other threads finish, the last of which closes its files. Right
 * after kill -9 of a process with a large heap this lasts while the kernel frees the memory.
 */
async function exiting(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Field 3, after the command name in parentheses (which may hold spaces and parentheses).
  const state = stat.charAt(stat.lastIndexOf(')') + 2);
  return state === 'Z' || state === 'X';
}

// How long an exiting holder may take to close the socket; past that it counts as live.
const EXIT_GRACE_MS = 5_000;

async function fallsSilent(address: string): Promise<boolean> {
  const deadline = Date.now() + EXIT_GRACE_MS;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (!(await answers(address))) return true;
  }
  return false;
}

async function acquire(dir: string, address: string): Promise<Server> {
  // Three tries: a stale socket removed, then another opener's socket appearing in between.
  for (let attempt = 1; ; attempt++) {
    // A socket nobody accepts on still completes connects into its backlog; closing them at
    // once keeps the backlog free for the next prober.
    const server = createServer((socket) => socket.destroy());
    try {
      await listen(server, address);
      // Errors on accepted probes must not crash the holder: the lock holds while the fd is open.
      server.on('error', () => {});
      // The lock alone must not keep the process alive.
      server.unref();
      return server;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 3) throw error;
    }
    if (await answers(address)) {
      const pid = await holderPid(dir);
      const gone = pid !== undefined && (await exiting(pid)) && (await fallsSilent(address));
      if (!gone) throw inUse(dir, pid);
    }
    await rm(address, { force: true });
  }
}

/**
 * Takes `dir`'s lock: listens on `dir`/LOCK.sock, taking over a socket whose process is gone
 * (killed, zombie or not), then writes our pid to LOCK. Throws when a live process holds it.
 */
export async function lockDir(dir: string): Promise<DirLock> {
  const key = join(dir, LOCK_SOCKET);
  if (held.has(key)) throw new Error(`data directory ${dir} is already open in this process`);
  // Claimed before the first await, so two opens racing in this process cannot both win.
  held.add(key);
  let socket: SocketAddress | undefined;
  let server: Server | undefined;
  try {
    socket = await socketAddress(dir);
    server = await acquire(dir, socket.address);
    await chmodPrivate(socket.address);
    await writePrivate(join(dir, LOCK_FILE), `${process.pid}\n`);
  } catch (error) {
    await close(server);
    await socket?.close();
    held.delete(key);
    throw error;
  }
  const address = socket;
  const listening = server;
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      // LOCK first: once the socket is gone a new holder may write its own LOCK.
      await rm(join(dir, LOCK_FILE), { force: true });
      // libuv unlinks the socket's path before closing its fd, so the fd of the directory
      // (for a long path) must still be open here.
      await close(listening);
      await address.close();
      held.delete(key);
    },
  };
}

function close(server: Server | undefined): Promise<void> {
  if (server === undefined || !server.listening) return Promise.resolve();
  return new Promise((resolve) => server.close(() => resolve()));
}
