// EndpointSlice (discovery.k8s.io/v1): stored with its official schema, ports' protocol
// defaulted to TCP; no controller mirrors services into slices here.
import { ATOMIC } from '../patch/field-types.js';
import { itemsOf, orDefault, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = { endpoints: ATOMIC, ports: ATOMIC };

export const endpointSliceStrategy: KindStrategy = {
  countsGeneration: true,
  type: withSchema(
    builtinType('discovery.k8s.io', 'v1', 'EndpointSlice', 'endpointslices'),
    fieldTypes,
  ),
  fieldTypes,
  prepare(object) {
    for (const port of itemsOf(object.ports)) orDefault(port, 'protocol', 'TCP');
  },
};
