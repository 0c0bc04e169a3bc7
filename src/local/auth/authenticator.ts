// Who a bearer token is: the control plane's own token (a cluster admin, system:masters), the
// users it was started with (kube-apiserver's token auth file, in code), or a ServiceAccount
// token it issued (service-account-tokens.ts) whose account still exists with the same uid.
import { hash, timingSafeEqual } from 'node:crypto';
import { serviceAccountStrategy } from '../kinds/serviceaccount.js';
import type { Objects } from '../objects.js';
import { LOCAL_ADMIN, type LocalUser } from '../reviews.js';
import type { UserInfo } from './attributes.js';
import { ISSUER, type ServiceAccountTokens, serviceAccountUser } from './service-account-tokens.js';

/** The audiences the API server accepts tokens for (--api-audiences defaults to the issuer). */
export const API_AUDIENCES: readonly string[] = [ISSUER];

export interface Authenticated {
  user: UserInfo;
  /** For a ServiceAccount token, the audiences it was issued for. */
  audiences?: string[];
}

export class Authenticator {
  private readonly token: Buffer;
  /** Users by the sha256 of their token. */
  private readonly users = new Map<string, UserInfo>();

  constructor(
    adminToken: string,
    users: readonly LocalUser[],
    private readonly tokens: ServiceAccountTokens,
    private readonly objects: Objects,
  ) {
    this.token = Buffer.from(adminToken);
    for (const { token, ...user } of users) this.users.set(hash('sha256', token, 'hex'), user);
  }

  authenticate(token: string): Authenticated | undefined {
    const given = Buffer.from(token);
    if (given.length === this.token.length && timingSafeEqual(given, this.token)) {
      return { user: LOCAL_ADMIN };
    }
    // By hash, so that how long a lookup takes says nothing about a guessed token.
    const user = this.users.get(hash('sha256', token, 'hex'));
    if (user !== undefined) return { user };
    const subject = this.tokens.verify(token, API_AUDIENCES);
    if (subject === undefined) return undefined;
    const account = this.objects.find(serviceAccountStrategy.type, subject.namespace, subject.name);
    if (
      account === undefined ||
      account.metadata.uid !== subject.uid ||
      account.metadata.deletionTimestamp !== undefined
    ) {
      return undefined;
    }
    return { user: serviceAccountUser(subject), audiences: subject.audiences };
  }
}
