// `nrn-operator local` runs its operator as a cluster runs it (ADR 0030): under deploy/'s
// ServiceAccount and deploy/rbac.yaml's rights, through a token of its own (DIR/
// operator.kubeconfig, 0600), while the admin kubeconfig stays the user's. A class naming a kind
// deploy/rbac.yaml does not grant (a Deployment) fails its scope `Forbidden` locally, as on a
// cluster; an aggregated ClusterRole granting it, applied as README tells a platform team, and
// the retry annotation make the scope active. A reopened data dir gets the same identity again.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { applicationYaml, namespaceYaml, scopeYaml } from '../support/manifests.js';
import { startLocalProcess, terminate } from '../support/operator-processes.js';

const execFileAsync = promisify(execFile);
const OPERATOR = 'system:serviceaccount:nrn-system:nrn-operator';

async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const run = execFileAsync('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 });
  if (input !== undefined) run.child.stdin?.end(input);
  return (await run).stdout;
}

const whoami = (kubeconfig: string) =>
  kubectl(kubeconfig, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);

interface ScopeView {
  status?: {
    status?: string;
    inventory?: { kind: string; namespace?: string; name: string }[];
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

const DEPLOYMENT_CLASS = `
apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: web-with-deployment}
spec:
  scope_type: web_pool
  match: {labels: {runs: deployment}}
  resources:
    - name: web
      wait_for: false
      manifest:
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: web, image: nginx}]}
`;

/** What README tells a platform team to apply for a class naming Deployments. */
const DEPLOYMENT_RIGHTS = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: test-operator-deployments
  labels: {platform.nrn.dev/aggregate-to-operator: "true"}
rules:
  - apiGroups: [apps]
    resources: [deployments]
    verbs: [get, list, watch, create, patch, delete]
`;

describe('nrn-operator local runs its operator under deploy/rbac.yaml', () => {
  let dir: string | undefined;
  const children: import('node:child_process').ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children) await terminate(child);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('as the nrn-operator ServiceAccount: a kind outside the rbac is Forbidden until granted', {
    timeout: 180_000,
  }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'nrn-local-identity-'));
    const first = await startLocalProcess(dir, ['--no-facade']);
    children.push(first.child);
    const ready = first.lines.find((line) => line.includes('ready:')) ?? '';
    expect(ready).toContain(`; operator running as ${OPERATOR};`);

    // The operator's kubeconfig: a credential, the ServiceAccount's; the user's stays admin.
    const operatorKubeconfig = join(dir, 'operator.kubeconfig');
    expect((await stat(operatorKubeconfig)).mode & 0o777).toBe(0o600);
    expect(await whoami(operatorKubeconfig)).toBe(OPERATOR);
    const admin = first.kubeconfigPath;
    expect(await whoami(admin)).not.toBe(OPERATOR);
    expect(await readFile(admin, 'utf8')).not.toContain(
      (await readFile(operatorKubeconfig, 'utf8')).match(/token: (\S+)/)?.[1] ?? 'no token',
    );
    // deploy/'s identity, applied by `local`: the aggregated role holds nrn-operator-core's rules.
    expect(
      await kubectl(admin, ['auth', 'can-i', 'patch', 'scopes/status', `--as=${OPERATOR}`]),
    ).toBe('yes\n');
    const canDeploy = await kubectl(admin, [
      'auth',
      'can-i',
      'create',
      'deployments.apps',
      '-A',
      `--as=${OPERATOR}`,
    ]).catch((error: { stdout?: string }) => error.stdout ?? '');
    expect(canDeploy).toBe('no\n');

    const ns = 'team-identity';
    await kubectl(admin, ['apply', '-f', '-'], namespaceYaml(ns));
    await kubectl(admin, ['apply', '-f', '-'], applicationYaml(ns, 'shop', 70));
    await kubectl(admin, ['apply', '-f', '-'], DEPLOYMENT_CLASS);
    await kubectl(
      admin,
      ['apply', '-f', '-'],
      scopeYaml(ns, 'web', 70).replace(
        'metadata: {name: web,',
        'metadata: {labels: {runs: deployment}, name: web,',
      ),
    );
    const scope = async () =>
      JSON.parse(
        await kubectl(admin, ['get', 'scope', 'web', '-n', ns, '-o', 'json']),
      ) as ScopeView;
    const until = async (what: string, ok: (s: ScopeView) => boolean): Promise<ScopeView> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const current = await scope();
        if (ok(current)) return current;
        if (Date.now() > deadline) {
          throw new Error(`scope web never ${what}: ${JSON.stringify(current.status)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const stalled = (s: ScopeView) => s.status?.conditions?.find((c) => c.type === 'Stalled');

    const failed = await until('failed', (s) => s.status?.status === 'failed');
    expect(stalled(failed)?.reason).toBe('Forbidden');
    expect(stalled(failed)?.message).toContain('resources.web');

    await kubectl(admin, ['apply', '-f', '-'], DEPLOYMENT_RIGHTS);
    // The aggregation controller folds the new role in on its next pass.
    const granted = Date.now() + 30_000;
    for (;;) {
      const answer = await kubectl(admin, [
        'auth',
        'can-i',
        'create',
        'deployments.apps',
        '-A',
        `--as=${OPERATOR}`,
      ]).catch((error: { stdout?: string }) => error.stdout ?? '');
      if (answer === 'yes\n') break;
      if (Date.now() > granted) throw new Error('the aggregated role never granted deployments');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await kubectl(admin, ['annotate', 'scope', 'web', '-n', ns, 'platform.nrn.dev/retry=1']);
    const active = await until('active', (s) => s.status?.status === 'active');
    const made = active.status?.inventory?.find((c) => c.kind === 'Deployment')?.namespace ?? '';
    expect(made).not.toBe('');
    const deployment = JSON.parse(
      await kubectl(admin, ['get', 'deployment', 'web', '-n', made, '-o', 'json']),
    ) as { metadata: { labels?: Record<string, string> } };
    expect(deployment.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('nrn-operator');

    // Nothing else was refused (the scope's own failure aside): the operator needs no right
    // deploy/rbac.yaml lacks.
    const refusals = first
      .stderr()
      .split('\n')
      .filter((line) => /forbidden/i.test(line) && !/deployments|team-identity\/web/.test(line));
    expect(refusals).toEqual([]);

    // Reopened: the same identity, with a token of this start.
    const before = await readFile(operatorKubeconfig, 'utf8');
    await terminate(first.child);
    const second = await startLocalProcess(dir, ['--no-facade']);
    children.push(second.child);
    expect(second.lines.find((line) => line.includes('ready:'))).toContain(
      `; operator running as ${OPERATOR};`,
    );
    expect(await readFile(operatorKubeconfig, 'utf8')).not.toBe(before);
    expect(await whoami(operatorKubeconfig)).toBe(OPERATOR);
    // The restarted operator looks at the scope again, as the ServiceAccount, and keeps it active.
    await until('active again', (s) => s.status?.status === 'active');
    expect(
      second
        .stderr()
        .split('\n')
        .filter((line) => /forbidden/i.test(line)),
    ).toEqual([]);
  });
});
