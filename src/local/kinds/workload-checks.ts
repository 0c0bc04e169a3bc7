// The checks and defaults the workload kinds share (Deployment, ReplicaSet, StatefulSet,
// DaemonSet, ReplicationController: pkg/apis/apps/validation and core's RC validation): a
// selector that selects the template's labels, a template of restartPolicy Always, replicas
// not below 0. Their controllers do not run here: a workload's status stays as written.
import type { StatusCause } from '../types.js';
import { podTemplateCauses } from './pod-spec.js';
import { invalidValue, isJson, notSupported, required } from './stored-kind.js';

type Json = Record<string, unknown>;

/** %#v of a map[string]string, keys sorted as fmt prints them. */
export function goStringMap(m: Json): string {
  const keys = Object.keys(m).sort();
  return `map[string]string{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(String(m[k]))}`).join(', ')}}`;
}

/** Whether a LabelSelector (matchLabels, matchExpressions) selects `labels`. */
export function selects(selector: Json, labels: Json): boolean {
  const match = isJson(selector.matchLabels) ? selector.matchLabels : {};
  for (const [k, v] of Object.entries(match)) if (labels[k] !== v) return false;
  for (const e of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    if (!isJson(e) || typeof e.key !== 'string') continue;
    const values = Array.isArray(e.values) ? e.values : [];
    const has = Object.hasOwn(labels, e.key);
    const ok =
      e.operator === 'In'
        ? has && values.includes(labels[e.key])
        : e.operator === 'NotIn'
          ? !has || !values.includes(labels[e.key])
          : e.operator === 'Exists'
            ? has
            : e.operator === 'DoesNotExist'
              ? !has
              : true;
    if (!ok) return false;
  }
  return true;
}

const isEmptySelector = (s: Json) =>
  Object.keys(isJson(s.matchLabels) ? s.matchLabels : {}).length === 0 &&
  (Array.isArray(s.matchExpressions) ? s.matchExpressions.length : 0) === 0;

/**
 * ValidateDeploymentSpec / ValidateReplicaSetSpec / ValidateStatefulSetSpec /
 * ValidateDaemonSetSpec's common part: replicas, selector, template.
 */
export function workloadCauses(
  spec: Json,
  options: { replicas: boolean; restartAlways: boolean },
): StatusCause[] {
  const causes: StatusCause[] = [];
  if (options.replicas && typeof spec.replicas === 'number' && spec.replicas < 0)
    causes.push(invalidValue('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  const template = isJson(spec.template) ? spec.template : {};
  const metadata = isJson(template.metadata) ? template.metadata : {};
  const labels = isJson(metadata.labels) ? metadata.labels : {};
  if (!isJson(spec.selector)) causes.push(required('spec.selector'));
  if (!isJson(spec.selector) || isEmptySelector(spec.selector) || !selects(spec.selector, labels))
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'spec.template.metadata.labels',
      message: `Invalid value: ${goStringMap(labels)}: \`selector\` does not match template \`labels\``,
    });
  causes.push(...podTemplateCauses(template, 'spec.template'));
  const spec2 = isJson(template.spec) ? template.spec : {};
  if (options.restartAlways && spec2.restartPolicy !== 'Always')
    causes.push(notSupported('spec.template.spec.restartPolicy', spec2.restartPolicy, ['Always']));
  return causes;
}
