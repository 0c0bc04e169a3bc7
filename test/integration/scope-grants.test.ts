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

  it('a tenant naming team-a’s application: pending, refused at apply, holding no slug; attached once granted', {
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

    const getScope = async (namespace: string, name: string) =>
      JSON.parse(
        await ok(admin, ['get', 'scope', name, '-n', namespace, '-o', 'json']),
      ) as ScopeView;
    const reasonOf = (s: ScopeView) =>
      s.status?.conditions?.find(
        (c) => (c.type === 'Reconciling' || c.type === 'Stalled') && c.status === 'True',
      );
    const waitReason = (namespace: string, name: string, reason: string) =>
      readUntil(
        `scope ${namespace}/${name} ${reason}`,
        () => getScope(namespace, name),
        (s) => reasonOf(s)?.reason === reason,
        { timeoutMs: 20_000, intervalMs: 200 },
      );
    const waitActive = (namespace: string, name: string) =>
      readUntil(
        `scope ${namespace}/${name} active`,
        () => getScope(namespace, name),
        (s) => s.status?.status === 'active',
        { timeoutMs: 30_000, intervalMs: 200 },
      );
    const notGranted =
      "application 10 does not grant namespace evil: a Scope attaches only to an application of its own namespace, or to one whose spec.scope_namespaces lists the Scope's namespace (its owners add evil there)";
    const namespacesBefore = await ok(admin, ['get', 'namespaces', '-o', 'name']);

    // Before the application exists no webhook can judge: the tenant's scope is admitted and
    // waits. Once team-a's Application comes, the reconciler keeps it pending, saying why,
    // and gives it nothing: no id, no NRN, no label, no namespace, no child.
    await ok(tenant, ['apply', '-f', '-'], scopeYaml('evil', 'web', 10));
    await waitReason('evil', 'web', 'WaitingForApplication');
    await ok(admin, ['apply', '-f', '-'], applicationYaml('team-a', 'shop', 10));
    const pending = await waitReason('evil', 'web', 'ApplicationNotGranted');
    expect(pending.status?.status).toBe('pending');
    expect(reasonOf(pending)?.message).toBe(`${notGranted}; the scope waits for it`);

    // It holds no slug of the application: team-a's own scope `web` is admitted (the webhook
    // knows both) and goes active, where the older squatter would have made it DuplicateSlug.
    await ok(admin, ['apply', '-f', '-'], scopeYaml('team-a', 'web', 10));
    await waitActive('team-a', 'web');
    const still = await getScope('evil', 'web');
    expect(reasonOf(still)?.reason).toBe('ApplicationNotGranted');
    expect(still.status?.id).toBeUndefined();
    expect(still.status?.nrn).toBeUndefined();
    expect(still.status?.inventory).toBeUndefined();
    expect(still.metadata.labels?.['platform.nrn.dev/scope-id']).toBeUndefined();
    const namespacesNow = (await ok(admin, ['get', 'namespaces', '-o', 'name'])).split('\n');
    // One namespace more: team-a/web's, none of evil/web's.
    expect(namespacesNow.filter((n) => !namespacesBefore.includes(n))).toHaveLength(1);

    // Now the webhook knows application 10: a new scope naming it from `evil` is refused at
    // apply, naming the field and the grant, and nothing is stored (a server-side dry run asks
    // until the webhook's cache has caught up).
    const intruder = scopeYaml('evil', 'api', 10);
    for (let i = 0; i < 60; i++) {
      const dry = await kubectlResult(tenant, ['apply', '--dry-run=server', '-f', '-'], intruder);
      if (dry.code !== 0) break;
      await sleep(250);
    }
    const denied = await kubectlResult(tenant, ['apply', '-f', '-'], intruder);
    expect(denied.code).toBe(1);
    expect(denied.stderr.trim()).toBe(
      `Error from server (Forbidden): error when creating "STDIN": admission webhook "validate.platform.nrn.dev" denied the request: spec.application_id: ${notGranted}`,
    );
    const stored = await kubectlResult(admin, ['get', '-n', 'evil', 'scope', 'api']);
    expect(stored.stderr.trim()).toBe(
      'Error from server (NotFound): scopes.platform.nrn.dev "api" not found',
    );

    // Without the webhook (its registration gone, or failurePolicy Ignore while it is down)
    // the apply goes through, and the reconciler holds the scope as it held the first.
    await ok(admin, ['delete', 'validatingwebhookconfiguration', 'nrn-operator']);
    await ok(tenant, ['apply', '-f', '-'], intruder);
    expect((await waitReason('evil', 'api', 'ApplicationNotGranted')).status?.id).toBeUndefined();

    // team-a grants `evil`: the Application's change brings both back. `api` attaches and goes
    // active; `web` is refused, its slug held by team-a's own scope since before it attached,
    // and still has no identity of the application; team-a/web stays active.
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
    const active = await waitActive('evil', 'api');
    expect(active.status?.id).toEqual(expect.any(Number));
    expect(active.status?.nrn).toMatch(/:application=10:scope=\d+$/);
    expect(active.status?.inventory?.length).toBeGreaterThan(0);
    const refused = await waitReason('evil', 'web', 'DuplicateSlug');
    expect(refused.status?.status).toBe('failed');
    expect(reasonOf(refused)?.message).toMatch(
      /^slug web is already used by scope team-a\/web \(id \d+\) of application 10$/,
    );
    expect(refused.status?.id).toBeUndefined();
    expect((await getScope('team-a', 'web')).status?.status).toBe('active');

    // The grant withdrawn: an attached scope keeps running, its identity and children kept
    // (ADR 0033); the Application's change is seen by it and changes nothing.
    await ok(admin, [
      'patch',
      'application',
      'shop',
      '-n',
      'team-a',
      '--type=merge',
      '-p',
      '{"spec":{"scope_namespaces":[]}}',
    ]);
    await sleep(1500);
    const kept = await getScope('evil', 'api');
    expect(kept.status?.status).toBe('active');
    expect(kept.status?.id).toBe(active.status?.id);
    expect(kept.status?.inventory?.length).toBe(active.status?.inventory?.length);

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
