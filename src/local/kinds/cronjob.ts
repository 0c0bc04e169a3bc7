// CronJob (batch/v1): stored with its official schema and defaulted as SetDefaults_CronJob;
// no controller makes its jobs, its status stays as written.
import { ATOMIC, STRUCT } from '../patch/field-types.js';
import { list, MessageSpec, objectMeta, objectReference, one } from '../protobuf-messages.js';
import { defaultJobSpec, jobSpecMessage } from './job.js';
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

/** Its generated.proto message (k8s.io/api/batch/v1), field by field. */
const cronJobMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [
    2,
    one(
      'spec',
      new MessageSpec([
        [1, one('schedule', 'string', true)],
        [8, one('timeZone', 'string', true)],
        [2, one('startingDeadlineSeconds', 'int64', true)],
        [3, one('concurrencyPolicy', 'string')],
        [4, one('suspend', 'bool', true)],
        [
          5,
          one(
            'jobTemplate',
            new MessageSpec([
              [1, one('metadata', objectMeta)],
              [2, one('spec', jobSpecMessage)],
            ]),
          ),
        ],
        [6, one('successfulJobsHistoryLimit', 'int32', true)],
        [7, one('failedJobsHistoryLimit', 'int32', true)],
      ]),
    ),
  ],
  [
    3,
    one(
      'status',
      new MessageSpec([
        [1, list('active', objectReference)],
        [4, one('lastScheduleTime', 'time', true)],
        [5, one('lastSuccessfulTime', 'time', true)],
      ]),
    ),
  ],
]);

export const cronJobStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes,
  protobuf: cronJobMessage,
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
