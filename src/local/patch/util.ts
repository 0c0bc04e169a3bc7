// JSON value helpers shared by the patch engines: type tests, deep equality, cloning, and the
// Go-flavoured renderings the real API server puts in its error messages.
import { ApiError } from '../types.js';

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A deep copy of a JSON value. Hand-written because structuredClone costs several times more
 * on the objects every write copies; anything that is not plain JSON still goes through it.
 */
export const clone = <T>(v: T): T => copyJson(v) as T;

function copyJson(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = copyJson(v[i]);
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const source = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const value = copyJson(source[key]);
    if (key === '__proto__') {
      Object.defineProperty(out, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      out[key] = value;
    }
  }
  return out;
}

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

/**
 * JSON.stringify(a) === JSON.stringify(b), without building the strings: key order counts,
 * members whose value JSON leaves out (undefined, functions) are skipped, and anything but
 * plain objects, arrays and primitives is compared by its JSON.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const ta = jsonKind(a);
  const tb = jsonKind(b);
  if (ta === 'other' || tb === 'other') return JSON.stringify(a) === JSON.stringify(b);
  if (ta !== tb) return false;
  if (ta === 'array') {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) {
      // An array shows a member JSON leaves out as null.
      const u = omitted(x[i]) ? null : x[i];
      const v = omitted(y[i]) ? null : y[i];
      if (!sameJson(u, v)) return false;
    }
    return true;
  }
  if (ta === 'object') {
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    const kx = Object.keys(x);
    const ky = Object.keys(y);
    let i = 0;
    let j = 0;
    for (;;) {
      while (i < kx.length && omitted(x[kx[i] as string])) i++;
      while (j < ky.length && omitted(y[ky[j] as string])) j++;
      if (i === kx.length || j === ky.length) return i === kx.length && j === ky.length;
      const k = kx[i] as string;
      if (k !== ky[j] || !sameJson(x[k], y[k])) return false;
      i++;
      j++;
    }
  }
  // Primitives that are not ===: only numbers JSON cannot show (NaN, ±Infinity) print alike.
  return ta === 'null' && tb === 'null';
}

/** What JSON.stringify leaves out of an object (and shows as null in an array). */
const omitted = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** A value's kind as JSON prints it; `null` covers the numbers it prints as null. */
function jsonKind(v: unknown): 'null' | 'array' | 'object' | 'primitive' | 'other' {
  if (v === null || (typeof v === 'number' && !Number.isFinite(v))) return 'null';
  if (typeof v !== 'object') return omitted(v) || typeof v === 'bigint' ? 'other' : 'primitive';
  if (Array.isArray(v)) return 'array';
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null ? 'object' : 'other';
}

/** Own property read that never reaches the prototype chain (`__proto__`, `constructor`). */
export const own = (o: JsonObject, key: string): Json | undefined =>
  Object.hasOwn(o, key) ? o[key] : undefined;

/** Define an own property, even one named `__proto__`, without touching the prototype. */
export function put(o: Record<string, unknown>, key: string, value: unknown): void {
  // Only `__proto__` is an accessor on a plain object; any other key is a plain assignment,
  // several times cheaper than defineProperty.
  if (key === '__proto__') {
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    o[key] = value;
  }
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
