// Ids that must be unique across namespaces (an Application's, a ServiceSpecification's) are
// claimed, not reserved: of the objects claiming one, the oldest owns it and the others stall.
// Their informers index the claimed id; these read that index.
import { type Informer, type KubeObject, keyOf } from '../kube/index.js';
import { olderFirst } from './names.js';

/**
 * The object that owns `id`: the oldest valid one claiming it (the informer's cache holds only
 * objects its schema accepts). Undefined when none does.
 */
export function claimOwner<Spec, Status>(
  informer: Informer<Spec, Status>,
  index: string,
  id: string,
): KubeObject<Spec, Status> | undefined {
  return informer.byIndex(index, id).sort(olderFirst)[0];
}

/**
 * Key of the object that owns `id` as `object` sees it: the oldest claimant, `object` included
 * (it may not be in the cache yet, or be there at an older version).
 */
export function claimOwnerKey<Spec, Status>(
  informer: Informer<Spec, Status>,
  index: string,
  id: string,
  object: KubeObject<unknown, unknown>,
): string {
  const claimants = [
    object,
    ...informer.byIndex(index, id).filter((o) => keyOf(o.metadata) !== keyOf(object.metadata)),
  ].sort(olderFirst);
  return keyOf((claimants[0] ?? object).metadata);
}

/** Keys of every object claiming `id`: who owns it may change when any of them does. */
export function claimantKeys<Spec, Status>(
  informer: Informer<Spec, Status>,
  index: string,
  id: string,
): string[] {
  return informer.byIndex(index, id).map((o) => keyOf(o.metadata));
}
