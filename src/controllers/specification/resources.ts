// ServiceSpecifications as the operator reads them: raw from the API (validated by the
// reconciler, so an invalid one is still reported), typed in the informer, indexed by spec.id;
// and the two questions a service asks of them: which specification owns an id (the oldest
// valid one claiming it), and whether it is usable yet.
import type { z } from 'zod';
import type { ServiceSpecificationSpec, ServiceSpecificationStatus } from '../../api/index.js';
import { claimOwner } from '../../domain/claims.js';
import { condition } from '../../domain/status.js';
import { type Informer, type KubeObject, rawResource } from '../../kube/index.js';

/** Index of the ServiceSpecification informer: spec.id. */
export const SPEC_ID_INDEX = 'specification-id';

export const RawSpecifications = rawResource('ServiceSpecification');

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
 * Whether services may use it: Ready for its current generation. Otherwise the reason, in
 * words, for the service's message.
 */
export function specificationUsable(spec: SpecificationObject): true | string {
  const ready = condition(spec.status?.conditions, 'Ready');
  if (ready === undefined || spec.status?.observedGeneration !== spec.metadata.generation) {
    return 'is not checked yet';
  }
  return ready.status === 'True' ? true : `is not ready: ${ready.message}`;
}
