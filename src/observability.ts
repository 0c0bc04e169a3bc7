// What the operator shows about itself over HTTP: Prometheus metrics on /metrics, liveness on
// /healthz and readiness on /readyz, served by node:http beside the operator's own work.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { WebhookCallSample } from './controllers/provisioners/webhook/http.js';
import type { KubeObject, RequestSample, TransportStats } from './kube/index.js';
import type { ControllerMetrics, ReconcileOutcome } from './runtime/index.js';

export const DEFAULT_METRICS_HOST = '127.0.0.1';
export const DEFAULT_METRICS_PORT = 8081;

const OUTCOMES: readonly ReconcileOutcome[] = ['success', 'requeue', 'error', 'stalled'];

/** What the metrics read of a running operator at scrape time. */
export interface ObservedOperator {
  readonly controllers: readonly {
    readonly name: string;
    readonly queue: { readonly length: number };
  }[];
  /** Informer caches of the kinds the operator owns; objects carry their kind. */
  readonly caches: readonly { list(): readonly KubeObject[] }[];
  readonly stats: TransportStats;
  /** The Event recorder: Events waiting to be written (those in flight too), and dropped. */
  readonly events: { readonly backlog: number; readonly dropped: number };
  /** Informers synced and not shutting down; true on standbys too, which are healthy. */
  ready(): boolean;
  /** Its controllers may run: it holds the Lease (or runs without election). */
  leading(): boolean;
}

/**
 * The operator's metrics in a registry of their own (not prom-client's global one, so that
 * two operators in one test process do not collide). The runtime feeds it through the
 * ControllerMetrics hooks; the rest is read from the observed operator at scrape time.
 */
export class OperatorMetrics implements ControllerMetrics {
  readonly registry = new Registry();
  private observed: ObservedOperator | undefined;
  private readonly gates: Array<() => boolean> = [];
  private readonly reconciles: Counter<'controller' | 'outcome'>;
  private readonly errors: Counter<'controller'>;
  private readonly durations: Histogram<'controller'>;
  private readonly depth: Gauge<'controller'>;
  private readonly webhookCalls: Histogram<'kind' | 'action' | 'outcome'>;
  private readonly kubeRequests: Histogram<'method' | 'outcome'>;

  constructor() {
    const registers = [this.registry];
    this.reconciles = new Counter({
      name: 'nrn_reconcile_total',
      help: 'Reconciles by controller and outcome (success, requeue, error, stalled).',
      labelNames: ['controller', 'outcome'],
      registers,
    });
    this.errors = new Counter({
      name: 'nrn_reconcile_errors_total',
      help: 'Reconciles that failed and are retried (a Stalled object is counted under reconcile_total outcome=stalled).',
      labelNames: ['controller'],
      registers,
    });
    this.durations = new Histogram({
      name: 'nrn_reconcile_duration_seconds',
      help: 'Time one reconcile took.',
      labelNames: ['controller'],
      // Reconciles are API round trips: milliseconds, up to a slow provider's webhook.
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.depth = new Gauge({
      name: 'nrn_workqueue_depth',
      help: 'Keys ready to be reconciled, by controller.',
      labelNames: ['controller'],
      registers,
    });
    this.webhookCalls = new Histogram({
      name: 'nrn_webhook_call_duration_seconds',
      help: 'Calls of the webhook provisioners to agents, by kind (Scope, Service), action (create, update, delete) and outcome (2xx, 3xx, 4xx, 5xx, timeout, error).',
      labelNames: ['kind', 'action', 'outcome'],
      // An agent answers in milliseconds to seconds; a call is cut at 10 s (webhook/http.ts).
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.kubeRequests = new Histogram({
      name: 'nrn_kube_api_request_duration_seconds',
      help: 'Requests to the API server (not watches) by method and outcome (2xx, 3xx, 4xx, 5xx, error).',
      labelNames: ['method', 'outcome'],
      // A healthy API server answers in milliseconds; a request is cut at 30 s (kube/transport.ts).
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    const self = this;
    new Gauge({
      name: 'nrn_resources',
      help: 'Objects in the informer caches by kind and lifecycle status.',
      labelNames: ['kind', 'status'],
      registers,
      collect() {
        // Rebuilt each scrape so that a status nobody holds any more drops out.
        this.reset();
        for (const cache of self.observed?.caches ?? []) {
          for (const object of cache.list()) {
            this.inc({ kind: object.kind, status: statusOf(object) });
          }
        }
      },
    });
    new Gauge({
      name: 'nrn_resources_oldest_seconds',
      help: 'By kind and lifecycle status: how long the oldest object not paused has been in its state (Ready, Reconciling or Stalled since that condition last changed; deleting since its deletionTimestamp).',
      labelNames: ['kind', 'status'],
      registers,
      collect() {
        this.reset();
        const now = Date.now();
        const oldest = new Map<string, { kind: string; status: string; seconds: number }>();
        for (const cache of self.observed?.caches ?? []) {
          for (const object of cache.list()) {
            const since = stateSince(object);
            if (since === undefined) continue;
            const status = statusOf(object);
            const key = `${object.kind}\0${status}`;
            const seconds = Math.max(0, (now - since) / 1000);
            const held = oldest.get(key);
            if (held === undefined || held.seconds < seconds) {
              oldest.set(key, { kind: object.kind, status, seconds });
            }
          }
        }
        for (const { kind, status, seconds } of oldest.values())
          this.set({ kind, status }, seconds);
      },
    });
    new Counter({
      name: 'nrn_kube_api_requests_total',
      help: 'HTTP requests sent to the API server, watches included.',
      registers,
      collect() {
        this.reset();
        this.inc(self.observed?.stats.requests ?? 0);
      },
    });
    new Counter({
      name: 'nrn_kube_api_connections_total',
      help: 'TCP connections opened to the API server (keep-alive keeps this low).',
      registers,
      collect() {
        this.reset();
        this.inc(self.observed?.stats.connections ?? 0);
      },
    });
    new Gauge({
      name: 'nrn_events_queued',
      help: 'Kubernetes Events recorded and not yet written: they wait while reconciles do.',
      registers,
      collect() {
        this.set(self.observed?.events.backlog ?? 0);
      },
    });
    new Counter({
      name: 'nrn_events_dropped_total',
      help: 'Kubernetes Events dropped because the queue was full.',
      registers,
      collect() {
        this.reset();
        this.inc(self.observed?.events.dropped ?? 0);
      },
    });
    new Gauge({
      name: 'nrn_leader',
      help: 'Whether this process leads (1: its controllers run) or stands by (0).',
      registers,
      collect() {
        this.set(self.observed?.leading() === true ? 1 : 0);
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** Called by the operator once its parts exist: the series of every controller start at 0. */
  observe(operator: ObservedOperator): void {
    this.observed = operator;
    for (const { name, queue } of operator.controllers) {
      for (const outcome of OUTCOMES) this.reconciles.inc({ controller: name, outcome }, 0);
      this.errors.inc({ controller: name }, 0);
      this.depth.set({ controller: name }, queue.length);
    }
  }

  /**
   * Another part of the process that must be up before it is ready: the facade, which starts
   * listening after the operator has synced, so that a Service sends it no traffic too early.
   */
  requireReady(gate: () => boolean): void {
    this.gates.push(gate);
  }

  ready(): boolean {
    return (this.observed?.ready() ?? false) && this.gates.every((gate) => gate());
  }

  reconciled(sample: {
    readonly controller: string;
    readonly outcome: ReconcileOutcome;
    readonly durationMs: number;
  }): void {
    const { controller, outcome } = sample;
    this.reconciles.inc({ controller, outcome });
    if (outcome === 'error') this.errors.inc({ controller });
    this.durations.observe({ controller }, sample.durationMs / 1000);
  }

  queueDepth(controller: string, depth: number): void {
    this.depth.set({ controller }, depth);
  }

  kubeRequest(sample: RequestSample): void {
    const { method, outcome } = sample;
    this.kubeRequests.observe({ method, outcome }, sample.durationMs / 1000);
  }

  webhookCall(sample: WebhookCallSample): void {
    const { kind, action, outcome } = sample;
    this.webhookCalls.observe({ kind, action, outcome }, sample.durationMs / 1000);
  }
}

/**
 * When the object entered the state it is in (ms since the epoch), or undefined for one the
 * operator leaves alone (paused): a stuck alert must not fire on a pause a person chose.
 * healthConditions keeps exactly one of Ready, Reconciling, Stalled True, its
 * lastTransitionTime kept across writes that do not change it (src/domain/status.ts), so a
 * scope that goes pending, creating, updating counts from when its work began. An object not
 * yet given conditions counts from its creation.
 */
function stateSince(object: KubeObject): number | undefined {
  const conditions = (object.status as { conditions?: unknown } | undefined)?.conditions;
  const list = Array.isArray(conditions)
    ? (conditions as readonly { type?: unknown; status?: unknown; lastTransitionTime?: unknown }[])
    : [];
  if (list.some((c) => c.type === 'Paused' && c.status === 'True')) return undefined;
  const deleting = Date.parse(object.metadata.deletionTimestamp ?? '');
  if (!Number.isNaN(deleting)) return deleting;
  const current = list.find(
    (c) =>
      (c.type === 'Ready' || c.type === 'Reconciling' || c.type === 'Stalled') &&
      c.status === 'True',
  );
  const at = Date.parse(
    typeof current?.lastTransitionTime === 'string'
      ? current.lastTransitionTime
      : (object.metadata.creationTimestamp ?? ''),
  );
  return Number.isNaN(at) ? undefined : at;
}

/** The lifecycle value where the kind has one, else what its Ready condition says. */
function statusOf(object: KubeObject): string {
  const status = object.status as
    | { status?: unknown; conditions?: readonly { type: string; status: string }[] }
    | undefined;
  if (typeof status?.status === 'string') return status.status;
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  if (ready === undefined) return 'unknown';
  return ready.status === 'True' ? 'ready' : 'not_ready';
}

export interface ObservabilityServerOptions {
  readonly metrics: OperatorMetrics;
  readonly log: Logger;
  /** 0 picks a free port (tests); the bound one is in `port` and `url`. */
  readonly port?: number;
  readonly host?: string;
}

export interface ObservabilityServer {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** Stops listening and drops open connections (a scraper's keep-alive would hold it open). */
  close(): Promise<void>;
}

export async function startObservabilityServer(
  options: ObservabilityServerOptions,
): Promise<ObservabilityServer> {
  const { metrics, log } = options;
  const server = createServer((request, response) => {
    handle(metrics, request, response).catch((error: unknown) => {
      log.error({ err: error, path: request.url }, 'metrics request failed');
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(
      options.port ?? DEFAULT_METRICS_PORT,
      options.host ?? DEFAULT_METRICS_HOST,
      () => {
        server.off('error', reject);
        resolve();
      },
    );
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  log.info({ url }, 'metrics server listening');
  let closing: Promise<void> | undefined;
  return {
    host: address.address,
    port: address.port,
    url,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => log.info({ url }, 'metrics server stopped'));
      return closing;
    },
  };
}

async function handle(
  metrics: OperatorMetrics,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { allow: 'GET, HEAD' }).end();
    return;
  }
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  switch (path) {
    case '/metrics': {
      const body = await metrics.registry.metrics();
      response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body);
      return;
    }
    case '/healthz':
      // Answering at all is the liveness signal: the event loop is turning.
      text(response, 200, 'ok');
      return;
    case '/readyz':
      if (metrics.ready()) text(response, 200, 'ok');
      else text(response, 503, 'informers not synced');
      return;
    default:
      text(response, 404, 'not found');
  }
}

function text(response: ServerResponse, code: number, body: string): void {
  response.writeHead(code, { 'content-type': 'text/plain; charset=utf-8' }).end(`${body}\n`);
}
