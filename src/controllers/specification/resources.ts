// ServiceSpecifications as the operator reads them: raw from the API (validated by the
// reconciler, so an invalid one is still reported), typed in the informer, indexed by spec.id;
// and the two questions a service asks of them: which specification owns an id (the oldest
// valid one claiming it), and whether it is usable yet.

import type { SpecificationObject } from '../../domain/services/specifications.js';
import { condition } from '../../domain/status.js';
import { rawResource } from '../../kube/index.js';

// The index and the owner of an id are rules the admission webhook asks too: they live in
// src/domain/services/specifications.ts.
export {
  indexSpecifications,
  SPEC_ID_INDEX,
  type SpecificationInformer,
  type SpecificationObject,
  type SpecificationStatusBlock,
  specificationById,
} from '../../domain/services/specifications.js';

export const RawSpecifications = rawResource('ServiceSpecification');

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
