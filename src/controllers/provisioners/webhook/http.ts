// The transport of the `webhook` provisioner: one JSON POST with a deadline on the whole call
// (connection to last byte) and a cap on the answer read, a failure to get any answer said in
// a word or two for the service's message, and how long each call took and how it ended, for
// metrics.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

const MAX_ANSWER_BYTES = 1024 * 1024;

/** A provider's answer as received, before the protocol reads it. */
export interface WebhookHttpAnswer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** Why a call got no answer: the error code, or "timed out". */
export function describeFailure(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timed out';
    return typeof code === 'string' ? code : error.message;
  }
  return String(error);
}

/**
 * How a call ended, for metrics: the class of the answer's HTTP status, or why none came.
 * A class, not the code: the label's values stay few whatever a provider answers.
 */
export type WebhookCallOutcome = '2xx' | '3xx' | '4xx' | '5xx' | 'timeout' | 'error';

/** Told of every call that ended by itself (not one the caller abandoned). */
export type WebhookCallReport = (outcome: WebhookCallOutcome, durationMs: number) => void;

/** One call as the operator's metrics see it: whose provisioner made it, for what, how it ended. */
export interface WebhookCallSample {
  readonly kind: 'Scope' | 'Service';
  readonly action: 'create' | 'update' | 'delete';
  readonly outcome: WebhookCallOutcome;
  readonly durationMs: number;
}

export type WebhookCallObserver = (sample: WebhookCallSample) => void;

/** One POST with a whole-call deadline, abandoned with `signal` too; the body read is capped. */
export async function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  signal?: AbortSignal,
  report?: WebhookCallReport,
): Promise<WebhookHttpAnswer> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const started = performance.now();
  const took = () => performance.now() - started;
  try {
    const answer = await send(url, headers, body, deadline, signal);
    report?.(statusClass(answer.status), took());
    return answer;
  } catch (error) {
    // Abandoned by the reconcile (leadership lost): no measure of the provider.
    if (signal?.aborted !== true) report?.(deadline.aborted ? 'timeout' : 'error', took());
    throw error;
  }
}

function statusClass(status: number): WebhookCallOutcome {
  if (status >= 200 && status < 300) return '2xx';
  if (status >= 300 && status < 400) return '3xx';
  if (status >= 400 && status < 500) return '4xx';
  // 5xx, and a status outside HTTP's range (which Node does not hand over anyway).
  return '5xx';
}

function send(
  url: string,
  headers: Record<string, string>,
  body: string,
  deadline: AbortSignal,
  signal: AbortSignal | undefined,
): Promise<WebhookHttpAnswer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal: signal !== undefined ? AbortSignal.any([signal, deadline]) : deadline,
        // One call every few seconds at most per service: a pooled socket buys little here.
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            req.destroy(new Error(`answer larger than ${MAX_ANSWER_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
