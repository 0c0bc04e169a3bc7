// ValidatingWebhookConfiguration and MutatingWebhookConfiguration
// (admissionregistration.k8s.io/v1, cluster-scoped): stored with their official schemas and
// defaulted as pkg/apis/admissionregistration/v1/defaults.go; admission/ calls their webhooks.
import { ATOMIC, byKey } from '../patch/field-types.js';
import { isJson, itemsOf, orDefault, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = { webhooks: byKey('name'), 'webhooks[].rules': ATOMIC };

function defaultWebhooks(object: Record<string, unknown>, mutating: boolean): void {
  for (const w of itemsOf(object.webhooks)) {
    orDefault(w, 'failurePolicy', 'Fail');
    orDefault(w, 'matchPolicy', 'Equivalent');
    if (!isJson(w.namespaceSelector)) w.namespaceSelector = {};
    if (!isJson(w.objectSelector)) w.objectSelector = {};
    orDefault(w, 'timeoutSeconds', 10);
    if (mutating) orDefault(w, 'reinvocationPolicy', 'Never');
    for (const r of itemsOf(w.rules)) orDefault(r, 'scope', '*');
    const service = isJson(w.clientConfig) ? w.clientConfig.service : undefined;
    if (isJson(service)) orDefault(service, 'port', 443);
  }
}

export const validatingWebhookConfigurationStrategy: KindStrategy = {
  countsGeneration: true,
  type: withSchema(
    builtinType(
      'admissionregistration.k8s.io',
      'v1',
      'ValidatingWebhookConfiguration',
      'validatingwebhookconfigurations',
      { namespaced: false },
    ),
    fieldTypes,
  ),
  fieldTypes,
  prepare: (object) => defaultWebhooks(object, false),
};

export const mutatingWebhookConfigurationStrategy: KindStrategy = {
  countsGeneration: true,
  type: withSchema(
    builtinType(
      'admissionregistration.k8s.io',
      'v1',
      'MutatingWebhookConfiguration',
      'mutatingwebhookconfigurations',
      { namespaced: false },
    ),
    fieldTypes,
  ),
  fieldTypes,
  prepare: (object) => defaultWebhooks(object, true),
};
