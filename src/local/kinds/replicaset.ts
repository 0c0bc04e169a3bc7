// ReplicaSet (apps/v1): stored with its official schema, defaulted (replicas 1) and checked as
// ValidateReplicaSet's first rules; no controller makes its pods, its status stays as written.
import { byKey, STRUCT } from '../patch/field-types.js';
import { defaultPodTemplate, podTemplateFieldTypes, selectorFieldTypes } from './pod-spec.js';
import { isJson, orDefault, refuse, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { workloadCauses } from './workload-checks.js';

const fieldTypes = {
  spec: STRUCT,
  ...selectorFieldTypes('spec.selector'),
  ...podTemplateFieldTypes('spec.template'),
  status: STRUCT,
  'status.conditions': byKey('type'),
};

const type = withSchema(
  {
    ...builtinType('apps', 'v1', 'ReplicaSet', 'replicasets', {
      shortNames: ['rs'],
      hasStatus: true,
    }),
    categories: ['all'],
  },
  fieldTypes,
);

export const replicaSetStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  prepare(object) {
    const spec = struct(object, 'spec');
    orDefault(spec, 'replicas', 1);
    if (isJson(spec.template)) defaultPodTemplate(spec.template);
    refuse(type, object, workloadCauses(spec, { replicas: true, restartAlways: true }));
  },
};
