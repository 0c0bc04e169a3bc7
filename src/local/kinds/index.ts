// The built-in kinds the local control plane serves, one strategy each (ADR 0003, "Built-in
// kinds: one strategy per kind"). A kind lives in one file of this directory that exports its
// KindStrategy (strategy.ts): its type entry, selectable fields, prepare/validate hooks, merge
// field types, protobuf message, subresources and delete hooks. Serving a new built-in kind is
// that file plus one line in BUILTIN_STRATEGIES below; the registry, the object store, the
// server, the patch engines and the protobuf decoder read it from here. Custom resources keep
// the generic path of their CRD (registry.ts' typesOfCrd) and have no strategy.
import { apiVersionOf, type ResourceType } from '../resource-type.js';
import { clusterRoleStrategy } from './clusterrole.js';
import { clusterRoleBindingStrategy } from './clusterrolebinding.js';
import { configMapStrategy } from './configmap.js';
import { customResourceDefinitionStrategy } from './customresourcedefinition.js';
import { eventStrategy, eventsV1EventStrategy } from './event.js';
import { leaseStrategy } from './lease.js';
import { limitRangeStrategy } from './limitrange.js';
import { namespaceStrategy } from './namespace.js';
import { resourceQuotaStrategy } from './resourcequota.js';
import { roleStrategy } from './role.js';
import { roleBindingStrategy } from './rolebinding.js';
import { secretStrategy } from './secret.js';
import { serviceAccountStrategy } from './serviceaccount.js';
import type { KindStrategy, SubresourceStrategy } from './strategy.js';

/** In the order discovery and start-up meet them. */
export const BUILTIN_STRATEGIES: readonly KindStrategy[] = [
  namespaceStrategy,
  secretStrategy,
  configMapStrategy,
  eventStrategy,
  // After core's: what reads each stored resource once (start-up's load) takes the first type.
  eventsV1EventStrategy,
  serviceAccountStrategy,
  resourceQuotaStrategy,
  limitRangeStrategy,
  leaseStrategy,
  customResourceDefinitionStrategy,
  clusterRoleStrategy,
  clusterRoleBindingStrategy,
  roleStrategy,
  roleBindingStrategy,
];

// By the type object itself: each built-in type is made once, by its strategy, and the registry
// serves that same object; a custom resource's type is not in the map.
const byType = new Map<ResourceType, KindStrategy>(BUILTIN_STRATEGIES.map((s) => [s.type, s]));

/** The strategy of a built-in type; undefined for a custom resource's. */
export function strategyOf(type: ResourceType): KindStrategy | undefined {
  return byType.get(type);
}

/** A subresource a built-in kind's strategy declares (`status` is every kind's, not one of these). */
export function subresourceOf(type: ResourceType, name: string): SubresourceStrategy | undefined {
  const own = byType.get(type)?.subresources;
  return own !== undefined && Object.hasOwn(own, name) ? own[name] : undefined;
}

/** `apiVersion/kind` of every kind no object may name as its owner (apimachinery's BannedOwners). */
export const BANNED_OWNERS: ReadonlySet<string> = new Set(
  BUILTIN_STRATEGIES.filter((s) => s.bannedAsOwner === true).map(
    (s) => `${apiVersionOf(s.type)}/${s.type.kind}`,
  ),
);
