// The type entry of a built-in kind that is only stored (no controller acts on it: Pod, Service,
// Deployment...): its official schema (builtin-schemas/), by which the object store prunes,
// type-checks and strict-decodes it as kube-apiserver's decoder does, annotated with the kind's
// field types so that the schema and the strategy say the same thing to the patch engines and
// to OpenAPI readers. Also the small helpers those strategies share to default and validate.
import { builtinSchema, markBuiltinField } from '../builtin-schemas/index.js';
import { invalid } from '../meta.js';
import type { ListTypeInfo } from '../patch/field-types.js';
import { apiVersionOf, type ResourceType } from '../resource-type.js';
import type { KubeObject, StatusCause } from '../types.js';

type Json = Record<string, unknown>;

/**
 * `type` with its official schema, each list of `fieldTypes` marked as the Go type's tags mark
 * it (builtin-schemas' markBuiltinField), so that the schema says what the strategy says.
 */
export function withSchema(type: ResourceType, fieldTypes: ListTypeInfo): ResourceType {
  const apiVersion = apiVersionOf(type);
  for (const [path, fieldType] of Object.entries(fieldTypes))
    markBuiltinField(apiVersion, type.kind, path, fieldType);
  const schema = builtinSchema(apiVersion, type.kind);
  if (schema === undefined) throw new Error(`no built-in schema for ${type.kind}`);
  return { ...type, schema };
}

/** The object at `path` below `root`, made (as `{}`) where missing: a Go non-pointer struct. */
export function struct(root: Json, ...path: string[]): Json {
  let node = root;
  for (const key of path) {
    if (!isJson(node[key])) node[key] = {};
    node = node[key] as Json;
  }
  return node;
}

export const isJson = (v: unknown): v is Json =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** The objects of a list field, skipping what is not one (the schema check reports those). */
export const itemsOf = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isJson) : []);

/** Sets `key` to `value` where the client left it out (a Go field's zero value or nil). */
export function orDefault(node: Json, key: string, value: unknown): void {
  if (node[key] === undefined || node[key] === null || node[key] === '') node[key] = value;
}

/** Refuses the object with every cause, as the kind's Validate would: a 422 Invalid. */
export function refuse(type: ResourceType, object: KubeObject, causes: StatusCause[]): void {
  if (causes.length > 0) throw invalid(type, object.metadata.name ?? '', causes);
}

/** field.Required. */
export const required = (field: string): StatusCause => ({
  reason: 'FieldValueRequired',
  field,
  message: 'Required value',
});

/** field.Invalid, the value printed as Go's %#v would (strings and numbers here). */
export const invalidValue = (field: string, value: unknown, detail: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  field,
  message: `Invalid value: ${typeof value === 'string' ? JSON.stringify(value) : String(value)}: ${detail}`,
});

/** field.NotSupported. */
export const notSupported = (field: string, value: unknown, supported: string[]): StatusCause => ({
  reason: 'FieldValueNotSupported',
  field,
  message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported
    .map((s) => JSON.stringify(s))
    .join(', ')}`,
});
