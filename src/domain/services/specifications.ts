// ServiceSpecifications as their rules read them: the informer's index by spec.id, which
// specification owns an id (the oldest valid one claiming it), and whether a specification's
// attribute schema compiles with its `secret` marks at fixed paths. The specification
// reconciler, the Service reconciler and the admission webhook all ask these, so a
// specification is judged by one set of rules wherever it is met.
import type { z } from 'zod';
import type { ServiceSpecificationSpec, ServiceSpecificationStatus } from '../../api/index.js';
import type { Informer, KubeObject } from '../../kube/index.js';
import { claimOwner } from '../claims.js';
import type { AttributeSchema, CompiledSchema, SchemaCache } from './attributes.js';

/** Index of the ServiceSpecification informer: spec.id. */
export const SPEC_ID_INDEX = 'specification-id';

export type SpecificationStatusBlock = z.infer<typeof ServiceSpecificationStatus>;
export type SpecificationObject = KubeObject<ServiceSpecificationSpec, SpecificationStatusBlock>;
export type SpecificationInformer = Informer<ServiceSpecificationSpec, SpecificationStatusBlock>;

export function indexSpecifications(informer: SpecificationInformer): void {
  informer.addIndex(SPEC_ID_INDEX, (s) => (s.spec ? [s.spec.id] : []));
}

/** The specification that owns `id`: the oldest valid one claiming it. */
export function specificationById(
  informer: SpecificationInformer,
  id: string,
): SpecificationObject | undefined {
  return claimOwner(informer, SPEC_ID_INDEX, id);
}

/**
 * The attribute schema compiled (through `schemas`, keyed by `key` and `generation`), or why
 * it cannot be: it does not compile, or marks `secret: true` where no Secret key can name it.
 * The message names the field (`spec.attributes.schema: ...`).
 */
export function compileAttributeSchema(
  schemas: SchemaCache,
  key: string,
  generation: number | undefined,
  schema: AttributeSchema,
): { readonly compiled: CompiledSchema } | { readonly problem: string } {
  try {
    return { compiled: schemas.get(key, generation, schema) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { problem: `spec.attributes.schema: ${message}` };
  }
}
