// An HTTPS proxy in front of an API server that answers the requests its rules pick with an
// error itself (429 with Retry-After, 500, 503: a busy or failing API server; 403: RBAC not
// granted yet; 410 or a watch's in-stream ERROR of 410: a resourceVersion the server no longer
// has) or by resetting the connection, and forwards the rest, watches streamed. It can also cut
// every open watch at once and stall (hold every request, pause every stream) for a while, and
// it keeps a log of what it was asked. For tests of what a client does with those; its
// kubeconfig is the cluster's, re-addressed.
import { readFile, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { issueTls } from '../../src/local/tls.js';

export type Fault =
  | { readonly status: 403 | 410 | 429 | 500 | 503; readonly retryAfterSeconds?: number }
  | 'reset'
  /**
   * 200, then one ERROR event holding a 410 Expired Status, then the end: what kube-apiserver
   * answers a watch from a resourceVersion older than its history (a compacted one).
   */
  | 'expired-event';

/** A fault for the next `times` requests of this method whose path (query included) matches. */
export interface FaultRule {
  readonly method: string;
  readonly path: RegExp;
  readonly fault: Fault;
  times: number;
}

/** One request the proxy received, when it arrived (before any stall held it). */
export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly at: number;
}

const REASONS = {
  403: 'Forbidden',
  // kube-apiserver's reason for a resourceVersion too old to watch from (apierrors.IsResourceExpired).
  410: 'Expired',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

interface KubeconfigDoc {
  clusters: { cluster: Record<string, unknown> }[];
}

/** A watch being forwarded: the server's stream and the client's response it is piped to. */
interface OpenWatch {
  readonly path: string;
  readonly upstream: IncomingMessage;
  readonly res: ServerResponse;
}

const isWatch = (path: string) => /[?&]watch=(true|1)(&|$)/.test(path);

function status(code: keyof typeof REASONS, message: string) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: REASONS[code],
    code,
  };
}

export class FaultyProxy {
  /** Every fault answered, in order. */
  readonly injected: { method: string; path: string; fault: Fault }[] = [];
  readonly rules: FaultRule[] = [];
  /** Every request received, in order of arrival. */
  readonly seen: SeenRequest[] = [];
  private readonly watches = new Set<OpenWatch>();
  /** While a stall lasts: resolves when it ends. */
  private stalled: Promise<void> | undefined;

  private constructor(
    private readonly server: https.Server,
    private readonly agent: https.Agent,
    readonly url: string,
    readonly ca: string,
  ) {}

  /** Starts it on a free port of 127.0.0.1, in front of the server of `kubeconfigPath`. */
  static async start(kubeconfigPath: string): Promise<FaultyProxy> {
    const config = parseYaml(await readFile(kubeconfigPath, 'utf8')) as KubeconfigDoc;
    const upstream = config.clusters[0]?.cluster;
    const caData = upstream?.['certificate-authority-data'];
    if (typeof upstream?.server !== 'string' || typeof caData !== 'string') {
      throw new Error('FaultyProxy needs a kubeconfig with server and certificate-authority-data');
    }
    const target = new URL(upstream.server);
    const agent = new https.Agent({
      keepAlive: true,
      ca: Buffer.from(caData, 'base64').toString(),
    });
    const tls = issueTls(['127.0.0.1']);
    const server = https.createServer({ cert: tls.cert, key: tls.key });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const proxy = new FaultyProxy(server, agent, `https://127.0.0.1:${port}`, tls.ca);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      proxy.handle(req, res, target).catch(() => res.destroy());
    });
    return proxy;
  }

  /** Writes to `path` the kubeconfig at `from`, pointed at this proxy. */
  async kubeconfig(from: string, path: string): Promise<string> {
    const config = parseYaml(await readFile(from, 'utf8')) as KubeconfigDoc;
    for (const entry of config.clusters) {
      entry.cluster.server = this.url;
      delete entry.cluster['certificate-authority'];
      entry.cluster['certificate-authority-data'] = Buffer.from(this.ca).toString('base64');
    }
    await writeFile(path, stringifyYaml(config), { mode: 0o600 });
    return path;
  }

  /** The paths (query included) of the watches being forwarded now. */
  openWatches(): string[] {
    return [...this.watches].map((open) => open.path);
  }

  /**
   * Cuts every watch being forwarded, mid-stream (its connection destroyed, as a load balancer
   * or a restarting server would): how many it cut.
   */
  dropWatches(): number {
    const cut = this.watches.size;
    for (const { upstream, res } of this.watches) {
      upstream.destroy();
      res.socket?.destroy();
    }
    this.watches.clear();
    return cut;
  }

  /**
   * For `ms`, an API server that answers nothing: requests that arrive are held (then handled
   * as usual if their client still waits), and the watches being forwarded pass no
   * event (those the server sent meanwhile come after). Resolves when it ends.
   */
  stall(ms: number): Promise<void> {
    if (this.stalled !== undefined) throw new Error('already stalling');
    const paused = [...this.watches];
    for (const { upstream, res } of paused) {
      upstream.unpipe(res);
      upstream.pause();
    }
    this.stalled = new Promise<void>((resolve) =>
      setTimeout(() => {
        this.stalled = undefined;
        for (const { upstream, res } of paused) {
          if (!res.destroyed) upstream.pipe(res);
        }
        resolve();
      }, ms),
    );
    return this.stalled;
  }

  async close(): Promise<void> {
    this.dropWatches();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    this.agent.destroy();
  }

  private async handle(req: IncomingMessage, res: ServerResponse, target: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    this.seen.push({ method, path, at: Date.now() });
    if (this.stalled !== undefined) {
      await this.stalled;
      // A client that gave up while its request was held: dropped unread, as by a server that
      // never got to it.
      if (res.destroyed) return;
    }
    const fault = this.faultFor(method, path);
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault === 'expired-event') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const error = status(410, 'too old resource version (injected by the test proxy)');
      res.end(`${JSON.stringify({ type: 'ERROR', object: error })}\n`);
      return;
    }
    if (fault !== undefined) {
      res.writeHead(fault.status, {
        'content-type': 'application/json',
        ...(fault.retryAfterSeconds !== undefined
          ? { 'retry-after': String(fault.retryAfterSeconds) }
          : {}),
      });
      res.end(
        JSON.stringify(status(fault.status, `injected by the test's proxy: ${fault.status}`)),
      );
      return;
    }
    const forwarded = https.request(
      new URL(path, target),
      { method, headers: { ...req.headers, host: target.host }, agent: this.agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        // A watch's headers come at once, before its first event, as from the server.
        res.flushHeaders();
        if (isWatch(path) && answer.statusCode === 200) {
          const open = { path, upstream: answer, res };
          this.watches.add(open);
          res.on('close', () => this.watches.delete(open));
        }
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    // A watch the client ends must end upstream too.
    res.on('close', () => forwarded.destroy());
    req.pipe(forwarded);
  }

  private faultFor(method: string, path: string): Fault | undefined {
    const rule = this.rules.find((r) => r.times > 0 && r.method === method && r.path.test(path));
    if (rule === undefined) return undefined;
    rule.times--;
    this.injected.push({ method, path, fault: rule.fault });
    return rule.fault;
  }
}
