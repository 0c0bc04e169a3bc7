// Who is calling and what they may do, as every operation's route applies it: the bearer token
// authenticated before the body is read (401 before 400), and each access checked against the
// authenticator (403), both in the spec's error shape. How a token or an access is judged is
// auth.ts's.
import type { FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { Access, Authenticator, Caller } from '../auth.js';
import { FacadeError } from '../errors.js';
import { kubeFailure } from '../kube-errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | undefined;
  }
}

/**
 * The route options of an operation: a hook on each operation rather than one for the app, as
 * /openapi.json is public and an unknown route is a 404, not a 401, without looking the route
 * up again per request.
 */
export function authenticated(auth: Authenticator): RouteShorthandOptions {
  return {
    onRequest: async (request: FastifyRequest) => {
      try {
        request.caller = await auth.authenticate(bearerToken(request));
      } catch (error) {
        throw kubeFailure(error, 'authenticating the request');
      }
      if (request.caller === undefined) {
        throw new FacadeError('UNAUTHENTICATED', 'a valid bearer token is required');
      }
    },
  };
}

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Throws FORBIDDEN unless the request's caller may do `access`. The refusal names the access's
 * namespace, or `subject` instead where the namespace would tell the caller something it may
 * not know (that an application exists, and where).
 */
export async function allow(
  auth: Authenticator,
  request: FastifyRequest,
  access: Access,
  subject?: string,
): Promise<void> {
  const caller = request.caller;
  let allowed = false;
  if (caller !== undefined) {
    try {
      allowed = await auth.authorize(caller, access);
    } catch (error) {
      throw kubeFailure(error, 'authorizing the request');
    }
  }
  if (!allowed) {
    const where =
      subject !== undefined
        ? ` ${subject}`
        : access.namespace !== undefined
          ? ` in namespace ${access.namespace}`
          : '';
    throw new FacadeError(
      'FORBIDDEN',
      `${caller?.username ?? 'the caller'} may not ${access.operation}${where}`,
    );
  }
}
