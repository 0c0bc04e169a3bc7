// The `webhook` provisioner of scope classes: an external agent or IaC tool provisions the
// scope, through the protocol of the service webhook (ADR 0005): one signed JSON POST per
// call, answered with a status (`active`, `creating`... or a refusal), Retry-After honoured,
// and an agent without a usable answer retried until the class's deadline, then `failed`.
// Deleting never gives up: past the deadline it keeps the finalizer and says so.
import type { Kube } from '../../../kube/index.js';
import type { Progress, ScopeProvisioner, ScopeTarget } from '../scope-provisioner.js';
import type { ServiceProgress } from '../service-provisioner.js';
import { callHeaders } from '../webhook/headers.js';
import {
  describeFailure,
  post,
  type WebhookCallObserver,
  type WebhookHttpAnswer,
} from '../webhook/http.js';
import { interpret } from '../webhook/protocol.js';

const DEFAULT_TIMEOUT_MS = 10_000;
/** Between calls while the agent says it is still working and gives no Retry-After. */
const POLL_MS = 5_000;

export interface ScopeWebhookOptions {
  /** The operator's namespace: where a class's signing Secret lives. */
  readonly namespace: string;
  readonly timeoutMs?: number;
  readonly now?: () => Date;
  /** Told how long each call took and how it ended (metrics). */
  readonly observe?: WebhookCallObserver;
}

type Action = 'create' | 'delete';

/** The body of a call: the scope as its spec and identity say, and its class. */
export function scopeWebhookPayload(target: ScopeTarget, action: Action): Record<string, unknown> {
  return {
    action,
    kind: 'Scope',
    metadata: {
      name: target.name,
      namespace: target.namespace,
      uid: target.uid,
      ...(target.generation !== undefined ? { generation: target.generation } : {}),
    },
    spec: target.spec,
    identity: { id: target.id, slug: target.slug, domain: target.domain, nrn: target.nrn },
    scope_class: target.webhook?.scopeClass,
  };
}

export class ScopeWebhookProvisioner implements ScopeProvisioner {
  readonly type = 'webhook';
  private readonly timeoutMs: number;
  private readonly now: () => Date;

  constructor(
    private readonly kube: Pick<Kube, 'resource'>,
    private readonly options: ScopeWebhookOptions,
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.now = options.now ?? (() => new Date());
  }

  ensure(target: ScopeTarget, signal?: AbortSignal): Promise<Progress> {
    return this.call(target, 'create', signal);
  }

  remove(target: ScopeTarget, signal?: AbortSignal): Promise<Progress> {
    return this.call(target, 'delete', signal);
  }

  private async call(
    target: ScopeTarget,
    action: Action,
    signal: AbortSignal | undefined,
  ): Promise<Progress> {
    const endpoint = target.webhook;
    if (endpoint === undefined) {
      return {
        state: 'failed',
        reason: 'ScopeClassInvalid',
        message: 'the class names no webhook url',
      };
    }
    const body = JSON.stringify(scopeWebhookPayload(target, action));
    const signed = await callHeaders(
      this.kube,
      body,
      endpoint.signingSecret !== undefined
        ? { namespace: this.options.namespace, name: endpoint.signingSecret }
        : undefined,
      this.now(),
    );
    if ('unsigned' in signed) {
      // Nothing is ever sent unsigned: the class is fixed (or the Secret made) first.
      return this.unavailable(
        endpoint,
        action,
        `${signed.unsigned} (ScopeClass ${endpoint.scopeClass})`,
      );
    }
    const headers = signed.headers;
    let answer: WebhookHttpAnswer;
    try {
      answer = await post(endpoint.url, headers, body, this.timeoutMs, signal, (outcome, ms) =>
        this.options.observe?.({ kind: 'Scope', action, outcome, durationMs: ms }),
      );
    } catch (error) {
      // Abandoned by the reconcile (leadership lost), not the agent's failure to answer.
      if (signal?.aborted === true) throw signal.reason;
      return this.unavailable(endpoint, action, `agent unreachable: ${describeFailure(error)}`);
    }
    return this.progress(interpret(answer, action, this.now()), endpoint, action);
  }

  private progress(
    answer: ServiceProgress,
    endpoint: NonNullable<ScopeTarget['webhook']>,
    action: Action,
  ): Progress {
    switch (answer.state) {
      case 'ready':
        return { state: 'ready' };
      case 'in_progress':
        return {
          state: 'in_progress',
          message: `${endpoint.url}: ${answer.message}`,
          retryAfterMs: answer.retryAfterMs ?? POLL_MS,
        };
      case 'failed':
        return {
          state: 'failed',
          reason: answer.reason,
          message:
            answer.messages.map((m) => m.message).join('; ') || 'the agent refused the scope',
        };
      case 'unavailable':
        return this.unavailable(endpoint, action, answer.message, answer.retryAfterMs);
    }
  }

  /** No usable answer: again later, until the deadline; then failed (a delete keeps trying). */
  private unavailable(
    endpoint: NonNullable<ScopeTarget['webhook']>,
    action: Action,
    message: string,
    retryAfterMs?: number,
  ): Progress {
    const deadline = endpoint.startedAt.getTime() + endpoint.deadlineSeconds * 1000;
    const remaining = deadline - this.now().getTime();
    if (remaining <= 0 && action === 'create') {
      return {
        state: 'failed',
        reason: 'DeadlineExceeded',
        message: `the agent gave no usable answer within ${endpoint.deadlineSeconds}s: ${message}`,
      };
    }
    const wait = Math.min(retryAfterMs ?? POLL_MS, Math.max(remaining, POLL_MS));
    return {
      state: 'in_progress',
      message:
        remaining <= 0
          ? `${message}; still retrying the delete past its deadline`
          : `${message}; retrying until ${new Date(deadline).toISOString()}`,
      retryAfterMs: wait,
    };
  }
}
