// Runs the facade alone for a benchmark, in its own process, against the API server that
// KUBECONFIG names, with static auth and the token given. Prints `READY <url> <heap before>
// <heap after>` once its caches hold every service (heap after a full GC,
// --expose-gc), so the benchmark can tell what the cache adds per service; stops on SIGTERM.

import { StaticAuthenticator, startFacade } from '../../src/facade/index.js';
import { connect } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import { DEFAULT_HEAP_GROWTH_PERCENT, setHeapGrowth } from '../../src/runtime/index.js';

const [kubeconfigPath, token, namespace] = process.argv.slice(2);
if (kubeconfigPath === undefined || token === undefined || namespace === undefined) {
  throw new Error('usage: facade-server.ts KUBECONFIG TOKEN OPERATOR_NAMESPACE');
}
// As `nrn-operator run`, which serves the facade, does (its --heap-growth).
setHeapGrowth(Number(process.env.BENCH_HEAP_GROWTH ?? DEFAULT_HEAP_GROWTH_PERCENT));
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const log = silentLogger();
const kube = await connect({ kubeconfigPath, log });
const before = heap();
const facade = await startFacade({
  kube,
  log,
  namespace,
  port: 0,
  auth: new StaticAuthenticator({ tokens: [{ name: 'bench', token, operations: ['*'] }] }),
  // The benchmark's status streams all hold its one token.
  streams: { maxStreamsPerCaller: 1000 },
});
const after = heap();
process.stdout.write(`READY ${facade.url} ${before} ${after}\n`);
process.once('SIGTERM', () => {
  void facade.close().then(() => {
    kube.close();
    process.exit(0);
  });
});
