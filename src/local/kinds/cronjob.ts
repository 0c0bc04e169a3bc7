// CronJob (batch/v1): stored with its official schema and defaulted as SetDefaults_CronJob;
// no controller makes its jobs, its status stays as written.
import { ATOMIC, STRUCT } from '../patch/field-types.js';
import { defaultJobSpec } from './job.js';
import { podTemplateCauses, podTemplateFieldTypes, selectorFieldTypes } from './pod-spec.js';
import { isJson, orDefault, refuse, required, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = {
  spec: STRUCT,
  'spec.jobTemplate': STRUCT,
  'spec.jobTemplate.spec': STRUCT,
  ...selectorFieldTypes('spec.jobTemplate.spec.selector'),
  ...podTemplateFieldTypes('spec.jobTemplate.spec.template'),
  status: STRUCT,
  'status.active': ATOMIC,
};

const type = withSchema(
  {
    ...builtinType('batch', 'v1', 'CronJob', 'cronjobs', { shortNames: ['cj'], hasStatus: true }),
    categories: ['all'],
  },
  fieldTypes,
);

export const cronJobStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  prepare(object) {
    const spec = struct(object, 'spec');
    orDefault(spec, 'concurrencyPolicy', 'Allow');
    orDefault(spec, 'suspend', false);
    orDefault(spec, 'successfulJobsHistoryLimit', 3);
    orDefault(spec, 'failedJobsHistoryLimit', 1);
    const jobSpec = struct(struct(spec, 'jobTemplate'), 'spec');
    defaultJobSpec(jobSpec);
    const causes =
      typeof spec.schedule === 'string' && spec.schedule !== '' ? [] : [required('spec.schedule')];
    causes.push(
      ...podTemplateCauses(
        isJson(jobSpec.template) ? jobSpec.template : {},
        'spec.jobTemplate.spec.template',
      ),
    );
    refuse(type, object, causes);
  },
};
