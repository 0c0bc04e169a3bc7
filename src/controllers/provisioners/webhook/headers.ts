// The headers of one webhook call, signed (signing.ts) with the key of the Secret the caller
// names: what the service and scope webhook provisioners send alike. A call that cannot be
// signed is never sent unsigned; the caller is told why.
import { readSecret } from '../../../domain/services/secrets.js';
import type { Kube } from '../../../kube/index.js';
import { SIGNATURE_HEADER, SIGNING_KEY, sign, TIMESTAMP_HEADER } from './signing.js';

/** The Secret whose key `key` signs the calls. */
export interface SigningSecret {
  readonly namespace: string;
  readonly name: string;
}

/** The headers for `body`, or why it cannot be signed (`signing secret ns/x does not exist`). */
export async function callHeaders(
  kube: Pick<Kube, 'resource'>,
  body: string,
  signing: SigningSecret | undefined,
  now: Date,
): Promise<{ headers: Record<string, string> } | { unsigned: string }> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'nrn-operator',
  };
  if (signing === undefined) return { headers };
  const secret = await readSecret(kube, signing.namespace, signing.name);
  const key = secret?.[SIGNING_KEY];
  if (key === undefined || key === '') {
    return {
      unsigned: `signing secret ${signing.namespace}/${signing.name} ${secret === undefined ? 'does not exist' : `has no key "${SIGNING_KEY}"`}`,
    };
  }
  const timestamp = String(Math.floor(now.getTime() / 1000));
  headers[TIMESTAMP_HEADER] = timestamp;
  headers[SIGNATURE_HEADER] = sign(key, timestamp, body);
  return { headers };
}
