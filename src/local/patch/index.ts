// The PATCH verb's entry points: the patch type a Content-Type names, the three patch engines
// and server-side apply with the field ownership every write records.
import { ApiError } from '../types.js';
import type { ListTypeInfo } from './field-types.js';
import { applyJsonPatch } from './json-patch.js';
import { applyMergePatch } from './merge.js';
import { applyStrategicMergePatch } from './strategic.js';

export {
  type ApplyOptions,
  LAST_APPLIED_ANNOTATION,
  recordUpdate,
  serverSideApply,
  type UpdateOptions,
} from './apply.js';
export { type FieldType, fieldTypesFromSchema, type ListTypeInfo } from './field-types.js';
export { applyJsonPatch } from './json-patch.js';
export { fieldTypesOf } from './kind-schema.js';
export { applyMergePatch } from './merge.js';
export { applyStrategicMergePatch } from './strategic.js';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

const MEDIA_TYPES: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

/** What the server accepts, in its order; custom resources lack strategic merge patch. */
const BUILTIN_ACCEPTED = Object.keys(MEDIA_TYPES);
const CUSTOM_ACCEPTED = BUILTIN_ACCEPTED.filter((t) => MEDIA_TYPES[t] !== 'strategic');

export function unsupportedPatchType(accepted: readonly string[] = BUILTIN_ACCEPTED): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/**
 * The patch type of a PATCH request's Content-Type (parameters such as `; charset=utf-8`
 * ignored); 415 for anything else, application/apply-patch+cbor included (CBOR is off in
 * 1.32). `strategic: false` answers 415 to strategic merge patch, as for custom resources.
 */
export function patchTypeOf(
  contentType: string | undefined,
  options: { strategic?: boolean } = {},
): PatchType {
  const strategic = options.strategic ?? true;
  let mediaType = contentType ?? '';
  const semicolon = mediaType.indexOf(';');
  if (semicolon > 0) mediaType = mediaType.slice(0, semicolon);
  const type = Object.hasOwn(MEDIA_TYPES, mediaType) ? MEDIA_TYPES[mediaType] : undefined;
  if (type === undefined || (type === 'strategic' && !strategic)) {
    throw unsupportedPatchType(strategic ? BUILTIN_ACCEPTED : CUSTOM_ACCEPTED);
  }
  return type;
}

/** One entry for the three non-apply patch types; the live object is never modified. */
export function applyPatch(
  type: Exclude<PatchType, 'apply'>,
  live: object,
  patch: unknown,
  fieldTypes?: ListTypeInfo,
): object {
  switch (type) {
    case 'json':
      return applyJsonPatch(live, patch);
    case 'merge':
      return applyMergePatch(live, patch);
    case 'strategic':
      return applyStrategicMergePatch(live, patch, fieldTypes);
  }
}
