// What the controller-managed kinds share (apps/v1 Deployment, ReplicaSet, StatefulSet,
// DaemonSet, core/v1 ReplicationController): how their spec, pod template and status merge and
// are owned, and the condition message their statuses carry.
import { byKey, type FieldType, STRUCT } from '../patch/field-types.js';
import { MessageSpec, one } from '../protobuf-messages.js';
import { podTemplateFieldTypes, selectorFieldTypes } from './pod-spec.js';

/**
 * spec, `spec.selector` (a LabelSelector unless `selector` says otherwise), `spec.template` and
 * status with its conditions keyed by type; `extra` adds what one kind has beside them.
 */
export function workloadFieldTypes(
  selector: Record<string, FieldType> = selectorFieldTypes('spec.selector'),
  extra: Record<string, FieldType> = {},
): Record<string, FieldType> {
  return {
    spec: STRUCT,
    ...selector,
    ...podTemplateFieldTypes('spec.template'),
    ...extra,
    status: STRUCT,
    'status.conditions': byKey('type'),
  };
}

/**
 * ReplicaSetCondition, ReplicationControllerCondition, StatefulSetCondition and
 * DaemonSetCondition: one message in generated.proto's numbering (DeploymentCondition and
 * JobCondition number theirs otherwise).
 */
export const workloadConditionMessage = new MessageSpec([
  [1, one('type', 'string', true)],
  [2, one('status', 'string', true)],
  [3, one('lastTransitionTime', 'time')],
  [4, one('reason', 'string')],
  [5, one('message', 'string')],
]);
