// NetworkPolicy (networking.k8s.io/v1): stored with its official schema, ports' protocol and
// policyTypes defaulted as SetDefaults_NetworkPolicy; no plugin enforces it here.
import { ATOMIC, STRUCT } from '../patch/field-types.js';
import { selectorFieldTypes } from './pod-spec.js';
import { itemsOf, orDefault, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = {
  spec: STRUCT,
  ...selectorFieldTypes('spec.podSelector'),
  'spec.ingress': ATOMIC,
  'spec.egress': ATOMIC,
  'spec.policyTypes': ATOMIC,
};

export const networkPolicyStrategy: KindStrategy = {
  countsGeneration: true,
  type: withSchema(
    builtinType('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies', {
      shortNames: ['netpol'],
    }),
    fieldTypes,
  ),
  fieldTypes,
  prepare(object) {
    const spec = struct(object, 'spec');
    struct(spec, 'podSelector');
    for (const rule of [...itemsOf(spec.ingress), ...itemsOf(spec.egress)])
      for (const port of itemsOf(rule.ports)) orDefault(port, 'protocol', 'TCP');
    if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0)
      spec.policyTypes =
        Array.isArray(spec.egress) && spec.egress.length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  },
};
