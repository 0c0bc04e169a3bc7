// Test helper for the kill -9 test: commits to a store as fast as it can, printing each durable ack.
//
// Usage: node --import tsx store-writer.ts <dir> <tag> <keys per worker, 0 = unique> [compactAfterBytes]
// Prints `ready` once open, then one line `<revision> <namespace> <name>` per acknowledged commit.
// Each commit writes the item and a `test/counters` `last` entry, both carrying the revision.
import { Store } from '../../src/local/storage/store.js';

const [dir, tag = 'run', keysArg = '0', compactArg] = process.argv.slice(2);
if (dir === undefined)
  throw new Error('usage: store-writer.ts <dir> <tag> <keys> [compactAfterBytes]');
const keys = Number(keysArg);
const store = await Store.open(dir, {
  ...(compactArg !== undefined ? { compactAfterBytes: Number(compactArg) } : {}),
});
const pad = 'x'.repeat(700);
const WORKERS = 8;

async function worker(w: number): Promise<void> {
  const namespace = `ns-${w % 3}`;
  for (let i = 0; ; i++) {
    const name = `${tag}-w${w}-${keys > 0 ? i % keys : i}`;
    const { revision, durable } = store.commit((rev) => [
      { resource: 'test/items', namespace, name, json: JSON.stringify({ name, rev, pad }) },
      { resource: 'test/counters', namespace: '', name: 'last', json: JSON.stringify({ rev }) },
    ]);
    await durable;
    process.stdout.write(`${revision} ${namespace} ${name}\n`);
  }
}

process.stdout.write('ready\n');
await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
