// Secret (core/v1): `type` defaults to Opaque and is a field selector; its data is held to
// core.MaxSecretSize.
import { MAP } from '../patch/field-types.js';
import { MessageSpec, map, objectMeta, one } from '../protobuf-messages.js';
import { bytesOf, dataTooLong, MAX_DATA_BYTES } from './data-size.js';
import { builtinType, type KindStrategy } from './strategy.js';

const SECRET_TYPE = builtinType('', 'v1', 'Secret', 'secrets');

/** Its generated.proto message, field by field. */
const secretMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [5, one('immutable', 'bool', true)],
  [2, map('data', 'bytes')],
  [4, map('stringData', 'string')],
  [3, one('type', 'string')],
]);

export const secretStrategy: KindStrategy = {
  type: SECRET_TYPE,
  selectableFields: { type: (o) => o.type as string | undefined },
  fieldTypes: { data: MAP, stringData: MAP },
  prepare(object) {
    object.type ??= 'Opaque';
    // ValidateSecret counts data; stringData is merged into data on a real server, so its
    // values count too until they are.
    const size = bytesOf(object.data, 'base64') + bytesOf(object.stringData, 'utf8');
    if (size > MAX_DATA_BYTES) throw dataTooLong(SECRET_TYPE, object, 'data');
  },
  protobuf: secretMessage,
};
