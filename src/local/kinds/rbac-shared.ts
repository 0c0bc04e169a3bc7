// What the four rbac.authorization.k8s.io/v1 kinds share: their protobuf messages
// (staging/src/k8s.io/api/rbac/v1/generated.proto), v1 defaulting (pkg/apis/rbac/v1/defaults.go)
// and the field checks of pkg/apis/rbac/validation/validation.go, in its words.
import { nameProblems } from '../meta.js';
import { list, MessageSpec, map, objectMeta, one } from '../protobuf-messages.js';
import type { StatusCause } from '../types.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

export const policyRuleMessage = new MessageSpec([
  [1, list('verbs', 'string')],
  [2, list('apiGroups', 'string')],
  [3, list('resources', 'string')],
  [4, list('resourceNames', 'string')],
  [5, list('nonResourceURLs', 'string')],
]);

const labelSelectorMessage = new MessageSpec([
  [1, map('matchLabels', 'string')],
  [
    2,
    list(
      'matchExpressions',
      new MessageSpec([
        [1, one('key', 'string')],
        [2, one('operator', 'string')],
        [3, list('values', 'string')],
      ]),
    ),
  ],
]);

const subjectMessage = new MessageSpec([
  [1, one('kind', 'string', true)],
  [2, one('apiGroup', 'string')],
  [3, one('name', 'string', true)],
  [4, one('namespace', 'string')],
]);

const roleRefMessage = new MessageSpec([
  [1, one('apiGroup', 'string', true)],
  [2, one('kind', 'string', true)],
  [3, one('name', 'string', true)],
]);

export const roleMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, list('rules', policyRuleMessage)],
]);

export const clusterRoleMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, list('rules', policyRuleMessage)],
  [
    3,
    one(
      'aggregationRule',
      new MessageSpec([[1, list('clusterRoleSelectors', labelSelectorMessage)]]),
    ),
  ],
]);

export const bindingMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, list('subjects', subjectMessage)],
  [3, one('roleRef', roleRefMessage)],
]);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];

const required = (field: string, message = 'Required value'): StatusCause => ({
  reason: 'FieldValueRequired',
  field,
  message: message === 'Required value' ? message : `Required value: ${message}`,
});

/** field.Invalid's words: the value as Go's %#v would print it (strings quoted, lists of them). */
const invalidValue = (field: string, value: unknown, detail: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  field,
  message: `Invalid value: ${goValue(value)}: ${detail}`,
});

function goValue(value: unknown): string {
  if (Array.isArray(value)) return `[]string{${value.map((v) => JSON.stringify(v)).join(', ')}}`;
  if (isObject(value)) {
    const ref = value;
    return `rbac.RoleRef{APIGroup:${JSON.stringify(ref.apiGroup ?? '')}, Kind:${JSON.stringify(ref.kind ?? '')}, Name:${JSON.stringify(ref.name ?? '')}}`;
  }
  return JSON.stringify(value);
}

const notSupported = (field: string, value: unknown, supported: string[]): StatusCause => ({
  reason: 'FieldValueNotSupported',
  field,
  message: `Unsupported value: ${JSON.stringify(value ?? '')}: supported values: ${supported.map((s) => `"${s}"`).join(', ')}`,
});

/** ValidatePolicyRule, for every rule of a Role (namespaced) or ClusterRole. */
export function ruleCauses(rules: unknown, namespaced: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  if (rules === undefined || rules === null) return causes;
  (Array.isArray(rules) ? rules : []).forEach((rule: unknown, i) => {
    const at = `rules[${i}]`;
    const r = isObject(rule) ? rule : {};
    if (strings(r.verbs).length === 0) {
      causes.push(required(`${at}.verbs`, 'verbs must contain at least one value'));
    }
    const urls = strings(r.nonResourceURLs);
    if (urls.length > 0) {
      if (namespaced) {
        causes.push(
          invalidValue(
            `${at}.nonResourceURLs`,
            urls,
            'namespaced rules cannot apply to non-resource URLs',
          ),
        );
      }
      if (
        strings(r.apiGroups).length > 0 ||
        strings(r.resources).length > 0 ||
        strings(r.resourceNames).length > 0
      ) {
        causes.push(
          invalidValue(
            `${at}.nonResourceURLs`,
            urls,
            'rules cannot apply to both regular resources and non-resource URLs',
          ),
        );
      }
      return;
    }
    if (strings(r.apiGroups).length === 0) {
      causes.push(required(`${at}.apiGroups`, 'resource rules must supply at least one api group'));
    }
    if (strings(r.resources).length === 0) {
      causes.push(required(`${at}.resources`, 'resource rules must supply at least one resource'));
    }
  });
  return causes;
}

/** SetDefaults_Subject and the RoleRef's group default (pkg/apis/rbac/v1/defaults.go). */
export function defaultBinding(object: Record<string, unknown>): void {
  if (isObject(object.roleRef) && !object.roleRef.apiGroup) object.roleRef.apiGroup = RBAC_GROUP;
  for (const subject of Array.isArray(object.subjects) ? object.subjects : []) {
    if (!isObject(subject) || subject.apiGroup) continue;
    if (subject.kind === 'User' || subject.kind === 'Group') subject.apiGroup = RBAC_GROUP;
  }
}

/** ValidateRoleBinding / ValidateClusterRoleBinding and their Update's immutable roleRef. */
export function bindingCauses(
  object: Record<string, unknown>,
  old: Record<string, unknown> | undefined,
  namespaced: boolean,
): StatusCause[] {
  const causes: StatusCause[] = [];
  const ref = isObject(object.roleRef) ? object.roleRef : {};
  if (ref.apiGroup !== RBAC_GROUP) {
    causes.push(notSupported('roleRef.apiGroup', ref.apiGroup, [RBAC_GROUP]));
  }
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (typeof ref.kind !== 'string' || !kinds.includes(ref.kind)) {
    causes.push(notSupported('roleRef.kind', ref.kind, kinds));
  }
  if (typeof ref.name !== 'string' || ref.name === '') {
    causes.push(required('roleRef.name'));
  } else {
    for (const p of nameProblems(ref.name, 'path'))
      causes.push(invalidValue('roleRef.name', ref.name, p));
  }
  const subjects = Array.isArray(object.subjects) ? object.subjects : [];
  subjects.forEach((s: unknown, i) => {
    const at = `subjects[${i}]`;
    const subject = isObject(s) ? s : {};
    const name = typeof subject.name === 'string' ? subject.name : '';
    if (name === '') causes.push(required(`${at}.name`));
    const apiGroup = subject.apiGroup ?? '';
    switch (subject.kind) {
      case 'ServiceAccount':
        if (apiGroup !== '') causes.push(notSupported(`${at}.apiGroup`, apiGroup, ['']));
        if (!namespaced && !subject.namespace) causes.push(required(`${at}.namespace`));
        break;
      case 'User':
      case 'Group':
        if (apiGroup !== RBAC_GROUP)
          causes.push(notSupported(`${at}.apiGroup`, apiGroup, [RBAC_GROUP]));
        break;
      default:
        causes.push(notSupported(`${at}.kind`, subject.kind, ['ServiceAccount', 'User', 'Group']));
    }
  });
  if (old !== undefined && JSON.stringify(old.roleRef) !== JSON.stringify(object.roleRef)) {
    causes.push(invalidValue('roleRef', object.roleRef, 'cannot change roleRef'));
  }
  return causes;
}
