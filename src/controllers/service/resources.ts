// Services as the operator reads them: raw from the API by the reconciler (no schema, so an
// invalid service is still read, and reported), lean in the informer, whose indexes map a
// specification or an attribute Secret to the services naming it; and the informer of
// attribute Secrets, which wakes those services.
import {
  type ServiceSpec,
  ServiceSpec as ServiceSpecSchema,
  type ServiceStatus,
  ServiceStatus as ServiceStatusSchema,
} from '../../api/index.js';
import {
  defineResource,
  type Informer,
  type KubeObject,
  keyOf,
  rawResource,
  Services,
} from '../../kube/index.js';

/** Index of the Service informer: spec.specification_id. */
const SERVICE_SPEC_INDEX = 'service-specification-id';
/** Index of the Service informer: `<namespace>/<name>` of the Secret of secret attributes. */
const SERVICE_SECRET_INDEX = 'service-attributes-secret';

/** Services without schemas: an invalid spec must still be read, to be reported. */
export const RawServices = rawResource('Service');
export type RawService = KubeObject<unknown, ServiceStatus>;

/**
 * Services as the operator's informer caches them. The reconciler reads each service from the
 * API, so the cache only wakes it, maps a specification to the services that name it, and
 * counts services by status for metrics: the rest of a service (attributes, conditions,
 * messages: about 1 KiB each, which 100,000 services make 100 MiB) is validated, then not
 * kept. An invalid service is still refused, and so still reported.
 */
export const CachedServices = defineResource({
  ...Services,
  spec: ServiceSpecSchema.transform(({ specification_id, secret_attributes_ref }) => ({
    specification_id,
    ...(secret_attributes_ref !== undefined ? { secret_attributes_ref } : {}),
  })),
  status: ServiceStatusSchema.transform(({ status }) => (status !== undefined ? { status } : {})),
});

export type ServiceInformer = Informer<
  Pick<ServiceSpec, 'specification_id' | 'secret_attributes_ref'>,
  Pick<ServiceStatus, 'status'>
>;
/** Attribute Secrets, metadata only (never their values), selected by ATTRIBUTES_SECRET_LABEL. */
export type AttributeSecretInformer = Informer;

export function indexServices(informer: ServiceInformer): void {
  informer.addIndex(SERVICE_SPEC_INDEX, (s) => (s.spec ? [s.spec.specification_id] : []));
  informer.addIndex(SERVICE_SECRET_INDEX, (s) => {
    const ref = s.spec?.secret_attributes_ref;
    return ref !== undefined ? [keyOf({ namespace: s.metadata.namespace, name: ref.name })] : [];
  });
}

/** Keys of the services that name specification `id`. */
export function servicesNamingSpecification(services: ServiceInformer, id: string): string[] {
  return services.byIndex(SERVICE_SPEC_INDEX, id).map((o) => keyOf(o.metadata));
}

/** Keys of the services whose attribute Secret is `secretKey` (`<namespace>/<name>`). */
export function servicesReadingSecret(services: ServiceInformer, secretKey: string): string[] {
  return services.byIndex(SERVICE_SECRET_INDEX, secretKey).map((o) => keyOf(o.metadata));
}
