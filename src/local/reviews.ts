// The review kinds, answered as kube-apiserver's registries answer them from its
// authenticators and authorizer: TokenReview (pkg/registry/authentication/tokenreview),
// SelfSubjectReview (authentication/selfsubjectreview, `kubectl auth whoami`),
// SubjectAccessReview and SelfSubjectAccessReview (authorization/subjectaccessreview,
// selfsubjectaccessreview: `kubectl auth can-i`) and SelfSubjectRulesReview
// (authorization/selfsubjectrulesreview: `kubectl auth can-i --list`). Each is created, never
// stored, and answered 201 with its status.
import type { Attributes, UserInfo } from './auth/attributes.js';
import type { Decision, PolicyRule } from './auth/rbac.js';
import { invalid } from './meta.js';
import { badRequest, type StatusCause } from './types.js';

/** A user of a bearer token, as kube-apiserver's token auth file has one. */
export interface LocalUser {
  readonly token: string;
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
}

export const LOCAL_ADMIN: UserInfo = {
  username: 'nrn-local-admin',
  groups: ['system:masters', 'system:authenticated'],
};

const AUTHENTICATION = 'authentication.k8s.io';
const AUTHORIZATION = 'authorization.k8s.io';

type Record_ = Record<string, unknown>;
const isObject = (v: unknown): v is Record_ =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];

/** A review's metadata as sent; Go writes an unset creationTimestamp as null. */
const metadataOf = (body: Record_) => ({
  creationTimestamp: null,
  ...(isObject(body.metadata) ? body.metadata : {}),
});

function userInfoJson(user: UserInfo): Record_ {
  return {
    username: user.username,
    ...(user.uid !== undefined && user.uid !== '' ? { uid: user.uid } : {}),
    ...(user.groups.length > 0 ? { groups: [...user.groups] } : {}),
    ...(user.extra !== undefined && Object.keys(user.extra).length > 0
      ? { extra: user.extra }
      : {}),
  };
}

export function tokenReview(
  body: unknown,
  authenticate: (token: string) => { user: UserInfo; audiences?: string[] } | undefined,
): object {
  const review = isObject(body) ? body : {};
  const spec = isObject(review.spec) ? review.spec : {};
  const token = str(spec.token);
  if (token === '') {
    throw badRequest(`token is required for TokenReview in ${AUTHENTICATION}`);
  }
  const found = authenticate(token);
  return {
    kind: 'TokenReview',
    apiVersion: `${AUTHENTICATION}/v1`,
    metadata: metadataOf(review),
    spec,
    status:
      found !== undefined
        ? {
            authenticated: true,
            user: userInfoJson(found.user),
            ...(found.audiences !== undefined ? { audiences: found.audiences } : {}),
          }
        : { user: {} },
  };
}

export function selfSubjectReview(user: UserInfo, now = new Date()): object {
  return {
    kind: 'SelfSubjectReview',
    apiVersion: `${AUTHENTICATION}/v1`,
    metadata: { creationTimestamp: now.toISOString().replace(/\.\d+Z$/, 'Z') },
    status: { userInfo: userInfoJson(user) },
  };
}

/** The attributes a review's spec asks about (authorizationutil.AuthorizationAttributesFrom). */
function reviewAttributes(spec: Record_, user: UserInfo): Attributes {
  const resource = isObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  const nonResource = isObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : {};
  if (resource !== undefined) {
    return {
      user,
      verb: str(resource.verb),
      resourceRequest: true,
      path: '',
      apiGroup: str(resource.group),
      apiVersion: str(resource.version),
      namespace: str(resource.namespace),
      resource: str(resource.resource),
      subresource: str(resource.subresource),
      name: str(resource.name),
    };
  }
  return {
    user,
    verb: str(nonResource.verb),
    resourceRequest: false,
    path: str(nonResource.path),
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
}

/** ValidateSubjectAccessReviewSpec / ValidateSelfSubjectAccessReviewSpec. */
function specCauses(spec: Record_, self: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  const hasResource = spec.resourceAttributes !== undefined && spec.resourceAttributes !== null;
  const hasNonResource =
    spec.nonResourceAttributes !== undefined && spec.nonResourceAttributes !== null;
  if (hasResource && hasNonResource) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'spec.nonResourceAttributes',
      message: `Invalid value: "object": cannot be specified in combination with resourceAttributes`,
    });
  }
  if (!hasResource && !hasNonResource) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'spec.resourceAttributes',
      message:
        'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    });
  }
  if (!self && str(spec.user) === '' && strings(spec.groups).length === 0) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'spec.user',
      message: 'Invalid value: "": at least one of user or group must be specified',
    });
  }
  return causes;
}

function accessReview(
  kind: 'SubjectAccessReview' | 'SelfSubjectAccessReview',
  body: unknown,
  user: UserInfo | undefined,
  authorize: (a: Attributes) => Decision,
): object {
  const review = isObject(body) ? body : {};
  const spec = isObject(review.spec) ? review.spec : {};
  const causes = specCauses(spec, user !== undefined);
  if (causes.length > 0) throw invalid({ kind, group: AUTHORIZATION }, '', causes);
  const subject: UserInfo = user ?? {
    username: str(spec.user),
    groups: strings(spec.groups),
    ...(str(spec.uid) !== '' ? { uid: str(spec.uid) } : {}),
    ...(isObject(spec.extra) ? { extra: spec.extra as Record<string, string[]> } : {}),
  };
  const decision = authorize(reviewAttributes(spec, subject));
  return {
    kind,
    apiVersion: `${AUTHORIZATION}/v1`,
    metadata: metadataOf(review),
    spec,
    status: {
      allowed: decision.allowed,
      ...(decision.reason !== '' ? { reason: decision.reason } : {}),
    },
  };
}

export const subjectAccessReview = (body: unknown, authorize: (a: Attributes) => Decision) =>
  accessReview('SubjectAccessReview', body, undefined, authorize);

export const selfSubjectAccessReview = (
  body: unknown,
  user: UserInfo,
  authorize: (a: Attributes) => Decision,
) => accessReview('SelfSubjectAccessReview', body, user, authorize);

export function selfSubjectRulesReview(
  body: unknown,
  rulesFor: (namespace: string) => { rules: PolicyRule[]; errors: string[] },
): object {
  const review = isObject(body) ? body : {};
  const spec = isObject(review.spec) ? review.spec : {};
  const namespace = str(spec.namespace);
  if (namespace === '') throw badRequest('no namespace on request');
  const { rules, errors } = rulesFor(namespace);
  const nonEmpty = (name: string, list: readonly string[] | undefined) =>
    list !== undefined && list.length > 0 ? { [name]: [...list] } : {};
  return {
    kind: 'SelfSubjectRulesReview',
    apiVersion: `${AUTHORIZATION}/v1`,
    metadata: { creationTimestamp: null },
    spec: {},
    status: {
      resourceRules: rules
        .filter((r) => (r.resources ?? []).length > 0)
        .map((r) => ({
          verbs: [...r.verbs],
          ...nonEmpty('apiGroups', r.apiGroups),
          ...nonEmpty('resources', r.resources),
          ...nonEmpty('resourceNames', r.resourceNames),
        })),
      nonResourceRules: rules
        .filter((r) => (r.nonResourceURLs ?? []).length > 0)
        .map((r) => ({ verbs: [...r.verbs], ...nonEmpty('nonResourceURLs', r.nonResourceURLs) })),
      incomplete: false,
      ...(errors.length > 0
        ? { evaluationError: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` }
        : {}),
    },
  };
}

/** The kinds above by their group and resource, as a POST to them names them. */
export const REVIEW_RESOURCES: ReadonlySet<string> = new Set([
  `${AUTHENTICATION}/tokenreviews`,
  `${AUTHENTICATION}/selfsubjectreviews`,
  `${AUTHORIZATION}/subjectaccessreviews`,
  `${AUTHORIZATION}/selfsubjectaccessreviews`,
  `${AUTHORIZATION}/selfsubjectrulesreviews`,
]);
