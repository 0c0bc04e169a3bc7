// TokenReview and SubjectAccessReview: the API server's own answer to "who holds this token"
// and "may they do this", for the facade's `kubernetes` auth and the admission webhook's
// check of a ScopeClass's author. Both are create-only kinds with no name, so they bypass the
// typed client's envelope checks.
import type { Transport } from './transport.js';

export interface ReviewedUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export interface ReviewAttributes {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
  readonly namespace?: string;
  readonly name?: string;
}

export interface Reviews {
  /** The user the token belongs to, or undefined when the API server does not accept it. */
  tokenReview(token: string): Promise<ReviewedUser | undefined>;
  subjectAccessReview(
    user: ReviewedUser,
    attributes: ReviewAttributes,
    options?: { readonly signal?: AbortSignal },
  ): Promise<boolean>;
}

export function reviewsOver(transport: Transport): Reviews {
  return {
    async tokenReview(token) {
      const answer = await transport.request<Record<string, unknown>>({
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      });
      const status = record(answer.status);
      const user = record(status.user);
      if (status.authenticated !== true || typeof user.username !== 'string') return undefined;
      return {
        username: user.username,
        ...(typeof user.uid === 'string' ? { uid: user.uid } : {}),
        ...(Array.isArray(user.groups) ? { groups: user.groups.map(String) } : {}),
        ...(isRecord(user.extra) ? { extra: user.extra as Record<string, string[]> } : {}),
      };
    },
    async subjectAccessReview(user, attributes, options = {}) {
      const answer = await transport.request<Record<string, unknown>>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: user.username,
            ...(user.uid !== undefined ? { uid: user.uid } : {}),
            ...(user.groups !== undefined ? { groups: user.groups } : {}),
            ...(user.extra !== undefined ? { extra: user.extra } : {}),
            resourceAttributes: attributes,
          },
        },
      });
      return record(answer.status).allowed === true;
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function record(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}
