// The size limit of the data that ConfigMaps and Secrets carry, which both kinds' validation
// applies beyond ObjectMeta's rules (core.MaxSecretSize, shared by the two in kube-apiserver).
import { invalid, tooLong } from '../meta.js';
import type { ResourceType } from '../resource-type.js';
import type { KubeObject } from '../types.js';

/** core.MaxSecretSize: the data of one ConfigMap or Secret (values, decoded). */
export const MAX_DATA_BYTES = 1024 * 1024;

/** The 422 for data over the limit, naming `field` ('' names no field: the whole object). */
export function dataTooLong(type: ResourceType, object: KubeObject, field: string) {
  return invalid(type, object.metadata.name ?? '', [tooLong(field, MAX_DATA_BYTES)]);
}

/** The bytes of a map's values: UTF-8 text, or what base64 text decodes to. */
export function bytesOf(map: unknown, encoding: 'utf8' | 'base64'): number {
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
