// What kube-apiserver's strategies for the built-in kinds served here add to every write of
// them, beyond ObjectMeta's rules: defaults clients rely on, and the size limits of the data
// that ConfigMaps and Secrets carry.
import { invalid, tooLong } from './meta.js';
import type { Objects } from './objects.js';
import type { Registry } from './registry.js';
import type { ResourceType } from './resource-type.js';
import type { KubeObject } from './types.js';

/** core.MaxSecretSize: the data of one ConfigMap or Secret (values, decoded). */
export const MAX_DATA_BYTES = 1024 * 1024;

export function installBuiltinRules(objects: Objects, registry: Registry): void {
  const secret = registry.lookup('', 'v1', 'secrets');
  if (secret !== undefined) {
    objects.onPrepare(secret, (object) => {
      object.type ??= 'Opaque';
      // ValidateSecret counts data; stringData is merged into data on a real server, so its
      // values count too until they are.
      const size = bytesOf(object.data, 'base64') + bytesOf(object.stringData, 'utf8');
      if (size > MAX_DATA_BYTES) throw refused(secret, object, 'data');
    });
  }
  const configMap = registry.lookup('', 'v1', 'configmaps');
  if (configMap !== undefined) {
    objects.onPrepare(configMap, (object) => {
      const size = bytesOf(object.data, 'utf8') + bytesOf(object.binaryData, 'base64');
      // ValidateConfigMap names no field: the whole object is too long.
      if (size > MAX_DATA_BYTES) throw refused(configMap, object, '');
    });
  }
}

function refused(type: ResourceType, object: KubeObject, field: string) {
  return invalid(type, object.metadata.name ?? '', [tooLong(field, MAX_DATA_BYTES)]);
}

/** The bytes of a map's values: UTF-8 text, or what base64 text decodes to. */
function bytesOf(map: unknown, encoding: 'utf8' | 'base64'): number {
  if (typeof map !== 'object' || map === null) return 0;
  let total = 0;
  for (const value of Object.values(map)) {
    if (typeof value !== 'string') continue;
    total += encoding === 'utf8' ? Buffer.byteLength(value) : base64Bytes(value);
  }
  return total;
}

function base64Bytes(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}
