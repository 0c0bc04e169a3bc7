// TokenReview and SubjectAccessReview as the local control plane answers them: it knows one
// user, the holder of its own token (a cluster admin, group system:masters), and it has no
// RBAC, so only system:masters is allowed anything. Enough for a facade in `kubernetes` auth
// mode to run against it; a real cluster gives the full answers.
import { ApiError } from './types.js';

export const LOCAL_ADMIN = {
  username: 'nrn-local-admin',
  groups: ['system:masters', 'system:authenticated'],
} as const;

export const TOKEN_REVIEW_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';
export const ACCESS_REVIEW_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

export function tokenReview(body: unknown, isAdminToken: (token: string) => boolean): object {
  const spec = field(body, 'spec');
  const token = field(spec, 'token');
  if (typeof token !== 'string') {
    throw new ApiError(422, 'Invalid', 'TokenReview "": spec.token: Required value');
  }
  const authenticated = isAdminToken(token);
  return {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    metadata: {},
    spec: { token },
    status: authenticated
      ? { authenticated: true, user: { ...LOCAL_ADMIN, groups: [...LOCAL_ADMIN.groups] } }
      : { authenticated: false, error: 'token not recognised' },
  };
}

export function subjectAccessReview(body: unknown): object {
  const spec = field(body, 'spec');
  if (typeof spec !== 'object' || spec === null) {
    throw new ApiError(422, 'Invalid', 'SubjectAccessReview "": spec: Required value');
  }
  const groups = field(spec, 'groups');
  const allowed = Array.isArray(groups) && groups.includes('system:masters');
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
