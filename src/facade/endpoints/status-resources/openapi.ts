// GET /status/resources in /openapi.json: the shared filters, limit and cursor, a ResourcePage.
import { StatusResourcesQuery } from '../../../api/index.js';
import type { DocumentedOperation } from '../endpoint.js';
import { COMMON_ERRORS, errorResponses, json, ref } from '../openapi-parts.js';

export const statusResourcesOperation: DocumentedOperation = {
  path: '/status/resources',
  method: 'get',
  query: StatusResourcesQuery,
  operation: (schemas) => ({
    operationId: 'listStatusResources',
    tags: ['status'],
    summary: 'Scopes and services with their status',
    description:
      'A page of summaries, failures first (stalled, then failed), then by NRN and name; only ' +
      'what matches the filters and the caller may see. next_cursor, when present, fetches the ' +
      'next page; total counts every page. Unknown query parameters are refused.',
    parameters: schemas.queryParameters(StatusResourcesQuery),
    responses: {
      '200': { description: 'A page of summaries.', content: json(ref('ResourcePage')) },
      ...errorResponses(['BAD_REQUEST', ...COMMON_ERRORS]),
    },
  }),
};
