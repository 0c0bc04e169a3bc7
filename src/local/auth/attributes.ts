// What an authorizer is asked about a request: kube-apiserver's authorizer.Attributes, read off
// the URL as apiserver/pkg/endpoints/request/requestinfo.go's RequestInfoFactory reads it (the
// verb from the method, list/watch/deletecollection for collections, the namespace, resource,
// name and subresource from the path), and the user it acts as.

/** user.Info: who a request acts as. */
export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export interface Attributes {
  readonly user: UserInfo;
  readonly verb: string;
  readonly resourceRequest: boolean;
  /** A non-resource request's URL path, as sent. */
  readonly path: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
}

const METHOD_VERBS: Readonly<Record<string, string>> = {
  POST: 'create',
  GET: 'get',
  HEAD: 'get',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

/** namespaces/<name>/<this> names a subresource of the namespace, not a resource within it. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * RequestInfoFactory.NewRequestInfo: a path under /api/<v> or /apis/<g>/<v> with at least a
 * resource is a resource request; anything else a non-resource one, whose verb is the method
 * in lower case.
 */
export function requestAttributes(
  user: UserInfo,
  method: string,
  path: string,
  query: URLSearchParams,
): Attributes {
  const base = {
    user,
    path,
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
  const nonResource: Attributes = {
    ...base,
    verb: method.toLowerCase(),
    resourceRequest: false,
  };
  let parts = path.split('/').filter((p) => p !== '');
  if (parts.length < 3) return nonResource;
  const prefix = parts[0];
  if (prefix !== 'api' && prefix !== 'apis') return nonResource;
  parts = parts.slice(1);
  let apiGroup = '';
  if (prefix === 'apis') {
    if (parts.length < 3) return nonResource;
    apiGroup = parts[0] as string;
    parts = parts.slice(1);
  }
  const apiVersion = parts[0] as string;
  parts = parts.slice(1);
  let verb = METHOD_VERBS[method] ?? '';
  // The deprecated /watch/ prefix.
  if (parts[0] === 'watch') {
    if (verb === 'get') verb = 'watch';
    parts = parts.slice(1);
  }
  let namespace = '';
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1] as string;
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2] as string)) parts = parts.slice(2);
  }
  const resource = parts[0] ?? '';
  let name = parts[1] ?? '';
  const subresource = parts[2] ?? '';
  if (name === '' && verb === 'get') {
    const watch = query.get('watch');
    verb = watch !== null && watch !== '0' && watch.toLowerCase() !== 'false' ? 'watch' : 'list';
    // A list selecting one name is authorized as that name (resourceNames rules apply).
    const exact = /^metadata\.name==?([^,]*)$/.exec(query.get('fieldSelector') ?? '');
    if (
      exact !== null &&
      !['.', '..'].includes(exact[1] as string) &&
      !/[/%]/.test(exact[1] as string)
    ) {
      name = exact[1] as string;
    }
  }
  if (name === '' && verb === 'delete') verb = 'deletecollection';
  return {
    ...base,
    verb,
    resourceRequest: true,
    apiGroup,
    apiVersion,
    namespace,
    resource,
    subresource,
    name,
  };
}

/**
 * The words of a refusal (apiserver/pkg/endpoints/handlers/responsewriters/errors.go
 * forbiddenMessage), before NewForbidden wraps them.
 */
export function forbiddenMessage(a: Attributes): string {
  const who = JSON.stringify(a.user.username);
  if (!a.resourceRequest) return `User ${who} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource !== '' ? `${a.resource}/${a.subresource}` : a.resource;
  const where =
    a.namespace !== '' ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  return `User ${who} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${where}`;
}
