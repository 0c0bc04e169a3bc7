// Authorization as kube-apiserver does it, driven through kubectl as users drive it: RBAC
// kinds stored and enforced (a Role and RoleBinding letting a user list configmaps in one
// namespace only, kube's 403 words), the bootstrap roles' aggregation, `kubectl auth can-i`
// (with --as and --list), `kubectl auth whoami`, `kubectl create token` and its token used
// for later requests and by TokenReview, and impersonation refused without the verb.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { kubectlAt, uniqueName } from '../support/cluster.js';
import { type RawApi, rawApi } from '../support/raw-api.js';

let plane: ControlPlane;
let dataDir: string;
let raw: RawApi;
let run: ReturnType<typeof kubectlAt>;
let ns: string;
let other: string;

/** A user the plane knows by token (its token auth file), with no rights of its own. */
const jane = {
  token: `jane-${Math.random().toString(36).slice(2)}`,
  username: 'jane',
  groups: ['dev', 'system:authenticated'],
};

async function ok(args: string[], input?: string): Promise<string> {
  const result = await run(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-rbac-'));
  plane = await startControlPlane({ dataDir, fsync: false, users: [jane] });
  raw = rawApi(plane);
  run = kubectlAt(plane.kubeconfigPath);
  ns = uniqueName('rbac');
  other = uniqueName('rbac-other');
  await ok(['create', 'namespace', ns]);
  await ok(['create', 'namespace', other]);
});

afterAll(async () => {
  await plane?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

describe('RBAC kinds', () => {
  it('serves the bootstrap cluster roles and bindings, and kubectl apply -k deploy/ stores them', async () => {
    const roles = await ok(['get', 'clusterroles', '-o', 'name']);
    for (const name of [
      'cluster-admin',
      'admin',
      'edit',
      'view',
      'system:discovery',
      'system:basic-user',
      'system:public-info-viewer',
    ]) {
      expect(roles).toContain(`clusterrole.rbac.authorization.k8s.io/${name}\n`);
    }
    const admin = parse(await ok(['get', 'clusterrolebinding', 'cluster-admin', '-o', 'yaml']));
    expect(admin.subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' },
    ]);
    const applied = await ok(['apply', '-k', join(import.meta.dirname, '../../deploy')]);
    for (const line of [
      'namespace/nrn-system created',
      'serviceaccount/nrn-operator created',
      'role.rbac.authorization.k8s.io/nrn-operator created',
      'clusterrole.rbac.authorization.k8s.io/nrn-operator created',
      'rolebinding.rbac.authorization.k8s.io/nrn-operator created',
      'clusterrolebinding.rbac.authorization.k8s.io/nrn-operator created',
    ]) {
      expect(applied).toContain(line);
    }
    const stored = parse(
      await ok(['get', 'role', 'nrn-operator', '-n', 'nrn-system', '-o', 'yaml']),
    );
    expect(stored.rules[0]).toEqual({
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: ['nrn-operator'],
      verbs: ['get', 'update'],
    });
  });

  it('refuses what ValidateRole and ValidateRoleBinding refuse, in their words', async () => {
    const bad = await run(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'bad', namespace: ns },
        rules: [{ verbs: [], nonResourceURLs: ['/x'] }],
      }),
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(
      'rules[0].verbs: Required value: verbs must contain at least one value',
    );
    expect(bad.stderr).toContain(
      'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs',
    );
    const binding = await run(['create', 'clusterrolebinding', 'bad', '--role=x', '--user=u']);
    expect(binding.code).not.toBe(0);
    await ok(['create', 'rolebinding', 'fixed', '--clusterrole=view', '--user=u', '-n', ns]);
    const changed = await run([
      'patch',
      'rolebinding',
      'fixed',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"roleRef":{"name":"edit"}}',
    ]);
    expect(changed.stderr).toContain(
      'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
    );
  });

  it('aggregates a labelled ClusterRole into view, and so into edit and admin', async () => {
    await ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: {
          name: 'scopes-view',
          labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' },
        },
        rules: [
          {
            apiGroups: ['platform.nrn.dev'],
            resources: ['scopes'],
            verbs: ['get', 'list', 'watch'],
          },
        ],
      }),
    );
    const hasScopes = async (role: string) =>
      (await ok(['get', 'clusterrole', role, '-o', 'json'])).includes('platform.nrn.dev');
    for (const role of ['view', 'edit', 'admin']) {
      await untilAsync(() => hasScopes(role));
    }
    await ok(['delete', 'clusterrole', 'scopes-view']);
    await untilAsync(async () => !(await hasScopes('view')));
  });
});

describe('enforcement', () => {
  it('lets a user list configmaps in one namespace only, and refuses elsewhere in kube-apiserver words', async () => {
    await ok(['create', 'role', 'cm-reader', '--verb=list', '--resource=configmaps', '-n', ns]);
    await ok(['create', 'rolebinding', 'jane-cm', '--role=cm-reader', '--user=jane', '-n', ns]);
    const asJane = (args: string[]) => run([...args, '--token', jane.token, '--user', '']);
    expect((await asJane(['get', 'configmaps', '-n', ns])).code).toBe(0);
    const refused = await asJane(['get', 'configmaps', '-n', other]);
    expect(refused.stderr).toContain(
      `Error from server (Forbidden): configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "${other}"`,
    );
    const answer = await raw.call('GET', `/api/v1/namespaces/${other}/configmaps`, undefined, {
      Authorization: `Bearer ${jane.token}`,
    });
    expect(answer.status).toBe(403);
    expect(answer.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "${other}"`,
      reason: 'Forbidden',
      details: { kind: 'configmaps' },
      code: 403,
    });
    const named = await raw.call('GET', `/api/v1/namespaces/${ns}/configmaps/x`, undefined, {
      Authorization: `Bearer ${jane.token}`,
    });
    expect(named.json.message).toBe(
      `configmaps "x" is forbidden: User "jane" cannot get resource "configmaps" in API group "" in the namespace "${ns}"`,
    );
    const cluster = await raw.call('GET', '/api/v1/namespaces', undefined, {
      Authorization: `Bearer ${jane.token}`,
    });
    expect(cluster.json.message).toBe(
      'namespaces is forbidden: User "jane" cannot list resource "namespaces" in API group "" at the cluster scope',
    );
    const path = await raw.call('GET', '/metrics', undefined, {
      Authorization: `Bearer ${jane.token}`,
    });
    expect(path.json.message).toBe('forbidden: User "jane" cannot get path "/metrics"');
    // Discovery is every authenticated user's (system:discovery).
    expect(
      (await asJane(['api-resources', '--api-group=rbac.authorization.k8s.io'])).stdout,
    ).toContain('clusterroles');
    // A binding to a role that does not exist says so.
    await ok(['create', 'rolebinding', 'dangling', '--role=missing', '--user=jane', '-n', ns]);
    const dangling = await raw.call('GET', `/api/v1/namespaces/${ns}/secrets`, undefined, {
      Authorization: `Bearer ${jane.token}`,
    });
    expect(dangling.json.message).toBe(
      `secrets is forbidden: User "jane" cannot list resource "secrets" in API group "" in the namespace "${ns}": RBAC: role.rbac.authorization.k8s.io "missing" not found`,
    );
  });

  it('answers kubectl auth can-i, with --as and --list, and whoami', async () => {
    expect((await ok(['auth', 'can-i', 'create', 'clusterroles'])).trim()).toBe('yes');
    expect(
      (await ok(['auth', 'can-i', 'list', 'configmaps', '-n', ns, '--as', 'jane'])).trim(),
    ).toBe('yes');
    const no = await run(['auth', 'can-i', 'list', 'configmaps', '-n', other, '--as', 'jane']);
    expect(no.stdout.trim()).toBe('no');
    expect(no.code).toBe(1);
    expect((await run(['auth', 'can-i', 'get', '/version', '--as', 'jane'])).stdout.trim()).toBe(
      'yes',
    );
    expect((await run(['auth', 'can-i', 'get', '/metrics', '--as', 'jane'])).stdout.trim()).toBe(
      'no',
    );
    const list = await ok(['auth', 'can-i', '--list', '-n', ns, '--as', 'jane']);
    expect(list).toMatch(/configmaps\s+\[\]\s+\[\]\s+\[list\]/);
    expect(list).toMatch(
      /selfsubjectaccessreviews.authorization.k8s.io\s+\[\]\s+\[\]\s+\[create\]/,
    );
    const whoami = parse(await ok(['auth', 'whoami', '-o', 'yaml']));
    expect(whoami.status.userInfo).toEqual({
      username: 'nrn-local-admin',
      groups: ['system:masters', 'system:authenticated'],
    });
    const asJane = await ok(['auth', 'whoami', '--as', 'jane', '--as-group', 'dev']);
    expect(asJane).toMatch(/Username\s+jane/);
    expect(asJane).toMatch(/Groups\s+\[dev system:authenticated\]/);
  });

  it('answers a SubjectAccessReview about anyone', async () => {
    const review = (spec: object) =>
      raw.call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec,
      });
    const allowed = await review({
      user: 'jane',
      resourceAttributes: { namespace: ns, verb: 'list', resource: 'configmaps' },
    });
    expect(allowed.status).toBe(201);
    expect(allowed.json.status).toEqual({
      allowed: true,
      reason:
        // rule.go's roleBindingDescriber names a binding name/namespace.
        `RBAC: allowed by RoleBinding "jane-cm/${ns}" of Role "cm-reader" to User "jane"`,
    });
    const denied = await review({
      user: 'jane',
      resourceAttributes: { namespace: other, verb: 'list', resource: 'configmaps' },
    });
    expect(denied.json.status).toEqual({ allowed: false });
    const invalid = await review({ resourceAttributes: { verb: 'list', resource: 'configmaps' } });
    expect(invalid.status).toBe(422);
    expect(invalid.json.message).toBe(
      'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified',
    );
  });
});

describe('escalation prevention', () => {
  it('lets a user grant only what it holds, unless it may escalate or bind', async () => {
    // Runs after 'enforcement': jane may list configmaps in ns (Role cm-reader).
    await ok([
      'create',
      'role',
      'rbac-writer',
      '--verb=create',
      '--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io',
      '-n',
      ns,
    ]);
    await ok([
      'create',
      'rolebinding',
      'jane-rbac-writer',
      '--role=rbac-writer',
      '--user=jane',
      '-n',
      ns,
    ]);
    const asJane = (path: string, body: object) =>
      raw.call('POST', path, body, { Authorization: `Bearer ${jane.token}` });
    const role = (name: string, resources: string[]) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name },
      rules: [{ apiGroups: [''], resources, verbs: ['list', 'get'] }],
    });
    const roles = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`;
    const held = await asJane(roles, {
      ...role('held', ['configmaps']),
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
    });
    expect(held.status).toBe(201);
    const more = await asJane(roles, role('more', ['configmaps', 'secrets']));
    expect(more.status).toBe(403);
    expect(more.json.message).toBe(
      'roles.rbac.authorization.k8s.io "more" is forbidden: user "jane" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["list" "get"]}' +
        // The RoleBinding left dangling above: ConfirmNoEscalation names what it could not read.
        '; resolution errors: [role.rbac.authorization.k8s.io "missing" not found]',
    );
    const bindings = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`;
    const binding = (name: string, kind: string, roleName: string) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: roleName },
      subjects: [{ kind: 'User', name: 'joe' }],
    });
    expect((await asJane(bindings, binding('joe-cm', 'Role', 'held'))).status).toBe(201);
    const edit = await asJane(bindings, binding('joe-edit', 'ClusterRole', 'edit'));
    expect(edit.status).toBe(403);
    expect(edit.json.message).toMatch(
      /^rolebindings.rbac.authorization.k8s.io "joe-edit" is forbidden: user "jane" \(groups=\["dev" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n/,
    );
    // With the bind verb on that ClusterRole, the binding is hers to make.
    await ok([
      'create',
      'role',
      'bind-edit',
      '--verb=bind',
      '--resource=clusterroles.rbac.authorization.k8s.io',
      '--resource-name=edit',
      '-n',
      ns,
    ]);
    await ok([
      'create',
      'rolebinding',
      'jane-bind-edit',
      '--role=bind-edit',
      '--user=jane',
      '-n',
      ns,
    ]);
    expect((await asJane(bindings, binding('joe-edit', 'ClusterRole', 'edit'))).status).toBe(201);
  });
});

describe('service account tokens', () => {
  it('issues a token with kubectl create token that authenticates as the account, until it is deleted', async () => {
    await ok(['create', 'serviceaccount', 'robot', '-n', ns]);
    const token = (await ok(['create', 'token', 'robot', '-n', ns])).trim();
    const asRobot = (args: string[]) => run([...args, '--token', token, '--user', '']);
    const whoami = await asRobot(['auth', 'whoami']);
    expect(whoami.stdout).toMatch(new RegExp(`Username\\s+system:serviceaccount:${ns}:robot`));
    expect(whoami.stdout).toContain(
      `[system:serviceaccounts system:serviceaccounts:${ns} system:authenticated]`,
    );
    const refused = await asRobot(['get', 'configmaps', '-n', ns]);
    expect(refused.stderr).toContain(
      `User "system:serviceaccount:${ns}:robot" cannot list resource "configmaps"`,
    );
    await ok([
      'create',
      'rolebinding',
      'robot-view',
      '--clusterrole=view',
      `--serviceaccount=${ns}:robot`,
      '-n',
      ns,
    ]);
    expect((await asRobot(['get', 'configmaps', '-n', ns])).code).toBe(0);

    const review = await raw.call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    expect(review.json.status.authenticated).toBe(true);
    expect(review.json.status.user.username).toBe(`system:serviceaccount:${ns}:robot`);
    expect(review.json.status.audiences).toEqual(['https://kubernetes.default.svc.cluster.local']);

    const short = await run(['create', 'token', 'robot', '-n', ns, '--duration=60s']);
    expect(short.stderr).toContain(
      'spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    );
    const missing = await run(['create', 'token', 'nobody', '-n', ns]);
    expect(missing.stderr).toContain('serviceaccounts "nobody" not found');

    await ok(['delete', 'serviceaccount', 'robot', '-n', ns]);
    const gone = await asRobot(['get', 'configmaps', '-n', ns]);
    expect(gone.stderr).toContain('Unauthorized');
  });
});

describe('impersonation', () => {
  it('acts as whom the headers name only with the impersonate verb', async () => {
    const refused = await run([
      'get',
      'configmaps',
      '-n',
      ns,
      '--as',
      'bob',
      '--token',
      jane.token,
      '--user',
      '',
    ]);
    expect(refused.stderr).toContain(
      'users "bob" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    await ok([
      'create',
      'clusterrole',
      'impersonate-bob',
      '--verb=impersonate',
      '--resource=users',
      '--resource-name=bob',
    ]);
    await ok([
      'create',
      'clusterrolebinding',
      'jane-as-bob',
      '--clusterrole=impersonate-bob',
      '--user=jane',
    ]);
    const asBob = await run(['auth', 'whoami', '--as', 'bob', '--token', jane.token, '--user', '']);
    expect(asBob.stdout).toMatch(/Username\s+bob/);
    const group = await run([
      'get',
      'configmaps',
      '-n',
      ns,
      '--as',
      'bob',
      '--as-group',
      'system:masters',
      '--token',
      jane.token,
      '--user',
      '',
    ]);
    expect(group.stderr).toContain(
      'groups "system:masters" is forbidden: User "jane" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
    // The admin (system:masters) may impersonate anyone: bob may do nothing.
    const bob = await run(['get', 'configmaps', '-n', ns, '--as', 'bob']);
    expect(bob.stderr).toContain(
      `configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "${ns}"`,
    );
  });
});

async function untilAsync(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
