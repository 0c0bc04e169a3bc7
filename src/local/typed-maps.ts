// The maps of a built-in kind's Go type whose values are typed (ConfigMap's data is a
// map[string]string, a Secret's data a map[string][]byte): a body whose values do not fit fails
// where kube-apiserver's decoding fails, before any validation, worded as each path decodes —
// encoding/json for create, update, JSON and merge patches (`json: cannot unmarshal number into
// Go struct field ConfigMap.data of type string`), the unstructured converter for a strategic
// merge patch (`cannot convert int64 to string`), structured-merge-diff for an applied
// configuration (`.data.a: expected string, got ...`), each wrapped as its handler wraps it.
import { base64ErrorAt } from './kinds/data-keys.js';
import type { PatchType } from './patch/index.js';
import { clone, goJsonKind, goValue, isObject, sortedJson } from './patch/util.js';
import type { ResourceType } from './resource-type.js';
import { goSharp } from './schema/goformat.js';
import { ApiError, badRequest, type KubeObject } from './types.js';

/** A map's value type: `string`, or `bytes` (base64 text in JSON). */
export type MapValue = 'string' | 'bytes';

/** The typed maps of a kind, by field, in its Go struct's order. */
export type TypedMaps = Readonly<Record<string, MapValue>>;

const GO_TYPE: Record<MapValue, string> = { string: 'string', bytes: '[]uint8' };

/**
 * What encoding/json says of the first value of `object`'s typed maps (in the body's order) it
 * cannot decode, or undefined. Values it decodes to something else are written as read back:
 * a null as "" and a bytes value sent as an array of numbers as base64.
 */
export function jsonDecodeFailure(
  kind: string,
  object: Record<string, unknown>,
  maps: TypedMaps,
): string | undefined {
  for (const field of Object.keys(object)) {
    const valueType = Object.hasOwn(maps, field) ? maps[field] : undefined;
    if (valueType === undefined) continue;
    const map = object[field];
    const into = (type: string, what = goJsonKind(map)) =>
      `json: cannot unmarshal ${what} into Go struct field ${kind}.${field} of type ${type}`;
    if (map === null || map === undefined) continue;
    if (!isObject(map)) return into(`map[string]${GO_TYPE[valueType]}`);
    for (const [key, value] of Object.entries(map)) {
      if (value === null) {
        map[key] = '';
      } else if (typeof value === 'string') {
        if (valueType === 'bytes') {
          const at = base64ErrorAt(value);
          if (at !== undefined) return `illegal base64 data at input byte ${at}`;
        }
      } else if (valueType === 'bytes' && Array.isArray(value)) {
        // A []byte decodes from a JSON array of its bytes too.
        for (const byte of value) {
          if (typeof byte !== 'number') return into('uint8', goJsonKind(byte));
          if (!Number.isInteger(byte) || byte < 0 || byte > 255) {
            return into('uint8', `number ${String(byte)}`);
          }
        }
        map[key] = Buffer.from(value as number[]).toString('base64');
      } else {
        return into(GO_TYPE[valueType], isObject(value) ? 'object' : goJsonKind(value));
      }
    }
  }
  return undefined;
}

/**
 * What runtime.DefaultUnstructuredConverter says converting a strategic-merge-patched object
 * into the kind's Go type (fields in the struct's order), or undefined.
 */
export function converterFailure(
  object: Record<string, unknown>,
  maps: TypedMaps,
): string | undefined {
  for (const [field, valueType] of Object.entries(maps)) {
    const map = object[field];
    if (map === null || map === undefined) continue;
    if (!isObject(map)) return `cannot restore map from ${goKind(map)}`;
    for (const [key, value] of Object.entries(map)) {
      if (value === null) {
        map[key] = '';
        continue;
      }
      if (valueType === 'string') {
        if (typeof value !== 'string') return `cannot convert ${goTypeName(value)} to string`;
        continue;
      }
      if (typeof value === 'string') {
        const at = base64ErrorAt(value);
        if (at !== undefined)
          return `error decoding from json: illegal base64 data at input byte ${at}`;
      } else if (!Array.isArray(value)) {
        return `cannot restore slice from ${goKind(value)}`;
      } else {
        const bad = value.find((b) => typeof b !== 'number' || !Number.isInteger(b));
        if (bad !== undefined) return `cannot convert ${goTypeName(bad)} to uint8`;
        // The converter narrows each number to a byte as Go's conversion does.
        map[key] = Buffer.from((value as number[]).map((b) => b & 0xff)).toString('base64');
      }
    }
  }
  return undefined;
}

/**
 * structured-merge-diff's typing errors of an applied configuration's typed maps (a map of
 * scalar strings in the kind's OpenAPI schema, bytes included), one per bad value.
 */
export function applyTypeErrors(object: Record<string, unknown>, maps: TypedMaps): string[] {
  const errors: string[] = [];
  for (const field of Object.keys(maps)) {
    const map = object[field];
    if (map === null || map === undefined) continue;
    if (!isObject(map)) {
      errors.push(`.${field}: expected map, got &{${goValue(map)}}`);
      continue;
    }
    for (const [key, value] of Object.entries(map)) {
      if (value === null || typeof value === 'string') continue;
      errors.push(
        `.${field}.${key}: expected string, got &value.valueUnstructured{Value:${goSharp(value, true)}}`,
      );
    }
  }
  return errors;
}

/** reflect.Kind's name of a decoded JSON value. */
function goKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (Array.isArray(v)) return 'slice';
  return 'map';
}

/** reflect.Type's name of a decoded JSON value (whole numbers are int64, as the patch decodes). */
function goTypeName(v: unknown): string {
  if (Array.isArray(v)) return '[]interface {}';
  if (isObject(v)) return 'map[string]interface {}';
  return goKind(v);
}

/**
 * A write whose typed values do not decode, as its handler answers: create.go and update.go wrap
 * the decoder's error (transformDecodeError, a 400); patch.go answers 422 on `patch` with the
 * patched document; apply fails converting the merged object (a 500 in kube-apiserver, a 400
 * here as for apply's other typing errors: ADR 0003).
 */
export function decodeFailure(
  type: ResourceType,
  object: KubeObject,
  verb: 'create' | 'update' | 'patch' | 'apply',
  detail: string,
): ApiError {
  switch (verb) {
    case 'patch':
      return patchInvalid(sortedJson(object), detail);
    case 'apply':
      return badRequest(
        `failed to convert new object (${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}; ${type.group}/${type.version}, Kind=${type.kind}) to proper version: error decoding from json: ${detail}`,
      );
    default:
      return badRequest(
        `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: ${detail}`,
      );
  }
}

/**
 * Checks a patched object's typed values before anything else reads it: a JSON or merge patch's
 * result is decoded by encoding/json (the 422 quotes the patched document), a strategic merge
 * patch's by the unstructured converter (the 422 quotes the patch as Go prints a map).
 */
export function refusePatchedValues(
  type: ResourceType,
  maps: TypedMaps | undefined,
  patchType: PatchType,
  patch: unknown,
  patched: unknown,
): void {
  if (maps === undefined || !isObject(patched)) return;
  // Probed on a copy: the message quotes the document as it was, before nulls become "".
  const probe = clone(patched);
  const strategic = patchType === 'strategic';
  const detail = strategic
    ? converterFailure(probe, maps)
    : jsonDecodeFailure(type.kind, probe, maps);
  if (detail !== undefined)
    throw patchInvalid(strategic ? goValue(patch) : sortedJson(patched), detail);
}

/** NewInvalid(schema.GroupKind{}, "", [Invalid("patch", value, detail)]): no kind, no name. */
function patchInvalid(value: string, detail: string): ApiError {
  const message = `Invalid value: ${JSON.stringify(value)}: ${detail}`;
  return new ApiError(422, 'Invalid', ` "" is invalid: patch: ${message}`, {
    causes: [{ reason: 'FieldValueInvalid', message, field: 'patch' }],
  });
}
