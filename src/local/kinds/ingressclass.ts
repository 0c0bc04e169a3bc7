// IngressClass (networking.k8s.io/v1, cluster-scoped): stored with its official schema.
import { STRUCT } from '../patch/field-types.js';
import { withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = { spec: STRUCT };

export const ingressClassStrategy: KindStrategy = {
  countsGeneration: true,
  type: withSchema(
    builtinType('networking.k8s.io', 'v1', 'IngressClass', 'ingressclasses', { namespaced: false }),
    fieldTypes,
  ),
  fieldTypes,
};
