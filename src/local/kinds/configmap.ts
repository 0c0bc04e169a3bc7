// ConfigMap (core/v1): config keys in data and binaryData, not both with one key, frozen when
// immutable, and held together to core.MaxSecretSize.
import { MAP } from '../patch/field-types.js';
import { MessageSpec, map, objectMeta, one } from '../protobuf-messages.js';
import type { KubeObject, StatusCause } from '../types.js';
import { dropEmptyMaps, immutableCauses, keyCauses, refuseInvalid } from './data-keys.js';
import { bytesOf, dataTooLong, MAX_DATA_BYTES } from './data-size.js';
import { CONFIG_MAP_TABLE } from './printers.js';
import { builtinType, type KindStrategy } from './strategy.js';

const CONFIG_MAP_TYPE = builtinType('', 'v1', 'ConfigMap', 'configmaps', { shortNames: ['cm'] });

/** Its generated.proto message, field by field. */
const configMapMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [4, one('immutable', 'bool', true)],
  [2, map('data', 'string')],
  [3, map('binaryData', 'bytes')],
]);

export const configMapStrategy: KindStrategy = {
  type: CONFIG_MAP_TYPE,
  fieldTypes: { data: MAP, binaryData: MAP },
  typedMaps: { data: 'string', binaryData: 'bytes' },
  prepare(object, old) {
    dropEmptyMaps(object, ['data', 'binaryData']);
    refuseInvalid(CONFIG_MAP_TYPE, object, [
      ...keyCauses(object, ['data', 'binaryData']),
      ...duplicateKeyCauses(object),
      ...immutableCauses(object, old, ['data', 'binaryData']),
    ]);
    const size = bytesOf(object.data, 'utf8') + bytesOf(object.binaryData, 'base64');
    // ValidateConfigMap names no field: the whole object is too long.
    if (size > MAX_DATA_BYTES) throw dataTooLong(CONFIG_MAP_TYPE, object, '');
  },
  protobuf: configMapMessage,
  table: CONFIG_MAP_TABLE,
};

/** ValidateConfigMap: a key in data may not also be in binaryData. */
function duplicateKeyCauses(object: KubeObject): StatusCause[] {
  const data = object.data;
  const binary = object.binaryData;
  if (typeof data !== 'object' || data === null) return [];
  if (typeof binary !== 'object' || binary === null) return [];
  return Object.keys(data)
    .filter((key) => Object.hasOwn(binary, key))
    .map((key) => ({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${JSON.stringify(key)}: duplicate of key present in binaryData`,
      field: `data[${key}]`,
    }));
}
