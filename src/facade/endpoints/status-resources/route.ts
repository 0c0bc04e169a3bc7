// GET /status/resources: a page of scope and service summaries, failures first, then by NRN and
// name, with an opaque cursor (the last summary's sort key, base64url) for the next page.
import type { FastifyInstance } from 'fastify';
import { DEFAULT_STATUS_PAGE, StatusResourcesQuery } from '../../../api/index.js';
import { FacadeError } from '../../errors.js';
import { parseQuery, visibleTo } from '../../status/request.js';
import { authenticated } from '../access.js';
import { type EndpointDeps, JSON_TYPE } from '../endpoint.js';

/** What a sort key looks like (summary.ts): a rank, then space-separated parts. */
const SORT_KEY = /^[0-2] [^\n]*$/;

export function decodeCursor(cursor: string): string {
  const key = /^[A-Za-z0-9_-]+$/.test(cursor)
    ? Buffer.from(cursor, 'base64url').toString('utf8')
    : '';
  if (!SORT_KEY.test(key) || Buffer.from(key, 'utf8').toString('base64url') !== cursor) {
    throw new FacadeError('BAD_REQUEST', 'cursor: not a cursor this facade gave');
  }
  return key;
}

export const encodeCursor = (key: string): string => Buffer.from(key, 'utf8').toString('base64url');

export function statusResourcesRoute(app: FastifyInstance, deps: EndpointDeps): void {
  app.get('/status/resources', authenticated(deps.auth), async (request, reply) => {
    const { limit, cursor, ...filters } = parseQuery(StatusResourcesQuery, request.query);
    const after = cursor !== undefined ? decodeCursor(cursor) : undefined;
    const visibility = await visibleTo(deps.auth, deps.status, request, filters);
    const page = deps.status.page(filters, visibility, limit ?? DEFAULT_STATUS_PAGE, after);
    // The summaries are serialised once, when the store files them: a page is a concatenation.
    const next =
      page.more && page.last !== undefined
        ? `,"next_cursor":${JSON.stringify(encodeCursor(page.last))}`
        : '';
    return reply
      .type(JSON_TYPE)
      .send(
        `{"results":[${page.results.map((e) => e.json).join(',')}]${next},"total":${page.total}}`,
      );
  });
}
