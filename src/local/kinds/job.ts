// Job (batch/v1): stored with its official schema, defaulted as SetDefaults_Job and the
// strategy's generated selector (batch.kubernetes.io/controller-uid), checked as ValidateJob's
// first rules. No controller runs its pods: its status stays as written.
import { ATOMIC, STRUCT } from '../patch/field-types.js';
import { labelSelector, list, MessageSpec, objectMeta, one } from '../protobuf-messages.js';
import { podTemplateSpec } from '../protobuf-pod.js';
import {
  defaultPodTemplate,
  podTemplateCauses,
  podTemplateFieldTypes,
  selectorFieldTypes,
} from './pod-spec.js';
import { isJson, notSupported, orDefault, refuse, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const JOB_FIELD_TYPES = {
  spec: STRUCT,
  ...selectorFieldTypes('spec.selector'),
  ...podTemplateFieldTypes('spec.template'),
  status: STRUCT,
  'status.conditions': ATOMIC,
};

const type = withSchema(
  { ...builtinType('batch', 'v1', 'Job', 'jobs', { hasStatus: true }), categories: ['all'] },
  JOB_FIELD_TYPES,
);

/** SetDefaults_Job on a JobSpec (a Job's, or a CronJob's jobTemplate's). */
export function defaultJobSpec(spec: Record<string, unknown>): void {
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  orDefault(spec, 'parallelism', 1);
  orDefault(spec, 'backoffLimit', 6);
  orDefault(spec, 'completionMode', 'NonIndexed');
  orDefault(spec, 'suspend', false);
  orDefault(spec, 'podReplacementPolicy', 'TerminatingOrFailed');
  if (isJson(spec.template)) defaultPodTemplate(spec.template);
}

/** A JobSpec's generated.proto message (k8s.io/api/batch/v1): a Job's and a CronJob's jobTemplate's. */
export const jobSpecMessage = new MessageSpec([
  [1, one('parallelism', 'int32', true)],
  [2, one('completions', 'int32', true)],
  [3, one('activeDeadlineSeconds', 'int64', true)],
  [
    11,
    one(
      'podFailurePolicy',
      new MessageSpec([
        [
          1,
          list(
            'rules',
            new MessageSpec([
              [1, one('action', 'string', true)],
              [
                2,
                one(
                  'onExitCodes',
                  new MessageSpec([
                    [1, one('containerName', 'string', true)],
                    [2, one('operator', 'string', true)],
                    [3, list('values', 'int32')],
                  ]),
                ),
              ],
              [
                3,
                list(
                  'onPodConditions',
                  new MessageSpec([
                    [1, one('type', 'string', true)],
                    [2, one('status', 'string')],
                  ]),
                ),
              ],
            ]),
          ),
        ],
      ]),
    ),
  ],
  [
    16,
    one(
      'successPolicy',
      new MessageSpec([
        [
          1,
          list(
            'rules',
            new MessageSpec([
              [1, one('succeededIndexes', 'string', true)],
              [2, one('succeededCount', 'int32', true)],
            ]),
          ),
        ],
      ]),
    ),
  ],
  [7, one('backoffLimit', 'int32', true)],
  [12, one('backoffLimitPerIndex', 'int32', true)],
  [13, one('maxFailedIndexes', 'int32', true)],
  [4, one('selector', labelSelector)],
  [5, one('manualSelector', 'bool', true)],
  [6, one('template', podTemplateSpec)],
  [8, one('ttlSecondsAfterFinished', 'int32', true)],
  [9, one('completionMode', 'string', true)],
  [10, one('suspend', 'bool', true)],
  [14, one('podReplacementPolicy', 'string', true)],
  [15, one('managedBy', 'string', true)],
]);

const jobMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, one('spec', jobSpecMessage)],
  [
    3,
    one(
      'status',
      new MessageSpec([
        [
          1,
          list(
            'conditions',
            new MessageSpec([
              [1, one('type', 'string', true)],
              [2, one('status', 'string', true)],
              [3, one('lastProbeTime', 'time')],
              [4, one('lastTransitionTime', 'time')],
              [5, one('reason', 'string')],
              [6, one('message', 'string')],
            ]),
          ),
        ],
        [2, one('startTime', 'time', true)],
        [3, one('completionTime', 'time', true)],
        [4, one('active', 'int32')],
        [5, one('succeeded', 'int32')],
        [6, one('failed', 'int32')],
        [11, one('terminating', 'int32', true)],
        [7, one('completedIndexes', 'string')],
        [10, one('failedIndexes', 'string', true)],
        [
          8,
          one(
            'uncountedTerminatedPods',
            new MessageSpec([
              [1, list('succeeded', 'string')],
              [2, list('failed', 'string')],
            ]),
          ),
        ],
        [9, one('ready', 'int32', true)],
      ]),
    ),
  ],
]);

export const jobStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes: JOB_FIELD_TYPES,
  protobuf: jobMessage,
  prepare(object, old) {
    const spec = struct(object, 'spec');
    defaultJobSpec(spec);
    // generateSelector: the job's uid labels its pods, unless the client chose the selector.
    if (old === undefined && spec.manualSelector !== true && object.metadata.uid !== undefined) {
      const uid = object.metadata.uid;
      const name = object.metadata.name ?? '';
      spec.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
      const metadata = struct(struct(spec, 'template'), 'metadata');
      metadata.labels = {
        ...(isJson(metadata.labels) ? metadata.labels : {}),
        'batch.kubernetes.io/controller-uid': uid,
        'batch.kubernetes.io/job-name': name,
        'controller-uid': uid,
        'job-name': name,
      };
    }
    const causes = podTemplateCauses(spec.template, 'spec.template');
    const restart =
      isJson(spec.template) && isJson(spec.template.spec)
        ? spec.template.spec.restartPolicy
        : undefined;
    if (restart !== 'OnFailure' && restart !== 'Never')
      causes.push(
        notSupported('spec.template.spec.restartPolicy', restart, ['OnFailure', 'Never']),
      );
    refuse(type, object, causes);
  },
};
