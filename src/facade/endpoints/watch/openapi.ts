// GET /watch in /openapi.json: the shared status filters, Last-Event-ID, and the stream as
// text/event-stream with each of its event types.
import { StatusFilters } from '../../../api/index.js';
import { RETRY_MS } from '../../status/streams.js';
import type { DocumentedOperation } from '../endpoint.js';
import { COMMON_ERRORS, errorResponses, ref } from '../openapi-parts.js';

export const watchOperation: DocumentedOperation = {
  path: '/watch',
  method: 'get',
  query: StatusFilters,
  operation: (schemas) => ({
    operationId: 'watchStatus',
    tags: ['status'],
    summary: 'Status changes, live (server-sent events)',
    description:
      'A text/event-stream (WHATWG server-sent events) of the changes to the scopes and services ' +
      'that match the filters and the caller may see. It opens with `retry: ' +
      `${RETRY_MS}\` and \`event: ready\` (with an id); a client waits for ready, then fetches ` +
      '/status/tree and /status/resources and applies later events on top. `upsert` carries a ' +
      'whole ResourceSummary; `delete` ({kind, namespace, name}) is sent when an object is ' +
      'deleted or stops matching the filters. Every id is `<epoch>.<seq>`, epoch naming this ' +
      'facade process. Sent again as Last-Event-ID, an id resumes the stream after it (ready ' +
      'then carries that id and {"resumed": true}, and the missed events follow); an id of ' +
      'another process, or older than the facade keeps, gets `event: reset` ({reason: foreign | ' +
      'expired | malformed}) before ready: the client fetches again. A `: keepalive` comment ' +
      'comes every 15 s. A reader more than its byte budget behind is disconnected; a stream ' +
      'ends after 30 minutes (the client reconnects with Last-Event-ID). Streams are bounded ' +
      'per facade and per caller (TOO_MANY_STREAMS). Read it with fetch() and a stream reader: ' +
      'EventSource cannot send the Authorization header.',
    parameters: [
      ...schemas.queryParameters(StatusFilters),
      {
        name: 'Last-Event-ID',
        in: 'header',
        required: false,
        description: 'The id of the last event received, to resume after it.',
        schema: { type: 'string', maxLength: 64 },
      },
    ],
    responses: {
      '200': {
        description:
          'The stream. Each event is `id:`, `event:` and one `data:` line of JSON; the ' +
          'x-events schema gives the data of each event type.',
        content: {
          'text/event-stream': {
            schema: { type: 'string' },
            'x-events': {
              ready: {
                type: 'object',
                properties: { resumed: { type: 'boolean' } },
                additionalProperties: false,
              },
              upsert: ref('ResourceSummary'),
              delete: {
                type: 'object',
                required: ['kind', 'namespace', 'name'],
                properties: {
                  kind: { enum: ['scope', 'service'] },
                  namespace: { type: 'string' },
                  name: { type: 'string' },
                },
                additionalProperties: false,
              },
              reset: {
                type: 'object',
                required: ['reason'],
                properties: { reason: { enum: ['foreign', 'expired', 'malformed'] } },
                additionalProperties: false,
              },
            },
          },
        },
      },
      ...errorResponses(['BAD_REQUEST', 'TOO_MANY_STREAMS', ...COMMON_ERRORS]),
    },
  }),
};
