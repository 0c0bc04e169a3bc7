// Namespace (core/v1): cluster-scoped, named by a DNS label, born Active with the `kubernetes`
// finalizer in spec, Terminating once deleted until the namespace controller (housekeeping.ts)
// has emptied it and lifted that finalizer through the `finalize` subresource.
import { ATOMIC, byKey, STRUCT } from '../patch/field-types.js';
import { clone, isObject } from '../patch/util.js';
import { list, MessageSpec, objectMeta, one } from '../protobuf-messages.js';
import { ApiError, type KubeObject } from '../types.js';
import { NAMESPACE_TABLE } from './printers.js';
import { builtinType, type KindStrategy } from './strategy.js';

/** The label kube-apiserver gives every namespace: its own name. */
export const NAME_LABEL = 'kubernetes.io/metadata.name';

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
    // SetDefaults_Namespace, on every write: selectors (NetworkPolicy's namespaceSelector) can
    // then name a namespace by its name.
    const name = ns.metadata.name;
    if (name) ns.metadata.labels = { ...ns.metadata.labels, [NAME_LABEL]: name };
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
  noDeleteCollection: true,
  // The namespace registry's Delete, asked again while the controller empties it.
  deleteAgain(ns) {
    if (specFinalizers(ns).length === 0) return;
    const name = ns.metadata.name ?? '';
    throw new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on namespaces "${name}": The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.`,
      { name, kind: 'namespaces' },
    );
  },
  protobuf: namespaceMessage,
  table: NAMESPACE_TABLE,
  returnsDeletedObject: true,
};

/**
 * NamespaceLifecycle admission's immortal namespaces (apiserver/pkg/admission/plugin/namespace/
 * lifecycle): a DELETE of one is refused. kube-node-lease is not among them: the API server's
 * bootstrap controller makes it again instead.
 */
export const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set([
  'default',
  'kube-system',
  'kube-public',
]);

/** The 403 NamespaceLifecycle answers a DELETE of an immortal namespace with. */
export function refuseImmortalDelete(name: string): void {
  if (!IMMORTAL_NAMESPACES.has(name)) return;
  throw new ApiError(
    403,
    'Forbidden',
    `namespaces "${name}" is forbidden: this namespace may not be deleted`,
    { name, kind: 'namespaces' },
  );
}

type NamespaceCondition = {
  type: string;
  status: 'True' | 'False';
  lastTransitionTime: string;
  reason: string;
  message: string;
};

// deletion/status_condition_utils.go: the conditions the namespace controller keeps, in order,
// and what each says when nothing is wrong.
const DELETION_CONDITIONS: ReadonlyArray<readonly [type: string, reason: string, message: string]> =
  [
    [
      'NamespaceDeletionDiscoveryFailure',
      'ResourcesDiscovered',
      'All resources successfully discovered',
    ],
    [
      'NamespaceDeletionGroupVersionParsingFailure',
      'ParsedGroupVersions',
      'All legacy kube types successfully parsed',
    ],
    [
      'NamespaceDeletionContentFailure',
      'ContentDeleted',
      'All content successfully deleted, may be waiting on finalization',
    ],
    ['NamespaceContentRemaining', 'ContentRemoved', 'All content successfully removed'],
    [
      'NamespaceFinalizersRemaining',
      'ContentHasNoFinalizers',
      'All content-preserving finalizers finished',
    ],
  ];

/**
 * The status conditions of a terminating namespace after one pass of the namespace controller
 * (`updateConditions`): what remains in it, by `<resource>.<group>`, and which finalizers hold
 * it; undefined when they are what the namespace already has.
 */
export function namespaceDeletionConditions(
  ns: KubeObject,
  remaining: ReadonlyMap<string, number>,
  finalizers: ReadonlyMap<string, number>,
  now: Date,
): NamespaceCondition[] | undefined {
  const counted = (map: ReadonlyMap<string, number>, say: (key: string, n: number) => string) =>
    [...map]
      .filter(([, n]) => n > 0)
      .map(([key, n]) => say(key, n))
      .sort()
      .join(', ');
  const failing = new Map<string, { reason: string; message: string }>();
  if (remaining.size > 0) {
    failing.set('NamespaceContentRemaining', {
      reason: 'SomeResourcesRemain',
      message: `Some resources are remaining: ${counted(remaining, (r, n) => `${r} has ${n} resource instances`)}`,
    });
  }
  if (finalizers.size > 0) {
    failing.set('NamespaceFinalizersRemaining', {
      reason: 'SomeFinalizersRemain',
      message: `Some content in the namespace has finalizers remaining: ${counted(finalizers, (f, n) => `${f} in ${n} resource instances`)}`,
    });
  }
  const status = isObject(ns.status) ? ns.status : {};
  const old = Array.isArray(status.conditions) ? (status.conditions as NamespaceCondition[]) : [];
  const conditions = [...old];
  let changed = false;
  for (const [type, okReason, okMessage] of DELETION_CONDITIONS) {
    const bad = failing.get(type);
    const next = {
      type,
      status: bad === undefined ? ('False' as const) : ('True' as const),
      reason: bad?.reason ?? okReason,
      message: bad?.message ?? okMessage,
    };
    const at = conditions.findIndex((c) => c.type === type);
    const before = at >= 0 ? conditions[at] : undefined;
    if (before === undefined) {
      conditions.push({ ...next, lastTransitionTime: rfc3339(now) });
      changed = true;
    } else if (
      before.status !== next.status ||
      before.reason !== next.reason ||
      before.message !== next.message
    ) {
      conditions[at] = {
        ...next,
        lastTransitionTime:
          before.status !== next.status ? rfc3339(now) : before.lastTransitionTime,
      };
      changed = true;
    }
  }
  return changed ? conditions : undefined;
}

/** metav1.Time: seconds, UTC. */
const rfc3339 = (at: Date) => `${at.toISOString().slice(0, 19)}Z`;
