// The protocol of the `webhook` provisioner (ADR 0005): what is sent for a create, update or
// delete (the service without its secret reference, and every attribute), and how the
// provider's answer becomes progress: a 2xx body's status, a refusal's messages, Retry-After,
// and which answers are worth retrying until the specification's deadline.
import { z } from 'zod';
import { type MessageItem, MessageLevel } from '../../../api/index.js';
import type { ServiceProgress, ServiceTarget } from '../service-provisioner.js';
import type { WebhookHttpAnswer } from './http.js';

const MAX_MESSAGES = 10;
const MAX_MESSAGE_CHARS = 1000;
const MAX_RETRY_AFTER_MS = 3600_000;

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
const WebhookAnswer = z.object({
  status: z.enum(['creating', 'updating', 'deleting', 'active', 'deleted', 'failed']),
  messages: z.array(AnswerMessage).optional(),
  attributes: z.record(z.string(), z.unknown()).optional(),
});

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
