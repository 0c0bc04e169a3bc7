// startFacade: the facade as a server — its own informers (it serves on every replica, leader
// or not), the catalog and scope store over them, the chosen authenticator, and the listener.
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import type { Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { indexApplications } from '../domain/applications.js';
import { EventRecorder } from '../domain/event-recorder.js';
import { DEFAULT_BASE_DOMAIN } from '../domain/names.js';
import { IdAllocator } from '../domain/scopes/id-allocator.js';
import { indexScopeIds, indexScopes } from '../domain/scopes/index.js';
import { readSecret } from '../domain/services/secrets.js';
import {
  Applications,
  type Kube,
  leanObject,
  Scopes,
  ServiceSpecifications,
  Services,
} from '../kube/index.js';
import { readTlsPair, reloadTls, type TlsFiles } from '../util/serving-tls.js';
import { buildFacade } from './app.js';
import type { Authenticator } from './auth.js';
import { ServiceCatalog } from './catalog/index.js';
import { ScopeStore } from './scopes.js';
import { eventReader } from './status/events.js';
import { StatusStore } from './status/store.js';
import type { StreamLimits } from './status/streams.js';

export type { TlsFiles } from '../util/serving-tls.js';
export { buildFacade, type FacadeDeps } from './app.js';
export * from './auth.js';
export { ERROR_CODES, type ErrorCode, FacadeError } from './errors.js';
export { StatusStore } from './status/store.js';
export { DEFAULT_STREAM_LIMITS, type StreamLimits } from './status/streams.js';

export const DEFAULT_FACADE_PORT = 8080;
export const FACADE_COMPONENT = 'nrn-operator-facade';

export interface FacadeOptions {
  readonly kube: Kube;
  readonly log: Logger;
  readonly auth: Authenticator;
  /** Where the operator keeps the scope id counter: the facade allocates from the same one. */
  readonly namespace: string;
  /** Serve HTTPS with the certificate and key in these files, read again while serving. */
  readonly tls?: TlsFiles;
  readonly host?: string;
  readonly port?: number;
  readonly baseDomain?: string;
  /** Bounds of GET /watch; DEFAULT_STREAM_LIMITS where left out. */
  readonly streams?: Partial<StreamLimits>;
  /** Changes kept for resuming GET /watch (DEFAULT_RING_SIZE). */
  readonly ringSize?: number;
}

export interface Facade {
  readonly url: string;
  /** The Fastify app, for app.inject() in tests. */
  readonly app: FastifyInstance;
  close(): Promise<void>;
}

export async function startFacade(options: FacadeOptions): Promise<Facade> {
  const { kube, log } = options;
  const host = options.host ?? '127.0.0.1';
  if (options.auth.mode === 'none' && !isLoopback(host)) {
    throw new Error(`facade auth "none" is refused on ${host}: bind it to a loopback address`);
  }
  // Read before anything starts: a missing or mismatched pair is a startup error, not a
  // facade that cannot complete a handshake.
  const tls = options.tls !== undefined ? await readTlsPair(options.tls) : undefined;
  // What the facade never reads (managedFields, kubectl's last-applied copy) is not cached.
  const lean = { transform: leanObject };
  const services = kube.informer(Services, lean);
  const specifications = kube.informer(ServiceSpecifications, lean);
  const scopes = kube.informer(Scopes, lean);
  const applications = kube.informer(Applications, lean);
  indexScopes(scopes);
  indexScopeIds(scopes);
  indexApplications(applications);
  const informers = [services, specifications, scopes, applications];
  const stopInformers = () => Promise.all(informers.map((i) => i.stop()));

  const catalog = new ServiceCatalog();
  catalog.attach(services, specifications);
  const status = new StatusStore(options.ringSize);
  status.attach(services, scopes, applications);
  const instance = `${hostname()}-${randomBytes(4).toString('hex')}`;
  const events = new EventRecorder(kube, FACADE_COMPONENT, instance, log);
  const app = buildFacade({
    log,
    auth: options.auth,
    catalog,
    scopes: new ScopeStore({
      kube,
      log,
      applications,
      scopes,
      ids: new IdAllocator(kube, { namespace: options.namespace }),
      events,
      baseDomain: options.baseDomain ?? DEFAULT_BASE_DOMAIN,
    }),
    readSecret: (namespace, name) => readSecret(kube, namespace, name),
    status,
    readEvents: eventReader(kube),
    ...(options.streams !== undefined ? { streams: options.streams } : {}),
    ...(tls !== undefined ? { tls } : {}),
  });
  try {
    await Promise.all(informers.map((i) => i.start()));
    await app.listen({ host, port: options.port ?? DEFAULT_FACADE_PORT });
  } catch (error) {
    await app.close();
    await stopInformers();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const url = `${tls ? 'https' : 'http'}://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  log.info({ url, auth: options.auth.mode }, 'facade listening');
  if (tls === undefined && !isLoopback(host)) {
    // Allowed (TLS may end at an ingress or a mesh in front), but never silently.
    log.warn({ host }, 'facade serves plain HTTP beyond loopback; bearer tokens are not encrypted');
  }
  const stopReload =
    tls !== undefined && options.tls !== undefined
      ? reloadTls(app.server as unknown as TlsServer, options.tls, tls, log)
      : () => {};
  return {
    url,
    app,
    close: async () => {
      stopReload();
      await app.close();
      await events.flush();
      await stopInformers();
    },
  };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}
