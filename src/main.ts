// Wires the long-running processes: config -> logger -> control plane -> operator and its
// metrics server (-> facade, as it lands) and the signals that stop them.
import { resolve } from 'node:path';
import { connect, type Kube } from './kube/index.js';
import { startControlPlane } from './local/index.js';
import { createLogger, type Logger } from './log.js';
import {
  type ObservabilityServer,
  OperatorMetrics,
  startObservabilityServer,
} from './observability.js';
import { applyCrds, DEFAULT_OPERATOR_NAMESPACE, type Operator, startOperator } from './operator.js';
import { stopOnSignal } from './runtime/index.js';

/** Where /metrics, /healthz and /readyz listen; unset parts take the defaults. */
export interface MetricsAddress {
  host?: string;
  port?: number;
}

export interface LocalOptions {
  dataDir: string;
  apiPort: number;
  host: string;
  operator: boolean;
  facade: boolean;
  /** Serve /metrics, /healthz, /readyz with the operator; undefined: not served. */
  metrics?: MetricsAddress;
}

/** `nrn-operator local`: runs until SIGINT or SIGTERM, then stops cleanly. */
export async function runLocal(options: LocalOptions): Promise<number> {
  const log = createLogger();
  const dataDir = resolve(options.dataDir);
  const plane = await startControlPlane({
    dataDir,
    port: options.apiPort,
    host: options.host,
    log,
  });
  const parts = ['API server'];
  let kube: Kube | undefined;
  let operator: Operator | undefined;
  let observability: ObservabilityServer | undefined;
  if (options.operator) {
    // Through the kubeconfig, as against any cluster: the operator never reaches into src/local.
    kube = await connect({ kubeconfigPath: plane.kubeconfigPath, log });
    await applyCrds(kube);
    const metrics = new OperatorMetrics();
    if (options.metrics !== undefined) {
      observability = await startObservabilityServer({ metrics, log, ...options.metrics });
    }
    try {
      operator = await startOperator({
        kube,
        log,
        namespace: DEFAULT_OPERATOR_NAMESPACE,
        leaderElection: true,
        metrics,
      });
    } catch (error) {
      await observability?.close();
      throw error;
    }
    parts.push('operator');
  } else if (options.metrics !== undefined) {
    log.warn("metrics are the operator's; --no-operator serves none");
  }
  if (options.facade) log.warn('the facade is not part of this build yet; running without it');
  // KUBECONFIG stays last: test/support (and scripts) read the path after it to the line's end.
  const metricsAt = observability !== undefined ? `; metrics at ${observability.url}` : '';
  process.stdout.write(
    `nrn-operator local ready: ${parts.join(', ')} at ${plane.url}${metricsAt}; KUBECONFIG=${plane.kubeconfigPath}\n`,
  );
  const signal = await new Promise<NodeJS.Signals>((done) => {
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
  log.info({ signal }, 'stopping');
  // The operator first: it still needs the API server to drain and release its lease.
  const clean = (await operator?.stop()) ?? true;
  await observability?.close();
  kube?.close();
  await plane.close();
  if (!clean) log.warn('operator did not drain in time');
  log.info('stopped');
  return 0;
}

export interface RunOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  leaderElection: boolean;
  baseDomain?: string;
  metrics: MetricsAddress;
}

/** `nrn-operator run`: the operator against the current kubeconfig or the in-cluster config. */
export async function runOperator(options: RunOptions): Promise<number> {
  const log: Logger = createLogger();
  const kube = await connect({
    log,
    ...(options.kubeconfig !== undefined ? { kubeconfigPath: options.kubeconfig } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
  });
  // Never the kubeconfig's namespace: every replica must find the same Lease and id counter,
  // whatever context each was started with.
  const namespace = options.namespace ?? process.env.POD_NAMESPACE ?? DEFAULT_OPERATOR_NAMESPACE;
  const metrics = new OperatorMetrics();
  // Before the operator, so that /healthz answers (and /readyz says 503) while it lists.
  const observability = await startObservabilityServer({ metrics, log, ...options.metrics });
  let operator: Operator;
  try {
    operator = await startOperator({
      kube,
      log,
      namespace,
      metrics,
      leaderElection: options.leaderElection,
      ...(options.baseDomain !== undefined ? { baseDomain: options.baseDomain } : {}),
    });
  } catch (error) {
    await observability.close();
    kube.close();
    throw error;
  }
  // The operator, not its manager: its stop() also turns /readyz to 503 while it drains.
  const { clean } = await stopOnSignal(operator, { log });
  await observability.close();
  kube.close();
  return clean ? 0 : 1;
}
