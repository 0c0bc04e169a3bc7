// The operator's own identity in the integration suite, as it runs in a cluster: the
// nrn-operator ServiceAccount of deploy/serviceaccount.yaml, bound by the roles of
// deploy/rbac.yaml (read from those files, so the suite tests what ships), and a kubeconfig
// holding a token of it from the TokenRequest API (`kubectl create token`). Tests keep the
// admin kubeconfig for setup and assertions; only the operator's client (and the facade's)
// uses this one, so a right the code needs and deploy/rbac.yaml lacks fails the suite with
// the API server's 403.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Logger, pino } from 'pino';
import { parseAllDocuments, parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { LogLine } from './operator-processes.js';

const DEPLOY = join(import.meta.dirname, '../../deploy');
/** The namespace deploy/ runs the operator in; tests run theirs in namespaces of their own. */
export const DEPLOY_NAMESPACE = 'nrn-system';
/** deploy/'s identity: the namespace it lives in, the account, and what the account may do. */
const FILES = ['namespace.yaml', 'serviceaccount.yaml', 'rbac.yaml'];
const SERVICE_ACCOUNT = 'nrn-operator';

interface Manifest {
  readonly kind: string;
  readonly metadata: { name: string; namespace?: string };
  readonly subjects?: { kind: string; namespace?: string }[];
}

/**
 * deploy/'s namespace, ServiceAccount and RBAC objects, moved to `namespace` as kustomize's
 * `namespace:` field moves them (namespaced objects, and the ServiceAccount subjects of the
 * bindings). The ClusterRoleBinding, cluster-wide, is named after its namespace too: several
 * operators of a test file may share a cluster, each bound in its own namespace.
 */
export async function operatorManifests(namespace: string): Promise<Manifest[]> {
  const manifests: Manifest[] = [];
  for (const file of FILES) {
    for (const doc of parseAllDocuments(await readFile(join(DEPLOY, file), 'utf8'))) {
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

const run = promisify(execFile);

async function kubectl(kubeconfigPath: string, args: string[], input?: string): Promise<string> {
  const child = run('kubectl', ['--kubeconfig', kubeconfigPath, ...args], { timeout: 60_000 });
  if (input !== undefined) child.child.stdin?.end(input);
  try {
    return (await child).stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? String(error);
    throw new Error(`kubectl ${args.join(' ')} failed: ${stderr}`);
  }
}

/**
 * Applies deploy/'s identity in `namespace` with the admin kubeconfig, asks for a token of the
 * ServiceAccount, and writes to `path` the admin kubeconfig with that token as its only
 * credentials (same server, same CA). Gives the token too: a pod's service account file holds it.
 */
export async function createOperatorIdentity(
  adminKubeconfigPath: string,
  namespace: string,
  path: string,
): Promise<{ readonly kubeconfigPath: string; readonly token: string }> {
  const manifests = await operatorManifests(namespace);
  await kubectl(
    adminKubeconfigPath,
    ['apply', '-f', '-'],
    manifests.map((m) => stringifyYaml(m)).join('---\n'),
  );
  await waitForAggregation(adminKubeconfigPath, manifests);
  const token = (
    await kubectl(adminKubeconfigPath, ['create', 'token', SERVICE_ACCOUNT, '-n', namespace])
  ).trim();
  const config = parseYaml(await readFile(adminKubeconfigPath, 'utf8')) as {
    users?: { name: string; user: Record<string, unknown> }[];
  };
  config.users = (config.users ?? []).map(({ name }) => ({ name, user: { token } }));
  await writeFile(path, stringifyYaml(config), { mode: 0o600 });
  // A kubeconfig that still reached the server as the admin would hide every missing right.
  const whoami = await kubectl(path, [
    'auth',
    'whoami',
    '-o',
    'jsonpath={.status.userInfo.username}',
  ]);
  const expected = `system:serviceaccount:${namespace}:${SERVICE_ACCOUNT}`;
  if (whoami !== expected) throw new Error(`${path} acts as ${whoami}, not ${expected}`);
  return { kubeconfigPath: path, token };
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
}
interface ClusterRole {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
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

/**
 * Waits until each aggregated ClusterRole of `manifests` holds the rules of the labelled ones
 * beside it: the API server's aggregation controller fills them after the apply, not within it
 * (src/local/auth/aggregation.ts runs a pass on the next tick), and an operator started before
 * would meet 403s it does not deserve. Bounded: 30 seconds.
 */
async function waitForAggregation(adminKubeconfigPath: string, manifests: readonly Manifest[]) {
  const roles = manifests.filter((m) => m.kind === 'ClusterRole') as unknown as ClusterRole[];
  const deadline = Date.now() + 30_000;
  for (const role of roles) {
    const selectors = role.aggregationRule?.clusterRoleSelectors;
    if (selectors === undefined) continue;
    const members = roles.filter(
      (other) =>
        other !== role &&
        selectors.some((s) =>
          Object.entries(s.matchLabels ?? {}).every(([k, v]) => other.metadata.labels?.[k] === v),
        ),
    );
    const wanted = grantsOf(members.flatMap((m) => m.rules ?? []));
    for (;;) {
      const current = JSON.parse(
        await kubectl(adminKubeconfigPath, [
          'get',
          'clusterrole',
          role.metadata.name,
          '-o',
          'json',
        ]),
      ) as ClusterRole;
      const has = new Set(grantsOf(current.rules ?? []));
      if (wanted.every((grant) => has.has(grant))) break;
      if (Date.now() > deadline) {
        throw new Error(`ClusterRole ${role.metadata.name}: rules not aggregated within 30s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** The lines of an operator process (`nrn-operator run`) that tell of a refusal (a 403). */
export const refusalsIn = (logs: readonly LogLine[]): string[] =>
  logs.map((line) => JSON.stringify(line)).filter((line) => /forbidden/i.test(line));

/**
 * The operator's logger in a test: prints nothing, and keeps every warning or error that tells
 * of a refusal (a 403 from the API server), which the operator logs and retries rather than
 * fails on: a test asserts there were none.
 */
export function refusalLog(): { readonly log: Logger; refusals(): readonly string[] } {
  const refusals: string[] = [];
  const log = pino(
    { level: 'warn' },
    {
      write: (line: string) => {
        if (!/forbidden/i.test(line)) return;
        const { msg, err } = JSON.parse(line) as { msg?: string; err?: { message?: string } };
        refusals.push(`${msg}: ${err?.message ?? line.slice(0, 1000)}`);
      },
    },
  );
  return { log, refusals: () => refusals };
}
