// Lease (coordination.k8s.io/v1): what leader election writes; nothing beyond the generic rules.
import { STRUCT } from '../patch/field-types.js';
import { MessageSpec, objectMeta, one } from '../protobuf-messages.js';
import { LEASE_TABLE } from './printers.js';
import { builtinType, type KindStrategy } from './strategy.js';

/** Its generated.proto message: every LeaseSpec field is a pointer in Go, kept when zero. */
const leaseMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [
    2,
    one(
      'spec',
      new MessageSpec([
        [1, one('holderIdentity', 'string', true)],
        [2, one('leaseDurationSeconds', 'int32', true)],
        [3, one('acquireTime', 'microTime', true)],
        [4, one('renewTime', 'microTime', true)],
        [5, one('leaseTransitions', 'int32', true)],
        [6, one('strategy', 'string', true)],
        [7, one('preferredHolder', 'string', true)],
      ]),
    ),
  ],
]);

export const leaseStrategy: KindStrategy = {
  type: builtinType('coordination.k8s.io', 'v1', 'Lease', 'leases'),
  fieldTypes: { spec: STRUCT },
  protobuf: leaseMessage,
  table: LEASE_TABLE,
};
