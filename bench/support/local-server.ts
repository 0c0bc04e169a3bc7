// Runs the local control plane for a benchmark in its own process (so the load generator
// does not share its event loop). Prints `READY <url> <token> <base64 CA>`; on SIGUSR2 it collects
// garbage and prints `MEM <rss> <heapUsed>` (needs --expose-gc); stops on SIGTERM.
import { startControlPlane } from '../../src/local/index.js';

const [dataDir] = process.argv.slice(2);
if (dataDir === undefined) throw new Error('usage: local-server.ts DATA_DIR');
const plane = await startControlPlane({ dataDir, fsync: process.env.BENCH_FSYNC !== '0' });
process.stdout.write(
  `READY ${plane.url} ${plane.token} ${Buffer.from(plane.ca).toString('base64')}\n`,
);
process.on('SIGUSR2', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  process.stdout.write(`MEM ${rss} ${heapUsed}\n`);
});
process.once('SIGTERM', () => {
  void plane.close().then(() => process.exit(0));
});
