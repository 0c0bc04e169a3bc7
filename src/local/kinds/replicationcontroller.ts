// ReplicationController (core/v1): stored with its official schema, defaulted as
// SetDefaults_ReplicationController (replicas 1, the selector and labels from the template's
// labels) and checked as ValidateReplicationController's first rules; no controller runs.
import { MAP } from '../patch/field-types.js';
import { list, MessageSpec, map, objectMeta, one } from '../protobuf-messages.js';
import { podTemplateSpec } from '../protobuf-pod.js';
import { defaultPodTemplate, podTemplateCauses } from './pod-spec.js';
import { MAP_SELECTOR_SCALE } from './scale.js';
import { isJson, orDefault, refuse, required, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { workloadConditionMessage, workloadFieldTypes } from './workload.js';
import { goStringMap } from './workload-checks.js';

const fieldTypes = workloadFieldTypes({ 'spec.selector': MAP });

const type = withSchema(
  {
    ...builtinType('', 'v1', 'ReplicationController', 'replicationcontrollers', {
      shortNames: ['rc'],
      hasStatus: true,
    }),
    categories: ['all'],
  },
  fieldTypes,
);

/** Its generated.proto message (k8s.io/api/core/v1), field by field. */
const replicationControllerMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [
    2,
    one(
      'spec',
      new MessageSpec([
        [1, one('replicas', 'int32', true)],
        [4, one('minReadySeconds', 'int32')],
        [2, map('selector', 'string')],
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
        [3, one('observedGeneration', 'int64')],
        [6, list('conditions', workloadConditionMessage)],
      ]),
    ),
  ],
]);

export const replicationControllerStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  protobuf: replicationControllerMessage,
  scale: MAP_SELECTOR_SCALE,
  prepare(object) {
    const spec = struct(object, 'spec');
    orDefault(spec, 'replicas', 1);
    const template = isJson(spec.template) ? spec.template : undefined;
    const labels =
      template !== undefined && isJson(template.metadata) && isJson(template.metadata.labels)
        ? template.metadata.labels
        : {};
    if (!isJson(spec.selector) || Object.keys(spec.selector).length === 0)
      spec.selector = { ...labels };
    if (template !== undefined) defaultPodTemplate(template);
    const selector = spec.selector as Record<string, unknown>;
    const causes =
      template === undefined
        ? [required('spec.template')]
        : podTemplateCauses(template, 'spec.template');
    if (Object.entries(selector).some(([k, v]) => labels[k] !== v))
      causes.unshift({
        reason: 'FieldValueInvalid',
        field: 'spec.template.metadata.labels',
        message: `Invalid value: ${goStringMap(labels)}: \`selector\` does not match template \`labels\``,
      });
    refuse(type, object, causes);
  },
};
