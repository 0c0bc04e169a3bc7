// HTTP to one API server: a single keep-alive agent, auth headers from the kubeconfig, JSON
// bodies, typed errors, per-request timeouts, and newline-delimited JSON watch streams.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import {
  type AgentOptions,
  Agent as HttpsAgent,
  type RequestOptions as HttpsRequestOptions,
  request as httpsRequest,
} from 'node:https';
import type { Socket } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { KubeApiError, KubeTransportError } from './errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type QueryValue = string | number | boolean | undefined;

export interface TransportOptions {
  readonly log: Logger;
  /** Default deadline of one request (not of a watch), in ms. */
  readonly timeoutMs?: number;
  readonly userAgent?: string;
  /** How long headers from an exec or auth-provider plugin are reused before asking again. */
  readonly dynamicAuthTtlMs?: number;
}

export interface RequestOptions {
  readonly method: HttpMethod;
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface WatchEvent {
  readonly type: string;
  readonly object: Record<string, unknown>;
}

export interface WatchOptions {
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  readonly signal?: AbortSignal;
  /** Ends the watch with an IDLE_TIMEOUT error when nothing arrives for this long. */
  readonly idleTimeoutMs: number;
  /** Called once per event line; throwing ends the watch with that error. */
  readonly onEvent: (event: WatchEvent) => void;
  /** Called when the server has accepted the watch (200, headers in). */
  readonly onOpen?: () => void;
}

export interface TransportStats {
  /** HTTP requests sent, watches included. */
  requests: number;
  /** TCP (TLS) connections opened: with keep-alive this stays far below `requests`. */
  connections: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_DYNAMIC_AUTH_TTL_MS = 10_000;
// Node answers ECONNRESET/EPIPE when a pooled socket was closed by the server as we reused it.
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

interface Response {
  readonly status: number;
  readonly body: Buffer;
}

export class Transport {
  readonly stats: TransportStats = { requests: 0, connections: 0 };
  private readonly seenSockets = new WeakSet<Socket>();
  private cachedHeaders: Record<string, string> | undefined;
  private cachedUntil = 0;
  private refreshing: Promise<Record<string, string>> | undefined;
  private closed = false;

  private constructor(
    private readonly kc: KubeConfig,
    private readonly base: URL,
    private readonly agent: HttpAgent,
    private readonly staticAuth: boolean,
    private readonly options: TransportOptions,
  ) {}

  /** Builds the one agent of this cluster from the kubeconfig's TLS material. */
  static async fromKubeConfig(kc: KubeConfig, options: TransportOptions): Promise<Transport> {
    const cluster = kc.getCurrentCluster();
    if (cluster === null) throw new Error('the kubeconfig has no current cluster');
    const base = new URL(cluster.server);
    const material: HttpsRequestOptions = {};
    // Fills ca/cert/key/headers; the agent it also makes is per call, so it is dropped here.
    await kc.applyToHTTPSOptions(material);
    if (material.agent instanceof HttpAgent) material.agent.destroy();
    const agentOptions = {
      keepAlive: true,
      // TCP keep-alive probes find a dead peer behind an idle watch.
      keepAliveMsecs: 30_000,
      scheduling: 'lifo' as const,
    };
    const agent =
      base.protocol === 'https:'
        ? new HttpsAgent({ ...agentOptions, ...tlsOf(material) })
        : new HttpAgent(agentOptions);
    const user = kc.getCurrentUser();
    const staticAuth =
      user === null || (user.authProvider === undefined && user.exec === undefined);
    const transport = new Transport(kc, base, agent, staticAuth, options);
    transport.cachedHeaders = headersOf(material);
    transport.cachedUntil = Date.now() + (options.dynamicAuthTtlMs ?? DEFAULT_DYNAMIC_AUTH_TTL_MS);
    return transport;
  }

  get server(): string {
    return this.base.href;
  }

  /** Sends one request and parses its JSON answer; errors are KubeApiError or KubeTransportError. */
  async request<T = unknown>(options: RequestOptions): Promise<T> {
    const body =
      options.body === undefined
        ? undefined
        : Buffer.from(
            typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
          );
    const headers: Record<string, string> = {
      ...(await this.authHeaders()),
      Accept: 'application/json',
      'User-Agent': this.options.userAgent ?? 'nrn-operator',
    };
    if (body !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = String(body.length);
    }
    const response = await this.send(options, headers, body, true);
    const parsed = parseJson(response.body);
    if (response.status >= 400) {
      if (response.status === 401) this.cachedUntil = 0;
      throw KubeApiError.fromStatus(
        response.status,
        parsed,
        `${options.method} ${options.path}: HTTP ${response.status}`,
      );
    }
    return parsed as T;
  }

  /**
   * Follows a watch until the server ends it (resolves) or it fails (rejects: KubeApiError for
   * an HTTP error, KubeTransportError for the connection or the idle deadline).
   */
  async watch(options: WatchOptions): Promise<void> {
    const headers = {
      ...(await this.authHeaders()),
      Accept: 'application/json',
      'User-Agent': this.options.userAgent ?? 'nrn-operator',
    };
    const query = { ...options.query, watch: true };
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let idle: NodeJS.Timeout | undefined;
      const finish = (error?: unknown) => {
        if (settled) return;
        settled = true;
        if (idle !== undefined) clearTimeout(idle);
        options.signal?.removeEventListener('abort', onAbort);
        if (error === undefined) resolve();
        else reject(error);
      };
      const req = this.open('GET', this.urlOf(options.path, query), headers);
      const onAbort = () => req.destroy(abortError());
      const armIdle = () => {
        if (idle !== undefined) clearTimeout(idle);
        idle = setTimeout(
          () =>
            req.destroy(
              new KubeTransportError(
                `watch ${options.path}: nothing received for ${options.idleTimeoutMs} ms`,
                'IDLE_TIMEOUT',
              ),
            ),
          options.idleTimeoutMs,
        );
      };
      if (options.signal?.aborted) {
        req.destroy(abortError());
      } else {
        options.signal?.addEventListener('abort', onAbort, { once: true });
      }
      armIdle();
      req.on('error', (error) => finish(transportError(error, options.path)));
      req.on('response', (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          readAll(res).then(
            (buffer) => {
              if (status === 401) this.cachedUntil = 0;
              finish(
                KubeApiError.fromStatus(
                  status,
                  parseJson(buffer),
                  `watch ${options.path}: HTTP ${status}`,
                ),
              );
            },
            (error: unknown) => finish(transportError(error, options.path)),
          );
          return;
        }
        res.setEncoding('utf8');
        options.onOpen?.();
        let pending = '';
        const deliver = (line: string) => {
          if (line.trim() === '') return;
          const event = JSON.parse(line) as WatchEvent;
          options.onEvent(event);
        };
        res.on('data', (chunk: string) => {
          armIdle();
          pending += chunk;
          let newline = pending.indexOf('\n');
          try {
            while (newline >= 0) {
              const line = pending.slice(0, newline);
              pending = pending.slice(newline + 1);
              deliver(line);
              newline = pending.indexOf('\n');
            }
          } catch (error) {
            // The listener's own error (e.g. an ERROR event) is the answer, not a network one.
            finish(error);
            req.destroy();
          }
        });
        res.on('end', () => {
          try {
            deliver(pending);
            finish();
          } catch (error) {
            finish(error);
          }
        });
        res.on('error', (error) => finish(transportError(error, options.path)));
        res.on('close', () => {
          if (!res.complete)
            finish(
              new KubeTransportError(`watch ${options.path}: connection closed`, 'ECONNRESET'),
            );
        });
      });
      req.end();
    });
  }

  /** Drops every pooled connection; requests after this fail. */
  close(): void {
    this.closed = true;
    this.agent.destroy();
  }

  private async send(
    options: RequestOptions,
    headers: Record<string, string>,
    body: Buffer | undefined,
    mayRetry: boolean,
  ): Promise<Response> {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const url = this.urlOf(options.path, options.query);
    try {
      return await new Promise<Response>((resolve, reject) => {
        let settled = false;
        const finish = (error: unknown, response?: Response) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
          if (response !== undefined) resolve(response);
          else reject(error);
        };
        const req = this.open(options.method, url, headers);
        const onAbort = () => req.destroy(abortError());
        const timer = setTimeout(
          () =>
            req.destroy(
              new KubeTransportError(
                `${options.method} ${options.path}: no answer within ${timeoutMs} ms`,
                'TIMEOUT',
              ),
            ),
          timeoutMs,
        );
        if (options.signal?.aborted) req.destroy(abortError());
        else options.signal?.addEventListener('abort', onAbort, { once: true });
        req.on('error', (error) => {
          const stale =
            mayRetry && req.reusedSocket && STALE_SOCKET_CODES.has(systemCode(error) ?? '');
          finish(stale ? new StaleSocket() : error);
        });
        req.on('response', (res: IncomingMessage) => {
          readAll(res).then(
            (buffer) => finish(undefined, { status: res.statusCode ?? 0, body: buffer }),
            (error: unknown) => finish(error),
          );
        });
        req.end(body);
      });
    } catch (error) {
      if (error instanceof StaleSocket) {
        this.options.log.debug({ path: options.path }, 'pooled connection was closed; retrying');
        return this.send(options, headers, body, false);
      }
      throw transportError(error, options.path);
    }
  }

  private open(method: HttpMethod, url: URL, headers: Record<string, string>) {
    if (this.closed) throw new KubeTransportError('the transport is closed', 'CLOSED');
    this.stats.requests++;
    const make = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = make(url, { method, agent: this.agent, headers });
    req.on('socket', (socket: Socket) => {
      if (this.seenSockets.has(socket)) return;
      this.seenSockets.add(socket);
      this.stats.connections++;
    });
    return req;
  }

  private urlOf(path: string, query: Readonly<Record<string, QueryValue>> | undefined): URL {
    const prefix = this.base.pathname.replace(/\/$/, '');
    const url = new URL(`${prefix}${path}`, this.base);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  /** Static tokens and client certificates are read once; plugins are asked again after a TTL. */
  private async authHeaders(): Promise<Record<string, string>> {
    if (this.cachedHeaders !== undefined && (this.staticAuth || Date.now() < this.cachedUntil)) {
      return this.cachedHeaders;
    }
    this.refreshing ??= (async () => {
      try {
        const fresh: HttpsRequestOptions = {};
        await this.kc.applyToHTTPSOptions(fresh);
        if (fresh.agent instanceof HttpAgent) fresh.agent.destroy();
        this.cachedHeaders = headersOf(fresh);
        this.cachedUntil =
          Date.now() + (this.options.dynamicAuthTtlMs ?? DEFAULT_DYNAMIC_AUTH_TTL_MS);
        return this.cachedHeaders;
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }
}

class StaleSocket extends Error {}

function abortError(): KubeTransportError {
  return new KubeTransportError('the request was aborted', 'ABORTED');
}

function transportError(error: unknown, path: string): Error {
  if (error instanceof KubeApiError || error instanceof KubeTransportError) return error;
  const code = systemCode(error) ?? 'ENETWORK';
  const message = error instanceof Error ? error.message : String(error);
  return new KubeTransportError(`${path}: ${message}`, code, { cause: error });
}

function systemCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function headersOf(options: HttpsRequestOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(options.headers ?? {})) {
    if (value !== undefined) headers[key] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  if (typeof options.auth === 'string' && headers.Authorization === undefined) {
    headers.Authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
  }
  return headers;
}

function tlsOf(material: HttpsRequestOptions): AgentOptions {
  const out: AgentOptions = {};
  if (material.ca !== undefined) out.ca = material.ca;
  if (material.cert !== undefined) out.cert = material.cert;
  if (material.key !== undefined) out.key = material.key;
  if (material.pfx !== undefined) out.pfx = material.pfx;
  if (material.passphrase !== undefined) out.passphrase = material.passphrase;
  if (material.rejectUnauthorized !== undefined) {
    out.rejectUnauthorized = material.rejectUnauthorized;
  }
  if (material.servername !== undefined) out.servername = material.servername;
  return out;
}

function readAll(res: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
    res.on('close', () => {
      if (!res.complete)
        reject(new KubeTransportError('connection closed mid-answer', 'ECONNRESET'));
    });
  });
}

function parseJson(buffer: Buffer): unknown {
  if (buffer.length === 0) return undefined;
  try {
    return JSON.parse(buffer.toString('utf8'));
  } catch {
    return undefined;
  }
}
