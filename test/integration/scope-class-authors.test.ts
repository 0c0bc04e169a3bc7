// A ScopeClass makes only what its author could make (issue 13, ADR 0029), tried as a hostile
// tenant would: a ServiceAccount allowed to write ScopeClasses and Scopes (and namespaces, so
// that the envelope is not what stops it) applies classes with kubectl and its token, through
// the operator's webhook registered on the local plane. The webhook asks the API server
// (SubjectAccessReview as the tenant) and refuses the first right the tenant lacks, storing
// nothing; the operator's kind setting refuses RBAC kinds even to the admin until widened; and
// with no webhook at all, the operator itself fails the scope KindNotAllowed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdmissionServer,
  loadOrCreateWebhookTls,
  registerWebhook,
  startAdmissionServer,
  WEBHOOK_CONFIGURATION_NAME,
} from '../../src/admission/index.js';
import { kindAllowlist } from '../../src/domain/scope-classes/kinds.js';
import { connect, type Kube, Namespaces } from '../../src/kube/index.js';
import { type Operator, startOperator } from '../../src/operator.js';
import { kubectl, type StartedCluster, startCluster, uniqueName } from '../support/cluster.js';
import { applicationYaml, scopeYaml } from '../support/manifests.js';
import { readUntil } from '../support/wait.js';

const ROOT = join(import.meta.dirname, '../..');
const log = pino({ level: 'error' });
const DENIED = 'admission webhook "validate.platform.nrn.dev" denied the request: ';

interface View {
  status?: {
    status?: string;
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

describe('a ScopeClass makes only what its author could make', () => {
  let cluster: StartedCluster;
  let admin: Kube;
  let operatorKube: Kube;
  let server: AdmissionServer | undefined;
  let operator: Operator | undefined;
  let dir: string;
  let tenant: string;
  let token: string;
  let opNs: string;

  const run = (args: string[], input?: string) =>
    kubectl(cluster, args, input !== undefined ? { input } : {});
  const k = async (args: string[], input?: string) => {
    const result = await run(args, input);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  /** kubectl as the tenant: its ServiceAccount's token, no admin credentials. */
  const asTenant = (args: string[], input?: string) =>
    run([...args, '--token', token, '--user', ''], input);
  const stored = async (name: string) =>
    (await run(['get', 'scopeclass', name])).stderr.includes('NotFound') === false;
  /** The operator's webhook, serving with `kinds` (the operator's identity asks the reviews). */
  const serveWebhook = async (kinds: ReturnType<typeof kindAllowlist>) => {
    await server?.close();
    const tls = await loadOrCreateWebhookTls(dir);
    server = await startAdmissionServer({
      kube: operatorKube,
      log,
      port: 0,
      tls: { certFile: tls.certFile, keyFile: tls.keyFile },
      scopeClassKinds: kinds,
    });
    // Fail: a refusal here must be the webhook's, never a call that went nowhere.
    await registerWebhook(admin, { url: server.url, caBundle: tls.ca }, 'Fail', 'test');
  };
  const classYaml = (name: string, resources: string, extra = '') => `
apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: ${name}}
spec:
  scope_type: web_pool
${extra}  resources:
${resources}`;
  const clusterAdminBinding = () => `
    - name: grant
      manifest:
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRoleBinding
        metadata: {name: "owned-\${scope.slug}"}
        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
        subjects: [{kind: ServiceAccount, name: author, namespace: ${tenant}}]
`;
  const configMap = (namespace?: string) => `
    - name: settings
      manifest:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "settings-\${scope.id}"${namespace !== undefined ? `, namespace: ${namespace}` : ''}}
        data: {a: "1"}
`;
  const role = () => `
    - name: reader
      manifest:
        apiVersion: rbac.authorization.k8s.io/v1
        kind: Role
        metadata: {name: reader}
        rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
`;

  beforeAll(async () => {
    opNs = uniqueName('operator-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await k(['apply', '-f', join(ROOT, 'crds')]);
    await k(['wait', '--for=condition=Established', '--timeout=60s', '-f', join(ROOT, 'crds')]);
    admin = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    operatorKube = await connect({ kubeconfigPath: cluster.operatorKubeconfigPath, log });
    dir = await mkdtemp(join(tmpdir(), 'nrn-class-authors-'));
    tenant = uniqueName('tenant');
    await admin.resource(Namespaces).create({ metadata: { name: tenant } });
    await k(['create', 'serviceaccount', 'author', '-n', tenant]);
    // May write classes and scopes, and namespaces (the envelope); nothing else cluster-wide.
    await k(
      ['apply', '-f', '-'],
      `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ${tenant}-class-author}
rules:
  - apiGroups: [platform.nrn.dev]
    resources: [scopeclasses, scopes]
    verbs: [get, list, watch, create, update, patch, delete]
  - apiGroups: ['']
    resources: [namespaces]
    verbs: [get, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ${tenant}-class-author}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${tenant}-class-author}
subjects: [{kind: ServiceAccount, name: author, namespace: ${tenant}}]
`,
    );
    // ConfigMaps in its own namespace only.
    await k([
      'create',
      'role',
      'configmaps',
      '--verb=get,create,update,patch,delete',
      '--resource=configmaps',
      '-n',
      tenant,
    ]);
    await k([
      'create',
      'rolebinding',
      'configmaps',
      '--role=configmaps',
      `--serviceaccount=${tenant}:author`,
      '-n',
      tenant,
    ]);
    token = (await k(['create', 'token', 'author', '-n', tenant])).trim();
    // The platform team widened the cluster-scoped kinds to ClusterRoleBindings: what stops
    // the tenant then is its own rights, not the setting.
    await serveWebhook(kindAllowlist(undefined, 'rbac.authorization.k8s.io/ClusterRoleBinding'));
  }, 120_000);
  afterAll(async () => {
    await operator?.stop();
    await server?.close();
    operatorKube?.close();
    admin?.close();
    await cluster?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('a tenant cannot make a class bind cluster-admin to itself: refused naming the right', async () => {
    for (const dryRun of [['--dry-run=server'], []]) {
      const result = await asTenant(
        ['apply', ...dryRun, '-f', '-'],
        classYaml('escalate', clusterAdminBinding()),
      );
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(
        `Error from server (Forbidden): error when creating "STDIN": ${DENIED}spec.resources[0].manifest: user system:serviceaccount:${tenant}:author may not create clusterrolebindings.rbac.authorization.k8s.io (cluster-wide); a class may make only what its author could make`,
      );
    }
    expect(await stored('escalate')).toBe(false);
  });

  it('a tenant cannot template a ConfigMap where it may not make one; in its namespace it may', async () => {
    const anywhere = await asTenant(['apply', '-f', '-'], classYaml('anywhere', configMap()));
    expect(anywhere.code).toBe(1);
    expect(anywhere.stderr).toContain(
      `${DENIED}spec.resources[0].manifest: user system:serviceaccount:${tenant}:author may not create configmaps (cluster-wide); a class may make only what its author could make`,
    );
    expect(await stored('anywhere')).toBe(false);
    // A fixed namespace is where the right is asked: its own.
    const own = await asTenant(['apply', '-f', '-'], classYaml('own', configMap(tenant)));
    expect(own.stderr).toBe('');
    expect(own.code).toBe(0);
    expect(await stored('own')).toBe(true);
    // An update that changes the spec is asked again: another tenant's namespace is not its own.
    const moved = await asTenant(['apply', '-f', '-'], classYaml('own', configMap('default')));
    expect(moved.code).toBe(1);
    expect(moved.stderr).toContain(
      `may not create configmaps (in namespace default); a class may make only what its author could make`,
    );
    await k(['delete', 'scopeclass', 'own']);
  });

  it('the admin is refused an RBAC kind by the setting, naming it; widened, it is admitted', async () => {
    const refused = await run(['apply', '-f', '-'], classYaml('roles', role()));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `${DENIED}spec.resources[0].manifest: kind rbac.authorization.k8s.io/Role is not among the namespaced kinds a class may make (--scope-class-namespaced-kinds or NRN_SCOPE_CLASS_NAMESPACED_KINDS: "*/*,!rbac.authorization.k8s.io/*,!admissionregistration.k8s.io/*")`,
    );
    expect(await stored('roles')).toBe(false);
    await serveWebhook(kindAllowlist('*/*,!admissionregistration.k8s.io/*'));
    const admitted = await run(['apply', '-f', '-'], classYaml('roles', role()));
    expect(admitted.stderr).toBe('');
    expect(await stored('roles')).toBe(true);
    // The tenant still may not: the setting widens what a class may hold, not who may write it.
    const tenantRole = await asTenant(['apply', '-f', '-'], classYaml('tenant-roles', role()));
    expect(tenantRole.stderr).toContain(
      `user system:serviceaccount:${tenant}:author may not create roles.rbac.authorization.k8s.io (cluster-wide)`,
    );
    await k(['delete', 'scopeclass', 'roles']);
  });

  it('with no webhook, the operator fails the scope KindNotAllowed and the class is Stalled', {
    timeout: 60_000,
  }, async () => {
    await server?.close();
    server = undefined;
    await k(['delete', 'validatingwebhookconfiguration', WEBHOOK_CONFIGURATION_NAME]);
    // Nothing refuses it at apply now.
    await k(['apply', '-f', '-'], classYaml('unguarded', role(), '  default: true\n'));
    await k(['apply', '-f', '-'], applicationYaml(tenant, 'shop', 70));
    await k(['apply', '-f', '-'], scopeYaml(tenant, 'web', 70));
    operator = await startOperator({
      kube: operatorKube,
      log,
      namespace: opNs,
      leaderElection: false,
    });
    const read = (what: string) => async () =>
      JSON.parse(await k(['get', what, '-n', tenant, '-o', 'json'])) as View;
    const setting =
      '(--scope-class-namespaced-kinds or NRN_SCOPE_CLASS_NAMESPACED_KINDS: "*/*,!rbac.authorization.k8s.io/*,!admissionregistration.k8s.io/*")';
    const scope = await readUntil(
      'scope web',
      read('scope/web'),
      (s) => s.status?.status === 'failed',
      {
        timeoutMs: 30_000,
      },
    );
    const stalled = scope.status?.conditions?.find((c) => c.type === 'Stalled');
    expect(stalled).toMatchObject({ status: 'True', reason: 'KindNotAllowed' });
    expect(stalled?.message).toBe(
      `resources.reader: kind rbac.authorization.k8s.io/Role is not among the namespaced kinds a class may make ${setting}`,
    );
    // Nothing of the class was made: no envelope namespace, no Role.
    expect((await run(['get', 'roles', '-A', '-o', 'name'])).stdout).not.toContain('reader');
    const klass = await readUntil(
      'class unguarded',
      read('scopeclass/unguarded'),
      (c) => c.status?.conditions?.some((x) => x.reason === 'KindNotAllowed') === true,
      { timeoutMs: 30_000 },
    );
    expect(klass.status?.conditions?.find((c) => c.type === 'Stalled')).toMatchObject({
      status: 'True',
      reason: 'KindNotAllowed',
      message: `resources.reader (spec.resources[0].manifest): kind rbac.authorization.k8s.io/Role is not among the namespaced kinds a class may make ${setting}`,
    });
  });
});
