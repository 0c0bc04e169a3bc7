// The Service review: its attributes against its specification's schema, and no secret
// attribute in plain `spec.attributes`. The rules are domain/services' (compileAttributeSchema,
// secretsInPlain, resolveAttributes), the ones the Service reconciler applies; a
// specification or Secret that does not exist yet is admitted (GitOps applies them together)
// and left to the reconciler, which waits for it.
import { isDeepStrictEqual } from 'node:util';
import { type ServiceSpec, ServiceSpec as ServiceSpecSchema } from '../api/index.js';
import {
  resolveAttributes,
  type SchemaCache,
  secretsInPlain,
} from '../domain/services/attributes.js';
import {
  compileAttributeSchema,
  type SpecificationInformer,
  specificationById,
} from '../domain/services/specifications.js';
import { keyOf } from '../kube/index.js';
import { ADMIT, type AdmissionRequest, objectOf, refuse, type Verdict } from './review.js';

export interface ServiceReviewDeps {
  readonly specifications: SpecificationInformer;
  readonly schemas: SchemaCache;
  /** The Secret's decoded values; undefined when it does not exist. */
  readonly readSecret: (
    namespace: string,
    name: string,
  ) => Promise<Readonly<Record<string, string>> | undefined>;
}

export async function reviewService(
  deps: ServiceReviewDeps,
  request: AdmissionRequest,
): Promise<Verdict> {
  const object = objectOf(request.object);
  if (object === undefined || object.metadata.deletionTimestamp !== undefined) return ADMIT;
  // A spec unchanged is one already admitted: a specification changed since is the
  // reconciler's to report, and refusing would hold the service's metadata writes.
  if (
    request.operation === 'UPDATE' &&
    isDeepStrictEqual(object.spec, objectOf(request.oldObject)?.spec)
  ) {
    return ADMIT;
  }
  // What the CRD's schema lets through and zod does not is the reconciler's InvalidSpec.
  const parsed = ServiceSpecSchema.safeParse(object.spec);
  if (!parsed.success) return ADMIT;
  const spec: ServiceSpec = parsed.data;
  const specification = specificationById(deps.specifications, spec.specification_id);
  if (specification?.spec === undefined) return ADMIT;
  const schema = compileAttributeSchema(
    deps.schemas,
    specification.metadata.uid ?? keyOf(specification.metadata),
    specification.metadata.generation,
    specification.spec.attributes.schema,
  );
  // The specification is Stalled (InvalidSchema) and says so; the service waits for it.
  if ('problem' in schema) return ADMIT;
  const plain = spec.attributes ?? {};
  const misplaced = secretsInPlain(schema.compiled, plain);
  if (misplaced !== undefined) return refuse(misplaced.reason, `spec.${misplaced.message}`);
  const ref = spec.secret_attributes_ref;
  let secret: Readonly<Record<string, string>> = {};
  if (ref !== undefined) {
    const namespace = request.namespace ?? object.metadata.namespace ?? '';
    let read: Readonly<Record<string, string>> | undefined;
    try {
      read = await deps.readSecret(namespace, ref.name);
    } catch (error) {
      // Not this review's to fail on: the reconciler reads it again and reports.
      const why = error instanceof Error ? error.message : String(error);
      return {
        allowed: true,
        warnings: [`secret ${ref.name} could not be read to check the attributes: ${why}`],
      };
    }
    if (read === undefined) return ADMIT;
    secret = read;
  }
  const result = resolveAttributes(schema.compiled, plain, secret, ref?.name);
  if (result.ok) return ADMIT;
  return refuse(result.reason, prefixed(result.message));
}

/** The domain's messages name `attributes.x`; the webhook's name the field from the root. */
function prefixed(message: string): string {
  return message
    .split('; ')
    .map((part) => (part.startsWith('attributes') ? `spec.${part}` : part))
    .join('; ');
}
