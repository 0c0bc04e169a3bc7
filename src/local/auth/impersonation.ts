// Impersonation as apiserver/pkg/endpoints/filters/impersonation.go does it: the
// Impersonate-User, -Group, -Uid and -Extra-<key> headers make a request act as another user,
// each of them first authorized as the `impersonate` verb on users, serviceaccounts, groups,
// uids or userextras; the impersonated user gets system:authenticated as a real one would.
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, badRequest } from '../types.js';
import { type Attributes, forbiddenMessage, type UserInfo } from './attributes.js';
import type { Decision } from './rbac.js';
import { serviceAccountGroups } from './service-account-tokens.js';

const SA_PREFIX = 'system:serviceaccount:';

/** The user a request acts as: the authenticated one, or whom its headers impersonate. */
export function impersonated(
  headers: IncomingHttpHeaders,
  distinct: NodeJS.Dict<string[]>,
  user: UserInfo,
  authorize: (a: Attributes) => Decision,
): UserInfo {
  const username = headers['impersonate-user'];
  const groups = distinct['impersonate-group'] ?? [];
  const uid = headers['impersonate-uid'];
  const extra: Record<string, string[]> = {};
  for (const [header, values] of Object.entries(distinct)) {
    if (!header.startsWith('impersonate-extra-') || values === undefined) continue;
    const key = unescapeKey(header.slice('impersonate-extra-'.length));
    extra[key] = [...(extra[key] ?? []), ...values];
  }
  const hasExtra = Object.keys(extra).length > 0;
  if (typeof username !== 'string' || username === '') {
    if (groups.length > 0 || hasExtra || (typeof uid === 'string' && uid !== '')) {
      const requests = [
        ...groups.map((g) => `{Group  ${g}    }`),
        ...(typeof uid === 'string' && uid !== '' ? [`{UID  ${uid}    }`] : []),
      ];
      throw badRequest(`requested [${requests.join(' ')}] without impersonating a user`);
    }
    return user;
  }
  const check = (partial: Partial<Attributes>) => {
    const attributes: Attributes = {
      user,
      verb: 'impersonate',
      resourceRequest: true,
      path: '',
      apiGroup: '',
      apiVersion: '',
      namespace: '',
      resource: '',
      subresource: '',
      name: '',
      ...partial,
    };
    const decision = authorize(attributes);
    if (decision.allowed) return;
    const { resource, apiGroup, name } = attributes;
    const message = forbiddenMessage(attributes);
    throw new ApiError(
      403,
      'Forbidden',
      `${apiGroup === '' ? resource : `${resource}.${apiGroup}`} ${JSON.stringify(name)} is forbidden: ${message}${decision.reason !== '' ? `: ${decision.reason}` : ''}`,
      { name, group: apiGroup, kind: resource },
    );
  };
  let impersonatedGroups = [...groups];
  if (username.startsWith(SA_PREFIX)) {
    const [namespace, name] = username.slice(SA_PREFIX.length).split(':');
    check({ resource: 'serviceaccounts', namespace: namespace ?? '', name: name ?? '' });
    if (groups.length === 0) {
      impersonatedGroups = serviceAccountGroups(namespace ?? '').filter(
        (g) => g !== 'system:authenticated',
      );
    }
  } else {
    check({ resource: 'users', name: username });
  }
  for (const group of groups) check({ resource: 'groups', name: group });
  for (const [key, values] of Object.entries(extra)) {
    for (const value of values) {
      check({
        resource: 'userextras',
        subresource: key,
        name: value,
        apiGroup: 'authentication.k8s.io',
      });
    }
  }
  if (typeof uid === 'string' && uid !== '') {
    check({ resource: 'uids', name: uid, apiGroup: 'authentication.k8s.io' });
  }
  if (
    username !== 'system:anonymous' &&
    !impersonatedGroups.some((g) => g === 'system:authenticated' || g === 'system:unauthenticated')
  ) {
    impersonatedGroups.push('system:authenticated');
  }
  return {
    username,
    groups: impersonatedGroups,
    ...(typeof uid === 'string' && uid !== '' ? { uid } : {}),
    ...(hasExtra ? { extra } : {}),
  };
}

/** Extra keys travel percent-encoded in header names (unescapeExtraKey). */
function unescapeKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}
