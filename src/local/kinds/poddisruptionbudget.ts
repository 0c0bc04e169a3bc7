// PodDisruptionBudget (policy/v1): stored with its official schema; no disruption controller
// computes its status, which stays as written (a new one's is reset, PrepareForCreate).
import { byKey, MAP, STRUCT } from '../patch/field-types.js';
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
