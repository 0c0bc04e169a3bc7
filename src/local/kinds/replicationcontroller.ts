// ReplicationController (core/v1): stored with its official schema, defaulted as
// SetDefaults_ReplicationController (replicas 1, the selector and labels from the template's
// labels) and checked as ValidateReplicationController's first rules; no controller runs.
import { byKey, MAP, STRUCT } from '../patch/field-types.js';
import { defaultPodTemplate, podTemplateCauses, podTemplateFieldTypes } from './pod-spec.js';
import { isJson, orDefault, refuse, required, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { goStringMap } from './workload-checks.js';

const fieldTypes = {
  spec: STRUCT,
  'spec.selector': MAP,
  ...podTemplateFieldTypes('spec.template'),
  status: STRUCT,
  'status.conditions': byKey('type'),
};

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

export const replicationControllerStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
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
