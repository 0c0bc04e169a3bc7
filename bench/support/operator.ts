// Runs the operator for a benchmark in its own process, as `nrn-operator run` does (Lease-based
// leader election, namespace nrn-system), and reports what the CLI keeps to itself: the
// client's request and connection counts (Kube.stats) and how many scope reconciles ran.
// Prints `READY` once leading; on SIGUSR2 prints
// `STATS <requests> <connections> <scopeReconciles> <servicesCached> <heapUsed>`; stops on SIGTERM.
//   node --import tsx bench/support/operator.ts KUBECONFIG
// BENCH_CACHE_SERVICES=1 adds an informer over platform Services: this build has no Service
// controller yet, and the benchmark's cache figure needs the services held as it will hold them.
import { ScopeReconciler } from '../../src/controllers/scope.js';
import { connect, Services } from '../../src/kube/index.js';
import { createLogger } from '../../src/log.js';
import { applyCrds, DEFAULT_OPERATOR_NAMESPACE, startOperator } from '../../src/operator.js';

const [kubeconfigPath] = process.argv.slice(2);
if (kubeconfigPath === undefined) throw new Error('usage: operator.ts KUBECONFIG');

// Counted at the reconciler's entry, the only place every scope reconcile passes: the
// controller's metrics hook is not reachable through startOperator.
let scopeReconciles = 0;
const reconcile = ScopeReconciler.prototype.reconcile;
ScopeReconciler.prototype.reconcile = function (this: ScopeReconciler, ...args) {
  scopeReconciles++;
  return reconcile.apply(this, args);
};

const log = createLogger(process.env.LOG_LEVEL ?? 'warn');
const kube = await connect({ kubeconfigPath, log });
await applyCrds(kube);
const services = process.env.BENCH_CACHE_SERVICES === '1' ? kube.informer(Services) : undefined;
await services?.start();
const operator = await startOperator({
  kube,
  log,
  namespace: DEFAULT_OPERATOR_NAMESPACE,
  leaderElection: true,
});
await operator.manager.elector?.elected();
process.stdout.write('READY\n');

process.on('SIGUSR2', () => {
  const { requests, connections } = kube.stats;
  const cached = services?.cache.size ?? 0;
  const heap = process.memoryUsage().heapUsed;
  process.stdout.write(`STATS ${requests} ${connections} ${scopeReconciles} ${cached} ${heap}\n`);
});
process.once('SIGTERM', () => {
  void (async () => {
    await operator.stop();
    await services?.stop();
    kube.close();
    process.exit(0);
  })();
});
