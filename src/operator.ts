// The composition root of the operator: every kind's setup function given one context, and
// what they return (informers, controllers) run by one Manager behind Lease-based leader
// election unless told otherwise, beside the Event recorder they share; and what it shows to
// metrics. A new kind is one line in KINDS.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { allCrds } from './api/index.js';
import { setupApplications } from './controllers/application/setup.js';
import type { WebhookCallSample } from './controllers/provisioners/webhook/http.js';
import { setupScopes } from './controllers/scope/setup.js';
import { setupServices } from './controllers/service/index.js';
import type { KindSetup, SetupContext } from './controllers/setup.js';
import { EventRecorder } from './domain/event-recorder.js';
import { DEFAULT_BASE_DOMAIN } from './domain/names.js';
import type { KindAllowlist } from './domain/scope-classes/kinds.js';
import {
  defineResource,
  isAlreadyExists,
  type Kube,
  leanObject,
  Namespaces,
  type RequestSample,
} from './kube/index.js';
import type { ObservedOperator } from './observability.js';
import { type ControllerMetrics, Manager, type Runnable } from './runtime/index.js';

export const OPERATOR_NAME = 'nrn-operator';
export const DEFAULT_OPERATOR_NAMESPACE = 'nrn-system';

export interface LeaderElectionSettings {
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
}

export interface OperatorOptions {
  readonly kube: Kube;
  readonly log: Logger;
  /** Where the operator keeps its Lease, the scope id counter and the digest key. */
  readonly namespace: string;
  /** Unique per process; defaults to hostname plus a random part. */
  readonly identity?: string;
  /** false: a single replica, controllers start at once. */
  readonly leaderElection?: boolean | LeaderElectionSettings;
  readonly baseDomain?: string;
  /** Scopes a second a changed ScopeClass reaches (default 10). */
  readonly scopeClassRolloutRate?: number;
  /** The kinds a ScopeClass's resources may be (ADR 0029); the default setting where left out. */
  readonly scopeClassKinds?: KindAllowlist;
  readonly resyncMs?: number;
  /** Fed by every controller's hooks, and shown the operator's parts before it starts. */
  readonly metrics?: ControllerMetrics & {
    observe?(operator: ObservedOperator): void;
    /** Each call a webhook provisioner made to an agent. */
    webhookCall?(sample: WebhookCallSample): void;
    /** Each request to the API server (of every user of `kube`: the facade's too). */
    kubeRequest?(sample: RequestSample): void;
  };
}

export interface Operator {
  readonly manager: Manager;
  readonly identity: string;
  /** Graceful: drains reconciles in flight and releases the lease. True when clean. */
  stop(): Promise<boolean>;
}

export function defaultIdentity(): string {
  return `${hostname()}-${randomBytes(4).toString('hex')}`;
}

/** The operator's kinds: each one's setup, called in this order; their controllers run side by side. */
const KINDS: readonly ((context: SetupContext) => KindSetup)[] = [
  setupApplications,
  setupScopes,
  setupServices,
];

export async function startOperator(options: OperatorOptions): Promise<Operator> {
  const { kube, log } = options;
  const identity = options.identity ?? defaultIdentity();
  await ensureNamespace(kube, options.namespace);

  const events = new EventRecorder(kube, OPERATOR_NAME, identity, log);
  const metrics = options.metrics;
  const context: SetupContext = {
    kube,
    log,
    events,
    namespace: options.namespace,
    baseDomain: options.baseDomain ?? DEFAULT_BASE_DOMAIN,
    ...(options.scopeClassRolloutRate !== undefined
      ? { scopeClassRolloutRate: options.scopeClassRolloutRate }
      : {}),
    ...(options.scopeClassKinds !== undefined ? { scopeClassKinds: options.scopeClassKinds } : {}),
    ...(metrics?.webhookCall !== undefined
      ? { webhookCalls: (sample: WebhookCallSample) => metrics.webhookCall?.(sample) }
      : {}),
    // No reconciler reads managedFields or kubectl's last-applied copy: the caches go without.
    informerOptions: {
      transform: leanObject,
      ...(options.resyncMs !== undefined ? { resyncMs: options.resyncMs } : {}),
    },
  };
  const kinds = KINDS.map((setup) => setup(context));
  const controllers = kinds.flatMap((kind) => kind.controllers);
  // Keys waiting for a worker: the controllers are behind, and Events make way for them.
  events.yieldTo(() => controllers.some((c) => c.queue.length > 0));
  // Stopped after the controllers: the Events of their last reconciles are written first.
  const eventWriter: Runnable = {
    name: 'events',
    leaderOnly: false,
    start: async () => {},
    stop: async () => {
      await events.flush();
      return true;
    },
  };

  const election = options.leaderElection ?? true;
  const manager = new Manager({
    log,
    informers: kinds.flatMap((kind) => kind.informers),
    runnables: [eventWriter, ...controllers],
    ...(election === false
      ? {}
      : {
          leaderElection: {
            kube,
            namespace: options.namespace,
            name: OPERATOR_NAME,
            identity,
            ...(election === true ? {} : election),
          },
        }),
  });
  if (options.metrics !== undefined) {
    for (const controller of controllers) controller.setMetrics(options.metrics);
    options.metrics.observe?.({
      controllers,
      caches: kinds.flatMap((kind) => kind.caches),
      stats: kube.stats,
      events,
      ready: () => manager.ready,
      leading: () => manager.leading,
    });
  }
  const unobserve =
    metrics?.kubeRequest !== undefined
      ? kube.observeRequests((sample) => metrics.kubeRequest?.(sample))
      : undefined;
  try {
    await manager.start();
  } catch (error) {
    unobserve?.();
    throw error;
  }
  log.info({ identity, namespace: options.namespace }, 'operator started');
  return {
    manager,
    identity,
    stop: async () => {
      try {
        return await manager.stop();
      } finally {
        unobserve?.();
      }
    },
  };
}

async function ensureNamespace(kube: Kube, name: string): Promise<void> {
  try {
    await kube.resource(Namespaces).create({ metadata: { name } });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

const Crds = defineResource({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
});

/** Applies the CRDs of src/api (server-side) and waits until the API serves them. */
export async function applyCrds(kube: Kube, timeoutMs = 30_000): Promise<void> {
  const client = kube.resource(Crds);
  const crds = allCrds();
  for (const crd of crds) {
    await client.apply(crd as unknown as Parameters<typeof client.apply>[0], {
      fieldManager: OPERATOR_NAME,
      force: true,
    });
  }
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const name = (crd as { metadata: { name: string } }).metadata.name;
    for (;;) {
      const current = await client.get({ name });
      const conditions = (current.status as { conditions?: { type: string; status: string }[] })
        ?.conditions;
      if (conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} not established in time`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
