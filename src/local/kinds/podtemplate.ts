// PodTemplate (core/v1): stored with its official schema, its template defaulted as a
// workload's is.
import { STRUCT } from '../patch/field-types.js';
import { defaultPodTemplate, podTemplateCauses, podTemplateFieldTypes } from './pod-spec.js';
import { isJson, refuse, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = { template: STRUCT, ...podTemplateFieldTypes('template') };

const type = withSchema(builtinType('', 'v1', 'PodTemplate', 'podtemplates'), fieldTypes);

export const podTemplateStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  prepare(object) {
    if (isJson(object.template)) defaultPodTemplate(object.template);
    refuse(type, object, podTemplateCauses(object.template, 'template'));
  },
};
