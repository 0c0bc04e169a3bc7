// The ValidatingWebhookConfiguration that sends our kinds' writes to the admission server
// (admissionregistration.k8s.io/v1; kubernetes/website content/en/docs/reference/
// access-authn-authz/extensible-admission-controllers.md): CREATE and UPDATE of the four kinds
// the server reviews, sideEffects None (it writes nothing, so dry-run requests are sent too),
// AdmissionReview v1 only. `local`'s (one webhook, its URL) and deploy/'s (through the Service,
// a failure policy per operation; ADR 0021) are built here.
import { GROUP } from '../api/index.js';
import { defineResource, type Kube } from '../kube/index.js';

export const WEBHOOK_CONFIGURATION_NAME = 'nrn-operator';
/** The webhook's name: kube-apiserver names it in a refusal (`admission webhook "..." denied`). */
export const WEBHOOK_NAME = 'validate.platform.nrn.dev';

/** The resources reviewed (plural names, as the configuration's rules match them). */
export const REVIEWED_RESOURCES = ['scopes', 'services', 'servicespecifications', 'scopeclasses'];

const ValidatingWebhookConfigurations = defineResource({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
});

export interface WebhookClient {
  /** `url` (outside a cluster, `local`) or `service` (in one): where the API server calls. */
  readonly url?: string;
  readonly service?: { readonly namespace: string; readonly name: string; readonly port?: number };
  /** PEM of the CA that signed the serving certificate. */
  readonly caBundle: string;
}

/** One webhook of the configuration: the rules are the same wherever it runs. */
function webhook(
  name: string,
  clientConfig: Record<string, unknown>,
  operations: readonly ('CREATE' | 'UPDATE')[],
  failurePolicy: 'Fail' | 'Ignore',
  matchConditions?: readonly { name: string; expression: string }[],
): Record<string, unknown> {
  return {
    name,
    clientConfig,
    rules: [
      {
        apiGroups: [GROUP],
        apiVersions: ['*'],
        operations: [...operations],
        resources: REVIEWED_RESOURCES,
        scope: '*',
      },
    ],
    ...(matchConditions !== undefined ? { matchConditions: [...matchConditions] } : {}),
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    failurePolicy,
    matchPolicy: 'Equivalent',
    timeoutSeconds: 10,
  };
}

/** `local`'s configuration: one webhook, called at `client.url` (or a Service), with its CA. */
export function webhookConfiguration(
  client: WebhookClient,
  failurePolicy: 'Fail' | 'Ignore',
): Record<string, unknown> {
  const clientConfig: Record<string, unknown> = {
    caBundle: Buffer.from(client.caBundle).toString('base64'),
  };
  if (client.url !== undefined) clientConfig.url = client.url;
  if (client.service !== undefined) {
    clientConfig.service = { ...client.service, path: '/validate' };
  }
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: WEBHOOK_CONFIGURATION_NAME },
    webhooks: [webhook(WEBHOOK_NAME, clientConfig, ['CREATE', 'UPDATE'], failurePolicy)],
  };
}

/** The webhook that reviews updates on a cluster (failurePolicy Ignore). */
export const UPDATE_WEBHOOK_NAME = 'validate-updates.platform.nrn.dev';

export interface ClusterWebhookOptions {
  /** The operator's namespace: its Service's and its ServiceAccount's. */
  readonly namespace: string;
  readonly serviceName: string;
  /** The Service's port that leads to the webhook (kube's default is 443). */
  readonly servicePort: number;
  readonly serviceAccount: string;
}

/**
 * deploy/'s configuration (test/unit/deploy.test.ts keeps the YAML equal to it): called through
 * the operator's Service, its caBundle left out (cert-manager's cainjector or the operator's
 * self-managed mode writes it, and a later `kubectl apply` must not take it back). Two webhooks,
 * so that each operation has the failure policy that is safe for it:
 * - CREATE: Fail. A new object is only ever checked once before it exists; when the webhook is
 *   down, refusing to create keeps a duplicate slug or a secret in plain attributes out of
 *   etcd, and a create retried later loses nothing.
 * - UPDATE: Ignore, and never an update of an object being deleted. A finalizer removed, a
 *   label or the status written must never wait for a webhook that is down (the reconciler
 *   that would repair things may be the one stopped); what an update gets past it, the
 *   reconciler refuses again (DuplicateSlug, invalid attributes), and the immutable fields are
 *   the CRDs' CEL rules, which do not depend on it.
 * Both skip the operator's own ServiceAccount: its writes (finalizers, labels, the facade's
 * POST /scope) went through the same rules in-process, and a webhook of its own that was down
 * or wrong would otherwise hold the operator's work. Status writes are not sent at all: the
 * rules name `scopes`, not `scopes/status` (kube matches subresources only when named).
 * matchConditions are CEL run by kube-apiserver before the call (admissionregistration/v1,
 * GA in 1.30; kubernetes/website extensible-admission-controllers.md "Matching requests:
 * matchConditions", whose example excludes a user the same way).
 */
export function clusterWebhookConfiguration(
  options: ClusterWebhookOptions,
): Record<string, unknown> {
  const clientConfig = {
    service: {
      namespace: options.namespace,
      name: options.serviceName,
      path: '/validate',
      port: options.servicePort,
    },
  };
  const notTheOperator = {
    name: 'not-the-operator',
    expression: `request.userInfo.username != 'system:serviceaccount:${options.namespace}:${options.serviceAccount}'`,
  };
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: {
      name: WEBHOOK_CONFIGURATION_NAME,
      labels: {
        'app.kubernetes.io/name': 'nrn-operator',
        'app.kubernetes.io/part-of': 'nrn-operator',
      },
    },
    webhooks: [
      webhook(WEBHOOK_NAME, clientConfig, ['CREATE'], 'Fail', [notTheOperator]),
      webhook(UPDATE_WEBHOOK_NAME, clientConfig, ['UPDATE'], 'Ignore', [
        notTheOperator,
        { name: 'not-being-deleted', expression: '!has(object.metadata.deletionTimestamp)' },
      ]),
    ],
  };
}

/** Applies it (server-side, this field manager's): each start, as the port or CA may change. */
export async function registerWebhook(
  kube: Pick<Kube, 'resource'>,
  client: WebhookClient,
  failurePolicy: 'Fail' | 'Ignore',
  fieldManager: string,
): Promise<void> {
  const configuration = webhookConfiguration(client, failurePolicy);
  await kube
    .resource(ValidatingWebhookConfigurations)
    .apply(configuration as unknown as Parameters<ReturnType<Kube['resource']>['apply']>[0], {
      fieldManager,
      force: true,
    });
}
