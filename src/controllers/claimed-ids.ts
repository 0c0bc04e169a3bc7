// The controller of a kind whose objects claim an id (applications, specifications: the oldest
// valid claimant owns it), watching its informer the way such a kind needs.
import { claimantKeys } from '../domain/claims.js';
import type { Informer } from '../kube/index.js';
import { type Controller, generationChanged } from '../runtime/index.js';

/**
 * Watches each object, and for each object the others claiming the same id (who owns the id
 * may change with any of them); through generation only, for the status writes of the
 * operator's own change neither an object's report nor who owns its id.
 */
export function watchClaimedIds<Spec, Status>(
  controller: Controller,
  informer: Informer<Spec, Status>,
  index: string,
  idOf: (spec: Spec) => string,
): Controller {
  return controller
    .watch(informer, undefined, generationChanged)
    .watch(
      informer,
      (object) => (object.spec ? claimantKeys(informer, index, idOf(object.spec)) : undefined),
      generationChanged,
    );
}
