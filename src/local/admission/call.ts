// One call of an admission webhook: an AdmissionReview POSTed over HTTPS to
// `clientConfig.url`, trusting `caBundle` (else the system roots), within the webhook's timeout,
// its response read up to a bound. Failures are CallErrors worded as kube's webhook client words
// them (staging/src/k8s.io/apiserver/pkg/util/webhook/client.go, request.go
// VerifyAdmissionResponse); the dispatcher turns them into `failed calling webhook "<name>": ...`.
import { request } from 'node:https';
import type { Webhook } from './webhooks.js';

/** kube's webhook client reads at most this much of a response (util/webhook: maxRespBodyLength). */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** A call that did not produce a usable response: failurePolicy decides. */
export class CallError extends Error {
  override name = 'CallError';
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: Record<string, unknown>;
  patch?: string;
  patchType?: string;
  warnings?: string[];
}

/** POSTs `review`; resolves with its response, or rejects with a CallError (never hangs). */
export async function callWebhook(
  webhook: Webhook,
  review: Record<string, unknown>,
  deadline: number,
): Promise<AdmissionResponse> {
  if (webhook.url === undefined) {
    const s = webhook.service;
    // No pods or endpoints exist here: a service reference cannot be resolved (ADR 0003).
    throw new CallError(
      `failed to call webhook: service "${s?.namespace ?? ''}/${s?.name ?? ''}" cannot be resolved by the local control plane (no endpoints); use clientConfig.url`,
    );
  }
  const timeoutMs = Math.max(0, Math.min(webhook.timeoutSeconds * 1000, deadline - Date.now()));
  let target: URL;
  try {
    target = new URL(webhook.url);
  } catch {
    throw new CallError(`failed to call webhook: invalid url "${webhook.url}"`);
  }
  // The client appends the timeout it enforces (webhook.go: ?timeout=<n>s).
  target.searchParams.set('timeout', `${webhook.timeoutSeconds}s`);
  const shown = `Post "${target.toString()}"`;
  if (target.protocol !== 'https:') {
    throw new CallError(`failed to call webhook: ${shown}: unsupported protocol scheme`);
  }
  const body = JSON.stringify(review);
  const text = await new Promise<string>((resolve, reject) => {
    // Settled once, whatever ends the call first: the response, an error, the deadline.
    let done = false;
    const fail = (error: unknown) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      reject(
        error instanceof CallError
          ? error
          : new CallError(`failed to call webhook: ${shown}: ${goError(error as Error, target)}`),
      );
    };
    const req = request(
      target,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'Content-Length': Buffer.byteLength(body),
        },
        ...(webhook.caBundle !== undefined ? { ca: webhook.caBundle } : {}),
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            fail(
              new CallError(
                `failed to call webhook: response body too large: more than ${MAX_RESPONSE_BYTES} bytes`,
              ),
            );
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code < 200 || code >= 300) {
            fail(
              new CallError(
                `failed to call webhook: an error on the server (${JSON.stringify(text.slice(0, 256))}) has prevented the request from succeeding`,
              ),
            );
            return;
          }
          if (done) return;
          done = true;
          clearTimeout(timer);
          resolve(text);
        });
        res.on('error', fail);
        res.on('close', () =>
          fail(new CallError(`failed to call webhook: ${shown}: unexpected EOF`)),
        );
      },
    );
    const timer = setTimeout(
      () => fail(new CallError(`failed to call webhook: ${shown}: context deadline exceeded`)),
      timeoutMs,
    );
    req.on('error', fail);
    req.on('close', () => fail(new CallError(`failed to call webhook: ${shown}: EOF`)));
    req.end(body);
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CallError(
      `received invalid webhook response: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return verify(parsed, String((review.request as { uid: string }).uid));
}

/** request.go VerifyAdmissionResponse, for admission.k8s.io/v1. */
function verify(parsed: unknown, uid: string): AdmissionResponse {
  const invalid = (m: string) => new CallError(`received invalid webhook response: ${m}`);
  if (typeof parsed !== 'object' || parsed === null) throw invalid('expected an object');
  const review = parsed as Record<string, unknown>;
  const gvk = `${String(review.apiVersion ?? '')}, Kind=${String(review.kind ?? '')}`;
  if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview') {
    throw invalid(
      `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${gvk}`,
    );
  }
  const response = review.response;
  if (typeof response !== 'object' || response === null) throw invalid('response was absent');
  const r = response as Record<string, unknown>;
  if (r.uid !== uid) throw invalid(`expected response.uid="${uid}", got "${String(r.uid ?? '')}"`);
  const out: AdmissionResponse = { uid, allowed: r.allowed === true };
  if (typeof r.status === 'object' && r.status !== null)
    out.status = r.status as Record<string, unknown>;
  if (typeof r.patch === 'string') out.patch = r.patch;
  if (typeof r.patchType === 'string') out.patchType = r.patchType;
  if (Array.isArray(r.warnings)) out.warnings = r.warnings.filter((w) => typeof w === 'string');
  if (out.patch !== undefined && out.patchType !== 'JSONPatch') {
    throw invalid(`response.patchType must be "JSONPatch", got "${out.patchType ?? ''}"`);
  }
  return out;
}

/** Node's socket and TLS errors in the words of Go's net/http, where kube's message shows them. */
function goError(error: Error & { code?: string }, target: URL): string {
  const host = `${target.hostname}:${target.port || '443'}`;
  switch (error.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${host}: connect: connection refused`;
    case 'ENOTFOUND':
      return `dial tcp: lookup ${target.hostname}: no such host`;
    case 'ECONNRESET':
      return 'read: connection reset by peer';
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    default:
      return error.message;
  }
}
