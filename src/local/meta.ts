// Object metadata rules of the API server: the JSON types of ObjectMeta's fields, name
// formats, the limits and checks of apimachinery's ValidateObjectMeta, generateName, uids,
// timestamps, and which changes count as a new generation.
import { randomBytes, randomUUID } from 'node:crypto';
import { labelKeyErrors, labelValueErrors } from './selectors.js';
import { ApiError, type KubeObject, type StatusCause } from './types.js';

// --- ObjectMeta's Go types -------------------------------------------------------------------
// kube-apiserver decodes metadata into metav1.ObjectMeta before anything else looks at it, so a
// value of the wrong JSON type is a 400 from the decoder and never reaches storage, and a JSON
// null is the field's zero value. Decoding the same way here is what keeps a malformed
// ownerReference (`[null]`) from reaching the code that runs after a commit.

type GoType =
  | 'string'
  | 'int64'
  | 'bool'
  | 'time'
  | 'raw'
  | { map: 'string' }
  | { list: GoType }
  | { struct: string; fields: Readonly<Record<string, GoType>> };

const OWNER_REFERENCE: GoType = {
  struct: 'v1.OwnerReference',
  fields: {
    apiVersion: 'string',
    kind: 'string',
    name: 'string',
    uid: 'string',
    controller: 'bool',
    blockOwnerDeletion: 'bool',
  },
};

const MANAGED_FIELDS_ENTRY: GoType = {
  struct: 'v1.ManagedFieldsEntry',
  fields: {
    manager: 'string',
    operation: 'string',
    apiVersion: 'string',
    time: 'time',
    fieldsType: 'string',
    fieldsV1: 'raw',
    subresource: 'string',
  },
};

const OBJECT_META: Readonly<Record<string, GoType>> = {
  name: 'string',
  generateName: 'string',
  namespace: 'string',
  selfLink: 'string',
  uid: 'string',
  resourceVersion: 'string',
  generation: 'int64',
  creationTimestamp: 'time',
  deletionTimestamp: 'time',
  deletionGracePeriodSeconds: 'int64',
  labels: { map: 'string' },
  annotations: { map: 'string' },
  ownerReferences: { list: OWNER_REFERENCE },
  finalizers: { list: 'string' },
  managedFields: { list: MANAGED_FIELDS_ENTRY },
};

const INT64_LIMIT = 2 ** 63;

const goName = (t: GoType): string =>
  typeof t === 'string'
    ? t === 'time'
      ? 'v1.Time'
      : t
    : 'map' in t
      ? 'map[string]string'
      : 'list' in t
        ? `[]${goName(t.list)}`
        : t.struct;

const jsonName = (v: unknown): string =>
  Array.isArray(v)
    ? 'array'
    : v === null
      ? 'null'
      : typeof v === 'object'
        ? 'object'
        : typeof v === 'boolean'
          ? 'bool'
          : typeof v === 'number'
            ? `number ${v}`
            : typeof v;

/** The zero value Go leaves where JSON says null inside a list or map. */
const zeroOf = (t: GoType): unknown =>
  t === 'string'
    ? ''
    : t === 'bool'
      ? false
      : t === 'int64'
        ? 0
        : typeof t === 'object' && 'struct' in t
          ? {}
          : null;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks metadata's fields against their Go types, in place: a JSON null becomes the zero value
 * Go would leave (the field gone; an element or map value zeroed). A wrong type is a 400,
 * worded as Go's JSON decoder words it.
 */
export function decodeMetadata(meta: Record<string, unknown>): void {
  // Over the fields present (a handful), not every field ObjectMeta has: this runs per write.
  for (const field in meta) {
    // Own keys only on both sides: `constructor` is no field of ObjectMeta.
    const type = Object.hasOwn(OBJECT_META, field) ? OBJECT_META[field] : undefined;
    if (type === undefined || !Object.hasOwn(meta, field)) continue;
    const value = meta[field];
    if (value === null) delete meta[field];
    else meta[field] = decodeValue(value, type, field, undefined);
  }
}

/** Checks one value against its Go type; the path is only spelled out for an error. */
function decodeValue(value: unknown, type: GoType, at: string, key: string | undefined): unknown {
  switch (type) {
    case 'raw':
      return value;
    case 'string':
      if (typeof value !== 'string') throw wrongType(value, type, at, key);
      return value;
    case 'bool':
      if (typeof value !== 'boolean') throw wrongType(value, type, at, key);
      return value;
    case 'int64':
      if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) >= INT64_LIMIT)
        throw wrongType(value, type, at, key);
      return value;
    case 'time':
      if (typeof value !== 'string') throw wrongType(value, type, at, key);
      if (!RFC3339.test(value)) {
        throw new ApiError(
          400,
          'BadRequest',
          `metadata.${pathOf(at, key)}: parsing time ${JSON.stringify(value)} as "2006-01-02T15:04:05Z07:00": not RFC 3339`,
        );
      }
      return value;
  }
  const path = pathOf(at, key);
  if ('map' in type) {
    if (!isPlainObject(value)) throw wrongType(value, type, at, key);
    for (const k in value) {
      const v = value[k];
      if (v === null) value[k] = '';
      else if (typeof v !== 'string') throw wrongType(v, 'string', path, k);
    }
    return value;
  }
  if ('list' in type) {
    if (!Array.isArray(value)) throw wrongType(value, type, at, key);
    for (let i = 0; i < value.length; i++) {
      value[i] =
        value[i] === null ? zeroOf(type.list) : decodeValue(value[i], type.list, path, undefined);
    }
    return value;
  }
  if (!isPlainObject(value)) throw wrongType(value, type, at, key);
  for (const field in value) {
    const fieldType = Object.hasOwn(type.fields, field) ? type.fields[field] : undefined;
    if (fieldType === undefined || !Object.hasOwn(value, field)) continue;
    if (value[field] === null) delete value[field];
    else value[field] = decodeValue(value[field], fieldType, path, field);
  }
  return value;
}

const pathOf = (at: string, key: string | undefined) => (key === undefined ? at : `${at}.${key}`);

const MAX_STRICT_ERRORS = 100;

/**
 * The fields of `meta` that metav1.ObjectMeta does not have, at every depth its Go type goes
 * (an owner reference's, a managedFields entry's), as a strict decoder names them:
 * `<prefix>.foo`, `<prefix>.ownerReferences[0].bar`. With `strip`, they are also removed, as
 * decoding into ObjectMeta drops them whatever the field validation asked for. `sorted` walks
 * keys as they come out of Go's json.Marshal of a map (how a custom resource's metadata reaches
 * the strict decoder); otherwise in the order written (a built-in kind's body).
 */
export function unknownMetadataFields(
  meta: Record<string, unknown>,
  prefix: string,
  strip: boolean,
  sorted = true,
): string[] {
  const out: string[] = [];
  unknownIn(meta, { struct: 'v1.ObjectMeta', fields: OBJECT_META }, prefix, strip, sorted, out);
  return out;
}

function unknownIn(
  value: unknown,
  type: GoType,
  at: string,
  strip: boolean,
  sorted: boolean,
  out: string[],
): void {
  if (typeof type !== 'object' || 'map' in type) return;
  if ('list' in type) {
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries())
        unknownIn(item, type.list, `${at}[${i}]`, strip, sorted, out);
    }
    return;
  }
  if (!isPlainObject(value)) return;
  const keys = Object.keys(value);
  if (sorted) keys.sort();
  for (const key of keys) {
    const fieldType = Object.hasOwn(type.fields, key) ? type.fields[key] : undefined;
    if (fieldType === undefined) {
      // The strict decoder keeps no more than 100 errors (sigs.k8s.io/json saveStrictError).
      if (out.length < MAX_STRICT_ERRORS) out.push(`${at}.${key}`);
      if (strip) delete value[key];
    } else unknownIn(value[key], fieldType, `${at}.${key}`, strip, sorted, out);
  }
}

function wrongType(value: unknown, type: GoType, at: string, key: string | undefined): ApiError {
  return new ApiError(
    400,
    'BadRequest',
    `json: cannot unmarshal ${jsonName(value)} into Go struct field ObjectMeta.metadata.${pathOf(at, key)} of type ${goName(type)}`,
  );
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function nameProblems(name: string, rule: 'subdomain' | 'label' | 'path'): string[] {
  // apimachinery's path.IsValidPathSegmentName.
  if (rule === 'path') {
    if (name === '.' || name === '..') return [`may not be '${name}'`];
    return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
  }
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

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** validation.IsDNS1035Label: a lowercase label that starts with a letter (CRD plurals, versions). */
export function dns1035LabelErrors(value: string): string[] {
  const out: string[] = [];
  if (value.length > 63) out.push('must be no more than 63 characters');
  if (!DNS1035_LABEL.test(value)) {
    out.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return out;
}

/** The sum of annotation keys and values, as apimachinery's TotalAnnotationSizeLimitB. */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;

/**
 * kube-apiserver's ValidateObjectMeta checks of the client-settable metadata, every write.
 * `bannedOwners` holds the `apiVersion/kind` of the kinds no object may be owned by.
 */
export function metadataCauses(
  object: KubeObject,
  bannedOwners: ReadonlySet<string>,
): StatusCause[] {
  const causes: StatusCause[] = [];
  const meta = object.metadata;
  const invalid = (field: string, value: string, message: string) =>
    causes.push({
      reason: 'FieldValueInvalid',
      field,
      message: `Invalid value: ${JSON.stringify(value)}: ${message}`,
    });
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    for (const p of labelKeyErrors(key)) invalid('metadata.labels', key, p);
    for (const p of labelValueErrors(value)) invalid('metadata.labels', value, p);
  }
  let annotationBytes = 0;
  for (const [key, value] of Object.entries(meta.annotations ?? {})) {
    // The rule is a qualified name whatever the case, as ValidateAnnotations lowers it.
    for (const p of labelKeyErrors(key.toLowerCase())) invalid('metadata.annotations', key, p);
    annotationBytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (annotationBytes > MAX_ANNOTATIONS_BYTES) {
    causes.push(tooLong('metadata.annotations', MAX_ANNOTATIONS_BYTES));
  }
  let controller: string | undefined;
  for (const ref of meta.ownerReferences ?? []) {
    const field = 'metadata.ownerReferences';
    const [group, version, ...extra] = (ref.apiVersion ?? '').split('/');
    if ((version ?? group) === '' || extra.length > 0) {
      invalid(`${field}.apiVersion`, ref.apiVersion ?? '', 'version must not be empty');
    }
    if (!ref.kind) invalid(`${field}.kind`, ref.kind ?? '', 'must not be empty');
    if (!ref.name) invalid(`${field}.name`, ref.name ?? '', 'must not be empty');
    if (!ref.uid) invalid(`${field}.uid`, ref.uid ?? '', 'must not be empty');
    if (bannedOwners.has(`${ref.apiVersion}/${ref.kind}`)) {
      // schema.GroupVersionKind's String(): the core group is the empty one before the slash.
      const gv = ref.apiVersion?.includes('/') ? ref.apiVersion : `/${ref.apiVersion}`;
      invalid(
        field,
        `${ref.kind}/${ref.name}`,
        `${gv}, Kind=${ref.kind} is disallowed from being an owner`,
      );
    }
    if (ref.controller === true) {
      const name = `${ref.kind}/${ref.name}`;
      if (controller === undefined) controller = name;
      else {
        causes.push({
          reason: 'FieldValueInvalid',
          field,
          message: `Invalid value: "": Only one reference can have Controller set to true. Found "true" in references for ${controller} and ${name}`,
        });
      }
    }
  }
  const finalizers = meta.finalizers ?? [];
  for (const finalizer of finalizers) {
    for (const p of labelKeyErrors(finalizer)) invalid('metadata.finalizers', finalizer, p);
  }
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'metadata.finalizers',
      message: `Invalid value: ${JSON.stringify(finalizers)}: finalizer orphan and foregroundDeletion cannot be both set`,
    });
  }
  return causes;
}

/** field.TooLong: the value itself is left out of the message. */
export function tooLong(field: string, limit: number): StatusCause {
  return {
    reason: 'FieldValueTooLong',
    field,
    message: `Too long: must have at most ${limit} bytes`,
  };
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
