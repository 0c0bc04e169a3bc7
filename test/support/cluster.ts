// "A cluster" for the integration suite: the cluster KUBECONFIG names when it is set, k3s in
// a container when a Docker engine answers and NRN_TEST_K3S=1, and otherwise the local
// control plane, started in-process on a free port with a fresh data directory.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import { connect, type Kube, Namespaces } from '../../src/kube/index.js';
import { type LocalUser, startControlPlane } from '../../src/local/index.js';
import { createOperatorIdentity } from './operator-identity.js';

export interface TestCluster {
  /** What runs it: tests that need the local control plane itself skip elsewhere. */
  readonly kind: 'local' | 'kubeconfig' | 'k3s';
  readonly kubeconfigPath: string;
  /** Waits for background work of the local control plane (garbage collection); no-op elsewhere. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** A cluster startCluster gave: also the identity the operator under test acts as. */
export interface StartedCluster extends TestCluster {
  /**
   * The operator's (and the facade's) kubeconfig: with `operatorNamespace`, a token of
   * deploy/'s ServiceAccount bound there by deploy/rbac.yaml, on the clusters the suite starts
   * (local control plane, k3s); on a KUBECONFIG cluster, which the suite does not own, the
   * kubeconfig's own identity, as before.
   */
  readonly operatorKubeconfigPath: string;
}

export interface ClusterOptions {
  /** Users besides the admin, for the local control plane (elsewhere the cluster has its own). */
  readonly users?: readonly LocalUser[];
  /** Where the test runs its operator: made, with the ServiceAccount it acts as there. */
  readonly operatorNamespace?: string;
}

export async function startCluster(options: ClusterOptions = {}): Promise<StartedCluster> {
  const external = process.env.KUBECONFIG;
  if (external !== undefined && external !== '') {
    if (options.operatorNamespace !== undefined) {
      await run(
        'kubectl',
        ['--kubeconfig', external, 'create', 'namespace', options.operatorNamespace],
        {
          timeout: 30_000,
        },
      );
    }
    return {
      kind: 'kubeconfig',
      kubeconfigPath: external,
      operatorKubeconfigPath: external,
      settle: async () => {},
      close: async () => {},
    };
  }
  if (process.env.NRN_TEST_K3S === '1') return startK3s(options);
  const dataDir = await mkdtemp(join(tmpdir(), 'nrn-local-'));
  const plane = await startControlPlane({
    dataDir,
    fsync: false,
    bookmarkIntervalMs: 1000,
    ...(options.users !== undefined ? { users: options.users } : {}),
  });
  const close = async () => {
    await plane.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    return {
      kind: 'local',
      kubeconfigPath: plane.kubeconfigPath,
      operatorKubeconfigPath: await operatorKubeconfig(plane.kubeconfigPath, dataDir, options),
      settle: () => plane.idle(),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The admin's kubeconfig, or with `operatorNamespace` one of the operator's own, in `dir`. */
async function operatorKubeconfig(
  adminKubeconfigPath: string,
  dir: string,
  { operatorNamespace }: ClusterOptions,
): Promise<string> {
  if (operatorNamespace === undefined) return adminKubeconfigPath;
  const path = join(dir, 'operator-kubeconfig');
  return (await createOperatorIdentity(adminKubeconfigPath, operatorNamespace, path))
    .kubeconfigPath;
}

async function startK3s(options: ClusterOptions): Promise<StartedCluster> {
  const { K3sContainer } = await import('@testcontainers/k3s');
  const { writeFile } = await import('node:fs/promises');
  const container = await new K3sContainer('rancher/k3s:v1.32.3-k3s1').start();
  const dir = await mkdtemp(join(tmpdir(), 'nrn-k3s-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeFile(kubeconfigPath, container.getKubeConfig(), { mode: 0o600 });
  return {
    kind: 'k3s',
    kubeconfigPath,
    operatorKubeconfigPath: await operatorKubeconfig(kubeconfigPath, dir, options),
    settle: async () => {},
    close: async () => {
      await container.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const run = promisify(execFile);

export interface KubectlResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs the real kubectl on the PATH against the cluster; never throws on a non-zero exit. */
export async function kubectl(
  cluster: TestCluster,
  args: string[],
  options: { input?: string; timeoutMs?: number } = {},
): Promise<KubectlResult> {
  const child = run('kubectl', ['--kubeconfig', cluster.kubeconfigPath, ...args], {
    timeout: options.timeoutMs ?? 30_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (options.input !== undefined) {
    child.child.stdin?.end(options.input);
  }
  try {
    const { stdout, stderr } = await child;
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; code?: number | string };
    return {
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
      code: typeof e.code === 'number' ? e.code : 1,
    };
  }
}

/** A namespace name no other test uses. */
export const uniqueName = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;

/** What most integration files start with: a cluster, a client of it, a namespace of their own. */
export interface ClusterWithNamespace {
  readonly cluster: TestCluster;
  readonly kube: Kube;
  readonly ns: string;
  /** Deletes the namespace on a cluster that outlives the suite, then closes both. */
  close(): Promise<void>;
}

export async function startClusterWithNamespace(
  prefix: string,
  log: Logger,
): Promise<ClusterWithNamespace> {
  const cluster = await startCluster();
  const kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
  const ns = uniqueName(prefix);
  await kube.resource(Namespaces).create({ metadata: { name: ns } });
  return {
    cluster,
    kube,
    ns,
    close: async () => {
      // The local control plane goes whole with its data directory.
      if (cluster.kind !== 'local')
        await kubectl(cluster, ['delete', 'namespace', ns, '--wait=false']);
      kube.close();
      await cluster.close();
    },
  };
}

/** kubectl against a kubeconfig of a cluster this process did not start (a child process's). */
export const kubectlAt = (kubeconfigPath: string) => {
  const cluster: TestCluster = {
    kind: 'local',
    kubeconfigPath,
    settle: async () => {},
    close: async () => {},
  };
  return (args: string[], input?: string) =>
    kubectl(cluster, args, { timeoutMs: 60_000, ...(input !== undefined ? { input } : {}) });
};

const ROOT = join(import.meta.dirname, '../..');

/**
 * crds/, and once they are served, deploy/scopeclasses/ (a scope waits for its class): what a
 * platform team applies before the operator can provision a scope. Throws on a refusal.
 */
export async function installCrdsAndClasses(cluster: TestCluster): Promise<void> {
  const steps = [
    ['apply', '-f', join(ROOT, 'crds')],
    ['wait', '--for=condition=Established', '--timeout=60s', '-f', join(ROOT, 'crds')],
    ['apply', '--server-side', '-k', join(ROOT, 'deploy/scopeclasses')],
  ];
  for (const args of steps) {
    const result = await kubectl(cluster, args, { timeoutMs: 60_000 });
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  }
}
