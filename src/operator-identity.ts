// The operator's own identity as deploy/ installs it on a cluster: the nrn-operator namespace,
// ServiceAccount and RBAC of deploy/ (read from the files beside the code, so what runs is what
// ships), applied with an admin's client, and a kubeconfig holding a token of that
// ServiceAccount from the TokenRequest API, for the operator and facade of `nrn-operator local`
// (and the test suite's operators) to act under deploy/rbac.yaml as they do in a pod (ADR 0030).
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { Kube } from './kube/index.js';

/**
 * deploy/ of this package: this module is src/<file>.ts or dist/<file>.js, both one level under
 * the package root, as src/scope-classes-install.ts finds deploy/scopeclasses/.
 */
export const DEPLOY_DIR = fileURLToPath(new URL('../deploy/', import.meta.url));

/** The namespace deploy/ runs the operator in. */
export const DEPLOY_NAMESPACE = 'nrn-system';
export const OPERATOR_SERVICE_ACCOUNT = 'nrn-operator';

/**
 * What deploy/kustomization.yaml grants the operator: where it lives, who it is, what it may
 * do. The rest of the kustomization runs it (Deployment, Service, PodDisruptionBudget) or calls
 * it (the ValidatingWebhookConfiguration, which `local` registers with its own URL); the
 * example class's rights (scope-class-kinds.yaml) are no part of it, and the default classes
 * need none beyond rbac.yaml's.
 */
export const IDENTITY_FILES = ['namespace.yaml', 'serviceaccount.yaml', 'rbac.yaml'] as const;

/**
 * A year: what kube-apiserver gives a token asked for by a client that cannot renew one
 * (--service-account-extend-token-expiration). `local` asks for a new one at each start.
 */
export const OPERATOR_TOKEN_SECONDS = 365 * 24 * 3600;

export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  readonly subjects?: { kind: string; namespace?: string }[];
  readonly [field: string]: unknown;
}

/** `system:serviceaccount:<namespace>:nrn-operator`: who the operator is to the API server. */
export const operatorUsername = (namespace: string = DEPLOY_NAMESPACE) =>
  `system:serviceaccount:${namespace}:${OPERATOR_SERVICE_ACCOUNT}`;

/**
 * deploy/'s identity objects, moved to `namespace` as kustomize's `namespace:` field moves them
 * (namespaced objects, and the ServiceAccount subjects of the bindings). The ClusterRoleBinding,
 * cluster-wide, is then named after its namespace too, so that operators of several namespaces
 * may share a cluster, each bound in its own.
 */
export async function operatorIdentityManifests(
  namespace: string = DEPLOY_NAMESPACE,
  dir: string = DEPLOY_DIR,
): Promise<Manifest[]> {
  const manifests: Manifest[] = [];
  for (const file of IDENTITY_FILES) {
    const path = join(dir, file);
    for (const doc of parseAllDocuments(await readFile(path, 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors.map(String).join('; ')}`);
      const object = doc.toJS() as Manifest | null;
      if (object !== null) manifests.push(relocate(object, namespace));
    }
  }
  return manifests;
}

function relocate(object: Manifest, namespace: string): Manifest {
  if (namespace === DEPLOY_NAMESPACE) return object;
  if (object.kind === 'Namespace') object.metadata.name = namespace;
  if (object.metadata.namespace !== undefined) object.metadata.namespace = namespace;
  if (object.kind === 'ClusterRoleBinding') {
    object.metadata.name = `${object.metadata.name}-${namespace}`;
  }
  for (const subject of object.subjects ?? []) {
    if (subject.kind === 'ServiceAccount' && subject.namespace === DEPLOY_NAMESPACE) {
      subject.namespace = namespace;
    }
  }
  return object;
}

/**
 * Applies `manifests` server-side with an admin's client (forced: deploy/ owns these objects,
 * as a `kubectl apply --server-side --force-conflicts -k deploy/` would), then waits until the
 * aggregated ClusterRole holds its members' rules: the API server's aggregation controller
 * fills it after the apply, not within it, and an operator started before would meet 403s it
 * does not deserve.
 */
export async function applyOperatorIdentity(
  admin: Pick<Kube, 'resource' | 'mapper'>,
  manifests: readonly Manifest[],
  options: { readonly fieldManager: string; readonly timeoutMs?: number },
): Promise<void> {
  for (const manifest of manifests) {
    const type = await admin.mapper.resourceFor(manifest.apiVersion, manifest.kind);
    if (type === undefined) {
      throw new Error(`${manifest.apiVersion} ${manifest.kind} is not served by the API server`);
    }
    await admin
      .resource(type)
      .applyAndForget(manifest, { fieldManager: options.fieldManager, force: true });
  }
  await waitForAggregation(admin, manifests, options.timeoutMs ?? 30_000);
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
}
interface RoleShape {
  rules?: Rule[];
  aggregationRule?: { clusterRoleSelectors?: { matchLabels?: Record<string, string> }[] };
}

/** One line per (group, resource, verb, names) a rule grants: rules compare whatever their order. */
const grantsOf = (rules: readonly Rule[]): string[] =>
  rules.flatMap((rule) =>
    (rule.apiGroups ?? []).flatMap((group) =>
      (rule.resources ?? []).flatMap((resource) =>
        (rule.verbs ?? []).map((verb) =>
          [group, resource, verb, ...(rule.resourceNames ?? [])].join(' '),
        ),
      ),
    ),
  );

async function waitForAggregation(
  admin: Pick<Kube, 'resource' | 'mapper'>,
  manifests: readonly Manifest[],
  timeoutMs: number,
): Promise<void> {
  const roles = manifests.filter((m) => m.kind === 'ClusterRole');
  const deadline = Date.now() + timeoutMs;
  for (const role of roles) {
    const selectors = (role as RoleShape).aggregationRule?.clusterRoleSelectors;
    if (selectors === undefined) continue;
    const members = roles.filter(
      (other) =>
        other !== role &&
        selectors.some((s) =>
          Object.entries(s.matchLabels ?? {}).every(([k, v]) => other.metadata.labels?.[k] === v),
        ),
    );
    const wanted = grantsOf(members.flatMap((m) => (m as RoleShape).rules ?? []));
    const type = await admin.mapper.resourceFor(role.apiVersion, role.kind);
    if (type === undefined) throw new Error(`${role.apiVersion} ${role.kind} is not served`);
    for (;;) {
      const current = (await admin.resource(type).get({ name: role.metadata.name })) as RoleShape;
      const has = new Set(grantsOf(current.rules ?? []));
      if (wanted.every((grant) => has.has(grant))) break;
      if (Date.now() > deadline) {
        throw new Error(
          `ClusterRole ${role.metadata.name}: its members' rules not aggregated within ${timeoutMs} ms`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/**
 * `adminKubeconfig` (YAML) with a bearer token as every user's only credentials: same
 * clusters, same CA, same contexts, so the copy reaches the same server as someone else.
 */
export function kubeconfigWithToken(adminKubeconfig: string, token: string): string {
  const config = parseYaml(adminKubeconfig) as {
    users?: { name: string; user: Record<string, unknown> }[];
  } | null;
  if (config === null || typeof config !== 'object') throw new Error('kubeconfig: not a mapping');
  config.users = (config.users ?? []).map(({ name }) => ({ name, user: { token } }));
  return stringifyYaml(config);
}

export interface OperatorIdentity {
  readonly kubeconfigPath: string;
  readonly token: string;
  readonly expires: Date;
  /** Who the kubeconfig acts as. */
  readonly username: string;
}

/**
 * deploy/'s identity applied in `namespace` with `admin`, a token of its ServiceAccount, and a
 * kubeconfig at `path` (0600: it is a credential) that is `adminKubeconfigPath` with that token.
 */
export async function createOperatorIdentity(
  admin: Pick<Kube, 'resource' | 'mapper' | 'tokens'>,
  options: {
    readonly adminKubeconfigPath: string;
    readonly path: string;
    readonly fieldManager: string;
    readonly namespace?: string;
    readonly expirationSeconds?: number;
  },
): Promise<OperatorIdentity> {
  const namespace = options.namespace ?? DEPLOY_NAMESPACE;
  await applyOperatorIdentity(admin, await operatorIdentityManifests(namespace), {
    fieldManager: options.fieldManager,
  });
  const { token, expires } = await admin.tokens.create(
    { namespace, name: OPERATOR_SERVICE_ACCOUNT },
    { expirationSeconds: options.expirationSeconds ?? OPERATOR_TOKEN_SECONDS },
  );
  const kubeconfig = kubeconfigWithToken(
    await readFile(options.adminKubeconfigPath, 'utf8'),
    token,
  );
  await writeFile(options.path, kubeconfig, { mode: 0o600 });
  // writeFile's mode applies only to a file it creates: one left by an earlier start or
  // loosened by hand is narrowed again.
  await chmod(options.path, 0o600);
  return { kubeconfigPath: options.path, token, expires, username: operatorUsername(namespace) };
}
