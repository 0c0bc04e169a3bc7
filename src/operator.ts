// The operator assembled: informers over the kinds it reads (caching them without what no
// reconciler reads: managedFields, kubectl's last-applied copy), the Application and Scope
// controllers with the namespace provisioner, the Service and ServiceSpecification
// controllers with the webhook provisioner, and the runtime Manager that runs them (behind
// Lease-based leader election unless told otherwise), and what it shows to metrics.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { allCrds } from './api/index.js';
import { ApplicationReconciler } from './controllers/application.js';
import { NamespaceProvisioner } from './controllers/provisioners/namespace.js';
import { ScopeReconciler, scopeKeyOfChild } from './controllers/scope/reconciler.js';
import { serviceControllers } from './controllers/service.js';
import { indexApplications } from './domain/applications.js';
import { EventRecorder } from './domain/event-recorder.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from './domain/names.js';
import { IdAllocator } from './domain/scopes/id-allocator.js';
import { indexScopes } from './domain/scopes/index.js';
import {
  Applications,
  defineResource,
  isAlreadyExists,
  type Kube,
  LimitRanges,
  leanObject,
  metadataOnly,
  Namespaces,
  ResourceQuotas,
  Scopes,
  ServiceAccounts,
} from './kube/index.js';
import type { ObservedOperator } from './observability.js';
import { type ControllerMetrics, Manager } from './runtime/index.js';

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
  readonly resyncMs?: number;
  /** Fed by every controller's hooks, and shown the operator's parts before it starts. */
  readonly metrics?: ControllerMetrics & { observe?(operator: ObservedOperator): void };
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

export async function startOperator(options: OperatorOptions): Promise<Operator> {
  const { kube, log } = options;
  const identity = options.identity ?? defaultIdentity();
  await ensureNamespace(kube, options.namespace);

  // No reconciler reads managedFields or kubectl's last-applied copy: the caches go without.
  const informerOptions = {
    transform: leanObject,
    ...(options.resyncMs !== undefined ? { resyncMs: options.resyncMs } : {}),
  };
  const applications = kube.informer(Applications, informerOptions);
  const scopes = kube.informer(Scopes, informerOptions);
  indexApplications(applications);
  indexScopes(scopes);
  // Only what the operator made: a cluster's other namespaces are none of its business. Its
  // readers (the namespace provisioner, scopeKeyOfChild) look at labels and annotations only.
  const managed = {
    ...informerOptions,
    labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
    transform: metadataOnly,
  };
  const children = {
    Namespace: kube.informer(Namespaces, managed),
    ResourceQuota: kube.informer(ResourceQuotas, managed),
    LimitRange: kube.informer(LimitRanges, managed),
    ServiceAccount: kube.informer(ServiceAccounts, managed),
  };

  const events = new EventRecorder(kube, OPERATOR_NAME, identity, log);
  const provisioner = new NamespaceProvisioner(kube, {
    namespace: (name) => children.Namespace.cache.get(undefined, name),
    inNamespace: (kind, namespace, name) => children[kind].cache.get(namespace, name),
  });
  const scopeController = new ScopeReconciler({
    kube,
    log,
    scopes,
    applications,
    events,
    ids: new IdAllocator(kube, { namespace: options.namespace }),
    provisioner,
    ...(options.baseDomain !== undefined ? { baseDomain: options.baseDomain } : {}),
  }).controller();
  for (const informer of Object.values(children)) scopeController.watch(informer, scopeKeyOfChild);
  const applicationController = new ApplicationReconciler({
    kube,
    log,
    applications,
    events,
  }).controller();

  const services = serviceControllers({
    kube,
    log,
    events,
    namespace: options.namespace,
    ...informerOptions,
  });

  const election = options.leaderElection ?? true;
  const controllers = [applicationController, scopeController, ...services.controllers];
  // Keys waiting for a worker: the controllers are behind, and Events make way for them.
  events.yieldTo(() => controllers.some((c) => c.queue.length > 0));
  const manager = new Manager({
    log,
    informers: [applications, scopes, ...Object.values(children), ...services.informers],
    controllers,
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
  // Manager.start() resolves once the informers have listed, before and whatever the election:
  // a standby is as ready as the leader, so readiness does not wait for the lease.
  let phase: 'starting' | 'started' | 'stopping' = 'starting';
  if (options.metrics !== undefined) {
    for (const controller of controllers) controller.setMetrics(options.metrics);
    options.metrics.observe?.({
      controllers,
      caches: [applications.cache, scopes.cache, ...services.caches],
      stats: kube.stats,
      events,
      ready: () => phase === 'started',
      leading: () => manager.leading,
    });
  }
  await manager.start();
  phase = 'started';
  log.info({ identity, namespace: options.namespace }, 'operator started');
  return {
    manager,
    identity,
    stop: async () => {
      phase = 'stopping';
      const drained = await manager.stop();
      // The Events of the last reconciles are still queued: written before the process goes.
      await events.flush();
      return drained;
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
