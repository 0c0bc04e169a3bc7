// Which admission webhooks a request goes to: the webhooks of the stored
// Validating/MutatingWebhookConfigurations, compiled once per change of those objects, and
// matched against a request as kube-apiserver does (staging/src/k8s.io/apiserver/pkg/admission/
// plugin/webhook/predicates/rules/rules.go for `rules`, predicates/namespace/matcher.go for
// `namespaceSelector`, predicates/object/matcher.go for `objectSelector`, generic/webhook.go
// ShouldCallHook for the order, matchconditions/ for `matchConditions`).
import type { KubeObject } from '../types.js';
import { type CompiledConditions, compileConditions, type MatchCondition } from './conditions.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** What a request is, for matching: admission.Attributes' parts. */
export interface RequestAttributes {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly namespaced: boolean;
  readonly operation: Operation;
  readonly object: KubeObject | undefined;
  readonly oldObject: KubeObject | undefined;
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

interface Rule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

export interface Webhook {
  readonly name: string;
  /** The configuration it comes from, for kube's ordering (by configuration name, then as listed). */
  readonly configuration: string;
  readonly mutating: boolean;
  readonly url: string | undefined;
  readonly service: { namespace: string; name: string; path?: string; port: number } | undefined;
  readonly caBundle: string | undefined;
  readonly timeoutSeconds: number;
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly sideEffects: string;
  readonly admissionReviewVersions: readonly string[];
  readonly reinvocationPolicy: 'Never' | 'IfNeeded';
  readonly conditions: CompiledConditions;
  matchesRules(a: RequestAttributes): boolean;
  matchesObject(a: RequestAttributes): boolean;
  matchesNamespace(a: RequestAttributes, labelsOf: (namespace: string) => Labels): boolean;
}

type Labels = Record<string, string> | undefined;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];

/**
 * The webhooks of a kind's configurations, in the order kube calls them: configurations sorted
 * by name, webhooks in their listed order (configuration/*_manager.go sorts by name).
 */
export function compileWebhooks(
  configurations: readonly KubeObject[],
  mutating: boolean,
): Webhook[] {
  const sorted = [...configurations].sort((a, b) =>
    (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1,
  );
  const out: Webhook[] = [];
  for (const configuration of sorted) {
    const webhooks = Array.isArray(configuration.webhooks) ? configuration.webhooks : [];
    for (const w of webhooks) {
      if (isRecord(w)) out.push(compileWebhook(configuration.metadata.name ?? '', w, mutating));
    }
  }
  return out;
}

function compileWebhook(
  configuration: string,
  w: Record<string, unknown>,
  mutating: boolean,
): Webhook {
  const client = isRecord(w.clientConfig) ? w.clientConfig : {};
  const service = isRecord(client.service) ? client.service : undefined;
  const rules = (Array.isArray(w.rules) ? w.rules : []).filter(isRecord) as Rule[];
  const namespaceSelector = selector(w.namespaceSelector);
  const objectSelector = selector(w.objectSelector);
  const conditions = (Array.isArray(w.matchConditions) ? w.matchConditions : [])
    .filter(isRecord)
    .map(
      (c): MatchCondition => ({
        name: String(c.name ?? ''),
        expression: String(c.expression ?? ''),
      }),
    );
  const timeout = typeof w.timeoutSeconds === 'number' ? w.timeoutSeconds : 10;
  return {
    name: String(w.name ?? ''),
    configuration,
    mutating,
    url: typeof client.url === 'string' ? client.url : undefined,
    service:
      service === undefined
        ? undefined
        : {
            namespace: String(service.namespace ?? ''),
            name: String(service.name ?? ''),
            ...(typeof service.path === 'string' ? { path: service.path } : {}),
            port: typeof service.port === 'number' ? service.port : 443,
          },
    caBundle:
      typeof client.caBundle === 'string' && client.caBundle !== ''
        ? Buffer.from(client.caBundle, 'base64').toString('utf8')
        : undefined,
    // v1 validation bounds timeoutSeconds to 1..30 (validation.go validateWebhook).
    timeoutSeconds: Math.min(30, Math.max(1, Math.floor(timeout))),
    failurePolicy: w.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    sideEffects: typeof w.sideEffects === 'string' ? w.sideEffects : 'Unknown',
    admissionReviewVersions: strings(w.admissionReviewVersions),
    reinvocationPolicy: w.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
    conditions: compileConditions(conditions),
    matchesRules: (a) => rules.some((r) => ruleMatches(r, a)),
    matchesObject: (a) =>
      objectSelector(a.object?.metadata.labels) || objectSelector(a.oldObject?.metadata.labels),
    matchesNamespace: (a, labelsOf) => {
      if (namespaceSelector.everything) return true;
      // namespace/matcher.go MatchNamespaceSelector: a cluster-scoped object other than a
      // namespace is never skipped; a namespace is matched by its own labels.
      if (a.group === '' && a.resource === 'namespaces' && a.subresource === '') {
        return namespaceSelector((a.object ?? a.oldObject)?.metadata.labels);
      }
      if (!a.namespaced || a.namespace === '') return true;
      return namespaceSelector(labelsOf(a.namespace));
    },
  };
}

/**
 * Never sent to a webhook, so that a broken webhook cannot lock out its own repair (rules.go
 * IsExemptAdmissionConfigurationResource; the admissionregistration v1 API docs of `rules`).
 */
const EXEMPT = new Set(['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']);

/** rules.go Matcher.Matches: operation, group, version, resource/subresource and scope. */
function ruleMatches(rule: Rule, a: RequestAttributes): boolean {
  if (a.group === 'admissionregistration.k8s.io' && EXEMPT.has(a.resource)) return false;
  const has = (list: string[] | undefined, value: string) =>
    (list ?? []).some((v) => v === '*' || v === value);
  if (!has(rule.operations, a.operation)) return false;
  if (!has(rule.apiGroups, a.group)) return false;
  if (!has(rule.apiVersions, a.version)) return false;
  const wanted = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
  const resourceMatches = (rule.resources ?? []).some((r) => {
    if (r === '*/*' || r === wanted) return true;
    const [res, sub] = r.split('/', 2);
    if (sub === undefined) return res === '*' && a.subresource === '';
    if (res === '*' && sub === a.subresource) return true;
    return res === a.resource && sub === '*' && a.subresource !== '';
  });
  if (!resourceMatches) return false;
  // rules.go scope(): namespaces themselves are cluster-scoped, whatever their request's namespace.
  const clusterScoped = !a.namespaced || (a.group === '' && a.resource === 'namespaces');
  switch (rule.scope ?? '*') {
    case 'Cluster':
      return clusterScoped;
    case 'Namespaced':
      return !clusterScoped;
    default:
      return true;
  }
}

/** A metav1.LabelSelector as a predicate; `everything` when it selects every set of labels. */
function selector(raw: unknown): ((labels: Labels) => boolean) & { everything: boolean } {
  const s = (isRecord(raw) ? raw : {}) as LabelSelector;
  const labels = isRecord(s.matchLabels) ? Object.entries(s.matchLabels) : [];
  const expressions = Array.isArray(s.matchExpressions) ? s.matchExpressions.filter(isRecord) : [];
  const test = (given: Labels): boolean => {
    const l = given ?? {};
    for (const [k, v] of labels) if (l[k] !== v) return false;
    for (const e of expressions) {
      const present = Object.hasOwn(l, e.key);
      const values = strings(e.values);
      switch (e.operator) {
        case 'In':
          if (!present || !values.includes(l[e.key] as string)) return false;
          break;
        case 'NotIn':
          if (present && values.includes(l[e.key] as string)) return false;
          break;
        case 'Exists':
          if (!present) return false;
          break;
        case 'DoesNotExist':
          if (present) return false;
          break;
        default:
          return false;
      }
    }
    return true;
  };
  return Object.assign(test, { everything: labels.length === 0 && expressions.length === 0 });
}
