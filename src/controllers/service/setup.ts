// Services and their specifications in the operator: the informers (specifications, lean
// services with their indexes, and the labelled attribute Secrets, metadata only), the schema
// cache both reconcilers share, the webhook provisioner, and the two controllers.
import type { Logger } from 'pino';
import type { EventRecorder } from '../../domain/event-recorder.js';
import { ATTRIBUTES_SECRET_LABEL } from '../../domain/names.js';
import { SchemaCache } from '../../domain/services/attributes.js';
import { SecretDigester } from '../../domain/services/secrets.js';
import {
  type BackoffOptions,
  type InformerOptions,
  type Kube,
  type KubeObject,
  metadataOnly,
  Secrets,
  ServiceSpecifications,
} from '../../kube/index.js';
import type { Controller, Startable } from '../../runtime/index.js';
import { WebhookProvisioner } from '../provisioners/webhook/index.js';
import { indexSpecifications, SpecificationReconciler } from '../specification/index.js';
import { ServiceReconciler } from './reconciler.js';
import { CachedServices, indexServices } from './resources.js';

export interface ServiceControllersOptions {
  readonly kube: Kube;
  readonly log: Logger;
  readonly events: EventRecorder;
  /** The operator's namespace: where the key of attribute Secret digests is kept. */
  readonly namespace: string;
  readonly resyncMs?: number;
  /** Applied to what the informers cache (see kube's leanObject). */
  readonly transform?: InformerOptions['transform'];
  readonly backoff?: BackoffOptions;
}

/**
 * The informers and controllers of services and their specifications, for the operator, and
 * the caches of those two kinds (not of the attribute Secrets) for metrics.
 */
export function serviceControllers(options: ServiceControllersOptions): {
  informers: Startable[];
  controllers: Controller[];
  caches: { list(): readonly KubeObject[] }[];
} {
  const { kube, log, events } = options;
  const informerOptions = {
    ...(options.resyncMs !== undefined ? { resyncMs: options.resyncMs } : {}),
    ...(options.transform !== undefined ? { transform: options.transform } : {}),
  };
  const specifications = kube.informer(ServiceSpecifications, informerOptions);
  const services = kube.informer(CachedServices, informerOptions);
  // Only the Secrets services name (the reconciler labels them), and only their metadata: a
  // cluster's Secrets (Helm releases, tokens) are many and large, and their values are not
  // the operator's to hold. A change wakes the services naming the Secret.
  const secrets = kube.informer(Secrets, {
    ...informerOptions,
    labelSelector: `${ATTRIBUTES_SECRET_LABEL}=true`,
    transform: metadataOnly,
  });
  indexSpecifications(specifications);
  indexServices(services);
  const schemas = new SchemaCache();
  const specificationController = new SpecificationReconciler({
    kube,
    log,
    specifications,
    schemas,
    events,
  }).controller();
  const serviceController = new ServiceReconciler({
    kube,
    log,
    services,
    specifications,
    schemas,
    events,
    provisioner: new WebhookProvisioner(kube),
    digester: new SecretDigester(kube, options.namespace),
    secrets,
    ...(options.backoff !== undefined ? { backoff: options.backoff } : {}),
  }).controller();
  return {
    informers: [specifications, services, secrets],
    controllers: [specificationController, serviceController],
    caches: [specifications.cache, services.cache],
  };
}
