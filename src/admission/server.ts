// The operator's admission server: HTTPS, POST /validate, an admission.k8s.io/v1
// AdmissionReview in, the same out with the verdict of the kind's review (scope.ts,
// service.ts, specification.ts, scope-class.ts). It reads the operator's shared informer
// caches (the same options share one watch, ADR 0011) and runs in every replica, leader or
// not: the API server calls any of them through the Service.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { isIP } from 'node:net';
import type { Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import { GROUP } from '../api/index.js';
import { indexApplications } from '../domain/applications.js';
import { type KindAllowlist, kindAllowlist } from '../domain/scope-classes/kinds.js';
import { indexScopes } from '../domain/scopes/index.js';
import { SchemaCache } from '../domain/services/attributes.js';
import { readSecret } from '../domain/services/secrets.js';
import { indexSpecifications } from '../domain/services/specifications.js';
import {
  Applications,
  type InformerOptions,
  type Kube,
  leanObject,
  Scopes,
  ServiceSpecifications,
} from '../kube/index.js';
import { jsonDepthExceeds } from '../util/json-depth.js';
import { readTlsPair, reloadTls, type TlsFiles } from '../util/serving-tls.js';
import type { ClassRightsDeps } from './class-rights.js';
import { ADMIT, type AdmissionRequest, answer, parseReview, type Verdict } from './review.js';
import { reviewScope } from './scope.js';
import { reviewScopeClass } from './scope-class.js';
import { reviewService, type ServiceReviewDeps } from './service.js';
import { reviewSpecification } from './specification.js';

export const WEBHOOK_PATH = '/validate';
/** controller-runtime's default webhook port, which deploy/ and most operators use. */
export const DEFAULT_WEBHOOK_PORT = 9443;
/**
 * A review carries the object and, on UPDATE, the old one: kube-apiserver refuses request
 * bodies over 3 MiB, so two of them and the envelope fit in 7 MiB.
 */
export const MAX_REVIEW_BYTES = 7 * 1024 * 1024;
/** As the local control plane bounds bodies (src/local/http.ts): far past any manifest's depth. */
export const MAX_REVIEW_DEPTH = 1000;
/** A Secret read for a review past this admits with a warning: kube's webhook timeout is 10 s. */
const SECRET_READ_MS = 3000;

export interface AdmissionServerOptions {
  readonly kube: Kube;
  readonly log: Logger;
  readonly tls: TlsFiles;
  readonly host?: string;
  readonly port?: number;
  /** The operator's informer options, so that its caches are shared, not listed twice. */
  readonly informerOptions?: Pick<InformerOptions, 'transform' | 'resyncMs'>;
  /** The kinds a ScopeClass may template; the default setting where left out. */
  readonly scopeClassKinds?: KindAllowlist;
}

export interface AdmissionServer {
  /** `https://host:port/validate`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** The request's kind to its review; a kind not listed is admitted (the configuration's rules
 * should not send it). */
type Review = (request: AdmissionRequest) => Verdict | Promise<Verdict>;

export async function startAdmissionServer(
  options: AdmissionServerOptions,
): Promise<AdmissionServer> {
  const { kube, log } = options;
  const pair = await readTlsPair(options.tls);
  const informerOptions = options.informerOptions ?? { transform: leanObject };
  const scopes = kube.informer(Scopes, informerOptions);
  const specifications = kube.informer(ServiceSpecifications, informerOptions);
  const applications = kube.informer(Applications, informerOptions);
  indexScopes(scopes);
  indexApplications(applications);
  indexSpecifications(specifications);
  const informers = [scopes, specifications, applications];
  const stopInformers = () => Promise.all(informers.map((i) => i.stop()));
  // Its own cache: a review compiles what is not stored yet, keyed by content.
  const schemas = new SchemaCache();
  const serviceDeps: ServiceReviewDeps = {
    specifications,
    schemas: new SchemaCache(),
    readSecret: (namespace, name) =>
      withDeadline(readSecret(kube, namespace, name), SECRET_READ_MS),
  };
  // A class's author is asked about as the API server knows them (SubjectAccessReview).
  const classRights: ClassRightsDeps = {
    mapper: kube.mapper,
    reviews: kube.reviews,
    kinds: options.scopeClassKinds ?? kindAllowlist(),
  };
  const reviews: Readonly<Record<string, Review>> = {
    Scope: (request) => reviewScope(scopes, applications, request),
    Service: (request) => reviewService(serviceDeps, request),
    ServiceSpecification: (request) => reviewSpecification(schemas, request),
    ScopeClass: (request) => reviewScopeClass(request, kube, classRights),
  };
  const server = createServer({ cert: pair.cert, key: pair.key }, (req, res) => {
    handle(req, res, reviews, log).catch((error: unknown) => {
      // handle() answers every failure it knows; this is the last guard of the process.
      log.error({ err: error }, 'admission review failed');
      if (!res.headersSent) send(res, 500, { message: 'internal error' });
      else res.destroy();
    });
  });
  // A slow or stuck client holds no socket for long: kube-apiserver's own call gives up at
  // the webhook's timeoutSeconds (10 by default, 30 at most).
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  try {
    // Synced before serving: an empty cache would admit a duplicate slug.
    await Promise.all(informers.map((i) => i.start()));
    await listen(server, options.host ?? '127.0.0.1', options.port ?? DEFAULT_WEBHOOK_PORT);
  } catch (error) {
    server.close();
    await stopInformers();
    throw error;
  }
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const host = options.host ?? '127.0.0.1';
  const url = `https://${isIP(host) === 6 ? `[${host}]` : host}:${port}${WEBHOOK_PATH}`;
  const stopReload = reloadTls(server as unknown as TlsServer, options.tls, pair, log);
  log.info({ url }, 'admission webhook listening');
  return {
    url,
    port,
    close: async () => {
      stopReload();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await stopInformers();
    },
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  reviews: Readonly<Record<string, Review>>,
  log: Logger,
): Promise<void> {
  const path = (req.url ?? '').split('?')[0];
  if (path !== WEBHOOK_PATH) return send(res, 404, { message: `no such path: ${path}` });
  if (req.method !== 'POST') return send(res, 405, { message: 'POST only' });
  const body = await readBody(req, MAX_REVIEW_BYTES);
  if (body === 'too large') {
    log.warn({ limit: MAX_REVIEW_BYTES }, 'admission review refused: body too large');
    return send(res, 413, { message: `the review is larger than ${MAX_REVIEW_BYTES} bytes` });
  }
  const text = body.toString('utf8');
  if (jsonDepthExceeds(text, MAX_REVIEW_DEPTH)) {
    log.warn('admission review refused: nests too deep');
    return send(res, 400, {
      message: `the review nests more than ${MAX_REVIEW_DEPTH} levels deep`,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    log.warn({ err: error }, 'admission review refused: not JSON');
    return send(res, 400, { message: 'the body is not JSON' });
  }
  const parsed = parseReview(json);
  if ('problem' in parsed) {
    log.warn({ problem: parsed.problem }, 'admission review refused: not an AdmissionReview v1');
    return send(res, 400, {
      message: `not an admission.k8s.io/v1 AdmissionReview: ${parsed.problem}`,
    });
  }
  const { request } = parsed;
  const review = request.kind.group === GROUP ? reviews[request.kind.kind] : undefined;
  let verdict: Verdict = ADMIT;
  if (review !== undefined && (request.operation === 'CREATE' || request.operation === 'UPDATE')) {
    try {
      verdict = await review(request);
    } catch (error) {
      // A rule that throws is a bug of ours: say so, and do not make it the client's error.
      log.error(
        { err: error, kind: request.kind.kind, name: request.name },
        'admission review threw',
      );
      verdict = { allowed: true, warnings: ['the operator could not review this object'] };
    }
  }
  if (!verdict.allowed) {
    log.info(
      {
        kind: request.kind.kind,
        namespace: request.namespace,
        name: request.name,
        operation: request.operation,
        reason: verdict.reason,
        dryRun: request.dryRun ?? false,
      },
      `admission refused: ${verdict.message}`,
    );
  }
  send(res, 200, answer(request.uid, verdict));
}

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** The body, or 'too large' once it passes `limit` (what was sent after is drained unread). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too large'> {
  if (Number(req.headers['content-length'] ?? 0) > limit) {
    req.resume();
    return Promise.resolve('too large');
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        resolve('too large');
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
