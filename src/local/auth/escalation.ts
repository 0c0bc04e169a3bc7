// RBAC's escalation prevention, as pkg/registry/rbac/*/policybased/storage.go and
// pkg/registry/rbac/validation/rule.go ConfirmNoEscalation keep it: a user may write a Role or
// ClusterRole only with rules it holds itself (or the `escalate` verb on it), and bind a role
// only if it holds the role's rules (or the `bind` verb on it); system:masters may do anything.
// The writer reaches the kinds' strategies (kinds/role.ts ...) through an AsyncLocalStorage,
// entered only for requests that write RBAC kinds as someone other than system:masters.
import { AsyncLocalStorage } from 'node:async_hooks';
import { ApiError } from '../types.js';
import type { Attributes, UserInfo } from './attributes.js';
import type { PolicyRule, RbacAuthorizer } from './rbac.js';

interface Writer {
  readonly user: UserInfo;
  readonly authorizer: RbacAuthorizer;
  readonly request: Attributes;
}

const writers = new AsyncLocalStorage<Writer | undefined>();
let entered = false;

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const ROLE_RESOURCES = new Set(['roles', 'clusterroles']);
const BINDING_RESOURCES = new Set(['rolebindings', 'clusterrolebindings']);
const WRITES = new Set(['create', 'update', 'patch']);

/**
 * Called as each request is let in: remembers the writer of an RBAC kind for its strategy,
 * and forgets any earlier request's on the same connection.
 */
export function enterRequest(a: Attributes | undefined, authorizer: RbacAuthorizer): void {
  const writes =
    a?.resourceRequest === true &&
    a.apiGroup === RBAC_GROUP &&
    a.subresource === '' &&
    WRITES.has(a.verb) &&
    (ROLE_RESOURCES.has(a.resource) || BINDING_RESOURCES.has(a.resource));
  if (!writes && !entered) return;
  entered = true;
  writers.enterWith(writes ? { user: a.user, authorizer, request: a } : undefined);
}

/** Runs `work` as the control plane itself (its controllers), whoever's request led to it. */
export function asSystem<T>(work: () => T): T {
  return entered ? writers.run(undefined, work) : work();
}

const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** policybased Create/Update of a Role or ClusterRole. */
export function confirmRoleWrite(
  resource: 'roles' | 'clusterroles',
  name: string,
  rules: unknown,
  aggregates: boolean,
): void {
  const writer = writers.getStore();
  if (writer === undefined) return;
  const { request, authorizer, user } = writer;
  // RoleEscalationAuthorized: the escalate verb on this role.
  const escalate = authorizer.authorize({
    ...request,
    verb: 'escalate',
    apiVersion: '*',
    subresource: '',
  });
  if (escalate.allowed) return;
  const namespace = request.namespace;
  confirmNoEscalation(writer, resource, name, namespace, policyRules(rules));
  if (aggregates) {
    const held = authorizer.rulesFor(user, namespace).rules;
    if (!covers(held, FULL_AUTHORITY).covered) {
      throw forbidden(
        resource,
        name,
        'must have cluster-admin privileges to use the aggregationRule',
      );
    }
  }
}

/** policybased Create/Update of a RoleBinding or ClusterRoleBinding. */
export function confirmBindingWrite(
  resource: 'rolebindings' | 'clusterrolebindings',
  name: string,
  namespace: string,
  roleRef: { kind?: string; name?: string },
): void {
  const writer = writers.getStore();
  if (writer === undefined) return;
  const { authorizer, user } = writer;
  const roleResource =
    roleRef.kind === 'Role' ? 'roles' : roleRef.kind === 'ClusterRole' ? 'clusterroles' : undefined;
  if (roleResource === undefined) return;
  // BindingAuthorized: the bind verb on the role, in the binding's namespace.
  const bind = authorizer.authorize({
    user,
    verb: 'bind',
    resourceRequest: true,
    path: '',
    apiGroup: RBAC_GROUP,
    apiVersion: '',
    namespace,
    resource: roleResource,
    subresource: '',
    name: roleRef.name ?? '',
  });
  if (bind.allowed) return;
  const rules = authorizer.roleRules(roleRef.kind ?? '', roleRef.name ?? '', namespace);
  if (rules === undefined) {
    throw new ApiError(
      400,
      'BadRequest',
      `${roleResource === 'roles' ? 'role' : 'clusterrole'}.rbac.authorization.k8s.io ${JSON.stringify(roleRef.name ?? '')} not found`,
    );
  }
  confirmNoEscalation(writer, resource, name, namespace, rules);
}

function confirmNoEscalation(
  writer: Writer,
  resource: string,
  name: string,
  namespace: string,
  rules: PolicyRule[],
): void {
  const { user, authorizer } = writer;
  const held = authorizer.rulesFor(user, namespace);
  const { covered, missing } = covers(held.rules, rules);
  if (covered) return;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
  let message = `user ${JSON.stringify(user.username)} (groups=${goQuoted(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`;
  // %v of a []error holding RulesFor's one aggregate error (bracketed itself when several).
  if (held.errors.length > 0) {
    const aggregate = held.errors.length === 1 ? held.errors[0] : `[${held.errors.join(', ')}]`;
    message += `; resolution errors: [${aggregate}]`;
  }
  throw forbidden(resource, name, message);
}

const forbidden = (resource: string, name: string, message: string) =>
  new ApiError(
    403,
    'Forbidden',
    `${resource}.${RBAC_GROUP} ${JSON.stringify(name)} is forbidden: ${message}`,
    { name, group: RBAC_GROUP, kind: resource },
  );

/** Go's %q of a []string. */
const goQuoted = (list: readonly string[]) => `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];

function policyRules(rules: unknown): PolicyRule[] {
  return (Array.isArray(rules) ? rules : []).map((r: Record<string, unknown>) => ({
    verbs: strings(r?.verbs),
    apiGroups: strings(r?.apiGroups),
    resources: strings(r?.resources),
    resourceNames: strings(r?.resourceNames),
    nonResourceURLs: strings(r?.nonResourceURLs),
  }));
}

// --- policy_comparator.go -------------------------------------------------------------------

/** Covers: every one-verb, one-resource, one-name part of `servant` held by some owner rule. */
export function covers(
  owner: readonly PolicyRule[],
  servant: readonly PolicyRule[],
): { covered: boolean; missing: PolicyRule[] } {
  const missing = servant
    .flatMap(breakdown)
    .filter((sub) => !owner.some((rule) => ruleCovers(rule, sub)));
  return { covered: missing.length === 0, missing };
}

function breakdown(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        const names = rule.resourceNames ?? [];
        if (names.length > 0) {
          for (const name of names) {
            out.push({
              apiGroups: [group],
              resources: [resource],
              verbs: [verb],
              resourceNames: [name],
            });
          }
        } else {
          out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        }
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return out;
}

const hasAll = (set: readonly string[] = [], items: readonly string[] = []) =>
  items.every((i) => set.includes(i));

function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = owner.verbs.includes('*') || hasAll(owner.verbs, sub.verbs);
  const groups = (owner.apiGroups ?? []).includes('*') || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourceCoversAll(owner.resources ?? [], sub.resources ?? []);
  const urls = (sub.nonResourceURLs ?? []).every((path) =>
    (owner.nonResourceURLs ?? []).some(
      (o) => o === path || (o.endsWith('*') && path.startsWith(o.replace(/\*+$/, ''))),
    ),
  );
  const ownerNames = owner.resourceNames ?? [];
  const subNames = sub.resourceNames ?? [];
  const names =
    subNames.length === 0
      ? ownerNames.length === 0
      : ownerNames.length === 0 || hasAll(ownerNames, subNames);
  return verbs && groups && resources && names && urls;
}

function resourceCoversAll(set: readonly string[], covered: readonly string[]): boolean {
  if (set.includes('*') || hasAll(set, covered)) return true;
  return covered.every((path) => {
    if (set.includes(path)) return true;
    const slash = path.indexOf('/');
    return slash >= 0 && set.includes(`*/${path.slice(slash + 1)}`);
  });
}

/** CompactRules: one-group, one-resource rules that differ only by verb are merged. */
function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const compacted: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule & { verbs: string[] }>();
  for (const rule of rules) {
    const names = rule.resourceNames ?? [];
    const isSimple =
      names.length <= 1 &&
      (rule.nonResourceURLs ?? []).length === 0 &&
      (rule.apiGroups ?? []).length === 1 &&
      (rule.resources ?? []).length === 1;
    if (!isSimple) {
      compacted.push(rule);
      continue;
    }
    const key = JSON.stringify([rule.apiGroups, rule.resources, names]);
    const existing = simple.get(key);
    if (existing !== undefined) existing.verbs.push(...rule.verbs);
    else simple.set(key, { ...rule, verbs: [...rule.verbs] });
  }
  return [...compacted, ...simple.values()];
}

/** CompactString (evaluation_helpers.go). */
function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  if ((rule.apiGroups ?? []).length > 0) parts.push(`APIGroups:${goQuoted(rule.apiGroups ?? [])}`);
  if ((rule.resources ?? []).length > 0) parts.push(`Resources:${goQuoted(rule.resources ?? [])}`);
  if ((rule.nonResourceURLs ?? []).length > 0)
    parts.push(`NonResourceURLs:${goQuoted(rule.nonResourceURLs ?? [])}`);
  if ((rule.resourceNames ?? []).length > 0)
    parts.push(`ResourceNames:${goQuoted(rule.resourceNames ?? [])}`);
  if (rule.verbs.length > 0) parts.push(`Verbs:${goQuoted(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}
