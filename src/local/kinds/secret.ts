// Secret (core/v1): `type` defaults to Opaque, is a field selector and never changes;
// `stringData` is merged into `data` and never stored; data is base64 with config keys, frozen
// when immutable, what its type requires (TLS keys...), and held to core.MaxSecretSize.
import { MAP } from '../patch/field-types.js';
import { MessageSpec, map, objectMeta, one } from '../protobuf-messages.js';
import type { KubeObject, StatusCause } from '../types.js';
import { dropEmptyMaps, immutableCauses, keyCauses, refuseInvalid } from './data-keys.js';
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
  typedMaps: { data: 'bytes', stringData: 'string' },
  prepare(object, old) {
    object.type ??= 'Opaque';
    mergeStringData(object);
    dropEmptyMaps(object, ['data']);
    refuseInvalid(SECRET_TYPE, object, [
      ...keyCauses(object, ['data']),
      ...typeCauses(object, old),
      ...immutableCauses(object, old, ['data']),
    ]);
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

/** ValidateSecret's checks by type, and ValidateSecretUpdate's immutable type. */
function typeCauses(object: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  const data = (
    typeof object.data === 'object' && object.data !== null ? object.data : {}
  ) as Record<string, unknown>;
  const required = (key: string): StatusCause => ({
    reason: 'FieldValueRequired',
    message: 'Required value',
    field: `data[${key}]`,
  });
  switch (object.type) {
    case 'kubernetes.io/tls':
      for (const key of ['tls.crt', 'tls.key']) if (!(key in data)) causes.push(required(key));
      break;
    case 'kubernetes.io/ssh-auth':
      if (!('ssh-privatekey' in data)) causes.push(required('ssh-privatekey'));
      break;
    case 'kubernetes.io/basic-auth':
      // Either may be empty, but one must be there.
      if (!('username' in data) && !('password' in data)) {
        causes.push(required('username'), required('password'));
      }
      break;
  }
  if (old !== undefined && old.type !== object.type) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${JSON.stringify(object.type)}: field is immutable`,
      field: 'type',
    });
  }
  return causes;
}
