// The RBAC authorizer: which rules bind a user (pkg/registry/rbac/validation/rule.go
// VisitRulesFor: ClusterRoleBindings, then the RoleBindings of the request's namespace) and
// whether one allows the request (plugin/pkg/auth/authorizer/rbac/rbac.go RuleAllows, with
// pkg/apis/rbac/v1/evaluation_helpers.go's matchers). The roles and bindings are read from the
// store once per change of any of them, not per request.
import { CLUSTER_ROLE_TYPE } from '../kinds/clusterrole.js';
import { CLUSTER_ROLE_BINDING_TYPE } from '../kinds/clusterrolebinding.js';
import { ROLE_TYPE } from '../kinds/role.js';
import { ROLE_BINDING_TYPE } from '../kinds/rolebinding.js';
import type { Objects } from '../objects.js';
import { storageKeyOf } from '../resource-type.js';
import type { KubeObject } from '../types.js';
import type { Attributes, UserInfo } from './attributes.js';

export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

interface Binding {
  name: string;
  namespace: string;
  roleRef: { kind: string; name: string };
  subjects: Subject[];
}

export interface Decision {
  readonly allowed: boolean;
  /** Why: the binding that allowed it, or what could not be read ("RBAC: ..."), or nothing. */
  readonly reason: string;
}

const RBAC_KEYS = new Set(
  [CLUSTER_ROLE_TYPE, CLUSTER_ROLE_BINDING_TYPE, ROLE_TYPE, ROLE_BINDING_TYPE].map(storageKeyOf),
);

/** system:masters: allowed everything by the privileged-groups authorizer ahead of RBAC. */
export const MASTERS = 'system:masters';

export class RbacAuthorizer {
  private snapshot: Snapshot | undefined;

  constructor(private readonly objects: Objects) {
    objects.listen({
      committed: (event) => {
        if (RBAC_KEYS.has(event.resource)) this.snapshot = undefined;
      },
    });
  }

  private current(): Snapshot {
    this.snapshot ??= new Snapshot(this.objects);
    return this.snapshot;
  }

  authorize(a: Attributes): Decision {
    if (a.user.groups.includes(MASTERS)) return { allowed: true, reason: '' };
    const errors: string[] = [];
    let reason: string | undefined;
    this.current().visit(a.user, a.namespace, (source, rule, error) => {
      if (error !== undefined) {
        errors.push(error);
        return true;
      }
      if (rule !== undefined && ruleAllows(a, rule)) {
        reason = `RBAC: allowed by ${source}`;
        return false;
      }
      return true;
    });
    if (reason !== undefined) return { allowed: true, reason };
    return {
      allowed: false,
      reason: errors.length === 0 ? '' : `RBAC: ${aggregate(errors)}`,
    };
  }

  /** GetRoleReferenceRules: the rules of the role a binding refers to, if it exists. */
  roleRules(kind: string, name: string, namespace: string): PolicyRule[] | undefined {
    return this.current().roleRules(kind, name, namespace);
  }

  /** Every rule binding the user in a namespace (SelfSubjectRulesReview), and what failed. */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    if (user.groups.includes(MASTERS)) {
      rules.push({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
      rules.push({ verbs: ['*'], nonResourceURLs: ['*'] });
    }
    this.current().visit(user, namespace, (_source, rule, error) => {
      if (error !== undefined) errors.push(error);
      if (rule !== undefined) rules.push(rule);
      return true;
    });
    return { rules, errors };
  }
}

/** utilerrors.NewAggregate's text: one error alone, several bracketed. */
const aggregate = (errors: string[]) =>
  errors.length === 1 ? (errors[0] as string) : `[${errors.join(', ')}]`;

type Visitor = (source: string, rule: PolicyRule | undefined, error: string | undefined) => boolean;

/** The roles and bindings as they stood at one revision. */
class Snapshot {
  private readonly clusterRoles = new Map<string, PolicyRule[]>();
  private readonly roles = new Map<string, PolicyRule[]>();
  private readonly clusterBindings: Binding[];
  private readonly bindings = new Map<string, Binding[]>();

  constructor(objects: Objects) {
    for (const role of objects.list(CLUSTER_ROLE_TYPE, undefined).items) {
      this.clusterRoles.set(role.metadata.name ?? '', rulesOf(role));
    }
    for (const role of objects.list(ROLE_TYPE, undefined).items) {
      this.roles.set(`${role.metadata.namespace}/${role.metadata.name}`, rulesOf(role));
    }
    this.clusterBindings = objects
      .list(CLUSTER_ROLE_BINDING_TYPE, undefined)
      .items.map(bindingOf)
      .sort((a, b) => a.name.localeCompare(b.name));
    for (const object of objects.list(ROLE_BINDING_TYPE, undefined).items) {
      const binding = bindingOf(object);
      const list = this.bindings.get(binding.namespace) ?? [];
      list.push(binding);
      this.bindings.set(binding.namespace, list);
    }
  }

  roleRules(kind: string, name: string, namespace: string): PolicyRule[] | undefined {
    if (kind === 'ClusterRole') return this.clusterRoles.get(name);
    return kind === 'Role' ? this.roles.get(`${namespace}/${name}`) : undefined;
  }

  /** VisitRulesFor; the visitor returns false to stop. */
  visit(user: UserInfo, namespace: string, visitor: Visitor): void {
    for (const binding of this.clusterBindings) {
      const subject = binding.subjects.findIndex((s) => appliesTo(user, s, ''));
      if (subject < 0) continue;
      const rules = this.clusterRoles.get(binding.roleRef.name);
      if (rules === undefined) {
        if (!visitor('', undefined, notFound('clusterrole', binding.roleRef.name))) return;
        continue;
      }
      const source = describe('ClusterRoleBinding', binding, subject);
      for (const rule of rules) if (!visitor(source, rule, undefined)) return;
    }
    if (namespace === '') return;
    for (const binding of this.bindings.get(namespace) ?? []) {
      const subject = binding.subjects.findIndex((s) => appliesTo(user, s, namespace));
      if (subject < 0) continue;
      const { kind, name } = binding.roleRef;
      const rules =
        kind === 'ClusterRole'
          ? this.clusterRoles.get(name)
          : this.roles.get(`${namespace}/${name}`);
      if (rules === undefined) {
        const error = notFound(kind === 'ClusterRole' ? 'clusterrole' : 'role', name);
        if (!visitor('', undefined, error)) return;
        continue;
      }
      const source = describe('RoleBinding', binding, subject);
      for (const rule of rules) if (!visitor(source, rule, undefined)) return;
    }
  }
}

const notFound = (resource: string, name: string) =>
  `${resource}.rbac.authorization.k8s.io ${JSON.stringify(name)} not found`;

/** rule.go's clusterRoleBindingDescriber / roleBindingDescriber, names as it joins them. */
function describe(kind: string, binding: Binding, index: number): string {
  const subject = binding.subjects[index] as Subject;
  const where = kind === 'RoleBinding' ? `${binding.name}/${binding.namespace}` : binding.name;
  const who =
    subject.kind === 'ServiceAccount'
      ? `${subject.name}/${subject.namespace || binding.namespace}`
      : subject.name;
  return `${kind} ${JSON.stringify(where)} of ${binding.roleRef.kind} ${JSON.stringify(binding.roleRef.name)} to ${subject.kind} ${JSON.stringify(who)}`;
}

/** rule.go appliesToUser: a ServiceAccount subject without a namespace is the binding's. */
function appliesTo(user: UserInfo, subject: Subject, namespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return user.username === subject.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const ns = subject.namespace || namespace;
      return ns !== '' && user.username === `system:serviceaccount:${ns}:${subject.name}`;
    }
    default:
      return false;
  }
}

/** RuleAllows. */
export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, a.verb)) return false;
  if (!a.resourceRequest) return nonResourceURLMatches(rule, a.path);
  const combined = a.subresource !== '' ? `${a.resource}/${a.subresource}` : a.resource;
  return (
    (rule.apiGroups ?? []).some((g) => g === '*' || g === a.apiGroup) &&
    resourceMatches(rule, combined, a.subresource) &&
    ((rule.resourceNames ?? []).length === 0 || (rule.resourceNames ?? []).includes(a.name))
  );
}

const verbMatches = (rule: PolicyRule, verb: string) =>
  rule.verbs.some((v) => v === '*' || v === verb);

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    // `*/status` matches the status subresource of every resource.
    if (subresource !== '' && r === `*/${subresource}`) return true;
  }
  return false;
}

function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some(
    (u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))),
  );
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];

function rulesOf(role: KubeObject): PolicyRule[] {
  const rules = Array.isArray(role.rules) ? (role.rules as Record<string, unknown>[]) : [];
  return rules.map((r) => ({
    verbs: strings(r.verbs),
    apiGroups: strings(r.apiGroups),
    resources: strings(r.resources),
    resourceNames: strings(r.resourceNames),
    nonResourceURLs: strings(r.nonResourceURLs),
  }));
}

function bindingOf(object: KubeObject): Binding {
  const ref = (object.roleRef ?? {}) as { kind?: string; name?: string };
  const subjects = Array.isArray(object.subjects) ? (object.subjects as Subject[]) : [];
  return {
    name: object.metadata.name ?? '',
    namespace: object.metadata.namespace ?? '',
    roleRef: { kind: ref.kind ?? '', name: ref.name ?? '' },
    subjects,
  };
}
