// HTTP to one API server: keep-alive connection pools, one for requests and one for watches
// (undici: about a third less CPU per request than node:https), auth headers from the
// kubeconfig, JSON bodies, typed errors, per-request deadlines, newline-delimited JSON watch
// streams, and what each request took, for whoever observes them (metrics).
import { type ConnectionOptions, createSecureContext } from 'node:tls';
import type { Logger } from 'pino';
import { type Dispatcher, Pool } from 'undici';
import type { ClusterAccess, TlsMaterial } from './config.js';
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
  /** A success's answer is not wanted: it is not parsed, and request() resolves undefined. */
  readonly discardAnswer?: boolean;
}

/** One request answered or failed (watches are not: they last minutes by design). */
export interface RequestSample {
  readonly method: HttpMethod;
  /** The answer's status class, or `error` when none came (a deadline, a closed connection). */
  readonly outcome: '2xx' | '3xx' | '4xx' | '5xx' | 'error';
  /** From sending to the whole answer read, a retry on a stale pooled connection included. */
  readonly durationMs: number;
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
/**
 * Request connections at most: above the operator's requests in flight (64 scope workers, 32
 * Event writers, the other controllers' few), so that it caps only undici's surplus.
 */
const MAX_CONNECTIONS = 128;
// What a request sent on a pooled connection the server had just closed (idle) fails with:
// retried once. A write that did reach the server answers the retry with a 409 at worst.
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);

/**
 * The TLS options of every connection, its CA, certificate and key parsed once into a secure
 * context: given them apart, node:tls parses them again for each connection, about a quarter
 * of what a new connection costs the client (a burst after start opens the whole pool).
 */
function tlsOptions(material: TlsMaterial): ConnectionOptions {
  const { ca, cert, key, pfx, passphrase, ...rest } = material;
  return { ...rest, secureContext: createSecureContext({ ca, cert, key, pfx, passphrase }) };
}

interface Response {
  readonly status: number;
  readonly body: string;
}

export class Transport {
  readonly stats: TransportStats = { requests: 0, connections: 0 };
  private cachedHeaders: Record<string, string>;
  private cachedUntil = 0;
  private refreshing: Promise<Record<string, string>> | undefined;
  private closed = false;
  private readonly observers = new Set<(sample: RequestSample) => void>();

  private constructor(
    private readonly access: ClusterAccess,
    private readonly base: URL,
    private readonly pool: Pool,
    private readonly watches: Pool,
    private readonly options: TransportOptions,
  ) {
    this.cachedHeaders = { ...access.headers };
    this.cachedUntil = Date.now() + (options.dynamicAuthTtlMs ?? DEFAULT_DYNAMIC_AUTH_TTL_MS);
  }

  /** Builds the connection pools of this cluster (requests, watches) from its TLS material. */
  static connect(access: ClusterAccess, options: TransportOptions): Transport {
    const base = new URL(access.server);
    const connect = {
      ...(base.protocol === 'https:' ? tlsOptions(access.tls) : {}),
      // TCP keep-alive probes find a dead peer behind an idle watch.
      keepAlive: true,
      keepAliveInitialDelay: 30_000,
    };
    // Requests: connections kept alive, at most MAX_CONNECTIONS. Unbounded, undici opens one
    // whenever none is free at the moment of asking, and under a burst the pool outgrew the
    // requests in flight (278 TLS connections alive for ~110 in flight), each holding ~95 KiB
    // of native memory that the process keeps even once it is closed.
    const pool = new Pool(base.origin, { connect, connections: MAX_CONNECTIONS, pipelining: 1 });
    // A watch holds its connection for minutes: apart, so that watches never wait for requests.
    const watches = new Pool(base.origin, { connect, connections: null, pipelining: 1 });
    const transport = new Transport(access, base, pool, watches, options);
    const counted = () => {
      transport.stats.connections++;
    };
    pool.on('connect', counted);
    watches.on('connect', counted);
    return transport;
  }

  get server(): string {
    return this.base.href;
  }

  /** Calls `observer` after each request (not watches) until the returned function is called. */
  observeRequests(observer: (sample: RequestSample) => void): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
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
    }
    const response =
      this.observers.size === 0
        ? await this.send(options, headers, body, true)
        : await this.sendObserved(options, headers, body);
    if (options.discardAnswer === true && response.status < 400) return undefined as T;
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
   * an HTTP error, KubeTransportError for the connection or the idle deadline, or whatever
   * `onEvent` threw).
   */
  async watch(options: WatchOptions): Promise<void> {
    const headers = {
      ...(await this.authHeaders()),
      Accept: 'application/json',
      'User-Agent': this.options.userAgent ?? 'nrn-operator',
    };
    const url = this.urlOf(options.path, { ...options.query, watch: true });
    const deadline = new Deadline(options.signal);
    const armIdle = () =>
      deadline.arm(
        options.idleTimeoutMs,
        () =>
          new KubeTransportError(
            `watch ${options.path}: nothing received for ${options.idleTimeoutMs} ms`,
            'IDLE_TIMEOUT',
          ),
      );
    armIdle();
    let listenerError: { readonly error: unknown } | undefined;
    try {
      const answer = await deadline.race(this.openWatch(url, headers, deadline));
      if (answer.statusCode !== 200) {
        const text = await answer.body.text();
        if (answer.statusCode === 401) this.cachedUntil = 0;
        throw KubeApiError.fromStatus(
          answer.statusCode,
          parseJson(text),
          `watch ${options.path}: HTTP ${answer.statusCode}`,
        );
      }
      options.onOpen?.();
      answer.body.setEncoding('utf8');
      let pending = '';
      for await (const chunk of answer.body as AsyncIterable<string>) {
        armIdle();
        pending += chunk;
        // Leaving the loop (the listener threw) destroys the body, and with it the connection.
        listenerError = deliverLines(pending, options.onEvent);
        if (listenerError !== undefined) break;
        pending = pending.slice(pending.lastIndexOf('\n') + 1);
      }
      listenerError ??= deliverLines(`${pending}\n`, options.onEvent);
    } catch (error) {
      throw deadline.reason ?? transportError(error, options.path);
    } finally {
      deadline.clear();
    }
    // The listener's own error (e.g. an ERROR event) is the answer, not a network one.
    if (listenerError !== undefined) throw listenerError.error;
  }

  /** Drops every pooled connection; requests after this fail. */
  close(): void {
    this.closed = true;
    this.pool.destroy().catch(ignore);
    this.watches.destroy().catch(ignore);
    this.access.close();
  }

  private async sendObserved(
    options: RequestOptions,
    headers: Record<string, string>,
    body: Buffer | undefined,
  ): Promise<Response> {
    const started = performance.now();
    const tell = (outcome: RequestSample['outcome']) => {
      const sample = { method: options.method, outcome, durationMs: performance.now() - started };
      for (const observer of this.observers) observer(sample);
    };
    try {
      const response = await this.send(options, headers, body, true);
      tell(statusClass(response.status));
      return response;
    } catch (error) {
      // The caller gave up (its signal): that says nothing of the API server.
      if (options.signal?.aborted !== true) tell('error');
      throw error;
    }
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
      return await this.exchange(options, url, headers, body, timeoutMs);
    } catch (error) {
      if (error instanceof KubeTransportError) throw error;
      // A pooled connection the server closed while idle: the request never reached it.
      if (mayRetry && STALE_SOCKET_CODES.has(systemCode(error) ?? '')) {
        this.options.log.debug({ path: options.path }, 'pooled connection was closed; retrying');
        return this.send(options, headers, body, false);
      }
      throw transportError(error, options.path);
    }
  }

  /**
   * One request on the pool through undici's dispatch API: the answer gathered into a string,
   * without request()'s body stream, AbortSignal and promise layers (a request is most of the
   * operator's work in a burst). Settles on the deadline or the caller's signal even while
   * the request still waits for a connection; a request under way is then aborted.
   */
  private exchange(
    options: RequestOptions,
    url: URL,
    headers: Record<string, string>,
    body: Buffer | undefined,
    timeoutMs: number,
  ): Promise<Response> {
    if (this.closed) throw new KubeTransportError('the transport is closed', 'CLOSED');
    this.stats.requests++;
    const caller = options.signal;
    return new Promise<Response>((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined;
      let stopped: Error | undefined;
      let status = 0;
      const chunks: Buffer[] = [];
      const done = () => {
        clearTimeout(timer);
        caller?.removeEventListener('abort', onAbort);
      };
      const stop = (reason: Error) => {
        if (stopped !== undefined) return;
        stopped = reason;
        done();
        controller?.abort(reason);
        reject(reason);
      };
      const onAbort = () => stop(abortError());
      const timer = setTimeout(
        () =>
          stop(
            new KubeTransportError(
              `${options.method} ${options.path}: no answer within ${timeoutMs} ms`,
              'TIMEOUT',
            ),
          ),
        timeoutMs,
      );
      if (caller?.aborted) onAbort();
      else caller?.addEventListener('abort', onAbort, { once: true });
      this.pool.dispatch(
        {
          method: options.method,
          path: url.pathname + url.search,
          headers,
          body: body ?? null,
          // Our own deadline governs.
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        {
          onRequestStart: (c) => {
            controller = c;
            if (stopped !== undefined) c.abort(stopped);
          },
          onResponseStart: (_c, statusCode) => {
            status = statusCode;
          },
          onResponseData: (_c, chunk) => {
            chunks.push(chunk);
          },
          onResponseEnd: () => {
            if (stopped !== undefined) return;
            done();
            const text =
              chunks.length === 1
                ? (chunks[0] as Buffer).toString('utf8')
                : Buffer.concat(chunks).toString('utf8');
            resolve({ status, body: text });
          },
          onResponseError: (_c, error) => {
            if (stopped !== undefined) return;
            stopped = error;
            done();
            reject(error);
          },
        },
      );
    });
  }

  private openWatch(
    url: URL,
    headers: Record<string, string>,
    deadline: Deadline,
  ): Promise<Dispatcher.ResponseData> {
    if (this.closed) throw new KubeTransportError('the transport is closed', 'CLOSED');
    this.stats.requests++;
    return this.watches.request({
      method: 'GET',
      path: url.pathname + url.search,
      headers,
      signal: deadline.signal,
      // The watch's own deadline (its idle timeout) governs.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  private urlOf(path: string, query: Readonly<Record<string, QueryValue>> | undefined): URL {
    const prefix = this.base.pathname.replace(/\/$/, '');
    const url = new URL(`${prefix}${path}`, this.base);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  /** Fixed credentials are read once; a plugin or a token file is asked again after a TTL. */
  private async authHeaders(): Promise<Record<string, string>> {
    const refresh = this.access.refresh;
    if (refresh === undefined || Date.now() < this.cachedUntil) return this.cachedHeaders;
    this.refreshing ??= (async () => {
      try {
        this.cachedHeaders = await refresh();
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

const ignore = () => {};

/**
 * A watch's end by time (nothing received) or by the caller: one AbortController whose reason
 * is the error to throw. undici only sees the signal once a connection is up (a server that
 * accepts TCP and never finishes TLS would hold it until the connect timeout), so `race` also
 * settles on it.
 */
class Deadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private readonly aborted: Promise<never>;
  private readonly onAbort = () => this.controller.abort(abortError());

  constructor(private readonly caller: AbortSignal | undefined) {
    this.aborted = new Promise<never>((_resolve, reject) => {
      this.controller.signal.addEventListener('abort', () => reject(this.reason), { once: true });
    });
    // Whichever of a race's two sides loses settles later with nobody awaiting it.
    this.aborted.catch(ignore);
    if (caller?.aborted) this.onAbort();
    else caller?.addEventListener('abort', this.onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why it ended, once it has. */
  get reason(): Error | undefined {
    return this.controller.signal.aborted ? (this.controller.signal.reason as Error) : undefined;
  }

  /** (Re)starts the clock: `error` is the reason if it runs out. */
  arm(ms: number, error: () => Error): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.controller.abort(error()), ms);
  }

  race<T>(pending: Promise<T>): Promise<T> {
    pending.catch(ignore);
    return Promise.race([pending, this.aborted]);
  }

  clear(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onAbort);
  }
}

/** Hands each complete line of `text` to `onEvent`; what it threw, if it did. */
function deliverLines(
  text: string,
  onEvent: (event: WatchEvent) => void,
): { readonly error: unknown } | undefined {
  let start = 0;
  for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', start)) {
    const line = text.slice(start, newline);
    start = newline + 1;
    if (line.trim() === '') continue;
    try {
      onEvent(JSON.parse(line) as WatchEvent);
    } catch (error) {
      return { error };
    }
  }
  return undefined;
}

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

function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function statusClass(status: number): RequestSample['outcome'] {
  if (status < 300) return '2xx';
  if (status < 400) return '3xx';
  if (status < 500) return '4xx';
  return '5xx';
}
