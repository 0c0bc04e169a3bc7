// An HTTPS proxy in front of an API server that answers the requests its rules pick with an
// error itself (429 with Retry-After, 500, 503: a busy or failing API server; 403: RBAC not
// granted yet) or by resetting the connection, and forwards the rest, watches streamed. For
// tests of what a client does with those; its kubeconfig is the cluster's, re-addressed.
import { readFile, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { issueTls } from '../../src/local/tls.js';

export type Fault =
  | { readonly status: 403 | 429 | 500 | 503; readonly retryAfterSeconds?: number }
  | 'reset';

/** A fault for the next `times` requests of this method whose path (query included) matches. */
export interface FaultRule {
  readonly method: string;
  readonly path: RegExp;
  readonly fault: Fault;
  times: number;
}

const REASONS = {
  403: 'Forbidden',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

interface KubeconfigDoc {
  clusters: { cluster: Record<string, unknown> }[];
}

export class FaultyProxy {
  /** Every fault answered, in order. */
  readonly injected: { method: string; path: string; fault: Fault }[] = [];
  readonly rules: FaultRule[] = [];

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
    let proxy: FaultyProxy | undefined;
    const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const fault = proxy?.faultFor(method, path);
      if (fault === 'reset') {
        req.socket.destroy();
        return;
      }
      if (fault !== undefined) {
        const { status } = fault;
        res.writeHead(status, {
          'content-type': 'application/json',
          ...(fault.retryAfterSeconds !== undefined
            ? { 'retry-after': String(fault.retryAfterSeconds) }
            : {}),
        });
        res.end(
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: `injected by the test's proxy: ${status}`,
            reason: REASONS[status],
            code: status,
          }),
        );
        return;
      }
      const forwarded = https.request(
        new URL(path, target),
        { method, headers: { ...req.headers, host: target.host }, agent },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          // A watch's headers come at once, before its first event, as from the server.
          res.flushHeaders();
          answer.pipe(res);
        },
      );
      forwarded.on('error', () => res.destroy());
      // A watch the client ends must end upstream too.
      res.on('close', () => forwarded.destroy());
      req.pipe(forwarded);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    proxy = new FaultyProxy(server, agent, `https://127.0.0.1:${port}`, tls.ca);
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

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    this.agent.destroy();
  }

  private faultFor(method: string, path: string): Fault | undefined {
    const rule = this.rules.find((r) => r.times > 0 && r.method === method && r.path.test(path));
    if (rule === undefined) return undefined;
    rule.times--;
    this.injected.push({ method, path, fault: rule.fault });
    return rule.fault;
  }
}
