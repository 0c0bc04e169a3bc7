// The secret attribute values of GET /service?include_secret_attributes=true: each item's
// Secret read from the API (Secrets are not cached), only for a caller allowed to `get` it; a
// caller who is not allowed gets the item without them, not a 403.
import type { FastifyRequest } from 'fastify';
import type { Access } from '../../auth.js';
import { type CatalogEntry, withSecretValues } from '../../catalog/index.js';
import { kubeFailure } from '../../kube-errors.js';
import type { EndpointDeps, SecretValues } from '../endpoint.js';

/** Each Secret's answer for the rest of a page, by `namespace/name`. */
export type SecretsRead = Map<string, Promise<SecretValues | undefined>>;

/**
 * The item with its secret attribute values, when the caller may read the Secret that holds
 * them; otherwise as it is (secret keys left out), so asking never fails a page. `read` holds
 * each Secret's answer (undefined: not allowed, or no such Secret) for the rest of the page.
 */
export async function withSecrets(
  deps: EndpointDeps,
  request: FastifyRequest,
  entry: CatalogEntry,
  read: SecretsRead,
): Promise<string> {
  const secret = entry.secret;
  const caller = request.caller;
  if (secret === undefined || secret.keys.length === 0 || caller === undefined) {
    return entry.json;
  }
  const key = `${entry.namespace}/${secret.name}`;
  let values = read.get(key);
  if (values === undefined) {
    const access: Access = {
      operation: 'secrets:get',
      namespace: entry.namespace,
      name: secret.name,
    };
    values = (async () => {
      try {
        if (!(await deps.auth.authorize(caller, access))) return undefined;
        return await deps.readSecret(entry.namespace, secret.name);
      } catch (error) {
        throw kubeFailure(error, 'reading secret attributes');
      }
    })();
    read.set(key, values);
  }
  const shown = await values;
  return shown === undefined ? entry.json : withSecretValues(entry, shown);
}
