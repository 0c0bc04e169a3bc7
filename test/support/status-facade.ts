// What the status calls' tests start from: a cluster (the local control plane unless KUBECONFIG
// names one), the operator and the facade with deploy/'s rights, an application of their own,
// static tokens (one allowed everything, one that may list services but not get scopes, one
// for counting streams), and calls to the facade as a client makes them.
import { pino } from 'pino';
import {
  type Facade,
  StaticAuthenticator,
  type StreamLimits,
  startFacade,
} from '../../src/facade/index.js';
import { Applications, connect, type Kube, Namespaces } from '../../src/kube/index.js';
import { type Operator, startOperator } from '../../src/operator.js';
import {
  installCrdsAndClasses,
  kubectl,
  type StartedCluster,
  startCluster,
  uniqueName,
} from './cluster.js';
import { refusalLog } from './operator-identity.js';

export const ADMIN = 'admin-token-0123456789abcdef';
/** May list services, may not get scopes. */
export const SERVICES_ONLY = 'services-only-token-0123456789';
/** Everything, under its own name: its streams are counted apart from the admin's. */
export const TABS = 'tabs-token-0123456789abcdef';

export interface StatusFacade {
  readonly cluster: StartedCluster;
  readonly kube: Kube;
  readonly facade: Facade;
  readonly ns: string;
  readonly appId: number;
  readonly appNrn: string;
  /** What the facade logged, one parsed record per entry. */
  readonly logs: Record<string, unknown>[];
  call<T = unknown>(path: string, token?: string | null): Promise<{ status: number; body: T }>;
  close(): Promise<void>;
}

export async function startStatusFacade(
  options: { streams?: Partial<StreamLimits>; ringSize?: number } = {},
): Promise<StatusFacade> {
  const opNs = uniqueName('status-system');
  const cluster = await startCluster({ operatorNamespace: opNs });
  await installCrdsAndClasses(cluster);
  await kubectl(cluster, ['wait', '--for=condition=Established', 'crd/scopes.platform.nrn.dev']);
  const operatorLog = refusalLog();
  const kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log: operatorLog.log });
  const operatorKube = await connect({
    kubeconfigPath: cluster.operatorKubeconfigPath,
    log: operatorLog.log,
  });
  const ns = uniqueName('status');
  await kube.resource(Namespaces).create({ metadata: { name: ns } });
  const operator: Operator = await startOperator({
    kube: operatorKube,
    log: operatorLog.log,
    namespace: opNs,
    leaderElection: false,
  });
  // Random ids keep this suite apart from others on a shared cluster.
  const org = 100_000 + Math.floor(Math.random() * 800_000);
  const appId = 100_000 + Math.floor(Math.random() * 800_000);
  const appNrn = `organization=${org}:account=3:namespace=4:application=${appId}`;
  await kube.resource(Applications).create({
    metadata: { name: 'shop', namespace: ns },
    spec: { id: appId, name: 'shop', nrn: appNrn },
  });
  const logs: Record<string, unknown>[] = [];
  const facadeLog = pino(
    { level: 'info' },
    {
      write: (line: string) => {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  const facade = await startFacade({
    kube: operatorKube,
    log: facadeLog,
    namespace: opNs,
    port: 0,
    ...(options.streams !== undefined ? { streams: options.streams } : {}),
    ...(options.ringSize !== undefined ? { ringSize: options.ringSize } : {}),
    auth: new StaticAuthenticator({
      tokens: [
        { name: 'admin', token: ADMIN, operations: ['*'] },
        { name: 'services-only', token: SERVICES_ONLY, operations: ['services:list'] },
        { name: 'tabs', token: TABS, operations: ['*'] },
      ],
    }),
  });
  return {
    cluster,
    kube,
    facade,
    ns,
    appId,
    appNrn,
    logs,
    call: async <T>(path: string, token: string | null = ADMIN) => {
      const response = await fetch(`${facade.url}${path}`, {
        headers: token !== null ? { authorization: `Bearer ${token}` } : {},
      });
      return { status: response.status, body: (await response.json()) as T };
    },
    close: async () => {
      await facade.close();
      await operator.stop();
      if (cluster.kind !== 'local') {
        await kubectl(cluster, ['delete', 'namespace', ns, '--wait=false']);
      }
      operatorKube.close();
      kube.close();
      await cluster.close();
      // Whatever the operator and the facade did, deploy/rbac.yaml allowed.
      const refused = operatorLog.refusals();
      if (refused.length > 0) throw new Error(`refused by RBAC: ${JSON.stringify(refused)}`);
    },
  };
}

/** A scope of the application, as kubectl applies it. */
export function scopeYaml(ns: string, name: string, appId: number, slug = name): string {
  return `apiVersion: platform.nrn.dev/v1alpha1
kind: Scope
metadata: {name: ${name}, namespace: ${ns}}
spec: {name: ${slug}, type: web_pool, application_id: ${appId}, requested_spec: {}}
`;
}
