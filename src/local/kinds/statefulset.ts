// StatefulSet (apps/v1): stored with its official schema, defaulted as SetDefaults_StatefulSet
// and checked as ValidateStatefulSet's first rules; no controller makes its pods or claims.
import { ATOMIC, byKey, STRUCT } from '../patch/field-types.js';
import { defaultPodTemplate, podTemplateFieldTypes, selectorFieldTypes } from './pod-spec.js';
import { isJson, orDefault, refuse, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { workloadCauses } from './workload-checks.js';

const fieldTypes = {
  spec: STRUCT,
  ...selectorFieldTypes('spec.selector'),
  ...podTemplateFieldTypes('spec.template'),
  'spec.volumeClaimTemplates': ATOMIC,
  status: STRUCT,
  'status.conditions': byKey('type'),
};

const type = withSchema(
  {
    ...builtinType('apps', 'v1', 'StatefulSet', 'statefulsets', {
      shortNames: ['sts'],
      hasStatus: true,
    }),
    categories: ['all'],
  },
  fieldTypes,
);

export const statefulSetStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  prepare(object) {
    const spec = struct(object, 'spec');
    orDefault(spec, 'replicas', 1);
    orDefault(spec, 'podManagementPolicy', 'OrderedReady');
    const update = struct(spec, 'updateStrategy');
    orDefault(update, 'type', 'RollingUpdate');
    if (update.type === 'RollingUpdate') orDefault(struct(update, 'rollingUpdate'), 'partition', 0);
    orDefault(spec, 'revisionHistoryLimit', 10);
    const retention = struct(spec, 'persistentVolumeClaimRetentionPolicy');
    orDefault(retention, 'whenDeleted', 'Retain');
    orDefault(retention, 'whenScaled', 'Retain');
    if (isJson(spec.template)) defaultPodTemplate(spec.template);
    for (const claim of Array.isArray(spec.volumeClaimTemplates) ? spec.volumeClaimTemplates : [])
      if (isJson(claim)) orDefault(struct(claim, 'spec'), 'volumeMode', 'Filesystem');
    refuse(type, object, workloadCauses(spec, { replicas: true, restartAlways: true }));
  },
};
