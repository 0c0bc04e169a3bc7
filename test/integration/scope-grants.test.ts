// A Scope attaches only to an Application of its own namespace, or to one that grants the
// Scope's namespace in spec.scope_namespaces (ADR 0033), shown as a hostile tenant tries it:
// a ServiceAccount with rights on Scopes in namespace `evil` only, its token from
// `kubectl create token`, names application 10 of namespace `team-a`. `nrn-operator local`
// runs the operator and registers its webhook: the apply is refused; with the webhook gone the
// reconciler keeps the scope pending, ApplicationNotGranted, giving it nothing; once team-a's
// Application grants `evil`, the scope goes active.
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { applicationYaml, scopeYaml } from '../support/manifests.js';
import { startLocalProcess, terminate } from '../support/operator-processes.js';
import { readUntil, sleep } from '../support/wait.js';

const execFileAsync = promisify(execFile);

interface ScopeView {
  metadata: { labels?: Record<string, string>; finalizers?: string[] };
  status?: {
    status?: string;
    id?: number;
    nrn?: string;
    inventory?: unknown[];
    conditions?: { type: string; status: string; reason: string; message?: string }[];
  };
}

/** kubectl's exit code, stdout and stderr, never throwing. */
async function kubectlResult(
  kubeconfig: string,
  args: string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = execFileAsync('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 });
  if (input !== undefined) run.child.stdin?.end(input);
  try {
    const { stdout, stderr } = await run;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** The tenant: may do anything to Scopes in `evil`, and nothing else anywhere. */
const TENANT = `
apiVersion: v1
kind: ServiceAccount
metadata: {name: tenant, namespace: evil}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: scopes, namespace: evil}
rules:
- apiGroups: [platform.nrn.dev]
  resources: [scopes]
  verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: tenant-scopes, namespace: evil}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: scopes}
subjects:
- {kind: ServiceAccount, name: tenant, namespace: evil}
`;

describe('a Scope attaches only to an Application that grants its namespace', () => {
  const children: ChildProcess[] = [];
  let dir: string | undefined;
  afterAll(async () => {
    for (const child of children) await terminate(child);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('refused at apply, pending ApplicationNotGranted without the webhook, active once granted', {
    timeout: 180_000,
  }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'nrn-scope-grants-'));
    const local = await startLocalProcess(dir, ['--no-facade']);
    children.push(local.child);
    const admin = local.kubeconfigPath;
    const ok = async (kubeconfig: string, args: string[], input?: string) => {
      const result = await kubectlResult(kubeconfig, args, input);
      if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    };

    await ok(admin, ['create', 'namespace', 'team-a']);
    await ok(admin, ['create', 'namespace', 'evil']);
    await ok(admin, ['apply', '-f', '-'], applicationYaml('team-a', 'shop', 10));
    await ok(admin, ['apply', '-f', '-'], TENANT);
    const token = (await ok(admin, ['create', 'token', 'tenant', '-n', 'evil'])).trim();
    const config = parseYaml(await readFile(admin, 'utf8')) as {
      users?: { name: string; user: Record<string, unknown> }[];
    };
    config.users = (config.users ?? []).map(({ name }) => ({ name, user: { token } }));
    const tenant = join(dir, 'tenant.kubeconfig');
    await writeFile(tenant, stringifyYaml(config), { mode: 0o600 });
    expect(await ok(tenant, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'])).toBe(
      'system:serviceaccount:evil:tenant',
    );
    // The tenant cannot even read what it names.
    expect((await kubectlResult(tenant, ['get', 'applications', '-n', 'team-a'])).code).toBe(1);

    // At apply: refused by the webhook, nothing stored. The webhook's cache learns of the
    // Application shortly after it is made: a server-side dry run asks until it is refused.
    const intruder = scopeYaml('evil', 'web', 10);
    const refusal =
      /^Error from server \(Forbidden\): error when creating "STDIN": admission webhook "validate\.platform\.nrn\.dev" denied the request: spec\.application_id: application 10 is Application team-a\/shop, which does not grant namespace evil: a Scope attaches only to an application of its own namespace, or to one whose spec\.scope_namespaces lists the Scope's namespace \(its owners add evil there\)$/;
    for (let i = 0; i < 60; i++) {
      const dry = await kubectlResult(tenant, ['apply', '--dry-run=server', '-f', '-'], intruder);
      if (dry.code !== 0) break;
      await sleep(250);
    }
    const denied = await kubectlResult(tenant, ['apply', '-f', '-'], intruder);
    expect(denied.code).toBe(1);
    expect(denied.stderr.trim()).toMatch(refusal);
    const stored = await kubectlResult(admin, ['get', '-n', 'evil', 'scope', 'web']);
    expect(stored.stderr.trim()).toBe(
      'Error from server (NotFound): scopes.platform.nrn.dev "web" not found',
    );

    // Without the webhook (a cluster whose registration is gone, or failurePolicy Ignore while
    // it is down) the apply goes through; the reconciler keeps the scope pending, saying why,
    // and gives it nothing: no id, no NRN, no namespace, no child.
    await ok(admin, ['delete', 'validatingwebhookconfiguration', 'nrn-operator']);
    const namespacesBefore = await ok(admin, ['get', 'namespaces', '-o', 'name']);
    await ok(tenant, ['apply', '-f', '-'], intruder);
    const getScope = async () =>
      JSON.parse(
        await ok(tenant, ['get', 'scope', 'web', '-n', 'evil', '-o', 'json']),
      ) as ScopeView;
    const reasonOf = (s: ScopeView) =>
      s.status?.conditions?.find((c) => c.type === 'Reconciling' && c.status === 'True');
    const pending = await readUntil(
      'scope evil/web pending ApplicationNotGranted',
      getScope,
      (s) => reasonOf(s)?.reason === 'ApplicationNotGranted',
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(pending.status?.status).toBe('pending');
    expect(reasonOf(pending)?.message).toBe(
      "application 10 is Application team-a/shop, which does not grant namespace evil: a Scope attaches only to an application of its own namespace, or to one whose spec.scope_namespaces lists the Scope's namespace (its owners add evil there); the scope waits for it",
    );
    await sleep(1500);
    const still = await getScope();
    expect(still.status?.status).toBe('pending');
    expect(still.status?.id).toBeUndefined();
    expect(still.status?.nrn).toBeUndefined();
    expect(still.status?.inventory).toBeUndefined();
    expect(still.metadata.labels?.['platform.nrn.dev/scope-id']).toBeUndefined();
    expect(await ok(admin, ['get', 'namespaces', '-o', 'name'])).toBe(namespacesBefore);

    // team-a grants `evil`: the Application's change brings the scope back, and it attaches.
    await ok(admin, [
      'patch',
      'application',
      'shop',
      '-n',
      'team-a',
      '--type=merge',
      '-p',
      '{"spec":{"scope_namespaces":["evil"]}}',
    ]);
    const active = await readUntil(
      'scope evil/web active',
      getScope,
      (s) => s.status?.status === 'active',
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(active.status?.id).toEqual(expect.any(Number));
    expect(active.status?.nrn).toMatch(/:application=10:scope=\d+$/);

    // A wildcard is no grant: the API server refuses it.
    const wildcard = await kubectlResult(admin, [
      'patch',
      'application',
      'shop',
      '-n',
      'team-a',
      '--type=merge',
      '-p',
      '{"spec":{"scope_namespaces":["*"]}}',
    ]);
    expect(wildcard.code).toBe(1);
    expect(wildcard.stderr).toContain('spec.scope_namespaces[0]');
  });
});
