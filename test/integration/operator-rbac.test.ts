// The operator as it runs in a cluster: `nrn-operator run` under the nrn-operator
// ServiceAccount's token, whose rights are exactly deploy/rbac.yaml's, against the local control
// plane enforcing RBAC. It reconciles a scope to active with them alone; its ClusterRole is
// aggregated, so a labelled role (deploy/scope-class-kinds.yaml) adds rights without a binding;
// a right taken away from the core role is refused by the API server (403), to the operator and
// to kubectl.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { kubectlAt, uniqueName } from '../support/cluster.js';
import { applicationYaml, scopeYaml } from '../support/manifests.js';
import { createOperatorIdentity, DEPLOY_NAMESPACE } from '../support/operator-identity.js';
import {
  type LogLine,
  type OperatorProcess,
  startOperatorProcess,
  terminate,
} from '../support/operator-processes.js';
import { rawApi } from '../support/raw-api.js';

const ROOT = join(import.meta.dirname, '../..');

let plane: ControlPlane;
let dataDir: string;
let admin: ReturnType<typeof kubectlAt>;
let asOperator: ReturnType<typeof kubectlAt>;
let operator: OperatorProcess | undefined;
let ns: string;
let token: string;

async function ok(run: ReturnType<typeof kubectlAt>, args: string[], input?: string) {
  const result = await run(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-operator-rbac-'));
  plane = await startControlPlane({ dataDir, fsync: false });
  admin = kubectlAt(plane.kubeconfigPath);
  await ok(admin, ['apply', '-f', join(ROOT, 'crds')]);
  await ok(admin, ['wait', '--for=condition=Established', '-f', join(ROOT, 'crds')]);
  // A scope waits for its class: the default ones, as a platform team applies them.
  await ok(admin, ['apply', '--server-side', '-k', join(ROOT, 'deploy/scopeclasses')]);
  // deploy/'s namespace, ServiceAccount and RBAC as they are, and a token of the account.
  const identity = await createOperatorIdentity(
    plane.kubeconfigPath,
    DEPLOY_NAMESPACE,
    join(dataDir, 'operator-kubeconfig'),
  );
  token = identity.token;
  const kubeconfig = identity.kubeconfigPath;
  asOperator = kubectlAt(kubeconfig);
  ns = uniqueName('operator-rbac');
  await ok(admin, ['create', 'namespace', ns]);
  operator = startOperatorProcess(kubeconfig, DEPLOY_NAMESPACE);
});

afterAll(async () => {
  if (operator !== undefined) await terminate(operator.child);
  await plane?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

describe('operator under RBAC', () => {
  it('acts as the nrn-operator ServiceAccount and nothing more', async () => {
    const whoami = await ok(asOperator, ['auth', 'whoami']);
    expect(whoami).toMatch(/Username\s+system:serviceaccount:nrn-system:nrn-operator/);
    const denied = await asOperator(['get', 'deployments.apps', '-n', 'nrn-system']);
    expect(denied.code).not.toBe(0);
    expect((await asOperator(['auth', 'can-i', 'delete', 'secrets', '-n', ns])).stdout.trim()).toBe(
      'no',
    );
  });

  it('gains the rights of a labelled ClusterRole through aggregation, and only those', async () => {
    const asOperatorCan = async (...args: string[]) =>
      (
        await admin([
          'auth',
          'can-i',
          ...args,
          '--as',
          `system:serviceaccount:${DEPLOY_NAMESPACE}:nrn-operator`,
        ])
      ).stdout.trim();
    // Aggregated from nrn-operator-core (createOperatorIdentity waited for it).
    expect(
      await asOperatorCan('patch', 'scopeclasses.platform.nrn.dev', '--subresource=status'),
    ).toBe('yes');
    expect(await asOperatorCan('delete', 'networkpolicies.networking.k8s.io', '-n', ns)).toBe(
      'yes',
    );
    expect(await asOperatorCan('create', 'deployments.apps', '-n', ns)).toBe('no');
    await ok(admin, ['apply', '-f', join(ROOT, 'deploy/scope-class-kinds.yaml')]);
    // The aggregation controller fills the role after the apply returns.
    await expect
      .poll(() => asOperatorCan('create', 'deployments.apps', '-n', ns), { timeout: 10_000 })
      .toBe('yes');
    expect(await asOperatorCan('delete', 'horizontalpodautoscalers.autoscaling', '-n', ns)).toBe(
      'yes',
    );
    expect(await asOperatorCan('create', 'statefulsets.apps', '-n', ns)).toBe('no');
    await ok(admin, ['delete', '-f', join(ROOT, 'deploy/scope-class-kinds.yaml')]);
    await expect
      .poll(() => asOperatorCan('create', 'deployments.apps', '-n', ns), { timeout: 10_000 })
      .toBe('no');
  });

  it('reconciles a scope to active with the rights of deploy/rbac.yaml alone', async () => {
    await ok(
      admin,
      ['apply', '-f', '-'],
      `${applicationYaml(ns, 'shop', 7)}---${scopeYaml(ns, 'api', 7)}`,
    );
    await ok(admin, [
      'wait',
      '--for=jsonpath={.status.status}=active',
      `scope/api`,
      '-n',
      ns,
      '--timeout=60s',
    ]);
    const scope = parse(await ok(admin, ['get', 'scope', 'api', '-n', ns, '-o', 'yaml']));
    expect(scope.status.status).toBe('active');
    // What it provisioned, as the service account: the scope's namespace.
    expect((await admin(['get', 'namespace', `nrn-scope-${scope.status.id}`])).code).toBe(0);
    // Nothing it did was refused.
    expect(operator?.logs.filter((l) => JSON.stringify(l).includes('is forbidden'))).toEqual([]);
  });

  it('is refused (403) a right taken from its ClusterRole', async () => {
    // From the labelled role: the aggregated one is rewritten from it (a change made to the
    // aggregated role itself would be undone by the aggregation controller).
    const role = parse(await ok(admin, ['get', 'clusterrole', 'nrn-operator-core', '-o', 'yaml']));
    // No more status patches of scopes.
    role.rules = role.rules.map((r: { resources: string[] }) => ({
      ...r,
      resources: r.resources.filter((x) => x !== 'scopes/status'),
    }));
    role.rules = role.rules.filter((r: { resources: string[] }) => r.resources.length > 0);
    await ok(admin, ['replace', '-f', '-'], JSON.stringify(role));
    await expect
      .poll(
        async () =>
          (
            await admin([
              'auth',
              'can-i',
              'patch',
              'scopes.platform.nrn.dev',
              '--subresource=status',
              '-n',
              ns,
              '--as',
              `system:serviceaccount:${DEPLOY_NAMESPACE}:nrn-operator`,
            ])
          ).stdout.trim(),
        { timeout: 10_000 },
      )
      .toBe('no');
    // kubectl patch would GET first: the PATCH itself, as the operator sends it.
    const patch = await rawApi(plane).call(
      'PATCH',
      `/apis/platform.nrn.dev/v1alpha1/namespaces/${ns}/scopes/api/status`,
      { status: { observedRetry: 'x' } },
      { Authorization: `Bearer ${token}`, 'Content-Type': 'application/merge-patch+json' },
    );
    expect(patch.status).toBe(403);
    expect(patch.json).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      details: { name: 'api', group: 'platform.nrn.dev', kind: 'scopes' },
      message: `scopes.platform.nrn.dev "api" is forbidden: User "system:serviceaccount:nrn-system:nrn-operator" cannot patch resource "scopes/status" in API group "platform.nrn.dev" in the namespace "${ns}"`,
    });
    // The operator meets the same refusal on the next scope it reconciles.
    await ok(admin, ['apply', '-f', '-'], scopeYaml(ns, 'worker', 7));
    const refused = await operator?.waitForLog(
      (l: LogLine) => JSON.stringify(l).includes('cannot patch resource \\"scopes/status\\"'),
      30_000,
    );
    expect(JSON.stringify(refused)).toContain('is forbidden');
  });
});
