// Ingress (networking.k8s.io/v1): stored with its official schema; no controller serves it, its
// status (load balancer addresses) stays as written.
import { ATOMIC, STRUCT } from '../patch/field-types.js';
import { withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = {
  spec: STRUCT,
  'spec.rules': ATOMIC,
  'spec.tls': ATOMIC,
  status: STRUCT,
  'status.loadBalancer.ingress': ATOMIC,
};

export const ingressStrategy: KindStrategy = {
  countsGeneration: true,
  type: withSchema(
    builtinType('networking.k8s.io', 'v1', 'Ingress', 'ingresses', {
      shortNames: ['ing'],
      hasStatus: true,
    }),
    fieldTypes,
  ),
  fieldTypes,
  prepare(object, old) {
    if (old === undefined) object.status = { loadBalancer: {} };
  },
};
