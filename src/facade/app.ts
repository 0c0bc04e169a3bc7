// buildFacade(deps): the Fastify app of the spec's operations — GET /service from the catalog,
// POST /scope and GET /scope/{id} through the ScopeStore, /openapi.json — with bearer auth on
// every operation and every 4XX/5XX, Fastify's own included, in the spec's error shape.

import type { RequestListener, Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import { CreateScopeRequest, describeIssues, ListServicesQuery } from '../api/index.js';
import { jsonDepthExceeds } from '../util/json-depth.js';
import type { Access, Authenticator, Caller } from './auth.js';
import { type CatalogEntry, type ServiceCatalog, withSecretValues } from './catalog/index.js';
import { type ErrorCode, errorBody, FacadeError } from './errors.js';
import { kubeFailure, UnexpectedKubeError } from './kube-errors.js';
import { openApiDocument } from './openapi.js';
import { PageCache, type PageCacheLimits } from './pages.js';
import type { ScopeStore } from './scopes.js';
import type { TlsPair } from './tls.js';

/** Larger than any valid create-scope body by far, small enough that no body costs much. */
export const DEFAULT_BODY_LIMIT = 256 * 1024;

/**
 * How deeply a body may nest: far past any valid create-scope body, and shallow enough that
 * nothing that walks it (the schema, the Scope it becomes) can run out of stack.
 */
export const MAX_BODY_DEPTH = 100;

export interface FacadeDeps {
  readonly log: Logger;
  readonly auth: Authenticator;
  readonly catalog: ServiceCatalog;
  readonly scopes: ScopeStore;
  /** The decoded values of a Secret, undefined when there is none. Never logged. */
  readonly readSecret: (namespace: string, name: string) => Promise<SecretValues | undefined>;
  readonly bodyLimit?: number;
  /** Bounds of the rendered-page cache of GET /service; `{pages: 0, ...}` turns it off. */
  readonly pageCache?: PageCacheLimits;
  /** Served over HTTPS with this pair; plain HTTP without. */
  readonly tls?: TlsPair;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | undefined;
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';

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

  // A hook on each operation rather than one for the app: /openapi.json is public and an
  // unknown route is a 404, not a 401, without looking the route up again per request.
  const authenticated = {
    onRequest: async (request: FastifyRequest) => {
      try {
        request.caller = await deps.auth.authenticate(bearerToken(request));
      } catch (error) {
        throw kubeFailure(error, 'authenticating the request');
      }
      if (request.caller === undefined) {
        throw new FacadeError('UNAUTHENTICATED', 'a valid bearer token is required');
      }
    },
  };

  const pages = new PageCache(deps.pageCache);
  app.get('/service', authenticated, async (request, reply) => {
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
      const read = new Map<string, Promise<SecretValues | undefined>>();
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

  app.post('/scope', authenticated, async (request) => {
    const parsed = CreateScopeRequest.safeParse(request.body);
    if (!parsed.success) throw new FacadeError('VALIDATION_FAILED', describeIssues(parsed.error));
    const namespace = deps.scopes.applicationNamespace(parsed.data.application_id);
    await allow(deps.auth, request, { operation: 'scopes:create', namespace });
    return deps.scopes.create(parsed.data);
  });

  app.get<{ Params: { id: string } }>('/scope/:id', authenticated, async (request) => {
    const id = request.params.id;
    if (!/^[0-9]{1,15}$/.test(id)) {
      throw new FacadeError('VALIDATION_FAILED', 'id: must be a non-negative integer');
    }
    const found = await deps.scopes.get(Number(id));
    await allow(deps.auth, request, {
      operation: 'scopes:get',
      ...(found !== undefined ? { namespace: found.namespace } : {}),
    });
    if (found === undefined) throw new FacadeError('SCOPE_NOT_FOUND', `scope ${id} does not exist`);
    return found.scope;
  });

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

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

async function allow(auth: Authenticator, request: FastifyRequest, access: Access): Promise<void> {
  const caller = request.caller;
  let allowed = false;
  if (caller !== undefined) {
    try {
      allowed = await auth.authorize(caller, access);
    } catch (error) {
      throw kubeFailure(error, 'authorizing the request');
    }
  }
  if (!allowed) {
    const where = access.namespace !== undefined ? ` in namespace ${access.namespace}` : '';
    throw new FacadeError(
      'FORBIDDEN',
      `${caller?.username ?? 'the caller'} may not ${access.operation}${where}`,
    );
  }
}

type SecretValues = Readonly<Record<string, string>>;

/**
 * The item with its secret attribute values, when the caller may read the Secret that holds
 * them; otherwise as it is (secret keys left out), so asking never fails a page. `read` holds
 * each Secret's answer (undefined: not allowed, or no such Secret) for the rest of the page.
 */
async function withSecrets(
  deps: FacadeDeps,
  request: FastifyRequest,
  entry: CatalogEntry,
  read: Map<string, Promise<SecretValues | undefined>>,
): Promise<string> {
  const secret = entry.secret;
  const caller = request.caller;
  if (secret === undefined || secret.keys.length === 0 || caller === undefined) {
    return entry.json;
  }
  const key = `${entry.namespace}/${secret.name}`;
  let values = read.get(key);
  if (values === undefined) {
    const access: Access = {
      operation: 'secrets:get',
      namespace: entry.namespace,
      name: secret.name,
    };
    values = (async () => {
      try {
        if (!(await deps.auth.authorize(caller, access))) return undefined;
        return await deps.readSecret(entry.namespace, secret.name);
      } catch (error) {
        throw kubeFailure(error, 'reading secret attributes');
      }
    })();
    read.set(key, values);
  }
  const shown = await values;
  return shown === undefined ? entry.json : withSecretValues(entry, shown);
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
