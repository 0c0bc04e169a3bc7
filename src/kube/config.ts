// Where the operator finds its cluster: an explicit kubeconfig, KUBECONFIG or ~/.kube/config,
// else the pod's service account (in-cluster).
import { KubeConfig } from '@kubernetes/client-node';

export type { KubeConfig };

export interface LoadKubeConfigOptions {
  /** A kubeconfig file to use; wins over KUBECONFIG and the default file. */
  readonly path?: string;
  /** A context of that kubeconfig other than its current one. */
  readonly context?: string;
}

export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  if (options.path !== undefined && options.path !== '') {
    kc.loadFromFile(options.path);
  } else {
    // KUBECONFIG, then ~/.kube/config, then the service account (loadFromCluster).
    kc.loadFromDefault();
  }
  if (options.context !== undefined) kc.setCurrentContext(options.context);
  const cluster = kc.getCurrentCluster();
  if (cluster === null || cluster.server === '') {
    throw new Error('no cluster in the kubeconfig: set KUBECONFIG or pass a kubeconfig path');
  }
  // loadFromDefault's last resort is an unauthenticated http://localhost:8080: an operator
  // talking to that is misconfigured, so say so instead of failing on every request.
  if (cluster.name === 'cluster' && cluster.server === 'http://localhost:8080') {
    throw new Error('no kubeconfig found and not running in a cluster');
  }
  return kc;
}
