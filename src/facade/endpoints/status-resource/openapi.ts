// GET /status/resources/{kind}/{namespace}/{name} in /openapi.json: the path and a ResourceDetail.
import type { DocumentedOperation } from '../endpoint.js';
import { COMMON_ERRORS, errorResponses, json, ref } from '../openapi-parts.js';

export const statusResourceOperation: DocumentedOperation = {
  path: '/status/resources/{kind}/{namespace}/{name}',
  method: 'get',
  operation: () => ({
    operationId: 'getStatusResource',
    tags: ['status'],
    summary: 'One scope or service in detail',
    description:
      "Its summary, conditions, status messages, children (a scope's inventory) and the last 10 " +
      'Events about it, newest first. NOT_FOUND both when it does not exist and when the ' +
      'caller may not see it.',
    parameters: [
      { name: 'kind', in: 'path', required: true, schema: { enum: ['scope', 'service'] } },
      { name: 'namespace', in: 'path', required: true, schema: { type: 'string', maxLength: 253 } },
      { name: 'name', in: 'path', required: true, schema: { type: 'string', maxLength: 253 } },
    ],
    responses: {
      '200': { description: 'The resource in detail.', content: json(ref('ResourceDetail')) },
      ...errorResponses(['BAD_REQUEST', 'NOT_FOUND', ...COMMON_ERRORS]),
    },
  }),
};
