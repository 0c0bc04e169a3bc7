// ServiceAccount tokens: what TokenRequest (POST serviceaccounts/<name>/token, `kubectl create
// token`) issues and what authenticates later requests and TokenReviews. A JWT as
// pkg/serviceaccount/claims.go writes one (iss, sub, aud, exp, iat, nbf, jti and the
// kubernetes.io claim naming the namespace and service account), signed ES256 with a key kept
// in the data dir, and valid while its ServiceAccount exists with the same uid (the
// validator's check that the account was not deleted).
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomUUID,
  sign,
  verify,
} from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { chmodPrivate, writePrivate } from '../private.js';
import type { UserInfo } from './attributes.js';

/** kube-apiserver's --service-account-issuer, and so its default API audience, on kubeadm. */
export const ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** serviceaccount.MakeGroupNames plus the group every authenticated user has. */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'];
}

export const serviceAccountUsername = (namespace: string, name: string) =>
  `system:serviceaccount:${namespace}:${name}`;

interface Claims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  jti: string;
  'kubernetes.io': {
    namespace: string;
    serviceaccount: { name: string; uid: string };
  };
}

/** What a token says, once its signature and times are checked. */
export interface TokenSubject {
  namespace: string;
  name: string;
  uid: string;
  jti: string;
  audiences: string[];
}

const b64 = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** Tokens are a few hundred bytes; anything much longer is not one of ours. */
const MAX_TOKEN_LENGTH = 16 * 1024;
/** Clock skew allowed on exp and nbf, as the validator's leeway. */
const LEEWAY_S = 60;

export class ServiceAccountTokens {
  private readonly kid: string;
  private readonly publicKey: KeyObject;

  private constructor(private readonly privateKey: KeyObject) {
    this.publicKey = createPublicKey(privateKey);
    // The key id kube-apiserver gives its keys: the SHA-256 of the public key's DER, base64url.
    const der = this.publicKey.export({ type: 'spki', format: 'der' });
    this.kid = b64(createHash('sha256').update(der).digest());
  }

  /** The signing key of the data dir, made on first start. */
  static async open(path: string): Promise<ServiceAccountTokens> {
    let pem: string;
    try {
      pem = await readFile(path, 'utf8');
      // A key opened up by hand, or left by an older version, is put right (ADR 0002).
      await chmodPrivate(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      await writePrivate(path, pem);
    }
    return new ServiceAccountTokens(createPrivateKey(pem));
  }

  issue(
    account: { namespace: string; name: string; uid: string },
    audiences: readonly string[],
    expirationSeconds: number,
    now = new Date(),
  ): { token: string; expires: Date } {
    const iat = Math.floor(now.getTime() / 1000);
    const claims: Claims = {
      aud: [...audiences],
      exp: iat + expirationSeconds,
      iat,
      iss: ISSUER,
      jti: randomUUID(),
      'kubernetes.io': {
        namespace: account.namespace,
        serviceaccount: { name: account.name, uid: account.uid },
      },
      nbf: iat,
      sub: serviceAccountUsername(account.namespace, account.name),
    };
    const head = b64(JSON.stringify({ alg: 'ES256', kid: this.kid }));
    const body = b64(JSON.stringify(claims));
    const signature = sign('sha256', Buffer.from(`${head}.${body}`), {
      key: this.privateKey,
      dsaEncoding: 'ieee-p1363',
    });
    return {
      token: `${head}.${body}.${b64(signature)}`,
      expires: new Date((iat + expirationSeconds) * 1000),
    };
  }

  /**
   * The account a token names, if it is ours, unexpired and meant for one of `audiences` (any,
   * when undefined: the caller checks them); undefined otherwise (the caller still checks that
   * the account exists).
   */
  verify(
    token: string,
    audiences: readonly string[] | undefined,
    now = Date.now(),
  ): TokenSubject | undefined {
    if (token.length > MAX_TOKEN_LENGTH) return undefined;
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const [head, body, signature] = parts as [string, string, string];
    try {
      const header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as {
        alg?: string;
        kid?: string;
      };
      if (header.alg !== 'ES256' || header.kid !== this.kid) return undefined;
      const ok = verify(
        'sha256',
        Buffer.from(`${head}.${body}`),
        { key: this.publicKey, dsaEncoding: 'ieee-p1363' },
        Buffer.from(signature, 'base64url'),
      );
      if (!ok) return undefined;
      const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Claims;
      const seconds = now / 1000;
      if (claims.iss !== ISSUER) return undefined;
      if (typeof claims.exp !== 'number' || claims.exp + LEEWAY_S < seconds) return undefined;
      if (typeof claims.nbf === 'number' && claims.nbf - LEEWAY_S > seconds) return undefined;
      const aud = Array.isArray(claims.aud) ? claims.aud : [];
      if (audiences !== undefined && !aud.some((a) => audiences.includes(a))) return undefined;
      const k8s = claims['kubernetes.io'];
      const { namespace } = k8s;
      const { name, uid } = k8s.serviceaccount;
      if (claims.sub !== serviceAccountUsername(namespace, name)) return undefined;
      return { namespace, name, uid, jti: claims.jti, audiences: aud };
    } catch {
      return undefined;
    }
  }
}

/** The user a valid token acts as: the account, its groups, and the token's id. */
export function serviceAccountUser(subject: TokenSubject): UserInfo {
  return {
    username: serviceAccountUsername(subject.namespace, subject.name),
    uid: subject.uid,
    groups: serviceAccountGroups(subject.namespace),
    extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${subject.jti}`] },
  };
}
