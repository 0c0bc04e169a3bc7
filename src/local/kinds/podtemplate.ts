// PodTemplate (core/v1): stored with its official schema, its template defaulted as a
// workload's is.
import { STRUCT } from '../patch/field-types.js';
import { MessageSpec, objectMeta, one } from '../protobuf-messages.js';
import { podTemplateSpec } from '../protobuf-pod.js';
import { defaultPodTemplate, podTemplateCauses, podTemplateFieldTypes } from './pod-spec.js';
import { isJson, refuse, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = { template: STRUCT, ...podTemplateFieldTypes('template') };

const type = withSchema(builtinType('', 'v1', 'PodTemplate', 'podtemplates'), fieldTypes);

/** Its generated.proto message (k8s.io/api/core/v1). */
const podTemplateMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, one('template', podTemplateSpec)],
]);

export const podTemplateStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  protobuf: podTemplateMessage,
  prepare(object) {
    if (isJson(object.template)) defaultPodTemplate(object.template);
    refuse(type, object, podTemplateCauses(object.template, 'template'));
  },
};
