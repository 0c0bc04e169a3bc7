// The ValidatingWebhookConfiguration that sends our kinds' writes to the admission server
// (admissionregistration.k8s.io/v1; kubernetes/website content/en/docs/reference/
// access-authn-authz/extensible-admission-controllers.md): one webhook per kind group, CREATE
// and UPDATE of the four kinds the server reviews, sideEffects None (it writes nothing, so
// dry-run requests are sent too), AdmissionReview v1 only.
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

/** The configuration as applied: the same for `local` and deploy/, only clientConfig differs. */
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
    webhooks: [
      {
        name: WEBHOOK_NAME,
        clientConfig,
        rules: [
          {
            apiGroups: [GROUP],
            apiVersions: ['*'],
            operations: ['CREATE', 'UPDATE'],
            resources: REVIEWED_RESOURCES,
            scope: '*',
          },
        ],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        failurePolicy,
        matchPolicy: 'Equivalent',
        timeoutSeconds: 10,
      },
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
