// Test helper for the lock tests: opens a store and holds it until killed.
//
// Usage: node --import tsx store-holder.ts <dir>
// Prints `ready <pid>` once the store is open (so the pid is the holder's, even behind a shell).
import { Store } from '../../src/local/storage/store.js';

const [dir] = process.argv.slice(2);
if (dir === undefined) throw new Error('usage: store-holder.ts <dir>');
const store = await Store.open(dir, { fsync: false });
process.stdout.write(`ready ${process.pid}\n`);
// The store's lock does not keep a process alive by itself; the holder waits to be killed.
setInterval(() => store.revision, 60_000);
