import { labelSelector, list, MessageSpec, objectMeta, one } from '../protobuf-messages.js';
import { podTemplateSpec } from '../protobuf-pod.js';
import { defaultPodTemplate } from './pod-spec.js';
import { LABEL_SELECTOR_SCALE } from './scale.js';
import { isJson, orDefault, refuse, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { workloadConditionMessage, workloadFieldTypes } from './workload.js';
import { workloadCauses } from './workload-checks.js';

const fieldTypes = workloadFieldTypes();

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

/** Its generated.proto message (k8s.io/api/apps/v1), field by field. */
const replicaSetMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [
    2,
    one(
      'spec',
      new MessageSpec([
        [1, one('replicas', 'int32', true)],
        [4, one('minReadySeconds', 'int32')],
        [2, one('selector', labelSelector)],
        [3, one('template', podTemplateSpec)],
      ]),
    ),
  ],
  [
    3,
    one(
      'status',
      new MessageSpec([
        [1, one('replicas', 'int32', true)],
        [2, one('fullyLabeledReplicas', 'int32')],
        [4, one('readyReplicas', 'int32')],
        [5, one('availableReplicas', 'int32')],
        [7, one('terminatingReplicas', 'int32', true)],
        [3, one('observedGeneration', 'int64')],
        [6, list('conditions', workloadConditionMessage)],
      ]),
    ),
  ],
]);

export const replicaSetStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  protobuf: replicaSetMessage,
  scale: LABEL_SELECTOR_SCALE,
  prepare(object) {
    const spec = struct(object, 'spec');
    orDefault(spec, 'replicas', 1);
    if (isJson(spec.template)) defaultPodTemplate(spec.template);
    refuse(type, object, workloadCauses(spec, { replicas: true, restartAlways: true }));
  },
};
