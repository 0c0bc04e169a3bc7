// The transport of the `webhook` provisioner: one JSON POST with a deadline on the whole call
// (connection to last byte) and a cap on the answer read, and a failure to get any answer
// said in a word or two for the service's message.
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

/** One POST with a whole-call deadline, abandoned with `signal` too; the body read is capped. */
export function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<WebhookHttpAnswer> {
  const deadline = AbortSignal.timeout(timeoutMs);
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
