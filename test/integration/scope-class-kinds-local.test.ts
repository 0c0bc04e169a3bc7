// `nrn-operator local --scope-class-namespaced-kinds` reaches the webhook it registers (ADR
// 0029): widened to every namespaced kind, an admin's class templating a Role is admitted by
// `kubectl apply`; the cluster-scoped list left at its default still refuses a ClusterRole,
// naming that setting.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kubectlAt } from '../support/cluster.js';
import { startLocalProcess, terminate } from '../support/operator-processes.js';

const roleClass = (name: string, kind: 'Role' | 'ClusterRole') => `
apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: ${name}}
spec:
  scope_type: web_pool
  resources:
    - name: reader
      manifest:
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ${kind}
        metadata: {name: "reader-\${scope.id}"}
        rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
`;

describe('local --scope-class-namespaced-kinds', () => {
  let child: ChildProcess | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    if (child !== undefined) await terminate(child);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('widens what its webhook admits, and only that list', { timeout: 120_000 }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'nrn-class-kinds-'));
    const local = await startLocalProcess(dir, [
      '--no-facade',
      '--scope-class-namespaced-kinds',
      '*/*',
    ]);
    child = local.child;
    const kubectl = kubectlAt(local.kubeconfigPath);
    const admitted = await kubectl(['apply', '-f', '-'], roleClass('roles', 'Role'));
    expect(admitted.stderr).toBe('');
    expect(admitted.code).toBe(0);
    const refused = await kubectl(['apply', '-f', '-'], roleClass('cluster-roles', 'ClusterRole'));
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      'Error from server (Forbidden): error when creating "STDIN": admission webhook "validate.platform.nrn.dev" denied the request: spec.resources[0].manifest: kind rbac.authorization.k8s.io/ClusterRole is not among the cluster-scoped kinds a class may make (--scope-class-cluster-kinds or NRN_SCOPE_CLASS_CLUSTER_KINDS: none)',
    );
  });
});
