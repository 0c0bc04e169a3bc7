import { labelSelector, list, MessageSpec, objectMeta, one } from '../protobuf-messages.js';
import { podTemplateSpec } from '../protobuf-pod.js';
import { defaultPodTemplate } from './pod-spec.js';
import { isJson, orDefault, refuse, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { workloadConditionMessage, workloadFieldTypes } from './workload.js';
import { workloadCauses } from './workload-checks.js';

const fieldTypes = workloadFieldTypes();

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

/** Its generated.proto message (k8s.io/api/apps/v1), field by field. */
const daemonSetMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [
    2,
    one(
      'spec',
      new MessageSpec([
        [1, one('selector', labelSelector)],
        [2, one('template', podTemplateSpec)],
        [
          3,
          one(
            'updateStrategy',
            new MessageSpec([
              [1, one('type', 'string')],
              [
                2,
                one(
                  'rollingUpdate',
                  new MessageSpec([
                    [1, one('maxUnavailable', 'intOrString', true)],
                    [2, one('maxSurge', 'intOrString', true)],
                  ]),
                ),
              ],
            ]),
          ),
        ],
        [4, one('minReadySeconds', 'int32')],
        [6, one('revisionHistoryLimit', 'int32', true)],
      ]),
    ),
  ],
  [
    3,
    one(
      'status',
      new MessageSpec([
        [1, one('currentNumberScheduled', 'int32', true)],
        [2, one('numberMisscheduled', 'int32', true)],
        [3, one('desiredNumberScheduled', 'int32', true)],
        [4, one('numberReady', 'int32', true)],
        [5, one('observedGeneration', 'int64')],
        [6, one('updatedNumberScheduled', 'int32')],
        [7, one('numberAvailable', 'int32')],
        [8, one('numberUnavailable', 'int32')],
        [9, one('collisionCount', 'int32', true)],
        [10, list('conditions', workloadConditionMessage)],
      ]),
    ),
  ],
]);

export const daemonSetStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  protobuf: daemonSetMessage,
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
