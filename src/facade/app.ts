// buildFacade(deps): the Fastify app serving the endpoints of endpoints/index.ts (each its own
// folder: route and OpenAPI operation) and /openapi.json, their document; and what every route
// shares: body limits and parsing, and every 4XX/5XX, Fastify's own included, in the spec's
// error shape.

import type { RequestListener, Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { jsonDepthExceeds } from '../util/json-depth.js';
import type { TlsPair } from '../util/serving-tls.js';
import { type EndpointDeps, JSON_TYPE } from './endpoints/endpoint.js';
import { ENDPOINTS } from './endpoints/index.js';
import { type ErrorCode, errorBody, FacadeError } from './errors.js';
import { UnexpectedKubeError } from './kube-errors.js';
import { openApiDocument } from './openapi.js';
import type { ReadEvents } from './status/events.js';
import { StatusStore } from './status/store.js';

/** Larger than any valid create-scope body by far, small enough that no body costs much. */
export const DEFAULT_BODY_LIMIT = 256 * 1024;

/**
 * How deeply a body may nest: far past any valid create-scope body, and shallow enough that
 * nothing that walks it (the schema, the Scope it becomes) can run out of stack.
 */
export const MAX_BODY_DEPTH = 100;

export interface FacadeDeps extends Omit<EndpointDeps, 'status' | 'readEvents'> {
  readonly log: Logger;
  /** An empty store (and no Events) when left out: an app with no cluster behind it. */
  readonly status?: StatusStore;
  readonly readEvents?: ReadEvents;
  readonly bodyLimit?: number;
  /** Served over HTTPS with this pair; plain HTTP without. */
  readonly tls?: TlsPair;
}

export function buildFacade(deps: FacadeDeps): FastifyInstance {
  const tls = deps.tls;
  const app = Fastify({
    logger: false,
    // An https.Server where Fastify's types expect its http.Server: Fastify serves either, and
    // a typed https instance would ripple through every route's types for nothing.
    ...(tls !== undefined
      ? {
          serverFactory: (handler: RequestListener) =>
            createHttpsServer({ cert: tls.cert, key: tls.key }, handler) as unknown as Server,
        }
      : {}),
    bodyLimit: deps.bodyLimit ?? DEFAULT_BODY_LIMIT,
    return503OnClosing: true,
    // Errors Fastify raises before routing (a malformed URL) get the spec's shape too.
    frameworkErrors: (error, _request, reply) => {
      (reply as unknown as FastifyReply).code(400).send(errorBody('BAD_REQUEST', error.message));
    },
    // And so does what Node's HTTP parser refuses before Fastify sees a request (a byte outside
    // ASCII in the target, a malformed header): Fastify's own answer has no `code`, and no
    // `Connection: close`, so a client sent its next request into the closing connection.
    clientErrorHandler: (error, socket) => {
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      if (socket.writable) socket.write(clientErrorAnswer(error.code));
      socket.destroy();
    },
  });
  // Set by each operation's authentication hook (endpoints/access.ts).
  app.decorateRequest('caller', undefined);
  // The spec's bodies are JSON: anything else is 415, not a string for the schema to refuse.
  app.removeContentTypeParser('text/plain');
  // Fastify's own JSON parser (prototype poisoning refused), once the depth is known to be safe.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, raw, done) => {
    const body = raw.toString();
    if (jsonDepthExceeds(body, MAX_BODY_DEPTH)) {
      done(
        new FacadeError('BODY_TOO_DEEP', `body nests more than ${MAX_BODY_DEPTH} levels deep`),
        undefined,
      );
      return;
    }
    parseJson(request, body, done);
  });

  const endpointDeps: EndpointDeps = {
    ...deps,
    status: deps.status ?? new StatusStore(),
    readEvents: deps.readEvents ?? (async () => []),
  };
  for (const endpoint of ENDPOINTS) endpoint.route(app, endpointDeps);

  // The endpoints' own document, not an endpoint: public, and not an operation it lists (ADR
  // 0006). Served here, by the one that serves the list, as the document is made from it.
  app.get('/openapi.json', async () => openApiDocument());

  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send(
        errorBody('ROUTE_NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`),
      );
  });

  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    const known = asFacadeError(error);
    if (known !== undefined) {
      reply.code(known.statusCode).send(known.body());
      return;
    }
    deps.log.error(
      { err: error, method: request.method, route: request.routeOptions.url, reqId: request.id },
      'facade request failed',
    );
    reply
      .code(500)
      .send(errorBody('INTERNAL_ERROR', `internal error (request ${request.id}); see the log`));
  });

  return app;
}

/** The whole HTTP answer to a request the parser refused, in the spec's shape. */
function clientErrorAnswer(cause: string | undefined): string {
  const body =
    cause === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? errorBody('REQUEST_TIMEOUT', 'the request did not arrive in time')
      : cause === 'HPE_HEADER_OVERFLOW'
        ? errorBody('HEADERS_TOO_LARGE', 'the request headers are too large')
        : errorBody('BAD_REQUEST', 'the request is not valid HTTP/1.1');
  const text = JSON.stringify(body);
  return (
    `HTTP/1.1 ${body.statusCode} ${body.error}\r\nContent-Type: ${JSON_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`
  );
}

const FASTIFY_CODES: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
};

/** The caller's own errors, Fastify's included, as FacadeErrors; undefined for ours (500). */
function asFacadeError(error: FastifyError | Error): FacadeError | undefined {
  if (error instanceof FacadeError) return error;
  if (error instanceof UnexpectedKubeError) return undefined;
  const fastify = error as FastifyError;
  const mapped = fastify.code !== undefined ? FASTIFY_CODES[fastify.code] : undefined;
  if (mapped !== undefined) return new FacadeError(mapped, fastify.message);
  if (error instanceof SyntaxError && fastify.statusCode === 400) {
    return new FacadeError('INVALID_JSON', `body is not valid JSON: ${error.message}`);
  }
  const status = fastify.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    if (status === 413) return new FacadeError('BODY_TOO_LARGE', fastify.message);
    if (status === 415) return new FacadeError('UNSUPPORTED_MEDIA_TYPE', fastify.message);
    return new FacadeError('BAD_REQUEST', fastify.message || 'bad request');
  }
  if (status === 503) return new FacadeError('NOT_READY', 'the facade is shutting down');
  return undefined;
}
