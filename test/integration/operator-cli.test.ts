// The operator as the `nrn-operator` command runs it, driven with kubectl: `local` runs it
// beside its control plane (applying the CRDs itself), so a scope applied there ends Ready;
// `run` with no --kubeconfig follows the current kubeconfig (KUBECONFIG), and logs each
// reconcile as JSON with its key; in a pod (no kubeconfig), it uses the service account.
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { kubectl } from '../support/cluster.js';
import { applicationYaml, namespaceYaml, scopeYaml } from '../support/manifests.js';
import {
  createOperatorIdentity,
  DEPLOY_NAMESPACE,
  refusalsIn,
} from '../support/operator-identity.js';
import {
  type LogLine,
  startControlPlaneProcess,
  startLocalProcess,
  startOperatorProcess,
  terminate,
} from '../support/operator-processes.js';

const CRDS = join(import.meta.dirname, '../../crds');
const SCOPE_CLASSES = join(import.meta.dirname, '../../deploy/scopeclasses');
/** Where a pod's service account is mounted (client-node's in-cluster config reads it). */
const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

const manifests = (ns: string, scope: string) =>
  [namespaceYaml(ns), applicationYaml(ns, 'shop', 7), scopeYaml(ns, scope, 7)].join('---');

/** kubectl against the control plane of `kubeconfigPath`. */
const kubectlAt = (kubeconfigPath: string) => {
  const cluster = {
    kind: 'local' as const,
    kubeconfigPath,
    settle: async () => {},
    close: async () => {},
  };
  // Longer than kubectl's own --timeout below, so that kubectl says what it waited for.
  return (args: string[], input?: string) =>
    kubectl(cluster, args, { timeoutMs: 90_000, ...(input !== undefined ? { input } : {}) });
};

/** Applies an application and a scope with kubectl, waits for Ready, and gives the scope's id. */
async function applyUntilReady(kubeconfigPath: string, ns: string, scope: string) {
  const k = kubectlAt(kubeconfigPath);
  // The operator applies the CRDs as it starts: wait until kubectl can name the kinds.
  await expect
    .poll(async () => (await k(['get', 'crd', 'scopes.platform.nrn.dev'])).code, {
      timeout: 30_000,
    })
    .toBe(0);
  await k(['wait', '--for=condition=Established', 'crd/scopes.platform.nrn.dev']);
  await k(['wait', '--for=condition=Established', 'crd/applications.platform.nrn.dev']);
  const applied = await k(['apply', '-f', '-'], manifests(ns, scope));
  expect(applied.stderr).toBe('');
  const waited = await k([
    'wait',
    '--for=condition=Ready',
    `scope/${scope}`,
    '-n',
    ns,
    '--timeout=60s',
  ]);
  expect(waited.stdout).toContain('condition met');
  const got = await k([
    'get',
    'scope',
    scope,
    '-n',
    ns,
    '-o',
    'jsonpath={.status.status} {.status.id}',
  ]);
  const [status, id] = got.stdout.split(' ');
  expect(status).toBe('active');
  // Provisioned: the scope's own namespace is there.
  expect((await k(['get', 'namespace', `nrn-scope-${id}`])).code).toBe(0);
  return { id: Number(id) };
}

describe('the operator as the nrn-operator command runs it', () => {
  const dirs: string[] = [];
  // Stopped here too: a test that times out must not leave servers behind.
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children.reverse()) await terminate(child);
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  /**
   * `local --no-operator` in a directory of its own, with the CRDs installed and the operator's
   * ServiceAccount bound by deploy/rbac.yaml, as deploy/ does: `run` acts as it.
   */
  const planeWithCrds = async (prefix: string) => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(dir);
    const plane = await startControlPlaneProcess(dir);
    children.push(plane.child);
    const crds = await kubectlAt(plane.kubeconfigPath)(['apply', '-f', CRDS]);
    expect(crds.code).toBe(0);
    // A scope waits for its class: the default ones, as a platform team applies them.
    const at = kubectlAt(plane.kubeconfigPath);
    expect((await at(['wait', '--for=condition=Established', '-f', CRDS])).code).toBe(0);
    expect((await at(['apply', '--server-side', '-k', SCOPE_CLASSES])).code).toBe(0);
    const identity = await createOperatorIdentity(
      plane.kubeconfigPath,
      DEPLOY_NAMESPACE,
      join(dir, 'operator-kubeconfig'),
    );
    return { dir, plane, identity };
  };

  it('local: runs the operator beside the control plane, so a scope kubectl applies is Ready', {
    timeout: 120_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nrn-cli-local-'));
    dirs.push(dir);
    const local = await startLocalProcess(dir, ['--no-facade']);
    children.push(local.child);
    const { id } = await applyUntilReady(local.kubeconfigPath, 'shop', 'web');
    expect(id).toBeGreaterThan(0);
    expect(await terminate(local.child)).toBe(0);
  });

  it('run: with no --kubeconfig follows KUBECONFIG, and logs each reconcile with its key', {
    timeout: 120_000,
  }, async () => {
    const { plane, identity } = await planeWithCrds('nrn-cli-run-');
    const operator = startOperatorProcess({ environment: identity.kubeconfigPath });
    children.push(operator.child);
    await operator.waitForLog((line) => line.msg === 'leadership acquired', 60_000);
    const { id } = await applyUntilReady(plane.kubeconfigPath, 'shop', 'api');
    const provisioned = await operator.waitForLog(
      (line: LogLine) => line.msg === 'scope provisioned' && line.id === id,
    );
    expect(provisioned).toMatchObject({ controller: 'scopes', key: 'shop/api', level: 30 });
    expect(typeof provisioned.time).toBe('number');
    expect(await terminate(operator.child)).toBe(0);
    expect(refusalsIn(operator.logs)).toEqual([]);
    expect(await terminate(plane.child)).toBe(0);
  });

  it('run: in a pod (no kubeconfig, a service account), uses the in-cluster config', {
    timeout: 120_000,
  }, async (context) => {
    // client-node reads a pod's service account from this fixed path: made here only where
    // nothing is there (never in a real pod) and it can be (root), and removed after.
    const made = await mkdir(SERVICE_ACCOUNT, { recursive: true }).catch(() => undefined);
    if (made === undefined) {
      context.skip();
      return;
    }
    try {
      const { dir, plane, identity } = await planeWithCrds('nrn-cli-pod-');
      const config = parseYaml(await readFile(plane.kubeconfigPath, 'utf8')) as {
        clusters: { cluster: { 'certificate-authority-data': string } }[];
      };
      const ca = config.clusters[0]?.cluster['certificate-authority-data'] ?? '';
      // What the kubelet mounts: the CA, a token of the pod's ServiceAccount, its namespace.
      await writeFile(join(SERVICE_ACCOUNT, 'ca.crt'), Buffer.from(ca, 'base64'));
      await writeFile(join(SERVICE_ACCOUNT, 'token'), identity.token);
      await writeFile(join(SERVICE_ACCOUNT, 'namespace'), DEPLOY_NAMESPACE);
      const home = join(dir, 'home');
      await mkdir(home);
      const operator = startOperatorProcess({
        inCluster: { host: '127.0.0.1', port: new URL(plane.url).port, home },
      });
      children.push(operator.child);
      await operator.waitForLog((line) => line.msg === 'leadership acquired', 60_000);
      await applyUntilReady(plane.kubeconfigPath, 'shop', 'pod');
      expect(await terminate(operator.child)).toBe(0);
      expect(refusalsIn(operator.logs)).toEqual([]);
      expect(await terminate(plane.child)).toBe(0);
    } finally {
      await rm(made, { recursive: true, force: true });
    }
  });
});
