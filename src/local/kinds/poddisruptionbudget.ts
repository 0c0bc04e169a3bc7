// PodDisruptionBudget (policy/v1): stored with its official schema; no disruption controller
// computes its status, which stays as written (a new one's is reset, PrepareForCreate).
import { byKey, MAP, STRUCT } from '../patch/field-types.js';
import {
  labelSelector,
  list,
  MessageSpec,
  map,
  metaCondition,
  objectMeta,
  one,
} from '../protobuf-messages.js';
import { selectorFieldTypes } from './pod-spec.js';
import { withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = {
  spec: STRUCT,
  ...selectorFieldTypes('spec.selector'),
  status: STRUCT,
  'status.conditions': byKey('type'),
  'status.disruptedPods': MAP,
};

/**
 * Its generated.proto message (k8s.io/api/policy/v1), field by field; unhealthyPodEvictionPolicy
 * is tag 4 of PodDisruptionBudgetSpec (types.go's `protobuf:"bytes,4,opt,..."`).
 */
const podDisruptionBudgetMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [
    2,
    one(
      'spec',
      new MessageSpec([
        [1, one('minAvailable', 'intOrString', true)],
        [2, one('selector', labelSelector)],
        [3, one('maxUnavailable', 'intOrString', true)],
        [4, one('unhealthyPodEvictionPolicy', 'string', true)],
      ]),
    ),
  ],
  [
    3,
    one(
      'status',
      new MessageSpec([
        [1, one('observedGeneration', 'int64')],
        [2, map('disruptedPods', 'time')],
        [3, one('disruptionsAllowed', 'int32', true)],
        [4, one('currentHealthy', 'int32', true)],
        [5, one('desiredHealthy', 'int32', true)],
        [6, one('expectedPods', 'int32', true)],
        [7, list('conditions', metaCondition)],
      ]),
    ),
  ],
]);

export const podDisruptionBudgetStrategy: KindStrategy = {
  countsGeneration: true,
  type: withSchema(
    builtinType('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', {
      shortNames: ['pdb'],
      hasStatus: true,
    }),
    fieldTypes,
  ),
  fieldTypes,
  protobuf: podDisruptionBudgetMessage,
  prepare(object, old) {
    if (old === undefined)
      object.status = {
        currentHealthy: 0,
        desiredHealthy: 0,
        disruptionsAllowed: 0,
        expectedPods: 0,
      };
  },
};
