// GET /scope/{id} in /openapi.json: the id parameter as the Scope component describes its id,
// the Scope, and its errors.
import type { DocumentedOperation } from '../endpoint.js';
import { COMMON_ERRORS, errorResponses, json, ref } from '../openapi-parts.js';

export const getScopeOperation: DocumentedOperation = {
  path: '/scope/{id}',
  method: 'get',
  operation: (schemas) => {
    const scopeId = schemas.property('Scope', 'id');
    if (scopeId === undefined) throw new Error('Scope has no id property to describe /scope/{id}');
    const { description: idDescription, ...idSchema } = scopeId;
    return {
      operationId: 'getScope',
      tags: ['scopes'],
      summary: 'Get a scope',
      description: 'One scope, so a caller can watch its status after creating it.',
      parameters: [
        {
          name: 'id',
          in: 'path',
          required: true,
          ...(typeof idDescription === 'string' ? { description: idDescription } : {}),
          schema: idSchema,
        },
      ],
      responses: {
        '200': { description: 'The scope.', content: json(ref('Scope')) },
        ...errorResponses(['VALIDATION_FAILED', 'SCOPE_NOT_FOUND', ...COMMON_ERRORS]),
      },
    };
  },
};
