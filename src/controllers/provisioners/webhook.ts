// The `webhook` provisioner of services: one signed JSON POST per call to the URL its
// ServiceSpecification names, and the provider's answer turned into progress. Signing is
// HMAC-SHA256 over `<timestamp>.<raw body>` (ADR 0005), so a receiver can refuse replays.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { z } from 'zod';
import { type MessageItem, MessageLevel } from '../../api/index.js';
import { readSecret } from '../../domain/services/secrets.js';
import type { Kube } from '../../kube/index.js';
import type {
  ProviderEndpoint,
  ServiceProgress,
  ServiceProvisioner,
  ServiceTarget,
} from './service-types.js';

export const SIGNATURE_HEADER = 'x-nrn-signature';
export const TIMESTAMP_HEADER = 'x-nrn-timestamp';
/** The key of the signing Secret that holds the HMAC key. */
export const SIGNING_KEY = 'key';
/** How old a signed timestamp a receiver should still accept. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 1024 * 1024;
const MAX_MESSAGES = 10;
const MAX_MESSAGE_CHARS = 1000;
const MAX_RETRY_AFTER_MS = 3600_000;

/** `sha256=<hex>` of HMAC-SHA256(key, `<timestamp>.<body>`). */
export function sign(key: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * What a provider does with a call: recompute the signature over the raw body and refuse
 * timestamps outside the tolerance (a captured call replayed later fails here).
 */
export function verifySignature(
  key: string,
  timestamp: string | undefined,
  signature: string | undefined,
  body: string,
  now: Date = new Date(),
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): boolean {
  if (timestamp === undefined || signature === undefined || !/^[0-9]+$/.test(timestamp)) {
    return false;
  }
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const expected = Buffer.from(sign(key, timestamp, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** The body of a call: the service without its secret reference, and every attribute. */
export function webhookPayload(target: ServiceTarget): Record<string, unknown> {
  const { attributes: _plain, secret_attributes_ref: _ref, ...spec } = target.spec;
  return {
    action: target.action,
    metadata: {
      name: target.name,
      namespace: target.namespace,
      uid: target.uid,
      ...(target.generation !== undefined ? { generation: target.generation } : {}),
    },
    spec,
    attributes: target.attributes,
  };
}

const AnswerMessage = z.union([
  z.string(),
  z.object({ level: MessageLevel.optional(), message: z.string() }),
]);

/** The 2xx answer of a provider. */
export const WebhookAnswer = z.object({
  status: z.enum(['creating', 'updating', 'deleting', 'active', 'deleted', 'failed']),
  messages: z.array(AnswerMessage).optional(),
  attributes: z.record(z.string(), z.unknown()).optional(),
});
export type WebhookAnswer = z.infer<typeof WebhookAnswer>;

export interface WebhookOptions {
  /** Deadline of one call, connection to last byte. */
  readonly timeoutMs?: number;
  readonly now?: () => Date;
}

export interface WebhookHttpAnswer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export class WebhookProvisioner implements ServiceProvisioner {
  readonly type = 'webhook';
  private readonly timeoutMs: number;
  private readonly now: () => Date;

  constructor(
    private readonly kube: Pick<Kube, 'resource'>,
    options: WebhookOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.now = options.now ?? (() => new Date());
  }

  ensure(target: ServiceTarget, endpoint: ProviderEndpoint): Promise<ServiceProgress> {
    return this.call(target, endpoint);
  }

  remove(target: ServiceTarget, endpoint: ProviderEndpoint): Promise<ServiceProgress> {
    return this.call({ ...target, action: 'delete' }, endpoint);
  }

  private async call(target: ServiceTarget, endpoint: ProviderEndpoint): Promise<ServiceProgress> {
    const body = JSON.stringify(webhookPayload(target));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'nrn-operator',
    };
    if (endpoint.signingSecret !== undefined) {
      const secret = await readSecret(this.kube, endpoint.namespace, endpoint.signingSecret);
      const key = secret?.[SIGNING_KEY];
      if (key === undefined || key === '') {
        // The specification reports this too; until it is fixed nothing may be sent unsigned.
        return {
          state: 'unavailable',
          message: `signing secret ${endpoint.namespace}/${endpoint.signingSecret} of specification ${endpoint.specification} ${secret === undefined ? 'does not exist' : `has no key "${SIGNING_KEY}"`}`,
        };
      }
      const timestamp = String(Math.floor(this.now().getTime() / 1000));
      headers[TIMESTAMP_HEADER] = timestamp;
      headers[SIGNATURE_HEADER] = sign(key, timestamp, body);
    }
    let answer: WebhookHttpAnswer;
    try {
      answer = await post(endpoint.url, headers, body, this.timeoutMs);
    } catch (error) {
      return { state: 'unavailable', message: `provider unreachable: ${describeFailure(error)}` };
    }
    return interpret(answer, target.action, this.now());
  }
}

/** The provider's answer as progress; exported for tests. */
export function interpret(
  answer: WebhookHttpAnswer,
  action: ServiceTarget['action'],
  now: Date,
): ServiceProgress {
  const retryAfterMs = retryAfter(answer.headers['retry-after'], now);
  const wait = retryAfterMs !== undefined ? { retryAfterMs } : {};
  const { status } = answer;
  if (status >= 200 && status < 300) {
    if (action === 'delete' && answer.body.trim() === '') return { state: 'ready' };
    const parsed = WebhookAnswer.safeParse(parseJson(answer.body));
    if (!parsed.success) {
      const problems = parsed.error.issues.map(
        (i) => `${i.path.join('.') || 'body'}: ${i.message}`,
      );
      return {
        state: 'unavailable',
        message: `provider answered ${status} with an invalid body (${problems.join('; ')})`,
        ...wait,
      };
    }
    const messages = messagesOf(parsed.data.messages, 'info');
    switch (parsed.data.status) {
      case 'creating':
      case 'updating':
      case 'deleting':
        return {
          state: 'in_progress',
          message: messages[0]?.message ?? `provider is ${parsed.data.status} the service`,
          ...wait,
        };
      case 'failed':
        return {
          state: 'failed',
          reason: 'ProvisionFailed',
          messages: withDefault(messagesOf(parsed.data.messages, 'error'), 'provider failed'),
        };
      case 'deleted':
        if (action === 'delete') return { state: 'ready' };
        return {
          state: 'failed',
          reason: 'ProvisionFailed',
          messages: [{ level: 'error', message: 'provider reports the service deleted' }],
        };
      case 'active':
        return {
          state: 'ready',
          ...(parsed.data.attributes !== undefined ? { outputs: parsed.data.attributes } : {}),
          ...(messages.length > 0 ? { messages } : {}),
        };
    }
  }
  const said = providerMessages(answer.body);
  if (action === 'delete' && (status === 404 || status === 410)) return { state: 'ready' };
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return {
      state: 'failed',
      reason: 'ProvisionRefused',
      messages: withDefault(said, `provider refused the request (${status})`),
    };
  }
  const detail = said[0]?.message;
  return {
    state: 'unavailable',
    message: `provider answered ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}${detail !== undefined ? `: ${detail}` : ''}`,
    ...wait,
  };
}

/** Messages of a refusal: `{message}`, `{messages}`, `{error}`, or the text itself. */
function providerMessages(body: string): MessageItem[] {
  const json = parseJson(body);
  if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
    const record = json as Record<string, unknown>;
    const list = z.array(AnswerMessage).safeParse(record.messages);
    if (list.success && list.data.length > 0) return messagesOf(list.data, 'error');
    for (const field of ['message', 'error', 'detail']) {
      const value = record[field];
      if (typeof value === 'string' && value !== '') return messagesOf([value], 'error');
    }
  }
  const text = body.trim();
  return text === '' || json !== undefined ? [] : messagesOf([text], 'error');
}

function messagesOf(
  messages: readonly z.infer<typeof AnswerMessage>[] | undefined,
  level: MessageItem['level'],
): MessageItem[] {
  return (messages ?? []).slice(0, MAX_MESSAGES).map((m) => {
    const item = typeof m === 'string' ? { message: m } : m;
    return { level: item.level ?? level, message: item.message.slice(0, MAX_MESSAGE_CHARS) };
  });
}

function withDefault(messages: MessageItem[], fallback: string): MessageItem[] {
  return messages.length > 0 ? messages : [{ level: 'error', message: fallback }];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Retry-After in seconds or as an HTTP date, in ms, capped. */
export function retryAfter(header: string | string[] | undefined, now: Date): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  let ms: number;
  if (/^\s*[0-9]+\s*$/.test(value)) ms = Number(value) * 1000;
  else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    ms = at - now.getTime();
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

function describeFailure(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timed out';
    return typeof code === 'string' ? code : error.message;
  }
  return String(error);
}

/** One POST with a whole-call deadline; the body read is capped. */
function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<WebhookHttpAnswer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal: AbortSignal.timeout(timeoutMs),
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
