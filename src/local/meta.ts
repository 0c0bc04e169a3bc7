// Object metadata rules of the API server: name formats, generateName, uids, timestamps,
// and which changes count as a new generation.
import { randomBytes, randomUUID } from 'node:crypto';
import { labelKeyErrors, labelValueErrors } from './selectors.js';
import { ApiError, type KubeObject, type StatusCause } from './types.js';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function nameProblems(name: string, rule: 'subdomain' | 'label'): string[] {
  if (rule === 'label') {
    const out: string[] = [];
    if (name.length > 63) out.push('must be no more than 63 characters');
    if (!LABEL.test(name)) {
      out.push(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      );
    }
    return out;
  }
  const out: string[] = [];
  if (name.length > 253) out.push('must be no more than 253 characters');
  if (!SUBDOMAIN.test(name)) {
    out.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  }
  return out;
}

/** Validates the client-settable metadata the server checks on every write. */
export function metadataCauses(object: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const invalid = (field: string, value: string, message: string) =>
    causes.push({
      reason: 'FieldValueInvalid',
      field,
      message: `Invalid value: ${JSON.stringify(value)}: ${message}`,
    });
  for (const [key, value] of Object.entries(object.metadata.labels ?? {})) {
    for (const p of labelKeyErrors(key)) invalid('metadata.labels', key, p);
    if (typeof value !== 'string') invalid('metadata.labels', String(value), 'must be a string');
    else for (const p of labelValueErrors(value)) invalid('metadata.labels', value, p);
  }
  for (const key of Object.keys(object.metadata.annotations ?? {})) {
    for (const p of labelKeyErrors(key)) invalid('metadata.annotations', key, p);
  }
  for (const [key, value] of Object.entries(object.metadata.annotations ?? {})) {
    if (typeof value !== 'string')
      invalid(`metadata.annotations[${key}]`, String(value), 'must be a string');
  }
  return causes;
}

const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** generateName's random suffix, drawn as the real server does (5 of 27 safe characters). */
export function generateNameSuffix(): string {
  const bytes = randomBytes(5);
  let out = '';
  for (const b of bytes) out += SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length];
  return out;
}

export const newUid = (): string => randomUUID();

let stampedSecond = Number.NaN;
let stamp = '';

/** RFC 3339 with second precision, as metav1.Time serializes. */
export function timestamp(now: Date = new Date()): string {
  // Every write stamps a time, and within one second it is the same text: format it once.
  const second = Math.floor(now.getTime() / 1000);
  if (second !== stampedSecond) {
    stamp = `${now.toISOString().slice(0, 19)}Z`;
    stampedSecond = second;
  }
  return stamp;
}

/** Everything but metadata and status: a change here bumps metadata.generation. */
export function specPart(object: KubeObject): string {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = object;
  return JSON.stringify(rest);
}

/** 422 Invalid, worded as the real server words it. */
export function invalid(
  type: { kind: string; group: string },
  name: string,
  causes: StatusCause[],
): ApiError {
  const parts = [...new Set(causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)))];
  // The real server brackets a list of two or more causes.
  const detail = parts.length > 1 ? `[${parts.join(', ')}]` : (parts[0] ?? '');
  const what = type.group === '' ? type.kind : `${type.kind}.${type.group}`;
  return new ApiError(422, 'Invalid', `${what} "${name}" is invalid: ${detail}`, {
    name,
    group: type.group,
    kind: type.kind,
    causes,
  });
}
