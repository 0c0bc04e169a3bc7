// One connection to a cluster: the kubeconfig, the shared transport, and the clients and
// informers made on it.
import type { Logger } from 'pino';
import { ResourceClient, type ResourceType } from './client.js';
import { loadClusterAccess } from './config.js';
import { Informer, type InformerOptions } from './informer.js';
import { OpenApiSchemas } from './openapi-schemas.js';
import { RestMapper } from './rest-mapper.js';
import { type Reviews, reviewsOver } from './reviews.js';
import { SharedInformers } from './shared.js';
import { type TokenRequests, tokenRequestsOver } from './token-request.js';
import { type RequestSample, Transport, type TransportStats } from './transport.js';

export interface ConnectOptions {
  readonly log: Logger;
  /** A kubeconfig file; else KUBECONFIG, ~/.kube/config or in-cluster. */
  readonly kubeconfigPath?: string;
  readonly context?: string;
  /** Deadline of one request, in ms (watches have their own). */
  readonly timeoutMs?: number;
  readonly userAgent?: string;
}

export interface Kube {
  /** The API server's URL. */
  readonly server: string;
  /** The namespace of the kubeconfig context (or the pod's), if it names one. */
  readonly namespace: string | undefined;
  /** Requests and TCP connections so far: keep-alive keeps connections near the watch count. */
  readonly stats: TransportStats;
  /** Calls `observer` after each request (not watches) until the returned function is called. */
  observeRequests(observer: (sample: RequestSample) => void): () => void;
  resource<Spec, Status>(type: ResourceType<Spec, Status>): ResourceClient<Spec, Status>;
  /**
   * List+watch of a kind into a cache. Asked again for the same kind and options (without a
   * logger of its own), it shares the first one's list+watch and cache (see ./shared.ts);
   * each caller's stop() ends its own hold.
   */
  informer<Spec, Status>(
    type: ResourceType<Spec, Status>,
    options?: Partial<InformerOptions>,
  ): Informer<Spec, Status>;
  /** TokenReview and SubjectAccessReview, for callers authenticated by the cluster. */
  readonly reviews: Reviews;
  /** Tokens of ServiceAccounts (TokenRequest), for a process that must act as one. */
  readonly tokens: TokenRequests;
  /** apiVersion + kind -> resource, from API discovery: for kinds not known in advance. */
  readonly mapper: RestMapper;
  /** The kinds' published OpenAPI v3 schemas, per group-version: for manifests not known in advance. */
  readonly openapi: OpenApiSchemas;
  /** Drops pooled connections; stop informers first. */
  close(): void;
}

export async function connect(options: ConnectOptions): Promise<Kube> {
  const access = await loadClusterAccess({
    ...(options.kubeconfigPath !== undefined ? { path: options.kubeconfigPath } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
  });
  const transport = Transport.connect(access, {
    log: options.log,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
  });
  const informers = new SharedInformers(
    (type, informerOptions) =>
      new Informer(new ResourceClient(transport, type), { log: options.log, ...informerOptions }),
  );
  return {
    server: transport.server,
    namespace: access.namespace,
    stats: transport.stats,
    observeRequests: (observer) => transport.observeRequests(observer),
    resource: (type) => new ResourceClient(transport, type),
    reviews: reviewsOver(transport),
    tokens: tokenRequestsOver(transport),
    mapper: new RestMapper(transport),
    openapi: new OpenApiSchemas(transport),
    informer: (type, informerOptions = {}) => informers.informer(type, informerOptions),
    close: () => transport.close(),
  };
}
