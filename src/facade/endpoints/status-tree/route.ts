// GET /status/tree: the NRN hierarchy down to applications, with counts by lifecycle value of
// the scopes and services that match the filters and that the caller may see.
import type { FastifyInstance } from 'fastify';
import { StatusFilters } from '../../../api/index.js';
import { parseQuery, visibleTo } from '../../status/request.js';
import { authenticated } from '../access.js';
import { type EndpointDeps, JSON_TYPE } from '../endpoint.js';

export function statusTreeRoute(app: FastifyInstance, deps: EndpointDeps): void {
  app.get('/status/tree', authenticated(deps.auth), async (request, reply) => {
    const filters = parseQuery(StatusFilters, request.query);
    const visibility = await visibleTo(deps.auth, deps.status, request, filters);
    return reply.type(JSON_TYPE).send(JSON.stringify(deps.status.tree(filters, visibility)));
  });
}
