// StatefulSet (apps/v1): stored with its official schema, defaulted as SetDefaults_StatefulSet
// and checked as ValidateStatefulSet's first rules; no controller makes its pods or claims.
import { ATOMIC } from '../patch/field-types.js';
import { labelSelector, list, MessageSpec, objectMeta, one } from '../protobuf-messages.js';
import { persistentVolumeClaim, podTemplateSpec } from '../protobuf-pod.js';
import { defaultPodTemplate } from './pod-spec.js';
import { LABEL_SELECTOR_SCALE } from './scale.js';
import { isJson, orDefault, refuse, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { workloadConditionMessage, workloadFieldTypes } from './workload.js';
import { workloadCauses } from './workload-checks.js';

const fieldTypes = workloadFieldTypes(undefined, { 'spec.volumeClaimTemplates': ATOMIC });

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

/** Its generated.proto message (k8s.io/api/apps/v1), field by field. */
const statefulSetMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [
    2,
    one(
      'spec',
      new MessageSpec([
        [1, one('replicas', 'int32', true)],
        [2, one('selector', labelSelector)],
        [3, one('template', podTemplateSpec)],
        [4, list('volumeClaimTemplates', persistentVolumeClaim)],
        [5, one('serviceName', 'string')],
        [6, one('podManagementPolicy', 'string')],
        [
          7,
          one(
            'updateStrategy',
            new MessageSpec([
              [1, one('type', 'string')],
              [
                2,
                one(
                  'rollingUpdate',
                  new MessageSpec([
                    [1, one('partition', 'int32', true)],
                    [2, one('maxUnavailable', 'intOrString', true)],
                  ]),
                ),
              ],
            ]),
          ),
        ],
        [8, one('revisionHistoryLimit', 'int32', true)],
        [9, one('minReadySeconds', 'int32')],
        [
          10,
          one(
            'persistentVolumeClaimRetentionPolicy',
            new MessageSpec([
              [1, one('whenDeleted', 'string')],
              [2, one('whenScaled', 'string')],
            ]),
          ),
        ],
        [11, one('ordinals', new MessageSpec([[1, one('start', 'int32')]]))],
      ]),
    ),
  ],
  [
    3,
    one(
      'status',
      new MessageSpec([
        [1, one('observedGeneration', 'int64')],
        [2, one('replicas', 'int32', true)],
        [3, one('readyReplicas', 'int32')],
        [4, one('currentReplicas', 'int32')],
        [5, one('updatedReplicas', 'int32')],
        [6, one('currentRevision', 'string')],
        [7, one('updateRevision', 'string')],
        [9, one('collisionCount', 'int32', true)],
        [10, list('conditions', workloadConditionMessage)],
        [11, one('availableReplicas', 'int32')],
      ]),
    ),
  ],
]);

export const statefulSetStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  protobuf: statefulSetMessage,
  scale: LABEL_SELECTOR_SCALE,
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
