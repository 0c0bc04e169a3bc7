// What a caller may see of the status calls: services where it may `services:list`, scopes where
// it may `scopes:get`, namespace by namespace (ADR 0006's operations, as the facade's own calls
// check them). Asked once cluster-wide first, so a caller allowed everywhere (every static token,
// a ClusterRole) costs two decisions, not two per namespace.
import type { StatusKind } from '../../api/index.js';
import type { Authenticator, Caller, Operation } from '../auth.js';
import { kubeFailure } from '../kube-errors.js';
import type { Visibility } from './store.js';

export const OPERATION_OF: Readonly<Record<StatusKind, Operation>> = {
  scope: 'scopes:get',
  service: 'services:list',
};

/** Decisions asked at once: a caller in many namespaces must not send hundreds of reviews together. */
const CONCURRENCY = 8;

export async function visibilityOf(
  auth: Authenticator,
  caller: Caller,
  namespaces: readonly string[],
  kinds: readonly StatusKind[] = ['scope', 'service'],
): Promise<Visibility> {
  const resolve = async (kind: StatusKind): Promise<Visibility[StatusKind]> => {
    if (!kinds.includes(kind)) return new Set();
    const operation = OPERATION_OF[kind];
    if (await decide(auth, caller, operation)) return 'all';
    const allowed = new Set<string>();
    let next = 0;
    const worker = async () => {
      while (next < namespaces.length) {
        const namespace = namespaces[next++] as string;
        if (await decide(auth, caller, operation, namespace)) allowed.add(namespace);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return allowed;
  };
  const [scope, service] = await Promise.all([resolve('scope'), resolve('service')]);
  return { scope, service };
}

export async function decide(
  auth: Authenticator,
  caller: Caller,
  operation: Operation,
  namespace?: string,
): Promise<boolean> {
  try {
    return await auth.authorize(caller, {
      operation,
      ...(namespace !== undefined ? { namespace } : {}),
    });
  } catch (error) {
    throw kubeFailure(error, 'authorizing the request');
  }
}
