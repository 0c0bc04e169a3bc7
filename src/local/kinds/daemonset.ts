// DaemonSet (apps/v1): stored with its official schema, defaulted as SetDefaults_DaemonSet and
// checked as ValidateDaemonSet's first rules; no controller makes its pods.
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
    ...builtinType('apps', 'v1', 'DaemonSet', 'daemonsets', {
      shortNames: ['ds'],
      hasStatus: true,
    }),
    categories: ['all'],
  },
  fieldTypes,
);

export const daemonSetStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  prepare(object) {
    const spec = struct(object, 'spec');
    const update = struct(spec, 'updateStrategy');
    orDefault(update, 'type', 'RollingUpdate');
    if (update.type === 'RollingUpdate') {
      const rolling = struct(update, 'rollingUpdate');
      orDefault(rolling, 'maxUnavailable', 1);
      orDefault(rolling, 'maxSurge', 0);
    }
    orDefault(spec, 'revisionHistoryLimit', 10);
    if (isJson(spec.template)) defaultPodTemplate(spec.template);
    refuse(type, object, workloadCauses(spec, { replicas: false, restartAlways: true }));
  },
};
