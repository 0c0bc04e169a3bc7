// Test helper for the runtime's shutdown and crash tests: one operator-like process with leader
// election and a slow ConfigMap controller, stopped by a signal (or killed).
//
// Usage: node --import tsx runtime-child.ts <kubeconfig> <namespace> <lease> <identity> <reconcileMs>
// Prints `leading`, `reconciling <key>`, `reconciled <key> aborted=<bool>` and
// `stopped clean=<bool>` as they happen.
import { ConfigMaps, connect } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import { Controller, Manager, sleep, stopOnSignal, systemClock } from '../../src/runtime/index.js';

const [kubeconfigPath, namespace, lease, identity, reconcileMs = '500'] = process.argv.slice(2);
if (kubeconfigPath === undefined || namespace === undefined || lease === undefined || !identity) {
  throw new Error('usage: runtime-child.ts <kubeconfig> <namespace> <lease> <identity> [ms]');
}
const say = (line: string) => process.stdout.write(`${line}\n`);
const log = silentLogger();
const kube = await connect({ kubeconfigPath, log });
const informer = kube.informer(ConfigMaps, { namespace, resyncMs: 0 });
const controller = new Controller({
  name: 'configmaps',
  log,
  reconciler: async (key, { signal }) => {
    say(`reconciling ${key}`);
    await sleep(systemClock, Number(reconcileMs), signal);
    say(`reconciled ${key} aborted=${signal.aborted}`);
  },
}).watch(informer);
const manager = new Manager({
  log,
  informers: [informer],
  runnables: [controller],
  leaderElection: {
    kube,
    namespace,
    name: lease,
    identity,
    leaseDurationMs: 2_000,
    renewDeadlineMs: 1_500,
    retryPeriodMs: 300,
    onNewLeader: (holder) => {
      if (holder === identity) say('leading');
    },
  },
  drainTimeoutMs: 5_000,
});
await manager.start();
say('started');
const { clean } = await stopOnSignal(manager, { log });
kube.close();
say(`stopped clean=${clean}`);
process.exit(clean ? 0 : 1);
