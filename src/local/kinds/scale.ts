// What a kind with a `scale` subresource tells it (KindStrategy.scale): how its pod selector reads
// in the autoscaling/v1 Scale's status.selector, as kube's ScaleREST of each kind writes it
// (pkg/registry/apps/deployment/storage/storage.go scaleFromDeployment: LabelSelectorAsSelector
// (spec.selector).String(); pkg/registry/core/replicationcontroller/storage/storage.go
// scaleFromRC: labels.SelectorFromSet(spec.selector).String()).
import type { KubeObject } from '../types.js';
import { isJson } from './stored-kind.js';

export interface ScaleStrategy {
  /** The selector of the Scale's status, in label selector syntax ("" for none). */
  selector(object: KubeObject): string;
}

const specOf = (object: KubeObject): Record<string, unknown> =>
  isJson(object.spec) ? object.spec : {};

/** Go's sort of strings: by UTF-16 code unit here, as label keys and values are ASCII. */
const sorted = (values: string[]): string[] =>
  [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * labels.Requirement.String() of each requirement, sorted by key as Selector.Add sorts them:
 * `k=v` for matchLabels, `k in (a,b)`, `k notin (a,b)` (values sorted on output), `k`, `!k`.
 * A nil or empty selector prints as "".
 */
function labelSelectorString(selector: unknown): string {
  if (!isJson(selector)) return '';
  const requirements: Array<[string, string]> = [];
  if (isJson(selector.matchLabels))
    for (const [key, value] of Object.entries(selector.matchLabels))
      requirements.push([key, `${key}=${String(value)}`]);
  for (const expression of Array.isArray(selector.matchExpressions)
    ? selector.matchExpressions
    : []) {
    if (!isJson(expression)) continue;
    const key = String(expression.key ?? '');
    const values = Array.isArray(expression.values) ? expression.values.map(String) : [];
    const list = values.length === 1 ? values[0] : sorted(values).join(',');
    switch (expression.operator) {
      case 'In':
        requirements.push([key, `${key} in (${list})`]);
        break;
      case 'NotIn':
        requirements.push([key, `${key} notin (${list})`]);
        break;
      case 'Exists':
        requirements.push([key, key]);
        break;
      case 'DoesNotExist':
        requirements.push([key, `!${key}`]);
        break;
    }
  }
  return requirements
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([, text]) => text)
    .join(',');
}

/** Deployment, ReplicaSet, StatefulSet: spec.selector is a LabelSelector. */
export const LABEL_SELECTOR_SCALE: ScaleStrategy = {
  selector: (object) => labelSelectorString(specOf(object).selector),
};

/** ReplicationController: spec.selector is a map of labels. */
export const MAP_SELECTOR_SCALE: ScaleStrategy = {
  selector: (object) =>
    labelSelectorString({
      matchLabels: isJson(specOf(object).selector) ? specOf(object).selector : {},
    }),
};
