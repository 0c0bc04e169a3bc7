// The `webhook` provisioner of services: one signed JSON POST per call to the URL its
// ServiceSpecification names (protocol.ts says what is sent and how the answer reads,
// signing.ts how it is signed, http.ts how it travels). A call that cannot be signed is not
// sent: the provider must never see it unsigned.
import type { Kube } from '../../../kube/index.js';
import type {
  ProviderEndpoint,
  ServiceProgress,
  ServiceProvisioner,
  ServiceTarget,
} from '../service-provisioner.js';
import { callHeaders } from './headers.js';
import { describeFailure, post, type WebhookCallObserver, type WebhookHttpAnswer } from './http.js';
import { interpret, webhookPayload } from './protocol.js';

const DEFAULT_TIMEOUT_MS = 10_000;

interface WebhookOptions {
  /** Deadline of one call, connection to last byte. */
  readonly timeoutMs?: number;
  readonly now?: () => Date;
  /** Told how long each call took and how it ended (metrics). */
  readonly observe?: WebhookCallObserver;
}

export class WebhookProvisioner implements ServiceProvisioner {
  readonly type = 'webhook';
  private readonly timeoutMs: number;
  private readonly now: () => Date;
  private readonly observe: WebhookCallObserver | undefined;

  constructor(
    private readonly kube: Pick<Kube, 'resource'>,
    options: WebhookOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.now = options.now ?? (() => new Date());
    this.observe = options.observe;
  }

  ensure(
    target: ServiceTarget,
    endpoint: ProviderEndpoint,
    signal?: AbortSignal,
  ): Promise<ServiceProgress> {
    return this.call(target, endpoint, signal);
  }

  remove(
    target: ServiceTarget,
    endpoint: ProviderEndpoint,
    signal?: AbortSignal,
  ): Promise<ServiceProgress> {
    return this.call({ ...target, action: 'delete' }, endpoint, signal);
  }

  private async call(
    target: ServiceTarget,
    endpoint: ProviderEndpoint,
    signal: AbortSignal | undefined,
  ): Promise<ServiceProgress> {
    const body = JSON.stringify(webhookPayload(target));
    const signed = await callHeaders(
      this.kube,
      body,
      endpoint.signingSecret !== undefined
        ? { namespace: endpoint.namespace, name: endpoint.signingSecret }
        : undefined,
      this.now(),
    );
    if ('unsigned' in signed) {
      // The specification reports this too; until it is fixed nothing may be sent unsigned.
      return {
        state: 'unavailable',
        message: `${signed.unsigned} (specification ${endpoint.specification})`,
      };
    }
    const headers = signed.headers;
    let answer: WebhookHttpAnswer;
    try {
      const { action } = target;
      answer = await post(endpoint.url, headers, body, this.timeoutMs, signal, (outcome, ms) =>
        this.observe?.({ kind: 'Service', action, outcome, durationMs: ms }),
      );
    } catch (error) {
      // Abandoned by the reconcile (leadership lost), not a provider's failure to report.
      if (signal?.aborted === true) throw signal.reason;
      return { state: 'unavailable', message: `provider unreachable: ${describeFailure(error)}` };
    }
    return interpret(answer, target.action, this.now());
  }
}
