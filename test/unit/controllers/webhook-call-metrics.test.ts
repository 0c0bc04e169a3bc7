// What the webhook transport tells metrics about each call (nrn_webhook_call_duration_seconds):
// the class of the answer's status, `timeout` when the call's deadline cut it, `error` when no
// answer came, and nothing for a call the reconcile abandoned (leadership lost), which says
// nothing about the agent.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  post,
  type WebhookCallOutcome,
} from '../../../src/controllers/provisioners/webhook/http.js';

/** Answers with the status in the path (/200, /503); /hang never answers. */
const hanging: ServerResponse[] = [];
const server = createServer((request, response) => {
  request.resume();
  if (request.url === '/hang') {
    hanging.push(response);
    return;
  }
  response.writeHead(Number(request.url?.slice(1))).end('{}');
});
let base: string;
let closedPort: number;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A port bound and released: nothing listens there.
  const gone = createServer();
  await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
  closedPort = (gone.address() as AddressInfo).port;
  await new Promise((resolve) => gone.close(resolve));
});
afterAll(async () => {
  for (const response of hanging) response.socket?.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** The call's outcomes as reported, and whether the call itself threw. */
async function call(url: string, timeoutMs = 5_000, signal?: AbortSignal) {
  const reported: { outcome: WebhookCallOutcome; durationMs: number }[] = [];
  let threw = false;
  try {
    await post(url, {}, '{}', timeoutMs, signal, (outcome, durationMs) =>
      reported.push({ outcome, durationMs }),
    );
  } catch {
    threw = true;
  }
  return { reported, threw };
}

describe('webhook call metrics', () => {
  it('reports the class of each answer, with how long it took', async () => {
    for (const [status, outcome] of [
      [200, '2xx'],
      [302, '3xx'],
      [422, '4xx'],
      [503, '5xx'],
    ] as const) {
      const { reported, threw } = await call(`${base}/${status}`);
      expect(threw).toBe(false);
      expect(reported).toEqual([{ outcome, durationMs: expect.any(Number) }]);
      expect(reported[0]?.durationMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('reports a call its deadline cut as timeout, and no answer at all as error', async () => {
    const cut = await call(`${base}/hang`, 50);
    expect(cut).toEqual({
      reported: [{ outcome: 'timeout', durationMs: expect.any(Number) }],
      threw: true,
    });
    const refused = await call(`http://127.0.0.1:${closedPort}/`);
    expect(refused).toEqual({
      reported: [{ outcome: 'error', durationMs: expect.any(Number) }],
      threw: true,
    });
  });

  it('reports nothing for a call the reconcile abandoned', async () => {
    const abandon = new AbortController();
    const held = hanging.length;
    const pending = call(`${base}/hang`, 5_000, abandon.signal);
    // Abandoned once the agent holds it: in flight, not still connecting.
    while (hanging.length === held) await new Promise((resolve) => setImmediate(resolve));
    abandon.abort(new Error('leadership lost'));
    expect(await pending).toEqual({ reported: [], threw: true });
  });
});
