// POST /scope in /openapi.json: a CreateScopeRequest body, the Scope made, and its errors.
import type { DocumentedOperation } from '../endpoint.js';
import { COMMON_ERRORS, errorResponses, json, ref } from '../openapi-parts.js';

export const createScopeOperation: DocumentedOperation = {
  path: '/scope',
  method: 'post',
  operation: () => ({
    operationId: 'createScope',
    tags: ['scopes'],
    summary: 'Create a scope',
    description: 'Creates a scope in an existing application. Unknown fields are refused.',
    requestBody: { required: true, content: json(ref('CreateScopeRequest')) },
    responses: {
      '200': { description: 'The scope created.', content: json(ref('Scope')) },
      ...errorResponses([
        'VALIDATION_FAILED',
        'INVALID_JSON',
        'APPLICATION_NOT_FOUND',
        'SCOPE_ALREADY_EXISTS',
        'BODY_TOO_LARGE',
        'UNSUPPORTED_MEDIA_TYPE',
        ...COMMON_ERRORS,
      ]),
    },
  }),
};
