// JSON value helpers shared by the patch engines: type tests, deep equality, cloning, and the
// Go-flavoured renderings the real API server puts in its error messages.
import { ApiError } from '../types.js';

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const clone = <T>(v: T): T => structuredClone(v);

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** Own property read that never reaches the prototype chain (`__proto__`, `constructor`). */
export const own = (o: JsonObject, key: string): Json | undefined =>
  Object.hasOwn(o, key) ? o[key] : undefined;

/** Define an own property, even one named `__proto__`, without touching the prototype. */
export function put(o: JsonObject, key: string, value: Json): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The kind name Go's encoding/json uses in "cannot unmarshal X into ..." messages. */
export function goJsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

/** fmt's %v of a decoded JSON value: map[a:1 b:x], [a b], <nil>. */
export function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `map[${keys.map((k) => `${k}:${goValue(v[k])}`).join(' ')}]`;
  }
  return String(v);
}

/** JSON with object keys sorted, as Go's encoding/json writes a map. */
export function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * A patch whose result is not an object: the server fails to decode it into the kind, and
 * answers 422 with the patched document in the message.
 */
export function notAnObject(result: unknown): ApiError {
  const doc = JSON.stringify(result) ?? 'null';
  const detail = `couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonKind(result)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`;
  return new ApiError(
    422,
    'Invalid',
    ` "" is invalid: patch: Invalid value: ${JSON.stringify(doc)}: ${detail}`,
    {
      causes: [
        {
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${JSON.stringify(doc)}: ${detail}`,
          field: 'patch',
        },
      ],
    },
  );
}
