// ServiceAccount (core/v1): nothing beyond the generic rules but its merge keys.
import { ATOMIC, byKey } from '../patch/field-types.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const serviceAccountStrategy: KindStrategy = {
  type: builtinType('', 'v1', 'ServiceAccount', 'serviceaccounts', { shortNames: ['sa'] }),
  fieldTypes: {
    // patchStrategy:"merge" patchMergeKey:"name"
    secrets: byKey('name'),
    // No patch strategy on ServiceAccount (only PodSpec's imagePullSecrets merges by name).
    imagePullSecrets: ATOMIC,
  },
};
