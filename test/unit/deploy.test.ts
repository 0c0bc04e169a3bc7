// deploy/: every manifest is a valid Kubernetes object, the Deployment's command line is one
// our CLI accepts, and the RBAC rules grant exactly the requests the operator and the facade
// send (the table below, read off the code), nothing more, through the aggregated ClusterRole
// as the clusterrole-aggregation controller fills it; the opt-in roles for a ScopeClass's kinds
// aggregate to it and stay out of the default install. The ValidatingWebhookConfiguration is
// the one the code builds, behind the Service's webhook port, and kustomize builds deploy/ with
// and without the cert-manager component.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { ValidatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  clusterWebhookConfiguration,
  DEFAULT_WEBHOOK_PORT,
  serviceDnsNames,
  WEBHOOK_CONFIGURATION_NAME,
  WEBHOOK_TLS_SECRET,
} from '../../src/admission/index.js';
import { GROUP } from '../../src/api/index.js';
import { parseCommandLine } from '../../src/command-line.js';
import { ID_COUNTER_NAME } from '../../src/domain/scopes/id-allocator.js';
import { DEFAULT_FACADE_PORT } from '../../src/facade/index.js';
import { DEFAULT_METRICS_PORT } from '../../src/observability.js';
import { DEFAULT_OPERATOR_NAMESPACE, OPERATOR_NAME } from '../../src/operator.js';
import { DEFAULT_DRAIN_TIMEOUT_MS } from '../../src/runtime/index.js';

const DEPLOY_DIR = join(import.meta.dirname, '../../deploy');
/**
 * Files of deploy/ a platform team applies by choice, not listed in kustomization.yaml: the
 * rights on the kinds the example ScopeClass names.
 */
const OPT_IN = new Set(['scope-class-kinds.yaml']);
const AGGREGATE_LABEL = 'platform.nrn.dev/aggregate-to-operator';
const CLI = join(import.meta.dirname, '../../src/cli.ts');

interface Manifest {
  readonly file: string;
  readonly object: {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; labels?: Record<string, string> };
    [field: string]: unknown;
  };
}

/** The model class of each kind deploy/ may hold; a kind not listed here fails the test. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration': ValidatingWebhookConfiguration,
};

async function manifestFiles(): Promise<string[]> {
  return (await readdir(DEPLOY_DIR))
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .sort();
}

async function loadManifests(): Promise<Manifest[]> {
  const out: Manifest[] = [];
  for (const file of await manifestFiles()) {
    for (const doc of parseAllDocuments(await readFile(join(DEPLOY_DIR, file), 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.join('; ')}`);
      const object = doc.toJS() as Manifest['object'] | null;
      if (object !== null) out.push({ file, object });
    }
  }
  return out;
}

const everything = await loadManifests();
/** What `kubectl apply -k deploy/` installs. */
const manifests = everything.filter((m) => !OPT_IN.has(m.file));
const optIn = everything.filter((m) => OPT_IN.has(m.file));

function only<T = Manifest['object']>(kind: string): T {
  const found = manifests.filter((m) => m.object.kind === kind);
  if (found.length !== 1) throw new Error(`deploy/ holds ${found.length} ${kind}s, not one`);
  return (found[0] as Manifest).object as T;
}

// ---------------------------------------------------------------------------------------------
// The RBAC table: every (apiGroup, resource, verb, scope) `nrn-operator run` sends, read off
// the code (kube.resource(...) and kube.informer(...) call sites, src/kube/reviews.ts). An
// informer is list + watch; ResourceClient.replace is update; patch, patchStatus and apply are
// patch; a server-side apply that makes a missing object is also authorized as create (the API
// server checks `create` then: apiserver endpoints/handlers/patch.go). `cluster`: in any
// namespace (or a cluster-scoped kind); `operator-namespace`: only in the operator's own
// namespace (nrn-system; --namespace or POD_NAMESPACE), through a Role there.
// ---------------------------------------------------------------------------------------------

type Scope = 'cluster' | 'operator-namespace';

interface Permission {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
  readonly scope: Scope;
  /** resourceNames the rule is limited to; absent: any name. */
  readonly names?: readonly string[];
  /** Which module sends it, and why. */
  readonly by: string;
}

const CORE = '';
const LEASES = 'coordination.k8s.io';
const NETWORKING = 'networking.k8s.io';

type Row = readonly [group: string, resource: string, verb: string, scope: Scope, by: string];
const C = 'cluster';
const NS = 'operator-namespace';
const children = ['resourcequotas', 'limitranges', 'serviceaccounts'];

// biome-ignore format: a table reads best one row a line
const ROWS: readonly Row[] = [
  // platform.nrn.dev: our four kinds, in every namespace.
  [GROUP, 'scopes', 'get', C, 'controllers/scope/reconciler.ts readByKey; facade/scopes.ts re-read after a lost status race'],
  [GROUP, 'scopes', 'list', C, 'operator.ts, facade/index.ts informers; facade/scopes.ts get(id) by label on a cache miss'],
  [GROUP, 'scopes', 'watch', C, 'operator.ts, facade/index.ts informers'],
  [GROUP, 'scopes', 'create', C, 'facade/scopes.ts POST /scope'],
  [GROUP, 'scopes', 'patch', C, 'controllers/scope/reconciler.ts finalizer and scope id label (ensureMetadata, removeFinalizer)'],
  [GROUP, 'scopes', 'delete', C, 'facade/scopes.ts undo: a scope whose acceptance failed (uid precondition)'],
  [GROUP, 'scopes/status', 'patch', C, 'controllers/scope/reconciler.ts status; facade/scopes.ts accept (pending, id, slug, domain)'],
  [GROUP, 'services', 'get', C, 'controllers/service/reconciler.ts readByKey'],
  [GROUP, 'services', 'list', C, 'controllers/service/setup.ts, facade/index.ts informers'],
  [GROUP, 'services', 'watch', C, 'controllers/service/setup.ts, facade/index.ts informers'],
  [GROUP, 'services', 'patch', C, 'controllers/service/reconciler.ts finalizer (ensureFinalizer, removeFinalizer)'],
  [GROUP, 'services/status', 'patch', C, 'controllers/service/reconciler.ts status (writeStatus, commitStatus)'],
  [GROUP, 'applications', 'get', C, 'controllers/application/reconciler.ts readByKey'],
  [GROUP, 'applications', 'list', C, 'operator.ts, facade/index.ts informers'],
  [GROUP, 'applications', 'watch', C, 'operator.ts, facade/index.ts informers'],
  [GROUP, 'applications/status', 'patch', C, 'controllers/application/reconciler.ts commitStatus'],
  [GROUP, 'servicespecifications', 'get', C, 'controllers/specification/reconciler.ts readByKey'],
  [GROUP, 'servicespecifications', 'list', C, 'controllers/service/setup.ts, facade/index.ts informers'],
  [GROUP, 'servicespecifications', 'watch', C, 'controllers/service/setup.ts, facade/index.ts informers'],
  [GROUP, 'servicespecifications/status', 'patch', C, 'controllers/specification/reconciler.ts commitStatus'],
  [GROUP, 'scopeclasses', 'list', C, 'operator.ts informer of ScopeClasses: the scope reconciler selects a class from it'],
  [GROUP, 'scopeclasses', 'watch', C, 'operator.ts informer of ScopeClasses'],
  [GROUP, 'scopeclasses/status', 'patch', C, 'controllers/scope-class/reconciler.ts status (scopes, upToDate, Ready)'],
  // The class provisioner (controllers/provisioners/class/) and its informers.
  [CORE, 'namespaces', 'get', C, 'provisioners/class/provisioner.ts a namespace not in its cache (AlreadyExists), a kind not yet listed'],
  [CORE, 'namespaces', 'list', C, 'operator.ts informer of the namespaces it manages (label selector)'],
  [CORE, 'namespaces', 'watch', C, 'operator.ts informer of the namespaces it manages'],
  [CORE, 'namespaces', 'create', C, 'operator.ts ensureNamespace (its own); provisioners/class/provisioner.ts create of a scope namespace'],
  [CORE, 'namespaces', 'patch', C, 'provisioners/class/provisioner.ts server-side apply'],
  [CORE, 'namespaces', 'delete', C, 'provisioners/class/provisioner.ts remove, when the scope is deleted (uid precondition)'],
  ...children.map((r): Row => [CORE, r, 'list', C, 'operator.ts informer of the children it manages (label selector)']),
  ...children.map((r): Row => [CORE, r, 'watch', C, 'operator.ts informer of the children it manages']),
  ...children.map((r): Row => [CORE, r, 'patch', C, 'provisioners/class/provisioner.ts server-side apply into the scope namespace']),
  ...children.map((r): Row => [CORE, r, 'create', C, 'provisioners/class/provisioner.ts server-side apply that makes the child']),
  ...children.map((r): Row => [CORE, r, 'delete', C, 'provisioners/class/provisioner.ts prunes what a changed ScopeClass no longer makes']),
  [NETWORKING, 'networkpolicies', 'list', C, "informer of the envelope's default-deny NetworkPolicies (label selector)"],
  [NETWORKING, 'networkpolicies', 'watch', C, "informer of the envelope's default-deny NetworkPolicies"],
  [NETWORKING, 'networkpolicies', 'create', C, 'provisioners/class/provisioner.ts: server-side apply that makes the default-deny policy'],
  [NETWORKING, 'networkpolicies', 'patch', C, 'provisioners/class/provisioner.ts: server-side apply of network_policy: default_deny'],
  [NETWORKING, 'networkpolicies', 'delete', C, 'provisioners/class/provisioner.ts prunes it when the class turns network_policy to none'],
  // Secrets (ADR 0005 "Permissions on Secrets").
  [CORE, 'secrets', 'get', C, 'domain/services/secrets.ts readSecret (attributes, webhook signing key, digest key), service/outputs.ts, facade secret attributes'],
  [CORE, 'secrets', 'list', C, 'controllers/service/setup.ts informer of labelled attribute Secrets (RBAC cannot narrow to a label)'],
  [CORE, 'secrets', 'watch', C, 'controllers/service/setup.ts informer of labelled attribute Secrets'],
  [CORE, 'secrets', 'patch', C, 'domain/services/secrets.ts readLabelledSecret puts the label; service/outputs.ts writeOutputs server-side apply'],
  [CORE, 'secrets', 'create', C, "service/outputs.ts writeOutputs apply making an output Secret (services' namespaces); secrets.ts digest key"],
  // Events, in the namespace of the object they are about; created, never updated or patched.
  [CORE, 'events', 'create', C, 'domain/event-recorder.ts EventRecorder (operator and facade)'],
  [CORE, 'events', 'list', C, 'facade/status/events.ts the last Events about a scope or service (GET /status/resources/...)'],
  // The facade's `kubernetes` auth (kube/reviews.ts, facade/auth.ts); the webhook's review of a
  // ScopeClass's author (admission/class-rights.ts, ADR 0029).
  ['authentication.k8s.io', 'tokenreviews', 'create', C, 'facade/auth.ts KubernetesAuthenticator: who holds the bearer token'],
  ['authorization.k8s.io', 'subjectaccessreviews', 'create', C, 'facade/auth.ts KubernetesAuthenticator: may the caller do this'],
  // Only in the operator's namespace, and get/update only on the object's name.
  [LEASES, 'leases', 'get', NS, 'runtime/leader.ts reads the Lease'],
  [LEASES, 'leases', 'create', NS, 'runtime/leader.ts makes the Lease the first time'],
  [LEASES, 'leases', 'update', NS, 'runtime/leader.ts acquires, renews, releases (PUT with resourceVersion)'],
  [CORE, 'configmaps', 'get', NS, 'domain/scopes/id-allocator.ts reads the scope id counter (operator and facade)'],
  [CORE, 'configmaps', 'create', NS, 'domain/scopes/id-allocator.ts makes the counter the first time'],
  [CORE, 'configmaps', 'update', NS, 'domain/scopes/id-allocator.ts compare-and-swap (PUT with resourceVersion)'],
  // The webhook's self-managed certificate (admission/self-managed.ts; its get and create are the cluster-wide rows).
  [CORE, 'secrets', 'update', NS, 'admission/self-managed.ts renews the certificate Secret (PUT with resourceVersion)'],
  ['admissionregistration.k8s.io', 'validatingwebhookconfigurations', 'get', C, 'admission/self-managed.ts reads the caBundle before patching it'],
  ['admissionregistration.k8s.io', 'validatingwebhookconfigurations', 'patch', C, 'admission/self-managed.ts writes its CA into the caBundle (JSON patch)'],
];

/** The objects a namespaced row is limited to by resourceNames (create cannot be). */
const NAMES: Record<string, readonly string[]> = {
  'leases get': [OPERATOR_NAME],
  'leases update': [OPERATOR_NAME],
  'configmaps get': [ID_COUNTER_NAME],
  'configmaps update': [ID_COUNTER_NAME],
  'secrets update': [WEBHOOK_TLS_SECRET],
  'validatingwebhookconfigurations get': [WEBHOOK_CONFIGURATION_NAME],
  'validatingwebhookconfigurations patch': [WEBHOOK_CONFIGURATION_NAME],
};

const PERMISSIONS: readonly Permission[] = ROWS.map(([group, resource, verb, scope, by]) => {
  const names = NAMES[`${resource} ${verb}`];
  return { group, resource, verb, scope, by, ...(names ? { names } : {}) };
});

const keyOf = (p: Omit<Permission, 'by'>): string =>
  `${p.group || 'core'} ${p.resource} ${p.verb} ${p.scope}${p.names ? ` names=${[...p.names].sort().join(',')}` : ''}`;

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
interface Binding {
  metadata: { name: string; namespace?: string };
  roleRef: { apiGroup: string; kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/** What the manifests grant the operator's ServiceAccount, one entry per (group, resource, verb). */
function granted(): { keys: string[]; problems: string[] } {
  const sa = only<{ metadata: { name: string; namespace: string } }>('ServiceAccount');
  const isOurs = (b: Binding) =>
    (b.subjects ?? []).some(
      (s) =>
        s.kind === 'ServiceAccount' &&
        s.name === sa.metadata.name &&
        s.namespace === sa.metadata.namespace,
    );
  const objects = manifests.map((m) => m.object);
  const problems: string[] = [];
  const keys: string[] = [];
  const expand = (rules: Rule[], scope: Scope, where: string) => {
    for (const rule of rules) {
      if (rule.nonResourceURLs !== undefined) problems.push(`${where}: nonResourceURLs`);
      for (const group of rule.apiGroups ?? []) {
        for (const resource of rule.resources ?? []) {
          for (const verb of rule.verbs) {
            if ([group, resource, verb].includes('*'))
              problems.push(`${where}: wildcard in a rule`);
            keys.push(
              keyOf({
                group,
                resource,
                verb,
                scope,
                ...(rule.resourceNames ? { names: rule.resourceNames } : {}),
              }),
            );
          }
        }
      }
    }
  };
  const roleNamed = (kind: string, name: string, namespace?: string) =>
    objects.find(
      (o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace,
    ) as (Manifest['object'] & { rules?: Rule[]; aggregationRule?: unknown }) | undefined;
  for (const object of objects) {
    if (object.kind !== 'ClusterRoleBinding' && object.kind !== 'RoleBinding') continue;
    const binding = object as unknown as Binding;
    if (!isOurs(binding)) continue;
    const namespace = binding.metadata.namespace;
    if (object.kind === 'RoleBinding' && namespace !== sa.metadata.namespace) {
      problems.push(`RoleBinding ${binding.metadata.name} in ${namespace}, not the operator's`);
    }
    const role =
      binding.roleRef.kind === 'ClusterRole'
        ? roleNamed('ClusterRole', binding.roleRef.name)
        : roleNamed('Role', binding.roleRef.name, namespace);
    const where = `${binding.roleRef.kind} ${binding.roleRef.name}`;
    if (role === undefined) {
      problems.push(`${object.kind} ${binding.metadata.name}: ${where} is not in deploy/`);
      continue;
    }
    const scope = object.kind === 'ClusterRoleBinding' ? 'cluster' : 'operator-namespace';
    if (role.aggregationRule === undefined) {
      expand(role.rules ?? [], scope, where);
      continue;
    }
    if (role.rules !== undefined) problems.push(`${where}: rules beside an aggregationRule`);
    for (const member of aggregatedInto(role, objects, problems)) {
      expand(member.rules ?? [], scope, `${where} < ClusterRole ${member.metadata.name}`);
    }
  }
  return { keys: keys.sort(), problems };
}

/**
 * The ClusterRoles whose rules the clusterrole-aggregation controller gives `role`: those whose
 * labels one of its clusterRoleSelectors matches (pkg/controller/clusterroleaggregation; our
 * src/local/auth/aggregation.ts). Only matchLabels is read: deploy/ needs no more.
 */
function aggregatedInto(
  role: { aggregationRule?: unknown; metadata: { name: string } },
  objects: readonly Manifest['object'][],
  problems: string[],
): (Manifest['object'] & { rules?: Rule[] })[] {
  const selectors =
    (role.aggregationRule as { clusterRoleSelectors?: Record<string, unknown>[] })
      .clusterRoleSelectors ?? [];
  const matchers: Record<string, string>[] = [];
  for (const selector of selectors) {
    const { matchLabels, ...rest } = selector as { matchLabels?: Record<string, string> };
    if (Object.keys(rest).length > 0 || matchLabels === undefined) {
      problems.push(`ClusterRole ${role.metadata.name}: a selector other than matchLabels`);
    } else matchers.push(matchLabels);
  }
  return objects.filter(
    (o) =>
      o.kind === 'ClusterRole' &&
      o.metadata.name !== role.metadata.name &&
      matchers.some((m) => Object.entries(m).every(([k, v]) => o.metadata.labels?.[k] === v)),
  ) as (Manifest['object'] & { rules?: Rule[] })[];
}

const flag = (args: readonly string[], name: string): string | undefined => {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args[at + 1];
};

/** A Kubernetes quantity of memory, in bytes (the suffixes the manifests use). */
function bytes(quantity: string): number {
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity);
  if (match === null) throw new Error(`unexpected quantity ${quantity}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 }[match[2] ?? ''] ?? 1;
  return Number(match[1]) * unit;
}

/** A Kubernetes quantity of CPU, in millicores. */
function millicores(quantity: string): number {
  return quantity.endsWith('m') ? Number(quantity.slice(0, -1)) : Number(quantity) * 1000;
}

describe('deploy/', () => {
  it('lists every manifest in kustomization.yaml (the CRDs are applied from crds/ first)', async () => {
    const kustomization = parse(await readFile(join(DEPLOY_DIR, 'kustomization.yaml'), 'utf8')) as {
      kind: string;
      resources: string[];
    };
    expect(kustomization.kind).toBe('Kustomization');
    expect([...kustomization.resources].sort()).toEqual(
      (await manifestFiles()).filter((f) => !OPT_IN.has(f)),
    );
  });

  it.each(everything.map((m) => [`${m.file}: ${m.object.kind} ${m.object.metadata.name}`, m]))(
    '%s is a valid object of its kind',
    (_, { object }) => {
      const Model = MODELS[`${object.apiVersion}/${object.kind}`];
      expect(Model, `no model for ${object.apiVersion} ${object.kind}`).toBeDefined();
      expect(() =>
        new (Model as NonNullable<typeof Model>)(object as never).validate(),
      ).not.toThrow();
    },
  );

  it('puts every namespaced object in the operator namespace, nrn-system', () => {
    expect(only('Namespace').metadata.name).toBe(DEFAULT_OPERATOR_NAMESPACE);
    const clusterScoped = new Set([
      'Namespace',
      'ClusterRole',
      'ClusterRoleBinding',
      'ValidatingWebhookConfiguration',
    ]);
    for (const { file, object } of everything) {
      if (clusterScoped.has(object.kind)) expect(object.metadata.namespace, file).toBeUndefined();
      else expect(object.metadata.namespace, file).toBe(DEFAULT_OPERATOR_NAMESPACE);
    }
  });
});

describe('the RBAC of deploy/', () => {
  it('grants exactly the table of requests the code sends: no more, no less, no wildcard', () => {
    const { keys, problems } = granted();
    expect(problems).toEqual([]);
    expect(new Set(keys).size, 'a permission granted twice').toBe(keys.length);
    expect(keys).toEqual(PERMISSIONS.map(keyOf).sort());
  });

  it('binds the operator to a ClusterRole aggregating the labelled ones, core rules in one of them', () => {
    const bound = manifests.find(
      (m) => m.object.kind === 'ClusterRoleBinding' && m.object.metadata.name === OPERATOR_NAME,
    )?.object as unknown as Binding | undefined;
    expect(bound?.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: OPERATOR_NAME,
    });
    const role = manifests.find(
      (m) => m.object.kind === 'ClusterRole' && m.object.metadata.name === OPERATOR_NAME,
    )?.object;
    expect(role?.aggregationRule).toEqual({
      clusterRoleSelectors: [{ matchLabels: { [AGGREGATE_LABEL]: 'true' } }],
    });
    const members = aggregatedInto(
      role as NonNullable<typeof role>,
      manifests.map((m) => m.object),
      [],
    );
    expect(members.map((m) => m.metadata.name)).toEqual([`${OPERATOR_NAME}-core`]);
  });

  it('keeps the opt-in roles for class kinds aggregating, unbound, and apart from the core rules', () => {
    expect(optIn.length).toBeGreaterThan(0);
    const core = new Set(PERMISSIONS.map((p) => `${p.group} ${p.resource}`));
    for (const { file, object } of optIn) {
      expect(object.kind, file).toBe('ClusterRole');
      expect(object.metadata.labels?.[AGGREGATE_LABEL], file).toBe('true');
      for (const rule of (object as { rules?: Rule[] }).rules ?? []) {
        expect(rule.resourceNames, file).toBeUndefined();
        for (const group of rule.apiGroups ?? []) {
          for (const resource of rule.resources ?? []) {
            expect([group, resource, ...rule.verbs], file).not.toContain('*');
            // The core role has it already: the opt-in file would only hide that.
            expect(core.has(`${group} ${resource}`), `${file}: ${group} ${resource}`).toBe(false);
          }
        }
      }
    }
  });

  it('keeps every row of the table unique and explained', () => {
    const keys = PERMISSIONS.map(keyOf);
    expect(new Set(keys).size).toBe(keys.length);
    for (const p of PERMISSIONS) expect(p.by.length, keyOf(p)).toBeGreaterThan(10);
  });
});

describe('the Deployment', () => {
  const deployment = only<{
    metadata: { name: string };
    spec: {
      replicas: number;
      selector: { matchLabels: Record<string, string> };
      template: {
        metadata: { labels: Record<string, string> };
        spec: {
          serviceAccountName: string;
          automountServiceAccountToken?: boolean;
          terminationGracePeriodSeconds: number;
          securityContext: Record<string, unknown>;
          volumes: { name: string; secret?: { secretName: string } }[];
          containers: {
            name: string;
            image: string;
            command?: string[];
            args: string[];
            env: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
            ports: { name: string; containerPort: number }[];
            volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
            livenessProbe: { httpGet: { path: string; port: string | number } };
            readinessProbe: { httpGet: { path: string; port: string | number } };
            lifecycle?: { preStop?: { exec?: { command: string[] } } };
            resources: {
              requests: { cpu: string; memory: string };
              limits: { cpu: string; memory: string };
            };
            securityContext: {
              runAsNonRoot?: boolean;
              readOnlyRootFilesystem?: boolean;
              allowPrivilegeEscalation?: boolean;
              capabilities?: { drop?: string[]; add?: string[] };
              seccompProfile?: { type: string };
            };
          }[];
        };
      };
    };
  }>('Deployment');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0] as (typeof pod.containers)[number];
  const args = container.args;
  const portNamed = (name: string) => container.ports.find((p) => p.name === name)?.containerPort;

  it('runs two replicas of `nrn-operator run` as the operator ServiceAccount', () => {
    expect(deployment.spec.replicas).toBe(2);
    expect(pod.containers).toHaveLength(1);
    expect(pod.serviceAccountName).toBe(only('ServiceAccount').metadata.name);
    expect(pod.automountServiceAccountToken).not.toBe(false);
    // The image's ENTRYPOINT (`node dist/cli.js`) stays; the arguments choose the command.
    expect(container.command).toBeUndefined();
    expect(args[0]).toBe('run');
    expect(container.image).toMatch(/^[\w.-]+(\/[\w.-]+)+:[\w.-]+$/);
    expect(deployment.spec.template.metadata.labels).toEqual(
      expect.objectContaining(deployment.spec.selector.matchLabels),
    );
  });

  it('has arguments our CLI parser accepts (strict: an unknown option fails)', async () => {
    const run = promisify(execFile);
    const cli = (extra: readonly string[]) =>
      run(process.execPath, ['--import', 'tsx', CLI, ...extra, '--help'], { timeout: 20_000 });
    // `--help` prints the usage after parsing every option, before starting anything.
    await expect(cli(args)).resolves.toMatchObject({ stdout: expect.stringContaining('Usage') });
    // The check has teeth: a misspelt option is refused.
    await expect(cli([...args, '--facade-hots', '0.0.0.0'])).rejects.toThrow(
      /unknown flag --facade-hots/,
    );
  });

  it('serves the facade with kubernetes auth and the metrics on every interface', () => {
    expect(flag(args, '--facade-auth')).toBe('kubernetes');
    expect(flag(args, '--facade-host')).toBe('0.0.0.0');
    expect(flag(args, '--metrics-host')).toBe('0.0.0.0');
    expect(args).not.toContain('--no-facade');
    expect(args).not.toContain('--no-leader-election');
    expect(portNamed('facade')).toBe(Number(flag(args, '--facade-port') ?? DEFAULT_FACADE_PORT));
    expect(portNamed('metrics')).toBe(Number(flag(args, '--metrics-port') ?? DEFAULT_METRICS_PORT));
    // The Lease and the id counter go where the Role is: the pod's own namespace.
    const ns = container.env.find((e) => e.name === 'POD_NAMESPACE');
    expect(ns?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.namespace');
    expect(flag(args, '--namespace')).toBeUndefined();
  });

  it('serves the facade over HTTPS with the mounted kubernetes.io/tls Secret', () => {
    const cert = flag(args, '--facade-tls-cert');
    const key = flag(args, '--facade-tls-key');
    const mount = container.volumeMounts.find((m) => m.name === 'facade-tls');
    const volume = pod.volumes.find((v) => v.name === 'facade-tls');
    expect(mount?.readOnly).toBe(true);
    expect(cert).toBe(`${mount?.mountPath}/tls.crt`);
    expect(key).toBe(`${mount?.mountPath}/tls.key`);
    expect(volume?.secret?.secretName).toBe('nrn-operator-facade-tls');
  });

  it('refuses a certificate without its key, and the reverse', async () => {
    const run = promisify(execFile);
    for (const given of ['--facade-tls-cert', '--facade-tls-key']) {
      const cli = run(process.execPath, ['--import', 'tsx', CLI, 'run', given, 'x.pem'], {
        timeout: 20_000,
      });
      await expect(cli).rejects.toMatchObject({
        code: 2,
        stderr: expect.stringContaining('--facade-tls-cert and --facade-tls-key go together'),
      });
    }
  });

  it('probes /healthz (liveness) and /readyz (readiness) on the metrics port', () => {
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
  });

  it('runs as non-root, read-only, with no capabilities and the runtime seccomp profile', () => {
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toEqual(
      expect.objectContaining({
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      }),
    );
  });

  it('asks for memory above the measured ~300 MiB RSS and caps it, CPU too', () => {
    const { requests, limits } = container.resources;
    expect(bytes(requests.memory)).toBeGreaterThanOrEqual(bytes('384Mi'));
    expect(bytes(limits.memory)).toBeGreaterThanOrEqual(bytes(requests.memory));
    expect(millicores(limits.cpu)).toBeGreaterThanOrEqual(millicores(requests.cpu));
  });

  it('gives the shutdown more time than its own bound', () => {
    // src/runtime/signals.ts stopOnSignal: the manager's drain bound plus 10 s for the rest.
    const shutdownBoundSeconds = (DEFAULT_DRAIN_TIMEOUT_MS + 10_000) / 1000;
    const preStop = container.lifecycle?.preStop?.exec?.command ?? [];
    const pauseSeconds = preStop[0] === 'sleep' ? Number(preStop[1]) : 0;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(shutdownBoundSeconds + pauseSeconds);
  });
});

describe('the Service and the PodDisruptionBudget', () => {
  const podLabels = only<{ spec: { template: { metadata: { labels: Record<string, string> } } } }>(
    'Deployment',
  ).spec.template.metadata.labels;

  it('expose the facade on 8080, the metrics on 8081 and the webhook on 443', () => {
    const service = only<{
      spec: {
        selector: Record<string, string>;
        ports: { name: string; port: number; targetPort: string }[];
      };
    }>('Service');
    expect(podLabels).toEqual(expect.objectContaining(service.spec.selector));
    expect(
      service.spec.ports.map(({ name, port, targetPort }) => [name, port, targetPort]),
    ).toEqual([
      ['facade', DEFAULT_FACADE_PORT, 'facade'],
      ['metrics', DEFAULT_METRICS_PORT, 'metrics'],
      ['webhook', 443, 'webhook'],
    ]);
  });

  it('keep one replica through voluntary disruptions', () => {
    const pdb = only<{
      spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } };
    }>('PodDisruptionBudget');
    expect(pdb.spec.minAvailable).toBe(1);
    expect(podLabels).toEqual(expect.objectContaining(pdb.spec.selector.matchLabels));
  });
});

describe('the admission webhook of deploy/', () => {
  interface Container {
    args: string[];
    env: { name: string; value?: string }[];
    ports: { name: string; containerPort: number }[];
    volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
  }
  interface DeploymentShape {
    spec: {
      replicas: number;
      template: {
        spec: {
          containers: Container[];
          volumes: { name: string; secret?: { secretName: string } }[];
        };
      };
    };
  }
  const service = only<{
    metadata: { name: string; namespace: string };
    spec: { ports: { name: string; port: number; targetPort: string }[] };
  }>('Service');
  const configuration = only<{
    metadata: { annotations?: Record<string, string> };
    webhooks: { clientConfig: { service: { name: string; namespace: string; port: number } } }[];
  }>('ValidatingWebhookConfiguration');
  const container = (d: DeploymentShape) => d.spec.template.spec.containers[0] as Container;
  /** The `run` flags a container's arguments and env give, as the CLI parses them. */
  const runFlags = (c: Container) => {
    const env = Object.fromEntries(
      c.env.flatMap((e) => (e.value !== undefined ? [[e.name, e.value]] : [])),
    );
    const parsed = parseCommandLine(c.args, env);
    if (parsed.outcome !== 'invoke' || parsed.invocation.command !== 'run') {
      throw new Error(`not a run: ${JSON.stringify(parsed)}`);
    }
    return parsed.invocation.flags;
  };

  it('is the configuration the code builds (clusterWebhookConfiguration), without a caBundle', () => {
    const sa = only<{ metadata: { name: string; namespace: string } }>('ServiceAccount');
    const webhookPort = service.spec.ports.find((p) => p.name === 'webhook')?.port;
    expect(configuration).toEqual(
      clusterWebhookConfiguration({
        namespace: service.metadata.namespace,
        serviceName: service.metadata.name,
        servicePort: webhookPort ?? -1,
        serviceAccount: sa.metadata.name,
      }),
    );
    for (const webhook of configuration.webhooks) {
      expect(webhook.clientConfig).not.toHaveProperty('caBundle');
    }
  });

  it("reaches the pods' webhook port through the Service, on both replicas, self-managed", () => {
    const deployment = only<DeploymentShape>('Deployment');
    const c = container(deployment);
    const flags = runFlags(c);
    expect(flags['webhook-certificate']).toBe('self-managed');
    expect(flags['webhook-port']).toBe(DEFAULT_WEBHOOK_PORT);
    expect(flags['webhook-host']).toBe('0.0.0.0');
    expect(c.ports.find((p) => p.name === 'webhook')?.containerPort).toBe(DEFAULT_WEBHOOK_PORT);
    const port = service.spec.ports.find((p) => p.name === 'webhook');
    expect(port?.targetPort).toBe('webhook');
    for (const webhook of configuration.webhooks) {
      expect(webhook.clientConfig.service).toMatchObject({
        name: service.metadata.name,
        namespace: service.metadata.namespace,
        port: port?.port,
      });
    }
    // Served by every replica (not leader-only), one kept through a drain.
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(only<{ spec: { minAvailable: number } }>('PodDisruptionBudget').spec.minAvailable).toBe(
      1,
    );
  });
  it('refuses certificate files beside a self-managed certificate', () => {
    const parsed = parseCommandLine([
      'run',
      '--webhook-certificate',
      'self-managed',
      '--webhook-tls-cert',
      'tls.crt',
      '--webhook-tls-key',
      'tls.key',
    ]);
    expect(parsed.outcome).toBe('refuse');
    expect((parsed as { text: string }).text).toContain(
      '--webhook-tls-cert and --webhook-tls-key go with --webhook-certificate files',
    );
  });
});

describe('kustomize', () => {
  const run = promisify(execFile);
  const build = async (dir: string) => {
    const { stdout } = await run('kubectl', ['kustomize', dir], { timeout: 60_000 });
    return parseAllDocuments(stdout).map((d) => d.toJS() as Manifest['object']);
  };
  const find = (objects: Manifest['object'][], kind: string, name?: string) =>
    objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));

  it('builds deploy/ offline: the webhook self-managed, nothing of cert-manager', async () => {
    const objects = await build(DEPLOY_DIR);
    expect(
      find(objects, 'ValidatingWebhookConfiguration', WEBHOOK_CONFIGURATION_NAME),
    ).toBeDefined();
    expect(objects.filter((o) => o.apiVersion.startsWith('cert-manager.io/'))).toEqual([]);
    const deployment = find(objects, 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
    };
    const env = deployment.spec.template.spec.containers[0]?.env ?? [];
    expect(env.find((e) => e.name === 'NRN_WEBHOOK_CERTIFICATE')?.value).toBe('self-managed');
  });

  it('builds deploy/ with the cert-manager component: its Certificate mounted, its CA injected', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nrn-overlay-'));
    try {
      // As README's overlay: kustomize takes only relative paths, and no overlay inside deploy/.
      const base = relative(dir, DEPLOY_DIR);
      await writeFile(
        join(dir, 'kustomization.yaml'),
        `resources: [${base}]\ncomponents: [${base}/cert-manager]\n`,
      );
      const objects = await build(dir);
      const certificate = find(objects, 'Certificate', 'nrn-operator-webhook') as unknown as {
        metadata: { namespace: string };
        spec: { secretName: string; dnsNames: string[]; issuerRef: { kind: string; name: string } };
      };
      expect(certificate.spec.dnsNames).toEqual(
        serviceDnsNames(OPERATOR_NAME, DEFAULT_OPERATOR_NAMESPACE).slice(0, 2),
      );
      // Signed by a CA of its own (what the caBundle holds), itself made by a self-signed Issuer.
      const issuer = find(
        objects,
        certificate.spec.issuerRef.kind,
        certificate.spec.issuerRef.name,
      ) as { spec: { ca?: { secretName: string } } } | undefined;
      const ca = find(objects, 'Certificate', 'nrn-operator-webhook-ca') as unknown as {
        spec: { isCA: boolean; secretName: string; issuerRef: { name: string } };
      };
      expect(issuer?.spec.ca?.secretName).toBe(ca.spec.secretName);
      expect(ca.spec.isCA).toBe(true);
      expect(find(objects, 'Issuer', ca.spec.issuerRef.name)).toMatchObject({
        spec: { selfSigned: {} },
      });
      const configuration = find(objects, 'ValidatingWebhookConfiguration') as unknown as {
        metadata: { annotations?: Record<string, string> };
      };
      expect(configuration.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe(
        `${certificate.metadata.namespace}/nrn-operator-webhook`,
      );
      const deployment = find(objects, 'Deployment') as unknown as {
        spec: {
          template: {
            spec: {
              containers: {
                args: string[];
                env: { name: string; value?: string }[];
                volumeMounts: { name: string; mountPath: string }[];
              }[];
              volumes: { name: string; secret?: { secretName: string } }[];
            };
          };
        };
      };
      const pod = deployment.spec.template.spec;
      const c = pod.containers[0] as (typeof pod.containers)[number];
      const env = Object.fromEntries(
        c.env.flatMap((e) => (e.value !== undefined ? [[e.name, e.value]] : [])),
      );
      const parsed = parseCommandLine(c.args, env);
      expect(parsed.outcome).toBe('invoke');
      const flags = (parsed as { invocation: { flags: Record<string, unknown> } }).invocation.flags;
      expect(flags['webhook-certificate']).toBe('files');
      const volume = pod.volumes.find((v) => v.secret?.secretName === certificate.spec.secretName);
      const mount = c.volumeMounts.find((m) => m.name === volume?.name);
      expect(flags['webhook-tls-cert']).toBe(`${mount?.mountPath}/tls.crt`);
      expect(flags['webhook-tls-key']).toBe(`${mount?.mountPath}/tls.key`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
