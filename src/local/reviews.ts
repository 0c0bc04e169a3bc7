// The review kinds, answered as kube-apiserver's registries answer them from its
// authenticators and authorizer: TokenReview (pkg/registry/authentication/tokenreview),
// SelfSubjectReview (authentication/selfsubjectreview, `kubectl auth whoami`),
// SubjectAccessReview and SelfSubjectAccessReview (authorization/subjectaccessreview,
// selfsubjectaccessreview: `kubectl auth can-i`) and SelfSubjectRulesReview
// (authorization/selfsubjectrulesreview: `kubectl auth can-i --list`) and
// LocalSubjectAccessReview (authorization/localsubjectaccessreview: a SubjectAccessReview held to
// one namespace). Each is created, never stored, and answered 201 with its status; discovery
// lists them, and TokenRequest (serviceaccounts/token), with their one verb.
import type { Attributes, UserInfo } from './auth/attributes.js';
import type { Decision, PolicyRule } from './auth/rbac.js';
import { invalid } from './meta.js';
import { goNumber, goQuote, goStrings } from './schema/goformat.js';
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

/** A review kind as its registry installs it: create only, never stored. */
export interface ReviewKind {
  readonly group: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** pkg/registry/authentication/rest and authorization/rest: the v1 review kinds. */
export const REVIEW_KINDS: readonly ReviewKind[] = [
  {
    group: AUTHENTICATION,
    resource: 'selfsubjectreviews',
    kind: 'SelfSubjectReview',
    namespaced: false,
  },
  { group: AUTHENTICATION, resource: 'tokenreviews', kind: 'TokenReview', namespaced: false },
  {
    group: AUTHORIZATION,
    resource: 'localsubjectaccessreviews',
    kind: 'LocalSubjectAccessReview',
    namespaced: true,
  },
  {
    group: AUTHORIZATION,
    resource: 'selfsubjectaccessreviews',
    kind: 'SelfSubjectAccessReview',
    namespaced: false,
  },
  {
    group: AUTHORIZATION,
    resource: 'selfsubjectrulesreviews',
    kind: 'SelfSubjectRulesReview',
    namespaced: false,
  },
  {
    group: AUTHORIZATION,
    resource: 'subjectaccessreviews',
    kind: 'SubjectAccessReview',
    namespaced: false,
  },
];

/** The review kind a group and resource name, if any. */
export const reviewKindOf = (group: string, resource: string): ReviewKind | undefined =>
  REVIEW_KINDS.find((k) => k.group === group && k.resource === resource);

/**
 * What discovery lists for the resources served here without storage, beside the stored
 * kinds': the review kinds (no storageVersionHash: they have no storage) and TokenRequest,
 * a subresource of serviceaccounts in another group (installer.go names its group, version
 * and kind), all create only.
 */
export function unstoredResources(group: string, version: string): Record<string, unknown>[] {
  if (version !== 'v1') return [];
  if (group === '') {
    return [
      {
        name: 'serviceaccounts/token',
        singularName: '',
        namespaced: true,
        group: AUTHENTICATION,
        version: 'v1',
        kind: 'TokenRequest',
        verbs: ['create'],
      },
    ];
  }
  return REVIEW_KINDS.filter((k) => k.group === group).map((k) => ({
    name: k.resource,
    singularName: k.kind.toLowerCase(),
    namespaced: k.namespaced,
    kind: k.kind,
    verbs: ['create'],
  }));
}

/** The groups of the review kinds, which discovery lists though they store nothing. */
export const REVIEW_GROUPS: readonly string[] = [AUTHENTICATION, AUTHORIZATION];

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

/** What the authenticator makes of a token for some audiences: a user, or its error. */
export type TokenVerdict = { user: UserInfo; audiences: readonly string[] } | { error: string };

/**
 * pkg/registry/authentication/tokenreview/storage.go: the token through the request
 * authenticator, for spec.audiences or else the API server's own; `authenticated` and the
 * user when it is taken, the authenticator's error when not (bearertoken.go's "invalid bearer
 * token" when no token authenticator knew it).
 */
export function tokenReview(
  body: unknown,
  authenticate: (token: string, audiences: readonly string[] | undefined) => TokenVerdict,
): object {
  const review = isObject(body) ? body : {};
  const spec = isObject(review.spec) ? review.spec : {};
  const token = str(spec.token);
  if (token === '') {
    // Worded so in storage.go, without the group's domain.
    throw badRequest('token is required for TokenReview in authentication');
  }
  const audiences = strings(spec.audiences);
  const verdict = authenticate(token, audiences.length > 0 ? audiences : undefined);
  return {
    kind: 'TokenReview',
    apiVersion: `${AUTHENTICATION}/v1`,
    metadata: clusterScoped(metadataOf(review)),
    spec,
    status:
      'user' in verdict
        ? {
            authenticated: true,
            user: userInfoJson(verdict.user),
            ...(verdict.audiences.length > 0 ? { audiences: [...verdict.audiences] } : {}),
          }
        : { user: {}, error: verdict.error },
  };
}

/** rest.EnsureObjectNamespaceMatchesRequestNamespace on a cluster-scoped kind: no namespace. */
function clusterScoped(metadata: Record_): Record_ {
  const { namespace: _, ...rest } = metadata;
  return rest;
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

/** %#v of the internal NonResourceAttributes a cause quotes (field.Invalid derefs the pointer). */
function goNonResourceAttributes(v: unknown): string {
  const a = isObject(v) ? v : {};
  return `authorization.NonResourceAttributes{Path:${goQuote(str(a.path))}, Verb:${goQuote(str(a.verb))}}`;
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
      message: `Invalid value: ${goNonResourceAttributes(spec.nonResourceAttributes)}: cannot be specified in combination with resourceAttributes`,
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

/** Whether a decoded value is Go's zero value (Semantic.DeepEqual takes nil and empty alike). */
function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObject(v)) return Object.keys(v).length === 0;
  return false;
}

/** Whether ObjectMeta is empty but for the fields the validation clears first. */
const metadataEmpty = (meta: Record_, cleared: readonly string[]): boolean =>
  Object.entries(meta).every(([k, v]) => cleared.includes(k) || isZero(v));

/** %#v of a metav1.Time as decoded (Local), through the GoString time.Time lends it. */
function goTime(v: unknown): string {
  const date = typeof v === 'string' ? new Date(v) : undefined;
  if (date === undefined || Number.isNaN(date.getTime())) {
    return 'time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)';
  }
  const month = date.toLocaleString('en-US', { month: 'long', timeZone: 'UTC' });
  return `time.Date(${date.getUTCFullYear()}, time.${month}, ${date.getUTCDate()}, ${date.getUTCHours()}, ${date.getUTCMinutes()}, ${date.getUTCSeconds()}, 0, time.Local)`;
}

function goStringMap(v: unknown): string {
  if (!isObject(v) || Object.keys(v).length === 0) {
    return isObject(v) ? 'map[string]string{}' : 'map[string]string(nil)';
  }
  const keys = Object.keys(v).sort();
  return `map[string]string{${keys.map((k) => `${goQuote(k)}:${goQuote(str(v[k]))}`).join(', ')}}`;
}

/** A pointer nested in a %#v: nil, or an address (which no one can predict: a fixed one here). */
const goPointer = (type: string, v: unknown) =>
  v === undefined || v === null ? `(*${type})(nil)` : `(*${type})(0xc000000000)`;

/** %#v of one owner reference, as a "must be empty" cause quotes it. */
function goOwnerReference(v: unknown): string {
  const r = isObject(v) ? v : {};
  return `v1.OwnerReference{APIVersion:${goQuote(str(r.apiVersion))}, Kind:${goQuote(str(r.kind))}, Name:${goQuote(str(r.name))}, UID:${goQuote(str(r.uid))}, Controller:${goPointer('bool', r.controller)}, BlockOwnerDeletion:${goPointer('bool', r.blockOwnerDeletion)}}`;
}

/** %#v of one managed fields entry (its time through metav1.Time's GoString). */
function goManagedFields(v: unknown): string {
  const e = isObject(v) ? v : {};
  const time = e.time === undefined || e.time === null ? '<nil>' : goTime(e.time);
  return `v1.ManagedFieldsEntry{Manager:${goQuote(str(e.manager))}, Operation:${goQuote(str(e.operation))}, APIVersion:${goQuote(str(e.apiVersion))}, Time:${time}, FieldsType:${goQuote(str(e.fieldsType))}, FieldsV1:${goPointer('v1.FieldsV1', e.fieldsV1)}, Subresource:${goQuote(str(e.subresource))}}`;
}

/** %#v of a slice of structs: nil, or its items. */
const goSlice = (type: string, v: unknown, item: (x: unknown) => string) =>
  Array.isArray(v) ? `[]v1.${type}{${v.map(item).join(', ')}}` : `[]v1.${type}(nil)`;

/**
 * %#v of the metav1.ObjectMeta a "must be empty" cause quotes (field.Invalid's fallback for a
 * struct without String()). Pointers below the top print as addresses in Go: a fixed one here.
 */
function goObjectMeta(meta: Record_): string {
  const s = (k: string) => goQuote(str(meta[k]));
  return [
    `v1.ObjectMeta{Name:${s('name')}`,
    `GenerateName:${s('generateName')}`,
    `Namespace:${s('namespace')}`,
    `SelfLink:${s('selfLink')}`,
    `UID:${s('uid')}`,
    `ResourceVersion:${s('resourceVersion')}`,
    `Generation:${typeof meta.generation === 'number' ? goNumber(meta.generation) : 0}`,
    `CreationTimestamp:${goTime(meta.creationTimestamp)}`,
    `DeletionTimestamp:${meta.deletionTimestamp ? goTime(meta.deletionTimestamp) : '<nil>'}`,
    `DeletionGracePeriodSeconds:${goPointer('int64', meta.deletionGracePeriodSeconds)}`,
    `Labels:${goStringMap(meta.labels)}`,
    `Annotations:${goStringMap(meta.annotations)}`,
    `OwnerReferences:${goSlice('OwnerReference', meta.ownerReferences, goOwnerReference)}`,
    `Finalizers:${Array.isArray(meta.finalizers) ? goStrings(strings(meta.finalizers)) : '[]string(nil)'}`,
    `ManagedFields:${goSlice('ManagedFieldsEntry', meta.managedFields, goManagedFields)}}`,
  ].join(', ');
}

/** The SubjectAccessReview kinds: cluster-wide about anyone, about oneself, in one namespace. */
type AccessReviewKind =
  | 'SubjectAccessReview'
  | 'SelfSubjectAccessReview'
  | 'LocalSubjectAccessReview';

/**
 * ValidateSubjectAccessReview, ValidateSelfSubjectAccessReview and
 * ValidateLocalSubjectAccessReview (pkg/apis/authorization/validation): the spec's causes, then
 * metadata that must be empty (but for managedFields, and a local review's namespace), then a
 * local review's namespace agreement and its refusal of non-resource attributes.
 */
function reviewCauses(kind: AccessReviewKind, meta: Record_, spec: Record_): StatusCause[] {
  const local = kind === 'LocalSubjectAccessReview';
  const causes = specCauses(spec, kind === 'SelfSubjectAccessReview');
  if (!metadataEmpty(meta, local ? ['namespace', 'managedFields'] : ['managedFields'])) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'metadata',
      message: `Invalid value: ${goObjectMeta(meta)}: must be empty${local ? ' except for namespace' : ''}`,
    });
  }
  if (!local) return causes;
  const resource = spec.resourceAttributes;
  if (isObject(resource) && str(resource.namespace) !== str(meta.namespace)) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'spec.resourceAttributes.namespace',
      message: `Invalid value: ${goQuote(str(resource.namespace))}: must match metadata.namespace`,
    });
  }
  if (spec.nonResourceAttributes !== undefined && spec.nonResourceAttributes !== null) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'spec.nonResourceAttributes',
      message: `Invalid value: ${goNonResourceAttributes(spec.nonResourceAttributes)}: disallowed on this kind of request`,
    });
  }
  return causes;
}

function accessReview(
  kind: AccessReviewKind,
  body: unknown,
  metadata: Record_,
  user: UserInfo | undefined,
  authorize: (a: Attributes) => Decision,
): object {
  const review = isObject(body) ? body : {};
  const spec = isObject(review.spec) ? review.spec : {};
  const causes = reviewCauses(kind, metadata, spec);
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
    metadata: { creationTimestamp: null, ...metadata },
    spec,
    status: {
      allowed: decision.allowed,
      ...(decision.reason !== '' ? { reason: decision.reason } : {}),
    },
  };
}

/** The review's metadata as sent (an object, else none). */
const sentMetadata = (body: unknown): Record_ =>
  isObject(body) && isObject(body.metadata) ? body.metadata : {};

export const subjectAccessReview = (body: unknown, authorize: (a: Attributes) => Decision) =>
  accessReview(
    'SubjectAccessReview',
    body,
    clusterScoped(sentMetadata(body)),
    undefined,
    authorize,
  );

export const selfSubjectAccessReview = (
  body: unknown,
  user: UserInfo,
  authorize: (a: Attributes) => Decision,
) =>
  accessReview('SelfSubjectAccessReview', body, clusterScoped(sentMetadata(body)), user, authorize);

/**
 * pkg/registry/authorization/localsubjectaccessreview/rest.go, behind create.go's
 * EnsureObjectNamespaceMatchesRequestNamespace: metadata.namespace is the URL's (a 400 when it
 * names another), and spec.resourceAttributes.namespace must be the same.
 */
export function localSubjectAccessReview(
  body: unknown,
  namespace: string,
  authorize: (a: Attributes) => Decision,
): object {
  const sent = sentMetadata(body);
  const given = str(sent.namespace);
  if (given !== '' && given !== namespace) {
    throw badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  return accessReview(
    'LocalSubjectAccessReview',
    body,
    { ...sent, namespace },
    undefined,
    authorize,
  );
}

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
