// What the status routes share about a request: its query read with a schema (400 BAD_REQUEST in
// the error shape when refused), and what its caller may see of the store.
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { describeIssues, type StatusFilters, type StatusKind } from '../../api/index.js';
import type { Authenticator, Caller } from '../auth.js';
import { FacadeError } from '../errors.js';
import type { StatusStore, Visibility } from './store.js';
import { visibilityOf } from './visibility.js';

export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const parsed = schema.safeParse(query ?? {});
  if (!parsed.success) throw new FacadeError('BAD_REQUEST', describeIssues(parsed.error));
  return parsed.data;
}

/** The authenticated caller (the route's onRequest hook refused the request otherwise). */
export function callerOf(request: FastifyRequest): Caller {
  const caller = request.caller;
  if (caller === undefined)
    throw new FacadeError('UNAUTHENTICATED', 'a valid bearer token is required');
  return caller;
}

export function kindsOf(filters: StatusFilters): StatusKind[] {
  return filters.kind !== undefined ? [filters.kind] : ['scope', 'service'];
}

/** What the request's caller may see of the store, for the kinds its filters ask about. */
export function visibleTo(
  auth: Authenticator,
  store: StatusStore,
  request: FastifyRequest,
  filters: StatusFilters,
): Promise<Visibility> {
  return visibilityOf(auth, callerOf(request), store.namespaces(), kindsOf(filters));
}
