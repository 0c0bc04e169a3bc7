// The local control plane's door, as kube-apiserver's filter chain keeps it: authentication
// (authenticator.ts: a token no authenticator takes is a 401; no credentials at all is
// system:anonymous, as with --anonymous-auth's default), impersonation (impersonation.ts), then
// authorization of every request (system:masters, then RBAC: rbac.ts) with kube's 403 `Status`;
// and the endpoints that answer from them rather than from storage: the reviews (reviews.ts)
// and TokenRequest (service-account-tokens.ts), create only, as their registries install them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { parseBody, readBody, sendJson } from '../http.js';
import { serviceAccountStrategy } from '../kinds/serviceaccount.js';
import { invalid, timestamp } from '../meta.js';
import type { Objects } from '../objects.js';
import {
  type LocalUser,
  localSubjectAccessReview,
  type ReviewKind,
  reviewKindOf,
  selfSubjectAccessReview,
  selfSubjectReview,
  selfSubjectRulesReview,
  subjectAccessReview,
  tokenReview,
} from '../reviews.js';
import { ApiError } from '../types.js';
import {
  type Attributes,
  forbiddenMessage,
  requestAttributes,
  type UserInfo,
} from './attributes.js';
import { ANONYMOUS, API_AUDIENCES, Authenticator } from './authenticator.js';
import { enterRequest } from './escalation.js';
import { impersonated } from './impersonation.js';
import { MASTERS, RbacAuthorizer } from './rbac.js';
import { ServiceAccountTokens } from './service-account-tokens.js';

/** TokenRequestSpec's default (SetDefaults_TokenRequestSpec) and bounds (ValidateTokenRequest). */
const DEFAULT_EXPIRATION_S = 3600;
const MIN_EXPIRATION_S = 600;
const MAX_EXPIRATION_S = 2 ** 32;

/** A request let in: who it acts as, and what it asks (read off the URL when needed). */
export interface Admitted {
  readonly user: UserInfo;
  attributes(): Attributes;
}

export class AccessControl {
  readonly authorizer: RbacAuthorizer;
  private readonly authenticator: Authenticator;

  private constructor(
    private readonly objects: Objects,
    private readonly tokens: ServiceAccountTokens,
    adminToken: string,
    users: readonly LocalUser[],
  ) {
    this.authorizer = new RbacAuthorizer(objects);
    this.authenticator = new Authenticator(adminToken, users, tokens, objects);
  }

  /** With the data dir's ServiceAccount signing key (made on first start). */
  static async open(
    dataDir: string,
    objects: Objects,
    adminToken: string,
    users: readonly LocalUser[] = [],
  ): Promise<AccessControl> {
    const tokens = await ServiceAccountTokens.open(join(dataDir, 'service-account.key'));
    return new AccessControl(objects, tokens, adminToken, users);
  }

  /**
   * Who the request acts as and what it asks, once it may: 401 for a bearer token no
   * authenticator takes, system:anonymous without one, 403 when the user may not impersonate
   * whom it names or do what it asks.
   */
  admit(req: IncomingMessage, pathname: string, query: URLSearchParams): Admitted {
    const found = this.authenticateRequest(req.headers.authorization);
    if (found === undefined) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
    const authorize = (a: Attributes) => this.authorizer.authorize(a);
    const user = impersonates(req.headers)
      ? impersonated(req.headers, req.headersDistinct, found.user, authorize)
      : found.user;
    let attributes: Attributes | undefined;
    const admitted: Admitted = {
      user,
      attributes: () => {
        attributes ??= requestAttributes(user, req.method ?? 'GET', pathname, query);
        return attributes;
      },
    };
    // The privileged group is allowed everything: its requests (the admin's, every write of
    // the benchmark) skip reading the URL into attributes.
    if (user.groups.includes(MASTERS)) {
      enterRequest(undefined, this.authorizer);
      return admitted;
    }
    const decision = authorize(admitted.attributes());
    if (!decision.allowed) throw forbidden(admitted.attributes(), decision.reason);
    enterRequest(admitted.attributes(), this.authorizer);
    return admitted;
  }

  /**
   * bearertoken.go, then union.NewFailOnError(..., anonymous): a request with a bearer token
   * is its token's user or refused (undefined); one without (no header, another scheme, a
   * scheme not followed by a space) is system:anonymous. Spaces after `Bearer` are taken
   * together (kube-apiserver reads two as an empty token: ADR 0003 keeps this).
   */
  private authenticateRequest(header: string | undefined) {
    const match = /^Bearer +(\S.*)$/i.exec(header?.trim() ?? '');
    if (match === null) return { user: ANONYMOUS };
    return this.authenticator.authenticate(match[1] as string);
  }

  /**
   * Answers the request if it is a review or a TokenRequest; false if it is neither. Their
   * registries install POST only: any other method on their path is go-restful's 405.
   */
  async serve(req: IncomingMessage, res: ServerResponse, admitted: Admitted): Promise<boolean> {
    const url = req.url ?? '';
    if (
      !url.startsWith('/apis/authentication.k8s.io/v1/') &&
      !url.startsWith('/apis/authorization.k8s.io/v1/') &&
      !/\/token(\?|\/?$)/.test(url)
    ) {
      return false;
    }
    const a = admitted.attributes();
    if (!a.resourceRequest || a.apiVersion !== 'v1') return false;
    const tokenRequest =
      a.apiGroup === '' &&
      a.resource === 'serviceaccounts' &&
      a.subresource === 'token' &&
      a.namespace !== '' &&
      a.name !== '';
    const kind = reviewKindOf(a.apiGroup, a.resource);
    const review =
      kind !== undefined &&
      a.subresource === '' &&
      // A list selecting one name is still the collection's path.
      (a.name === '' || a.verb === 'list' || a.verb === 'watch') &&
      (kind.namespaced ? a.namespace !== '' : a.namespace === '');
    if (!tokenRequest && !review) return false;
    if (req.method !== 'POST') throw methodNotAllowed();
    const body = parseBody(await readBody(req), req.headers['content-type']);
    const answer = tokenRequest
      ? this.tokenRequest(a, body)
      : this.review(a, kind as ReviewKind, body);
    sendJson(res, 201, answer);
    return true;
  }

  private review(a: Attributes, kind: ReviewKind, body: unknown): object {
    const authorize = (attributes: Attributes) => this.authorizer.authorize(attributes);
    switch (kind.resource) {
      case 'tokenreviews':
        return tokenReview(body, (token, audiences) =>
          this.authenticator.review(token, audiences ?? API_AUDIENCES),
        );
      case 'localsubjectaccessreviews':
        return localSubjectAccessReview(body, a.namespace, authorize);
      case 'selfsubjectreviews':
        return selfSubjectReview(a.user);
      case 'subjectaccessreviews':
        return subjectAccessReview(body, authorize);
      case 'selfsubjectaccessreviews':
        return selfSubjectAccessReview(body, a.user, authorize);
      default:
        return selfSubjectRulesReview(body, (namespace) =>
          this.authorizer.rulesFor(a.user, namespace),
        );
    }
  }

  /** pkg/registry/core/serviceaccount/storage/token.go: a token for an existing account. */
  private tokenRequest(a: Attributes, body: unknown): object {
    const request = (typeof body === 'object' && body !== null ? body : {}) as {
      metadata?: Record<string, unknown>;
      spec?: { audiences?: unknown; expirationSeconds?: unknown; boundObjectRef?: unknown };
    };
    const spec = request.spec ?? {};
    const expirationSeconds =
      spec.expirationSeconds === undefined || spec.expirationSeconds === null
        ? DEFAULT_EXPIRATION_S
        : Number(spec.expirationSeconds);
    const problem =
      !Number.isInteger(expirationSeconds) || expirationSeconds < MIN_EXPIRATION_S
        ? 'may not specify a duration less than 10 minutes'
        : expirationSeconds > MAX_EXPIRATION_S
          ? 'may not specify a duration larger than 2^32 seconds'
          : undefined;
    if (problem !== undefined) {
      throw invalid({ kind: 'TokenRequest', group: 'authentication.k8s.io' }, a.name, [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.expirationSeconds',
          message: `Invalid value: ${expirationSeconds}: ${problem}`,
        },
      ]);
    }
    const account = this.objects.get(serviceAccountStrategy.type, a.namespace, a.name);
    const given = Array.isArray(spec.audiences)
      ? spec.audiences.filter((x): x is string => typeof x === 'string')
      : [];
    const audiences = given.length > 0 ? given : [...API_AUDIENCES];
    const now = new Date();
    const { token, expires } = this.tokens.issue(
      { namespace: a.namespace, name: a.name, uid: account.metadata.uid ?? '' },
      audiences,
      expirationSeconds,
      now,
    );
    return {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: {
        ...(request.metadata ?? {}),
        name: a.name,
        namespace: a.namespace,
        creationTimestamp: timestamp(now),
      },
      spec: {
        audiences,
        expirationSeconds,
        boundObjectRef: spec.boundObjectRef ?? null,
      },
      status: { token, expirationTimestamp: timestamp(expires) },
    };
  }
}

/**
 * apiserver/pkg/server/handler.go's serviceErrorHandler for go-restful's 405: the words of
 * NewGenericServerResponse, with empty details.
 */
function methodNotAllowed(): ApiError {
  return new ApiError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
    {},
  );
}

/** Whether any Impersonate-* header is set (most requests carry none). */
function impersonates(headers: IncomingMessage['headers']): boolean {
  for (const name in headers) if (name.startsWith('impersonate-')) return true;
  return false;
}

/** responsewriters.Forbidden: NewForbidden's words around forbiddenMessage and the reason. */
export function forbidden(a: Attributes, reason: string): ApiError {
  const message = forbiddenMessage(a) + (reason !== '' ? `: ${reason}` : '');
  if (!a.resourceRequest) return new ApiError(403, 'Forbidden', `forbidden: ${message}`, {});
  const qualified = a.apiGroup === '' ? a.resource : `${a.resource}.${a.apiGroup}`;
  const named = a.name !== '' ? `${qualified} ${JSON.stringify(a.name)}` : qualified;
  return new ApiError(403, 'Forbidden', `${named} is forbidden: ${message}`, {
    name: a.name,
    group: a.apiGroup,
    kind: a.resource,
  });
}
