// Deployment (apps/v1): stored with its official schema, defaulted as pkg/apis/apps/v1/defaults.go
// (SetDefaults_Deployment) and checked as ValidateDeployment's first rules. No controller runs
// here: no ReplicaSet is made, and its status stays as written (ADR 0003).
import { byKey, STRUCT } from '../patch/field-types.js';
import { defaultPodTemplate, podTemplateFieldTypes, selectorFieldTypes } from './pod-spec.js';
import { isJson, notSupported, orDefault, refuse, struct, withSchema } from './stored-kind.js';
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
    ...builtinType('apps', 'v1', 'Deployment', 'deployments', {
      shortNames: ['deploy'],
      hasStatus: true,
    }),
    categories: ['all'],
  },
  fieldTypes,
);

export const deploymentStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  prepare(object) {
    const spec = struct(object, 'spec');
    orDefault(spec, 'replicas', 1);
    const strategy = struct(spec, 'strategy');
    orDefault(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      const rolling = struct(strategy, 'rollingUpdate');
      orDefault(rolling, 'maxUnavailable', '25%');
      orDefault(rolling, 'maxSurge', '25%');
    }
    orDefault(spec, 'revisionHistoryLimit', 10);
    orDefault(spec, 'progressDeadlineSeconds', 600);
    if (isJson(spec.template)) defaultPodTemplate(spec.template);
    const causes = workloadCauses(spec, { replicas: true, restartAlways: true });
    if (strategy.type !== 'RollingUpdate' && strategy.type !== 'Recreate')
      causes.push(notSupported('spec.strategy.type', strategy.type, ['Recreate', 'RollingUpdate']));
    refuse(type, object, causes);
  },
};
