// Services and their specifications in the operator: the informers (specifications, lean
// services with their indexes, and the labelled attribute Secrets, metadata only), the schema
// cache both reconcilers share, the webhook provisioner, and the two controllers.
import { ATTRIBUTES_SECRET_LABEL } from '../../domain/names.js';
import { SchemaCache } from '../../domain/services/attributes.js';
import { SecretDigester } from '../../domain/services/secrets.js';
import {
  type BackoffOptions,
  metadataOnly,
  Secrets,
  ServiceSpecifications,
} from '../../kube/index.js';
import { WebhookProvisioner } from '../provisioners/webhook/index.js';
import type { KindSetup, SetupContext } from '../setup.js';
import { indexSpecifications, SpecificationReconciler } from '../specification/index.js';
import { ServiceReconciler } from './reconciler.js';
import { CachedServices, indexServices } from './resources.js';

/**
 * Services and their specifications (one setup: both reconcilers share the compiled attribute
 * schemas), and the caches of those two kinds (not of the attribute Secrets) for metrics.
 * `backoff` paces provider calls (tests shorten it).
 */
export function setupServices(
  context: SetupContext,
  options: { readonly backoff?: BackoffOptions } = {},
): KindSetup {
  const { kube, log, events, informerOptions } = context;
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
    provisioner: new WebhookProvisioner(
      kube,
      context.webhookCalls !== undefined ? { observe: context.webhookCalls } : {},
    ),
    digester: new SecretDigester(kube, context.namespace),
    secrets,
    ...(options.backoff !== undefined ? { backoff: options.backoff } : {}),
  }).controller();
  return {
    informers: [specifications, services, secrets],
    controllers: [specificationController, serviceController],
    caches: [specifications.cache, services.cache],
  };
}
