// Endpoints (core/v1): stored with its official schema; ports default to TCP
// (SetDefaults_EndpointPort). No endpoints controller fills them from pods.
import { ATOMIC } from '../patch/field-types.js';
import { itemsOf, orDefault, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = { subsets: ATOMIC };

export const endpointsStrategy: KindStrategy = {
  type: withSchema(
    builtinType('', 'v1', 'Endpoints', 'endpoints', { shortNames: ['ep'] }),
    fieldTypes,
  ),
  fieldTypes,
  prepare(object) {
    for (const subset of itemsOf(object.subsets))
      for (const port of itemsOf(subset.ports)) orDefault(port, 'protocol', 'TCP');
  },
};
