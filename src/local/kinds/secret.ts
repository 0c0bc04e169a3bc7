// Secret (core/v1): `type` defaults to Opaque and is a field selector; `stringData` is merged
// into `data` and never stored; its data is held to core.MaxSecretSize.
import { MAP } from '../patch/field-types.js';
import { MessageSpec, map, objectMeta, one } from '../protobuf-messages.js';
import type { KubeObject } from '../types.js';
import { bytesOf, dataTooLong, MAX_DATA_BYTES } from './data-size.js';
import { SECRET_TABLE } from './printers.js';
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
    mergeStringData(object);
    if (bytesOf(object.data, 'base64') > MAX_DATA_BYTES) {
      throw dataTooLong(SECRET_TYPE, object, 'data');
    }
  },
  protobuf: secretMessage,
  table: SECRET_TABLE,
};

/**
 * `stringData` is write-only: kube-apiserver's conversion to its internal type
 * (Convert_v1_Secret_To_core_Secret) writes each entry into `data`, over a key of the same
 * name, and the field is gone from what is stored and read back.
 */
function mergeStringData(object: KubeObject): void {
  const stringData = object.stringData;
  if (stringData === undefined || stringData === null) return;
  delete object.stringData;
  if (typeof stringData !== 'object' || Array.isArray(stringData)) return;
  const data: Record<string, unknown> =
    typeof object.data === 'object' && object.data !== null && !Array.isArray(object.data)
      ? { ...(object.data as Record<string, unknown>) }
      : {};
  for (const [key, value] of Object.entries(stringData as Record<string, unknown>)) {
    data[key] = Buffer.from(String(value), 'utf8').toString('base64');
  }
  object.data = data;
}
