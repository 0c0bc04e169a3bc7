// Who a bearer token is: the control plane's own token (a cluster admin, system:masters), the
// users it was started with (kube-apiserver's token auth file, in code), or a ServiceAccount
// token it issued (service-account-tokens.ts) whose account still exists with the same uid;
// and who a request without one is (anonymous.NewAuthenticator: --anonymous-auth's default).
import { hash, timingSafeEqual } from 'node:crypto';
import { serviceAccountStrategy } from '../kinds/serviceaccount.js';
import type { Objects } from '../objects.js';
import { LOCAL_ADMIN, type LocalUser, type TokenVerdict } from '../reviews.js';
import { goQuote } from '../schema/goformat.js';
import type { UserInfo } from './attributes.js';
import { ISSUER, type ServiceAccountTokens, serviceAccountUser } from './service-account-tokens.js';

/** The audiences the API server accepts tokens for (--api-audiences defaults to the issuer). */
export const API_AUDIENCES: readonly string[] = [ISSUER];

/** apiserver/pkg/authentication/request/anonymous: who a request without credentials is. */
export const ANONYMOUS: UserInfo = {
  username: 'system:anonymous',
  groups: ['system:unauthenticated'],
};

/** bearertoken.go's error when no token authenticator knew the token. */
const INVALID_TOKEN = 'invalid bearer token';

const intersect = (a: readonly string[], b: readonly string[]) => a.filter((x) => b.includes(x));

/** fmt's %q of a []string: `["a" "b"]`. */
const goQuoteList = (list: readonly string[]) => `[${list.map(goQuote).join(' ')}]`;

export interface Authenticated {
  user: UserInfo;
  /** For a ServiceAccount token, the audiences it was issued for. */
  audiences?: readonly string[];
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
    const verdict = this.review(token, API_AUDIENCES);
    return 'user' in verdict ? verdict : undefined;
  }

  /**
   * The token for `wanted` audiences, as a TokenReview asks (the API server's when it names
   * none). Static tokens are audience-agnostic (authenticator.WrapAudienceAgnosticToken): taken
   * only for the API audiences among those asked for. A ServiceAccount token is taken for the
   * audiences it was issued for among those asked (serviceaccount/jwt.go's words when none).
   */
  review(token: string, wanted: readonly string[] = API_AUDIENCES): TokenVerdict {
    const given = Buffer.from(token);
    // By hash, so that how long a lookup takes says nothing about a guessed token.
    const user =
      given.length === this.token.length && timingSafeEqual(given, this.token)
        ? LOCAL_ADMIN
        : this.users.get(hash('sha256', token, 'hex'));
    if (user !== undefined) {
      // Every request asks for the API audiences: no intersection to make for it.
      const audiences = wanted === API_AUDIENCES ? API_AUDIENCES : intersect(API_AUDIENCES, wanted);
      return audiences.length > 0 ? { user, audiences } : { error: INVALID_TOKEN };
    }
    const subject = this.tokens.verify(token, undefined);
    if (subject === undefined) return { error: INVALID_TOKEN };
    const audiences = intersect(subject.audiences, wanted);
    if (audiences.length === 0) {
      return {
        error: `token audiences ${goQuoteList(subject.audiences)} is invalid for the target audiences ${goQuoteList(wanted)}`,
      };
    }
    const account = this.objects.find(serviceAccountStrategy.type, subject.namespace, subject.name);
    if (
      account === undefined ||
      account.metadata.uid !== subject.uid ||
      account.metadata.deletionTimestamp !== undefined
    ) {
      return { error: INVALID_TOKEN };
    }
    return { user: serviceAccountUser(subject), audiences };
  }
}
