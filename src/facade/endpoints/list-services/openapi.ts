// GET /service in /openapi.json: the spec's query parameters, a ServicePage, and its errors.
import { ListServicesQuery } from '../../../api/index.js';
import type { DocumentedOperation } from '../endpoint.js';
import { COMMON_ERRORS, errorResponses, json, ref } from '../openapi-parts.js';

export const listServicesOperation: DocumentedOperation = {
  path: '/service',
  method: 'get',
  query: ListServicesQuery,
  operation: (schemas) => ({
    operationId: 'listServices',
    tags: ['services'],
    summary: 'List services',
    description:
      'Services visible at an NRN, filtered and paged. Unknown query parameters are refused. ' +
      'Secret attribute values are left out unless include_secret_attributes=true and the ' +
      'caller may read them.',
    parameters: schemas.queryParameters(ListServicesQuery),
    responses: {
      '200': { description: 'A page of services.', content: json(ref('ServicePage')) },
      ...errorResponses(['VALIDATION_FAILED', ...COMMON_ERRORS]),
    },
  }),
};
