// What ConfigMaps and Secrets share beyond their size limit (data-size.ts): the keys of their
// data maps are config keys (validation.IsConfigMapKey), what `immutable: true` freezes
// (ValidateConfigMapUpdate, ValidateSecretUpdate), and how a Secret's bytes decode.
import { invalid } from '../meta.js';
import type { ResourceType } from '../resource-type.js';
import type { KubeObject, StatusCause } from '../types.js';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MESSAGE =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/** IsConfigMapKey's messages for `key`, none when it is a valid config key. */
export function configKeyProblems(key: string): string[] {
  const problems: string[] = [];
  if (key.length > 253) problems.push('must be no more than 253 characters');
  if (!CONFIG_KEY.test(key)) problems.push(CONFIG_KEY_MESSAGE);
  if (key === '.') problems.push("must not be '.'");
  else if (key === '..') problems.push("must not be '..'");
  else if (key.startsWith('..')) problems.push("must not start with '..'");
  return problems;
}

const quote = (value: string) => JSON.stringify(value);

/** One FieldValueInvalid per bad key of each named map (`data[bad key]: Invalid value: ...`). */
export function keyCauses(object: KubeObject, fields: readonly string[]): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const field of fields) {
    const map = object[field];
    if (typeof map !== 'object' || map === null || Array.isArray(map)) continue;
    for (const key of Object.keys(map)) {
      for (const problem of configKeyProblems(key)) {
        causes.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${quote(key)}: ${problem}`,
          field: `${field}[${key}]`,
        });
      }
    }
  }
  return causes;
}

/**
 * An update of an object that was `immutable: true`: it stays immutable and the named maps do
 * not change (kube compares them with reflect.DeepEqual, so an absent map and an empty one
 * differ).
 */
export function immutableCauses(
  object: KubeObject,
  old: KubeObject | undefined,
  fields: readonly string[],
): StatusCause[] {
  if (old?.immutable !== true) return [];
  const forbidden = (field: string): StatusCause => ({
    reason: 'FieldValueForbidden',
    message: 'Forbidden: field is immutable when `immutable` is set',
    field,
  });
  const causes: StatusCause[] = [];
  if (object.immutable !== true) causes.push(forbidden('immutable'));
  for (const field of fields) {
    if (JSON.stringify(canonical(object[field])) !== JSON.stringify(canonical(old[field]))) {
      causes.push(forbidden(field));
    }
  }
  return causes;
}

/** A map with its keys in order, so that two equal maps serialise alike. */
function canonical(map: unknown): unknown {
  if (typeof map !== 'object' || map === null || Array.isArray(map)) return map;
  return Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function refuseInvalid(type: ResourceType, object: KubeObject, causes: StatusCause[]): void {
  if (causes.length > 0) throw invalid(type, object.metadata.name ?? '', causes);
}

const BASE64_CHAR = /[A-Za-z0-9+/]/;

/**
 * Where Go's base64.StdEncoding stops on `text` (CorruptInputError: the byte offset), or
 * undefined when it decodes: padded quanta of four, `=` only at the end.
 */
export function base64ErrorAt(text: string): number | undefined {
  let i = 0;
  for (; i < text.length; i++) {
    if (!BASE64_CHAR.test(text[i] as string)) break;
  }
  if (i === text.length) return text.length % 4 === 0 ? undefined : i - (text.length % 4);
  // Padding: one or two `=` that end the text and complete its last quantum.
  const padding = text.length - i;
  if (text[i] === '=' && padding <= 2 && text.slice(i) === '='.repeat(padding)) {
    if (text.length % 4 === 0 && i % 4 >= 2) return undefined;
  }
  return i;
}

/** Data maps are `omitempty` in the Go types: an empty one is not written. */
export function dropEmptyMaps(object: KubeObject, fields: readonly string[]): void {
  for (const field of fields) {
    const map = object[field];
    if (map === null) delete object[field];
    else if (typeof map === 'object' && !Array.isArray(map) && Object.keys(map).length === 0) {
      delete object[field];
    }
  }
}
