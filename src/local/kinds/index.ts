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
import { cronJobStrategy } from './cronjob.js';
import { customResourceDefinitionStrategy } from './customresourcedefinition.js';
import { daemonSetStrategy } from './daemonset.js';
import { deploymentStrategy } from './deployment.js';
import { endpointsStrategy } from './endpoints.js';
import { endpointSliceStrategy } from './endpointslice.js';
import { eventStrategy, eventsV1EventStrategy } from './event.js';
import { horizontalPodAutoscalerStrategy } from './horizontalpodautoscaler.js';
import { ingressStrategy } from './ingress.js';
import { ingressClassStrategy } from './ingressclass.js';
import { jobStrategy } from './job.js';
import { leaseStrategy } from './lease.js';
import { limitRangeStrategy } from './limitrange.js';
import { namespaceStrategy } from './namespace.js';
import { networkPolicyStrategy } from './networkpolicy.js';
import { nodeStrategy } from './node.js';
import { persistentVolumeStrategy } from './persistentvolume.js';
import { persistentVolumeClaimStrategy } from './persistentvolumeclaim.js';
import { podStrategy } from './pod.js';
import { podDisruptionBudgetStrategy } from './poddisruptionbudget.js';
import { podTemplateStrategy } from './podtemplate.js';
import { replicaSetStrategy } from './replicaset.js';
import { replicationControllerStrategy } from './replicationcontroller.js';
import { resourceQuotaStrategy } from './resourcequota.js';
import { roleStrategy } from './role.js';
import { roleBindingStrategy } from './rolebinding.js';
import { secretStrategy } from './secret.js';
import { serviceStrategy } from './service.js';
import { serviceAccountStrategy } from './serviceaccount.js';
import { statefulSetStrategy } from './statefulset.js';
import type { KindStrategy, SubresourceStrategy } from './strategy.js';
import {
  mutatingWebhookConfigurationStrategy,
  validatingWebhookConfigurationStrategy,
} from './webhookconfiguration.js';

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
  // Stored only, no controller acts on them (ADR 0003); their schemas are builtin-schemas/'s.
  podStrategy,
  serviceStrategy,
  endpointsStrategy,
  persistentVolumeClaimStrategy,
  persistentVolumeStrategy,
  replicationControllerStrategy,
  podTemplateStrategy,
  nodeStrategy,
  deploymentStrategy,
  statefulSetStrategy,
  daemonSetStrategy,
  replicaSetStrategy,
  jobStrategy,
  cronJobStrategy,
  horizontalPodAutoscalerStrategy,
  networkPolicyStrategy,
  ingressStrategy,
  ingressClassStrategy,
  podDisruptionBudgetStrategy,
  validatingWebhookConfigurationStrategy,
  mutatingWebhookConfigurationStrategy,
  endpointSliceStrategy,
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
