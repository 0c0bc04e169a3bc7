// A directory tree with the permission bits of each entry, and the same tree as it should be
// when private (0700 directories, 0600 files): what the data-directory tests compare.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface Entry {
  readonly path: string;
  readonly kind: 'dir' | 'file' | 'socket';
  /** Permission bits in octal, as ls shows them. */
  readonly mode: string;
}

/** `root` and everything under it. */
export async function walk(root: string): Promise<Entry[]> {
  const out: Entry[] = [];
  const visit = async (path: string) => {
    const st = await lstat(path);
    const kind = st.isDirectory() ? 'dir' : st.isSocket() ? 'socket' : 'file';
    out.push({ path: path.slice(root.length) || '.', kind, mode: (st.mode & 0o7777).toString(8) });
    if (kind === 'dir') for (const name of await readdir(path)) await visit(join(path, name));
  };
  await visit(root);
  return out;
}

/** The entries as they are when private. */
export const asPrivate = (entries: Entry[]) =>
  entries.map((e) => ({ ...e, mode: e.kind === 'dir' ? '700' : '600' }));
