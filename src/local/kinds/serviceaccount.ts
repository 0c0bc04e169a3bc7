// ServiceAccount (core/v1): nothing beyond the generic rules but its merge keys.
import { builtinType, type KindStrategy } from './strategy.js';

export const serviceAccountStrategy: KindStrategy = {
  type: builtinType('', 'v1', 'ServiceAccount', 'serviceaccounts', { shortNames: ['sa'] }),
};
