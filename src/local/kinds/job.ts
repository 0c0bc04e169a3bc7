// Job (batch/v1): stored with its official schema, defaulted as SetDefaults_Job and the
// strategy's generated selector (batch.kubernetes.io/controller-uid), checked as ValidateJob's
// first rules. No controller runs its pods: its status stays as written.
import { ATOMIC, STRUCT } from '../patch/field-types.js';
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

export const jobStrategy: KindStrategy = {
  countsGeneration: true,
  type,
  fieldTypes: JOB_FIELD_TYPES,
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
