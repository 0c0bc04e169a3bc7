import { labelSelector, list, MessageSpec, objectMeta, one } from '../protobuf-messages.js';
import { podTemplateSpec } from '../protobuf-pod.js';
import { defaultPodTemplate } from './pod-spec.js';
import { LABEL_SELECTOR_SCALE } from './scale.js';
import { isJson, notSupported, orDefault, refuse, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { workloadFieldTypes } from './workload.js';
import { workloadCauses } from './workload-checks.js';

const fieldTypes = workloadFieldTypes();

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

/** Its generated.proto message (k8s.io/api/apps/v1), field by field. */
const deploymentMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [
    2,
    one(
      'spec',
      new MessageSpec([
        [1, one('replicas', 'int32', true)],
        [2, one('selector', labelSelector)],
        [3, one('template', podTemplateSpec)],
        [
          4,
          one(
            'strategy',
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
        [5, one('minReadySeconds', 'int32')],
        [6, one('revisionHistoryLimit', 'int32', true)],
        [7, one('paused', 'bool')],
        [9, one('progressDeadlineSeconds', 'int32', true)],
        [10, one('podReplacementPolicy', 'string', true)],
      ]),
    ),
  ],
  [
    3,
    one(
      'status',
      new MessageSpec([
        [1, one('observedGeneration', 'int64')],
        [2, one('replicas', 'int32')],
        [3, one('updatedReplicas', 'int32')],
        [7, one('readyReplicas', 'int32')],
        [4, one('availableReplicas', 'int32')],
        [5, one('unavailableReplicas', 'int32')],
        [9, one('terminatingReplicas', 'int32', true)],
        [
          6,
          list(
            'conditions',
            new MessageSpec([
              [1, one('type', 'string', true)],
              [2, one('status', 'string', true)],
              [6, one('lastUpdateTime', 'time')],
              [7, one('lastTransitionTime', 'time')],
              [4, one('reason', 'string')],
              [5, one('message', 'string')],
            ]),
          ),
        ],
        [8, one('collisionCount', 'int32', true)],
      ]),
    ),
  ],
]);

export const deploymentStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  protobuf: deploymentMessage,
  scale: LABEL_SELECTOR_SCALE,
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
