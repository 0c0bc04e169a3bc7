// GET /service: a page of the catalog, filtered by the spec's query parameters, with secret
// attribute values for a caller allowed to read them; a page anybody may see is kept, as bytes,
// until the catalog changes.
import type { FastifyInstance } from 'fastify';
import { describeIssues, ListServicesQuery } from '../../../api/index.js';
import { FacadeError } from '../../errors.js';
import { allow, authenticated } from '../access.js';
import { type EndpointDeps, JSON_TYPE } from '../endpoint.js';
import { PageCache } from './pages.js';
import { type SecretsRead, withSecrets } from './secret-values.js';

export function listServicesRoute(app: FastifyInstance, deps: EndpointDeps): void {
  const pages = new PageCache(deps.pageCache);
  app.get('/service', authenticated(deps.auth), async (request, reply) => {
    await allow(deps.auth, request, { operation: 'services:list' });
    // The same URL renders the same page until the catalog changes. Pages with secret values
    // depend on the caller and are never kept, so a kept page is one anybody allowed to list
    // services may see.
    const version = deps.catalog.version;
    const kept = pages.get(request.url, version);
    if (kept !== undefined) return reply.type(JSON_TYPE).send(kept);
    const parsed = ListServicesQuery.safeParse(request.query);
    if (!parsed.success) throw new FacadeError('VALIDATION_FAILED', describeIssues(parsed.error));
    const query = parsed.data;
    const entries = deps.catalog.query({
      ...(query.id !== undefined ? { nrn: query.id } : {}),
      ...(query.entity_nrn !== undefined ? { entityNrn: query.entity_nrn } : {}),
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.type !== undefined ? { type: query.type } : {}),
      limit: query.limit,
      offset: query.offset,
    }).entries;
    let results: string[];
    if (query.include_secret_attributes) {
      // Services of a page often share a Secret: each is checked and read once per page.
      const read: SecretsRead = new Map();
      results = await Promise.all(entries.map((entry) => withSecrets(deps, request, entry, read)));
    } else {
      results = entries.map((entry) => entry.json);
    }
    // The items are serialised once, when the catalog files them: a page is a concatenation.
    const page = Buffer.from(
      `{"paging":{"limit":${query.limit},"offset":${query.offset}},"results":[${results.join(',')}]}`,
    );
    if (!query.include_secret_attributes) pages.set(request.url, version, page);
    return reply.type(JSON_TYPE).send(page);
  });
}
