// Custom resources against their CRD's openAPIV3Schema, as apiextensions-apiserver treats
// them: pruning of unknown fields (an embedded resource's metadata decoded as ObjectMeta),
// defaulting, then validation with the server's messages. Also one schema node against one
// value, which is how the CRD's own defaults are checked (schema/defaults.ts).

import { RE2JS } from 're2js';
import { dns1035LabelErrors, unknownMetadataFields } from '../meta.js';
import { deepEqual, put } from '../patch/util.js';
import { ApiError } from '../types.js';
import { compileRules } from './cel-rules.js';
import { badValue, type FieldIssue, type StatusCauseReason } from './field-errors.js';
import { formatCheck } from './formats.js';
import { goFloat, goJSON, goQuote, isInt64 } from './goformat.js';

export type { FieldIssue, StatusCauseReason } from './field-errors.js';

export interface Decoded {
  /** The input pruned, nulls dropped and defaults set: a new value, the input is left as it was. */
  object: unknown;
  /**
   * Paths of the fields decoding dropped, as `unknown field "<path>"` names them: pruning's,
   * sorted, then the unknown fields of embedded resources' metadata, sorted.
   */
  unknownFields: string[];
}

export interface ValidationOutcome extends Decoded {
  issues: FieldIssue[];
}

export interface CompiledSchema {
  /** decode, then check: what a create or update of a custom resource goes through. */
  validate(object: unknown): ValidationOutcome;
  /** What the server's decoder does to a custom resource: pruning, then nulls and defaults. */
  decode(object: unknown): Decoded;
  /** The schema's checks on a decoded object, then embedded resources' and list types'. */
  check(object: unknown): FieldIssue[];
  /**
   * What a create (`old` undefined) or update of a decoded object goes through: `check`, then
   * the x-kubernetes-validations rules with `old` as the server reads it (schema/cel-rules.ts).
   */
  checkWrite(object: unknown, old: unknown): FieldIssue[];
}

type Json = Record<string, unknown>;

interface Node {
  types: string[];
  typeName: string;
  hasInteger: boolean;
  hasNumber: boolean;
  nullable: boolean;
  /** As written in the schema; '' when the server strips it as unsupported. */
  format: string;
  formatOk: ((s: string) => boolean) | undefined;
  enum: unknown[] | undefined;
  enumDetail: string;
  maxLength: number | undefined;
  minLength: number | undefined;
  pattern: RE2JS | undefined;
  patternSource: string;
  minimum: number | undefined;
  maximum: number | undefined;
  exclusiveMinimum: boolean;
  exclusiveMaximum: boolean;
  multipleOf: number | undefined;
  minItems: number | undefined;
  maxItems: number | undefined;
  minProperties: number | undefined;
  maxProperties: number | undefined;
  required: string[];
  properties: Map<string, Node> | undefined;
  /** undefined: none; null: `additionalProperties: true` or `false` (no schema); else the schema. */
  additional: Node | null | undefined;
  /** `additionalProperties: false`: pruning keeps other fields, validation refuses them. */
  closed: boolean;
  items: Node | undefined;
  allOf: Node[];
  anyOf: Node[];
  oneOf: Node[];
  not: Node | undefined;
  preserve: boolean;
  embedded: boolean;
  listType: string | undefined;
  mapKeys: string[];
  hasDefault: boolean;
  default: unknown;
  /** The properties that carry a default, so defaulting visits only those. */
  defaulted: Array<[string, Node]>;
}

const META = new Set(['apiVersion', 'kind', 'metadata']);

const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (o: Json, k: string) => Object.hasOwn(o, k);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function clone(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map(clone);
  const out: Json = {};
  for (const k of Object.keys(v)) put(out, k, clone((v as Json)[k]));
  return out;
}

// ---------------------------------------------------------------------------------------
// Compiling

interface CompileState {
  embedded: boolean;
  listTypes: boolean;
  /** When set, every schema object compiled, to its node (one compilation serves each node). */
  nodes?: Map<object, Node>;
}

/**
 * `pattern` as kube-openapi evaluates it (validate.Pattern: Go's regexp, i.e. RE2 syntax and
 * linear-time matching). RE2JS is a port of that engine: a client's pattern cannot backtrack
 * for seconds on the event loop, and \A, \z, (?i) mean what they mean to the server.
 */
function compilePattern(source: string): RE2JS | undefined {
  try {
    return RE2JS.compile(source);
  } catch {
    // The API server refuses such a CRD; a pattern we cannot read constrains nothing.
    return undefined;
  }
}

function compileNode(raw: Json, state: CompileState): Node {
  const sub = (v: unknown) => (isObject(v) ? compileNode(v, state) : undefined);
  const list = (v: unknown) =>
    Array.isArray(v) ? v.filter(isObject).map((s) => compileNode(s, state)) : [];
  const intOrString = raw['x-kubernetes-int-or-string'] === true;
  const types = intOrString
    ? ['integer', 'string']
    : typeof raw.type === 'string'
      ? [raw.type]
      : [];
  const rawFormat = typeof raw.format === 'string' ? raw.format : '';
  const formatOk = rawFormat === '' ? undefined : formatCheck(rawFormat);
  const enumValues = Array.isArray(raw.enum) ? raw.enum : undefined;
  const patternSource = typeof raw.pattern === 'string' ? raw.pattern : '';

  let properties: Map<string, Node> | undefined;
  if (isObject(raw.properties)) {
    properties = new Map();
    for (const [name, child] of Object.entries(raw.properties)) {
      if (isObject(child)) properties.set(name, compileNode(child, state));
    }
  }
  const additional =
    typeof raw.additionalProperties === 'boolean'
      ? null
      : isObject(raw.additionalProperties)
        ? sub(raw.additionalProperties)
        : undefined;
  const listType =
    typeof raw['x-kubernetes-list-type'] === 'string' ? raw['x-kubernetes-list-type'] : undefined;
  const embedded = raw['x-kubernetes-embedded-resource'] === true;
  if (embedded) state.embedded = true;
  if (listType === 'set' || listType === 'map') state.listTypes = true;

  const node: Node = {
    types,
    typeName: types.join(','),
    hasInteger: types.includes('integer'),
    hasNumber: types.includes('number'),
    nullable: raw.nullable === true,
    format: formatOk ? rawFormat : '',
    formatOk,
    enum: enumValues && enumValues.length > 0 ? enumValues : undefined,
    enumDetail: enumValues
      ? `supported values: ${enumValues.map((v) => goQuote(typeof v === 'string' ? v : goJSON(v))).join(', ')}`
      : '',
    maxLength: num(raw.maxLength),
    minLength: num(raw.minLength),
    pattern: patternSource === '' ? undefined : compilePattern(patternSource),
    patternSource,
    minimum: num(raw.minimum),
    maximum: num(raw.maximum),
    exclusiveMinimum: raw.exclusiveMinimum === true,
    exclusiveMaximum: raw.exclusiveMaximum === true,
    multipleOf: num(raw.multipleOf),
    minItems: num(raw.minItems),
    maxItems: num(raw.maxItems),
    minProperties: num(raw.minProperties),
    maxProperties: num(raw.maxProperties),
    required: Array.isArray(raw.required)
      ? raw.required.filter((r): r is string => typeof r === 'string')
      : [],
    properties,
    additional,
    closed: raw.additionalProperties === false,
    items: sub(raw.items),
    allOf: list(raw.allOf),
    anyOf: list(raw.anyOf),
    oneOf: list(raw.oneOf),
    not: sub(raw.not),
    preserve: raw['x-kubernetes-preserve-unknown-fields'] === true,
    embedded,
    listType,
    mapKeys: Array.isArray(raw['x-kubernetes-list-map-keys'])
      ? raw['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string')
      : [],
    hasDefault: false,
    default: undefined,
    defaulted: [],
  };
  if (has(raw, 'default') && raw.default !== null) {
    // The server requires defaults to be pruned already; pruning them here is the same.
    node.hasDefault = true;
    node.default = prune(raw.default, node, '', undefined);
  }
  if (properties) {
    for (const entry of properties) if (entry[1].hasDefault) node.defaulted.push(entry);
  }
  state.nodes?.set(raw, node);
  return node;
}

// ---------------------------------------------------------------------------------------
// Pruning (structural/pruning): a new value without the fields the schema does not know

/** A child's path, `a.b`, in pruning's wording and field.Path's alike. */
const child = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);

/** Where decoding records what it dropped: pruning's paths, and embedded metadata's. */
interface Sink {
  pruned: string[];
  meta: string[];
}

function prune(x: unknown, n: Node | undefined, path: string, sink: Sink | undefined): unknown {
  if (n?.preserve) return keepUnknown(x, n, path, sink);
  if (Array.isArray(x)) {
    const items = n?.items;
    return x.map((v, i) => prune(v, items, `${path}[${i}]`, sink));
  }
  if (isObject(x)) return pruneFields(x, n, n?.embedded ?? false, path, sink);
  return x;
}

/**
 * TypeMeta and ObjectMeta of a resource are the server's business, not the schema's: kept,
 * except that an embedded resource's metadata goes through ObjectMeta as the server's
 * coercion does (objectmeta.CoerceWithOptions), which drops and reports its unknown fields.
 * The root's metadata is the caller's to decode.
 */
function keepMeta(k: string, v: unknown, path: string, sink: Sink | undefined): unknown {
  const copy = clone(v);
  if (k === 'metadata' && path !== '' && sink !== undefined && isObject(copy))
    sink.meta.push(...unknownMetadataFields(copy, child(path, 'metadata'), true));
  return copy;
}

function pruneFields(
  x: Json,
  n: Node | undefined,
  embedded: boolean,
  path: string,
  sink: Sink | undefined,
): Json {
  const out: Json = {};
  for (const k of Object.keys(x)) {
    const v = x[k];
    if (embedded && META.has(k)) {
      put(out, k, keepMeta(k, v, path, sink));
      continue;
    }
    const prop = n?.properties?.get(k);
    if (prop) put(out, k, prune(v, prop, child(path, k), sink));
    else if (n && n.additional !== undefined)
      put(out, k, prune(v, n.additional ?? undefined, child(path, k), sink));
    else if (!META.has(k) || path !== '') sink?.pruned.push(child(path, k));
  }
  return out;
}

/** Under x-kubernetes-preserve-unknown-fields: unknown fields stay, known ones are pruned. */
function keepUnknown(
  x: unknown,
  n: Node | undefined,
  path: string,
  sink: Sink | undefined,
  embedded = n?.embedded ?? false,
): unknown {
  if (!n) return clone(x);
  if (Array.isArray(x)) return x.map((v, i) => keepUnknown(v, n.items, `${path}[${i}]`, sink));
  if (!isObject(x)) return x;
  const out: Json = {};
  for (const k of Object.keys(x)) {
    const v = x[k];
    const prop = n.properties?.get(k);
    if (embedded && META.has(k)) put(out, k, keepMeta(k, v, path, sink));
    else if (prop) put(out, k, prune(v, prop, child(path, k), sink));
    else if (n.additional !== undefined) {
      put(out, k, prune(v, n.additional ?? undefined, child(path, k), sink));
    } else put(out, k, clone(v));
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Nulls and defaults (structural/defaulting), in place on the pruned copy

/**
 * PruneNonNullableNullsWithoutDefaults, then Default: a null for a non-nullable field goes
 * away (or takes the default when there is one); an absent field takes its default, top
 * down, so a defaulted object then gets its own children's defaults.
 */
function settle(x: unknown, n: Node | undefined): void {
  if (!n) return;
  if (Array.isArray(x)) {
    const items = n.items;
    if (!items) return;
    for (let i = 0; i < x.length; i++) {
      if (x[i] === null && !items.nullable && items.hasDefault) x[i] = clone(items.default);
      settle(x[i], items);
    }
    return;
  }
  if (!isObject(x)) return;
  const props = n.properties;
  const additional = n.additional ?? undefined;
  for (const k of Object.keys(x)) {
    if (x[k] !== null) continue;
    const s = props?.get(k) ?? additional;
    if (s && !s.nullable && !s.hasDefault) delete x[k];
  }
  for (const [k, prop] of n.defaulted) {
    if (!has(x, k) || (x[k] === null && !prop.nullable)) put(x, k, clone(prop.default));
  }
  if (!props && !additional) return;
  for (const k of Object.keys(x)) {
    const prop = props?.get(k);
    if (prop) settle(x[k], prop);
    else if (additional) {
      if (x[k] === null && !additional.nullable && additional.hasDefault) {
        put(x, k, clone(additional.default));
      }
      settle(x[k], additional);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Validation (kube-openapi's SchemaValidator), messages as kubeOpenAPIResultToFieldErrors
// turns them into field errors. `path` is kube-openapi's: '' at the root, `a.b`, `a[0]`.

const fieldOf = (path: string) =>
  path === '' || path === '.' ? '<nil>' : path.startsWith('.') ? path.slice(1) : path;

const issue = (path: string, reason: StatusCauseReason, message: string): FieldIssue => ({
  field: fieldOf(path),
  reason,
  message,
});
const invalid = (path: string, value: unknown, detail: string) =>
  issue(path, 'FieldValueInvalid', `Invalid value: ${badValue(value)}: ${detail}`);
const typeInvalid = (path: string, typeName: string, value: string) =>
  issue(
    path,
    'FieldValueTypeInvalid',
    `Invalid value: ${goQuote(value)}: ${path} in body must be of type ${typeName}: ${goQuote(value)}`,
  );
const tooMany = (path: string, actual: number, max: number) =>
  issue(
    path,
    'FieldValueTooMany',
    `Too many: ${actual}: must have at most ${max} ${max === 1 ? 'item' : 'items'}`,
  );
// Errors kube-openapi builds with errors.New carry no field: the server reports them at <nil>.
const composite = (detail: string): FieldIssue => ({
  field: '<nil>',
  reason: 'FieldValueInvalid',
  message: `Invalid value: "": ${detail}`,
});

/** swag.IsFloat64AJSONInteger: whole within 2^53, with a relative tolerance of 1e-9. */
function isJSONInteger(f: number): boolean {
  const max = 2 ** 53 - 1;
  if (!Number.isFinite(f) || f < -max || f > max) return false;
  if (Number.isInteger(f)) return true;
  // Go's uint64() of a negative float is never close to it: only whole negatives pass.
  if (f < 0) return false;
  const g = Math.trunc(f);
  if (g === 0) return false;
  return Math.abs(f - g) / (f + g) < 1e-9;
}

function runeCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** kube-openapi's typeValidator; false when it reported an error. */
function checkType(n: Node, v: unknown, path: string, out: FieldIssue[]): boolean {
  if (v === null) {
    if (n.types.length > 0 && !n.nullable) {
      out.push(typeInvalid(path, n.typeName, 'null'));
      return false;
    }
    return true;
  }
  let schType: string;
  let format = '';
  const stringOrSlice = typeof v === 'string' || Array.isArray(v);
  if (typeof v === 'string') schType = 'string';
  else if (typeof v === 'boolean') schType = 'boolean';
  else if (typeof v === 'number') {
    const int = isInt64(v);
    schType = int ? 'integer' : 'number';
    format = int ? 'int64' : 'float64';
  } else schType = Array.isArray(v) ? 'array' : 'object';
  const isFloatInt = schType === 'number' && n.hasInteger && isJSONInteger(v as number);
  const isIntFloat = schType === 'integer' && n.hasNumber;
  const matches = n.types.includes(schType) || isFloatInt || isIntFloat;
  if (!stringOrSlice && n.format !== '' && !(matches || format === n.format)) {
    out.push(typeInvalid(path, n.format, format));
    return false;
  }
  // A formatted string type accepts strings (and, in kube-openapi, arrays) here.
  if (!(n.hasNumber || n.hasInteger) && n.format !== '' && stringOrSlice) return true;
  if (!matches) {
    out.push(typeInvalid(path, n.typeName, schType));
    return false;
  }
  return true;
}

function checkString(n: Node, v: string, path: string, out: FieldIssue[]): boolean {
  if (n.maxLength !== undefined && v.length > n.maxLength && runeCount(v) > n.maxLength) {
    const unit = n.maxLength === 1 ? 'byte' : 'bytes';
    out.push(
      issue(path, 'FieldValueTooLong', `Too long: may not be more than ${n.maxLength} ${unit}`),
    );
    return false;
  }
  if (n.minLength !== undefined && runeCount(v) < n.minLength) {
    out.push(invalid(path, v, `${path} in body should be at least ${n.minLength} chars long`));
    return false;
  }
  if (n.pattern && !n.pattern.test(v)) {
    out.push(invalid(path, v, `${path} in body should match '${n.patternSource}'`));
    return false;
  }
  return true;
}

function checkNumber(n: Node, v: number, path: string, out: FieldIssue[]): boolean {
  const before = out.length;
  // Whole data is an int64 to the server: bounds are truncated to int64 and print as such.
  const int = isInt64(v);
  const f = n.multipleOf;
  if (f !== undefined && f >= 0) {
    if (int && Math.trunc(f) !== 0) {
      const factor = Math.trunc(f);
      if (v % factor !== 0)
        out.push(invalid(path, v, `${path} in body should be a multiple of ${factor}`));
    } else {
      const mult = f < 1 ? (1 / f) * v : v / f;
      if (!isJSONInteger(mult))
        out.push(invalid(path, v, `${path} in body should be a multiple of ${goFloat(f)}`));
    }
  }
  if (n.minimum !== undefined) {
    const bound = int ? Math.trunc(n.minimum) : n.minimum;
    if (n.exclusiveMinimum ? v <= bound : v < bound) {
      const shown = int ? String(bound) : goFloat(bound);
      const rel = n.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
      out.push(invalid(path, v, `${path} in body should be ${rel} ${shown}`));
    }
  }
  if (n.maximum !== undefined) {
    const bound = int ? Math.trunc(n.maximum) : n.maximum;
    if (n.exclusiveMaximum ? v >= bound : v > bound) {
      const shown = int ? String(bound) : goFloat(bound);
      const rel = n.exclusiveMaximum ? 'less than' : 'less than or equal to';
      out.push(invalid(path, v, `${path} in body should be ${rel} ${shown}`));
    }
  }
  return out.length === before;
}

interface Attempt {
  issues: FieldIssue[];
  count: number;
}

function attempt(n: Node, v: unknown, path: string): Attempt {
  const issues: FieldIssue[] = [];
  return { count: check(n, v, path, issues), issues };
}

/** allOf, anyOf, oneOf and not: value validations only, at the node's own path. */
function checkJunctors(n: Node, v: unknown, path: string, out: FieldIssue[]): boolean {
  const before = out.length;
  const quoted = goQuote(path);
  if (n.anyOf.length > 0) {
    let best: Attempt | undefined;
    let ok = false;
    for (const branch of n.anyOf) {
      const a = attempt(branch, v, path);
      if (a.issues.length === 0) {
        ok = true;
        best = undefined;
        break;
      }
      // kube-openapi reports the branch that got furthest (its MatchCount); ours counts passes.
      if (!best || a.count > best.count) best = a;
    }
    if (!ok) out.push(composite(`${quoted} must validate at least one schema (anyOf)`));
    if (best) out.push(...best.issues);
  }
  if (n.oneOf.length > 0) {
    let best: Attempt | undefined;
    let valid = 0;
    for (const branch of n.oneOf) {
      const a = attempt(branch, v, path);
      if (a.issues.length === 0) {
        valid++;
        best = undefined;
      } else if (valid === 0 && (!best || a.count > best.count)) best = a;
    }
    if (valid !== 1) {
      const found = valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`;
      out.push(composite(`${quoted} must validate one and only one schema (oneOf). ${found}`));
      if (best) out.push(...best.issues);
    }
  }
  if (n.allOf.length > 0) {
    let valid = 0;
    for (const branch of n.allOf) {
      const a = attempt(branch, v, path);
      if (a.issues.length === 0) valid++;
      out.push(...a.issues);
    }
    if (valid !== n.allOf.length) {
      const none = valid === 0 ? '. None validated' : '';
      out.push(composite(`${quoted} must validate all the schemas (allOf)${none}`));
    }
  }
  if (n.not && attempt(n.not, v, path).issues.length === 0) {
    out.push(composite(`${quoted} must not validate the schema (not)`));
  }
  return out.length === before;
}

function checkEnum(n: Node, v: unknown, path: string, out: FieldIssue[]): boolean {
  const values = n.enum;
  // A null matches no enum, not even one listing null: kube-openapi compares typed values.
  if (!values || (v !== null && values.some((e) => e !== null && deepEqual(v, e)))) return true;
  out.push(
    issue(path, 'FieldValueNotSupported', `Unsupported value: ${badValue(v)}: ${n.enumDetail}`),
  );
  return false;
}

function checkObject(n: Node, v: Json, path: string, out: FieldIssue[]): number {
  let count = 0;
  if (n.minProperties !== undefined || n.maxProperties !== undefined) {
    const size = Object.keys(v).length;
    if (n.minProperties !== undefined && size < n.minProperties) {
      out.push(
        invalid(path, size, `${path} in body should have at least ${n.minProperties} properties`),
      );
      return 0;
    }
    if (n.maxProperties !== undefined && size > n.maxProperties) {
      out.push(tooMany(path, size, n.maxProperties));
      return 0;
    }
  }
  const props = n.properties;
  if (n.closed) {
    // kube-openapi's PropertyNotAllowed, reported at the object with the key as the value.
    for (const k of Object.keys(v).sort()) {
      if (!props?.has(k) && k !== '$schema' && k !== 'id')
        out.push(invalid(path, k, `${path}.${k} in body is a forbidden property`));
    }
  } else if (n.additional) {
    for (const k of Object.keys(v)) {
      if (!props?.has(k)) count += check(n.additional, v[k], `${path}.${k}`, out);
    }
  }
  if (props) {
    for (const [name, child] of props) {
      if (has(v, name)) count += check(child, v[name], path === '' ? name : `${path}.${name}`, out);
    }
  }
  for (const k of n.required) {
    if (!has(v, k)) out.push(issue(`${path}.${k}`, 'FieldValueRequired', 'Required value'));
  }
  return count;
}

/**
 * One value against one schema node, in kube-openapi's order (type, junctors, string,
 * format, number, array, enum, object). Returns how many checks passed, which stands in
 * for kube-openapi's MatchCount when an anyOf/oneOf picks the failure to report.
 */
function check(n: Node, v: unknown, path: string, out: FieldIssue[]): number {
  let count = 0;
  if (v === null) {
    if (checkType(n, v, path, out)) count++;
    if (checkEnum(n, v, path, out)) count++;
    return count;
  }
  if ((n.types.length > 0 || n.format !== '') && checkType(n, v, path, out)) count++;
  if (
    (n.allOf.length > 0 || n.anyOf.length > 0 || n.oneOf.length > 0 || n.not) &&
    checkJunctors(n, v, path, out)
  )
    count++;
  if (typeof v === 'string') {
    if (checkString(n, v, path, out)) count++;
    if (n.formatOk) {
      if (n.formatOk(v)) count++;
      else out.push(typeInvalid(path, n.format, v));
    }
  } else if (typeof v === 'number') {
    if (checkNumber(n, v, path, out)) count++;
  } else if (Array.isArray(v)) {
    const items = n.items;
    if (items) for (let i = 0; i < v.length; i++) count += check(items, v[i], `${path}[${i}]`, out);
    if (n.minItems !== undefined && v.length < n.minItems) {
      out.push(invalid(path, v.length, `${path} in body should have at least ${n.minItems} items`));
    }
    if (n.maxItems !== undefined && v.length > n.maxItems)
      out.push(tooMany(path, v.length, n.maxItems));
  }
  if (n.enum && checkEnum(n, v, path, out)) count++;
  if (isObject(v)) count += checkObject(n, v, path, out);
  return count + 1;
}

// ---------------------------------------------------------------------------------------
// Checks the server runs after the schema: embedded resources (objectmeta.Validate) and
// x-kubernetes-list-type set/map (listtype.ValidateListSetsAndMaps). Paths here are
// field.Path's: `a.b`, `a[key]`, `a[0]`.

function checkEmbeddedResource(x: Json, path: string, out: FieldIssue[]): void {
  for (const k of ['apiVersion', 'kind']) {
    if (!has(x, k)) out.push(issue(child(path, k), 'FieldValueRequired', 'Required value'));
  }
  for (const k of Object.keys(x)) {
    const v = x[k];
    if (k === 'apiVersion') {
      const at = child(path, k);
      if (typeof v !== 'string') out.push(invalid(at, v, 'must be a string'));
      else if (v === '') out.push(invalid(at, v, 'must not be empty'));
      else if (v !== '/' && (v.match(/\//g)?.length ?? 0) > 1) {
        out.push(invalid(at, v, `unexpected GroupVersion string: ${v}`));
      }
    } else if (k === 'kind') {
      const at = child(path, k);
      if (typeof v !== 'string') out.push(invalid(at, v, 'must be a string'));
      else if (v === '') out.push(invalid(at, v, 'must not be empty'));
      else {
        const errs = dns1035LabelErrors(v.toLowerCase());
        if (errs.length > 0) {
          out.push(
            invalid(at, v, `may have mixed case, but should otherwise match: ${errs.join(',')}`),
          );
        }
      }
    }
  }
}

function checkEmbedded(n: Node | undefined, x: unknown, path: string, out: FieldIssue[]): void {
  if (!n) return;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) checkEmbedded(n.items, x[i], `${path}[${i}]`, out);
    return;
  }
  if (!isObject(x)) return;
  if (n.embedded) checkEmbeddedResource(x, path, out);
  for (const k of Object.keys(x)) {
    const prop = n.properties?.get(k);
    if (prop) checkEmbedded(prop, x[k], child(path, k), out);
    else if (n.additional) checkEmbedded(n.additional, x[k], `${path}[${k}]`, out);
  }
}

const UNSPECIFIED = Symbol('unspecified');

/** The indices of the second appearance of each repeated value (listtype.validateListSet). */
function repeated(values: unknown[]): number[] {
  const seen = new Map<unknown, number>();
  const out: number[] = [];
  for (const [i, v] of values.entries()) {
    const key =
      typeof v === 'object' && v !== null
        ? `json:${goJSON(v)}`
        : typeof v === 'string'
          ? `string:${v}`
          : v;
    const times = seen.get(key) ?? 0;
    seen.set(key, times + 1);
    if (times === 1) out.push(i);
  }
  return out;
}

function checkListMap(n: Node, x: unknown[], path: string, out: FieldIssue[]): void {
  for (const [i, item] of x.entries()) {
    if (item !== null && !isObject(item)) {
      out.push(invalid(`${path}[${i}]`, item, 'must be an object for an array of list-type map'));
      return;
    }
  }
  if (x.length <= 1) return;
  if (n.mapKeys.length === 1) {
    const keyField = n.mapKeys[0] ?? '';
    const keys = x.map((item) =>
      isObject(item) && has(item, keyField) ? item[keyField] : UNSPECIFIED,
    );
    for (const i of repeated(keys)) {
      const key = keys[i];
      out.push(
        issue(
          `${path}[${i}]`,
          'FieldValueDuplicate',
          `Duplicate value: ${goJSON(key === UNSPECIFIED ? {} : { [keyField]: key })}`,
        ),
      );
    }
    return;
  }
  const keys = x.map((item) => {
    const key: Json = {};
    if (isObject(item)) for (const f of n.mapKeys) if (has(item, f)) put(key, f, item[f]);
    return key;
  });
  for (const i of repeated(keys)) {
    out.push(issue(`${path}[${i}]`, 'FieldValueDuplicate', `Duplicate value: ${goJSON(keys[i])}`));
  }
}

function checkListTypes(n: Node | undefined, x: unknown, path: string, out: FieldIssue[]): void {
  if (!n) return;
  if (Array.isArray(x)) {
    if (n.listType === 'set') {
      for (const i of repeated(x))
        out.push(
          issue(`${path}[${i}]`, 'FieldValueDuplicate', `Duplicate value: ${badValue(x[i])}`),
        );
    } else if (n.listType === 'map') checkListMap(n, x, path, out);
    const items = n.items;
    if (items) for (let i = 0; i < x.length; i++) checkListTypes(items, x[i], `${path}[${i}]`, out);
    return;
  }
  if (!isObject(x)) return;
  if (n.additional)
    for (const k of Object.keys(x)) checkListTypes(n.additional, x[k], `${path}[${k}]`, out);
  if (n.properties) {
    for (const k of Object.keys(x)) {
      const prop = n.properties.get(k);
      if (prop) checkListTypes(prop, x[k], child(path, k), out);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Public API

/** Compiles a CRD version's openAPIV3Schema once; its methods are then cheap per request. */
export function compileSchema(openAPIV3Schema: Record<string, unknown>): CompiledSchema {
  const state: CompileState = { embedded: false, listTypes: false };
  const root = compileNode(openAPIV3Schema, state);
  const decode = (object: unknown): Decoded => {
    const sink: Sink = { pruned: [], meta: [] };
    // The root is a resource: its apiVersion, kind and metadata are never pruned.
    let pruned: unknown;
    if (!isObject(object)) pruned = prune(object, root, '', sink);
    else if (root.preserve) pruned = keepUnknown(object, root, '', sink, true);
    else pruned = pruneFields(object, root, true, '', sink);
    settle(pruned, root);
    return { object: pruned, unknownFields: [...sink.pruned.sort(), ...sink.meta.sort()] };
  };
  const checkDecoded = (object: unknown): FieldIssue[] => {
    const issues: FieldIssue[] = [];
    check(root, object, '', issues);
    if (state.embedded) checkEmbedded(root, object, '', issues);
    if (state.listTypes) checkListTypes(root, object, '', issues);
    return issues;
  };
  const rules = compileRules(openAPIV3Schema);
  return {
    decode,
    check: checkDecoded,
    checkWrite(object, old) {
      const issues = checkDecoded(object);
      if (rules === undefined) return issues;
      // customResourceStrategy.Validate (pkg/registry/customresource/strategy.go): the rules run
      // only when no error says the object is of the wrong shape (hasBlockingErr).
      if (
        issues.some(
          (i) => i.reason === 'FieldValueTypeInvalid' || i.reason === 'FieldValueNotSupported',
        )
      ) {
        issues.push({
          field: '<nil>',
          reason: 'FieldValueInvalid',
          message:
            'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
        });
        return issues;
      }
      const read = old === undefined ? undefined : decode(old).object;
      issues.push(...rules.validate(object, read).issues);
      return issues;
    },
    validate(object: unknown): ValidationOutcome {
      const decoded = decode(object);
      return { ...decoded, issues: checkDecoded(decoded.object) };
    },
  };
}

// ---------------------------------------------------------------------------------------
// For the CRD's own checks (schema/defaults.ts): one schema node against one value

/**
 * A whole openAPIV3Schema compiled once, so that each of its nodes can be held against a value
 * (a default) without compiling the node's subtree again: linear in the schema, where one
 * compilation per default would be quadratic in its depth.
 */
export interface SchemaNodes {
  /** What pruning against this node leaves of a value; `resource` spares TypeMeta and ObjectMeta. */
  prune(schema: object, value: unknown, resource: boolean): unknown;
  /**
   * A value against this node as the server checks a default: an embedded resource's TypeMeta
   * first (objectmeta.Validate), then kube-openapi's validation; fields under `at`.
   */
  issues(schema: object, value: unknown, at: string, resource: boolean): FieldIssue[];
}

export function compileSchemaNodes(root: Record<string, unknown>): SchemaNodes {
  const nodes = new Map<object, Node>();
  compileNode(root, { embedded: false, listTypes: false, nodes });
  const nodeOf = (schema: object): Node =>
    nodes.get(schema) ?? compileNode(schema as Json, { embedded: false, listTypes: false });
  return {
    prune(schema, value, resource) {
      const node = nodeOf(schema);
      if (resource && isObject(value)) {
        return node.preserve
          ? keepUnknown(value, node, '', undefined, true)
          : pruneFields(value, node, true, '', undefined);
      }
      return prune(value, node, '', undefined);
    },
    issues(schema, value, at, resource) {
      const node = nodeOf(schema);
      const under = (field: string) =>
        field === '' || field === '<nil>' ? at : `${at}.${field.replace(/^\./, '')}`;
      const meta: FieldIssue[] = [];
      checkEmbedded(resource ? { ...node, embedded: true } : node, value, '', meta);
      if (meta.length > 0) return meta.map((i) => ({ ...i, field: under(i.field) }));
      const issues: FieldIssue[] = [];
      check(node, value, '', issues);
      return issues.map((i) => ({ ...i, field: under(i.field) }));
    },
  };
}

/** `Status.message` of a 422 Invalid, as errors.NewInvalid words it. */
export function formatInvalid(
  kind: string,
  group: string,
  name: string,
  issues: readonly FieldIssue[],
): string {
  const head = `${group === '' ? kind : `${kind}.${group}`} ${goQuote(name)} is invalid`;
  const messages = [...new Set(issues.map((i) => `${i.field}: ${i.message}`))];
  if (messages.length === 0) return head;
  return `${head}: ${messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`}`;
}

/** The 422 Invalid `ApiError` the API server answers with for these issues. */
export function invalidError(
  kind: string,
  group: string,
  name: string,
  issues: readonly FieldIssue[],
): ApiError {
  return new ApiError(422, 'Invalid', formatInvalid(kind, group, name, issues), {
    name,
    group,
    kind,
    causes: issues.map((i) => ({ reason: i.reason, message: i.message, field: i.field })),
  });
}
