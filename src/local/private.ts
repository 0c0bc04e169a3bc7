// Modes of the local control plane's files: directories 0700, files 0600, whatever the umask.
//
// The data directory holds the API token, the TLS key and the log of every object (Secrets
// included), so nothing in it may be readable by other users (ADR 0002). A mode given to
// mkdir or open applies only when the call creates the entry, and only after the umask, so
// an entry that already exists, or a umask that strips owner bits, is put right here with
// chmod: etcd's fileutil uses the same 0700/0600 (PrivateDirMode, PrivateFileMode).
import { chmod, type FileHandle, mkdir, open, stat } from 'node:fs/promises';

export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

const PERMISSION_BITS = 0o7777;

/** Sets `path`'s mode to exactly `mode` when it differs (a socket, file or directory). */
export async function chmodPrivate(path: string, mode = PRIVATE_FILE): Promise<void> {
  if (((await stat(path)).mode & PERMISSION_BITS) !== mode) await chmod(path, mode);
}

/** `chmodPrivate` on an open file, so that a file kept open is fixed without a second lookup. */
export async function fchmodPrivate(fh: FileHandle): Promise<void> {
  if (((await fh.stat()).mode & PERMISSION_BITS) !== PRIVATE_FILE) await fh.chmod(PRIVATE_FILE);
}

/**
 * Makes `dir` (and each missing parent) with mode 0700, and narrows `dir` itself to 0700 when
 * it existed more open. Returns the first directory created, as `mkdir` does.
 */
export async function mkdirPrivate(dir: string): Promise<string | undefined> {
  const created = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
  await chmodPrivate(dir, PRIVATE_DIR);
  return created;
}

/** Opens `path` with `flags`; a file it creates, or finds, ends up 0600 before anything is written. */
export async function openPrivate(path: string, flags: string): Promise<FileHandle> {
  const fh = await open(path, flags, PRIVATE_FILE);
  try {
    await fchmodPrivate(fh);
  } catch (error) {
    await fh.close();
    throw error;
  }
  return fh;
}

/** Secrets go to disk readable by the owner only, also when the file was there before. */
export async function writePrivate(path: string, data: string | Uint8Array): Promise<void> {
  const fh = await openPrivate(path, 'w');
  try {
    await fh.writeFile(data);
  } finally {
    await fh.close();
  }
}
