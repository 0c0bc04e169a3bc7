// GET /status/tree in /openapi.json: the shared status filters and a StatusTree.
import { StatusFilters } from '../../../api/index.js';
import type { DocumentedOperation } from '../endpoint.js';
import { COMMON_ERRORS, errorResponses, json, ref } from '../openapi-parts.js';

export const statusTreeOperation: DocumentedOperation = {
  path: '/status/tree',
  method: 'get',
  query: StatusFilters,
  operation: (schemas) => ({
    operationId: 'getStatusTree',
    tags: ['status'],
    summary: 'The NRN tree with status counts',
    description:
      'Organizations, accounts, namespaces and applications (never one node per scope or ' +
      'service), each with how many scopes and services under it are in each lifecycle value; ' +
      'only what matches the filters and the caller may see (services where it may ' +
      'services:list, scopes where it may scopes:get). Unknown query parameters are refused.',
    parameters: schemas.queryParameters(StatusFilters),
    responses: {
      '200': { description: 'The tree.', content: json(ref('StatusTree')) },
      ...errorResponses(['BAD_REQUEST', ...COMMON_ERRORS]),
    },
  }),
};
