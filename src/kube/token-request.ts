// TokenRequest: a token of a ServiceAccount from the API server (POST
// serviceaccounts/<name>/token, what `kubectl create token` sends), for a process that must act
// as that account. A subresource that answers another kind (authentication.k8s.io/v1
// TokenRequest), so it bypasses the typed client's envelope checks, as reviews do.
import { isRecord } from './client.js';
import type { Transport } from './transport.js';

export interface ServiceAccountToken {
  readonly token: string;
  /** When the API server stops accepting it. */
  readonly expires: Date;
}

export interface TokenRequestOptions {
  /** Lifetime asked for; the API server may shorten it (its maximum) or refuse it (< 600). */
  readonly expirationSeconds?: number;
  /** Who may accept it; none: the API server's own audience. */
  readonly audiences?: readonly string[];
  readonly signal?: AbortSignal;
}

export interface TokenRequests {
  create(
    account: { readonly namespace: string; readonly name: string },
    options?: TokenRequestOptions,
  ): Promise<ServiceAccountToken>;
}

export function tokenRequestsOver(transport: Transport): TokenRequests {
  return {
    async create(account, options = {}) {
      const answer = await transport.request<Record<string, unknown>>({
        method: 'POST',
        path: `/api/v1/namespaces/${encodeURIComponent(account.namespace)}/serviceaccounts/${encodeURIComponent(account.name)}/token`,
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: {
            ...(options.audiences !== undefined ? { audiences: [...options.audiences] } : {}),
            ...(options.expirationSeconds !== undefined
              ? { expirationSeconds: options.expirationSeconds }
              : {}),
          },
        },
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
      });
      const status = isRecord(answer.status) ? answer.status : {};
      const expires = new Date(String(status.expirationTimestamp));
      if (
        typeof status.token !== 'string' ||
        status.token === '' ||
        Number.isNaN(expires.getTime())
      ) {
        throw new Error(
          `TokenRequest for ${account.namespace}/${account.name}: the answer holds no token and expiry`,
        );
      }
      return { token: status.token, expires };
    },
  };
}
