// Namespace (core/v1): cluster-scoped, named by a DNS label, born Active with the `kubernetes`
// finalizer in spec, Terminating once deleted until the namespace controller (housekeeping.ts)
// has emptied it and lifted that finalizer through the `finalize` subresource.
import { ATOMIC, byKey, STRUCT } from '../patch/field-types.js';
import { clone, isObject } from '../patch/util.js';
import { list, MessageSpec, objectMeta, one } from '../protobuf-messages.js';
import type { KubeObject } from '../types.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const NAMESPACE_TYPE = builtinType('', 'v1', 'Namespace', 'namespaces', {
  namespaced: false,
  shortNames: ['ns'],
  hasStatus: true,
  nameRule: 'label',
});

const specFinalizers = (ns: KubeObject | undefined): unknown[] =>
  (ns?.spec as { finalizers?: unknown[] } | undefined)?.finalizers ?? [];

const namespaceCondition = new MessageSpec([
  [1, one('type', 'string', true)],
  [2, one('status', 'string', true)],
  [4, one('lastTransitionTime', 'time')],
  [5, one('reason', 'string')],
  [6, one('message', 'string')],
]);

/** Its generated.proto message, field by field. */
const namespaceMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, one('spec', new MessageSpec([[1, list('finalizers', 'string')]]))],
  [
    3,
    one(
      'status',
      new MessageSpec([
        [1, one('phase', 'string')],
        [2, list('conditions', namespaceCondition)],
      ]),
    ),
  ],
]);

export const namespaceStrategy: KindStrategy = {
  type: NAMESPACE_TYPE,
  selectableFields: {
    'status.phase': (o) => (o.status as { phase?: string } | undefined)?.phase,
  },
  fieldTypes: {
    spec: STRUCT,
    // listType=atomic, no patch strategy
    'spec.finalizers': ATOMIC,
    status: STRUCT,
    // patchStrategy:"merge" patchMergeKey:"type" / listType=map listMapKey=type
    'status.conditions': byKey('type'),
  },
  prepare(ns, old) {
    // Only the finalize subresource changes spec.finalizers, as on a real server.
    const finalizers =
      old === undefined
        ? ['kubernetes']
        : ((old.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []);
    ns.spec = { ...((ns.spec as object | undefined) ?? {}), finalizers };
    if (old === undefined) ns.status = { phase: 'Active' };
  },
  subresources: {
    // `finalize` exists on namespaces only: the one way to change spec.finalizers.
    finalize: {
      update(old, incoming) {
        const next = clone(old);
        const spec = isObject(incoming.spec) ? incoming.spec : {};
        next.spec = { ...(isObject(old.spec) ? old.spec : {}), finalizers: spec.finalizers ?? [] };
        return next;
      },
    },
  },
  beginDelete(ns) {
    ns.status = { ...(isObject(ns.status) ? ns.status : {}), phase: 'Terminating' };
  },
  // A namespace also waits for spec.finalizers, which the namespace controller lifts.
  holdsDeletion: (ns) => specFinalizers(ns).length > 0,
  protobuf: namespaceMessage,
};
