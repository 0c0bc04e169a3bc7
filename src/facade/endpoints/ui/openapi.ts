// GET /ui and GET /ui/{asset} in /openapi.json: the status page, public, as HTML (and its
// scripts and styles), so the document lists every route the facade serves.
import type { DocumentedOperation } from '../endpoint.js';
import { errorResponses } from '../openapi-parts.js';

const HEADERS = {
  'Content-Security-Policy': {
    description: "Strict: `default-src 'self'`, no inline script or style.",
    schema: { type: 'string' },
  },
  'Cache-Control': { description: 'Revalidated by ETag.', schema: { type: 'string' } },
  ETag: { schema: { type: 'string' } },
};

export const uiPageOperation: DocumentedOperation = {
  path: '/ui',
  method: 'get',
  operation: () => ({
    operationId: 'getStatusPage',
    tags: ['status'],
    summary: 'The live status page',
    description:
      'An HTML page showing the status of the scopes and services the token it is given may ' +
      'see, live from GET /watch. Public: it holds no data; its calls carry the token.',
    security: [],
    responses: {
      '200': {
        description: 'The page.',
        headers: HEADERS,
        content: { 'text/html': { schema: { type: 'string' } } },
      },
      '304': { description: 'Not modified (If-None-Match).' },
    },
  }),
};

export const uiAssetOperation: DocumentedOperation = {
  path: '/ui/{asset}',
  method: 'get',
  operation: () => ({
    operationId: 'getStatusPageAsset',
    tags: ['status'],
    summary: 'A file of the status page (its scripts and styles)',
    security: [],
    parameters: [
      {
        name: 'asset',
        in: 'path',
        required: true,
        schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}\\.[a-z]{2,4}$' },
      },
    ],
    responses: {
      '200': {
        description: 'The file.',
        headers: HEADERS,
        content: {
          'text/javascript': { schema: { type: 'string' } },
          'text/css': { schema: { type: 'string' } },
        },
      },
      '301': { description: '`/ui/` is the page at `/ui`.' },
      '304': { description: 'Not modified (If-None-Match).' },
      ...errorResponses(['ROUTE_NOT_FOUND']),
    },
  }),
};
