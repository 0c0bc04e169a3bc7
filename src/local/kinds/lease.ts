// Lease (coordination.k8s.io/v1): what leader election writes; nothing beyond the generic rules.
import { STRUCT } from '../patch/field-types.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const leaseStrategy: KindStrategy = {
  type: builtinType('coordination.k8s.io', 'v1', 'Lease', 'leases'),
  fieldTypes: { spec: STRUCT },
};
