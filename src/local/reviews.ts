// Who the local control plane knows and what they may do, and TokenReview and
// SubjectAccessReview as it answers them: the holder of its own token (a cluster admin, group
// system:masters) and any users it was started with (ControlPlaneOptions.users). It has no
// RBAC, so only system:masters is allowed anything. Enough for a facade in `kubernetes` auth
// mode to run against it, allowed and refused; a real cluster gives the full answers.
import { ApiError } from './types.js';

/** A user of a bearer token, as a TokenReview reports it. */
export interface LocalUser {
  readonly token: string;
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
}

export const LOCAL_ADMIN = {
  username: 'nrn-local-admin',
  groups: ['system:masters', 'system:authenticated'],
} as const;

/** The one rule of a control plane without RBAC. */
export function isMaster(user: Pick<LocalUser, 'groups'>): boolean {
  return user.groups.includes('system:masters');
}

export const TOKEN_REVIEW_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';
export const ACCESS_REVIEW_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

export function tokenReview(
  body: unknown,
  userOf: (token: string) => Omit<LocalUser, 'token'> | undefined,
): object {
  const spec = field(body, 'spec');
  const token = field(spec, 'token');
  if (typeof token !== 'string') {
    throw new ApiError(422, 'Invalid', 'TokenReview "": spec.token: Required value');
  }
  const user = userOf(token);
  return {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    metadata: {},
    spec: { token },
    status:
      user !== undefined
        ? {
            authenticated: true,
            user: {
              username: user.username,
              ...(user.uid !== undefined ? { uid: user.uid } : {}),
              groups: [...user.groups],
            },
          }
        : { authenticated: false, error: 'token not recognised' },
  };
}

export function subjectAccessReview(body: unknown): object {
  const spec = field(body, 'spec');
  if (typeof spec !== 'object' || spec === null) {
    throw new ApiError(422, 'Invalid', 'SubjectAccessReview "": spec: Required value');
  }
  const groups = field(spec, 'groups');
  const allowed = Array.isArray(groups) && isMaster({ groups: groups as string[] });
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    metadata: {},
    spec,
    status: allowed
      ? { allowed: true, reason: 'system:masters' }
      : { allowed: false, reason: 'the local control plane has no RBAC: only system:masters' },
  };
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)[name]
    : undefined;
}
