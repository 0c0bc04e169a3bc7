// ServiceAccount (core/v1): nothing beyond the generic rules but its merge keys.
import { ATOMIC, byKey } from '../patch/field-types.js';
import {
  list,
  localObjectReference,
  MessageSpec,
  objectMeta,
  objectReference,
  one,
} from '../protobuf-messages.js';
import { SERVICE_ACCOUNT_TABLE } from './printers.js';
import { builtinType, type KindStrategy } from './strategy.js';

/** Its generated.proto message, field by field. */
const serviceAccountMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, list('secrets', objectReference)],
  [3, list('imagePullSecrets', localObjectReference)],
  [4, one('automountServiceAccountToken', 'bool', true)],
]);

export const serviceAccountStrategy: KindStrategy = {
  type: builtinType('', 'v1', 'ServiceAccount', 'serviceaccounts', { shortNames: ['sa'] }),
  fieldTypes: {
    // patchStrategy:"merge" patchMergeKey:"name"
    secrets: byKey('name'),
    // No patch strategy on ServiceAccount (only PodSpec's imagePullSecrets merges by name).
    imagePullSecrets: ATOMIC,
  },
  protobuf: serviceAccountMessage,
  returnsDeletedObject: true,
  table: SERVICE_ACCOUNT_TABLE,
};
