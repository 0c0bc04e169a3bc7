// What the benchmarks share: one HTTPS request to the local control plane over a keep-alive
// agent, and percentiles.
import https from 'node:https';

export interface ApiTarget {
  readonly url: URL;
  readonly token: string;
  readonly agent: https.Agent;
}

export function call(
  api: ApiTarget,
  method: string,
  path: string,
  body?: unknown,
  type = 'application/json',
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(
      {
        agent: api.agent,
        host: api.url.hostname,
        port: api.url.port,
        method,
        path,
        headers: {
          Authorization: `Bearer ${api.token}`,
          ...(payload !== undefined
            ? { 'Content-Type': type, 'Content-Length': Buffer.byteLength(payload) }
            : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}
