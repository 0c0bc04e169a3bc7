// A kind's schema as the OpenAPI documents publish it, and the names of its definitions. A
// custom resource's is its CRD version's schema made as apiextensions-apiserver's builder makes
// it (pkg/controller/openapi/builder/builder.go, buildKubeNative): the structural part of the
// schema, x-kubernetes-int-or-string unfolded (v3), converted for Swagger 2.0 (v2,
// pkg/controller/openapi/v2/conversion.go), with `apiVersion`, `kind` and `metadata` (a $ref to
// ObjectMeta) added at the root and in embedded resources. The built-in kinds stored as plain
// objects (Pod, Deployment...) publish their official definitions (builtin-schemas/); the
// others are schemaless here.
import { builtinOpenApiDefinitions } from '../builtin-schemas/index.js';
import { apiVersionOf, type ResourceType } from '../resource-type.js';
import {
  LIST_META,
  METADATA_DESCRIPTION,
  OBJECT_META,
  type OpenApiVersion,
  refTo,
  TYPE_META_PROPERTIES,
} from './meta-schemas.js';

type Schema = Record<string, unknown>;
type Kinded = Pick<ResourceType, 'group' | 'version' | 'kind' | 'custom'>;

const GVK = 'x-kubernetes-group-version-kind';
const PRESERVE = 'x-kubernetes-preserve-unknown-fields';
const EMBEDDED = 'x-kubernetes-embedded-resource';
const INT_OR_STRING = 'x-kubernetes-int-or-string';

/**
 * The package a definition is named after. A custom resource's is its group reversed
 * (`platform.nrn.dev` → `dev.nrn.platform`, apiextensions' CRD namer); a built-in kind's is its
 * Go package, as kube-openapi names it (`io.k8s.api.core.v1.ConfigMap`,
 * `io.k8s.api.coordination.v1.Lease`).
 */
function packageOf(t: Pick<ResourceType, 'group' | 'custom'>): string {
  if (t.custom) return t.group.split('.').reverse().join('.');
  if (t.group === '') return 'io.k8s.api.core';
  if (t.group === 'apiextensions.k8s.io')
    return 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions';
  return `io.k8s.api.${t.group.replace(/\.k8s\.io$/, '')}`;
}

/** `platform.nrn.dev` + `v1alpha1` + `Scope` → `dev.nrn.platform.v1alpha1.Scope`. */
export const definitionName = (t: Kinded): string => `${packageOf(t)}.${t.version}.${t.kind}`;

export const listDefinitionName = (t: Kinded & Pick<ResourceType, 'listKind'>): string =>
  `${packageOf(t)}.${t.version}.${t.listKind}`;

const gvkOf = (t: Kinded, kind = t.kind) => [{ group: t.group, kind, version: t.version }];

const metadataField = (version: OpenApiVersion): Schema => ({
  $ref: refTo(version, OBJECT_META),
  description: METADATA_DESCRIPTION,
});

/**
 * A stored built-in kind's official definition, with its GVK as kube-openapi writes it. The
 * other built-in kinds have no schema here. In v3 they are open objects with TypeMeta and ObjectMeta
 * (`kubectl explain` shows them; kubectl's client-side apply finds metadata's merge keys). In v2
 * they carry no x-kubernetes-group-version-kind: kubectl then finds no model for them and uses
 * the types compiled into it, which are right, where a model of three fields would make it
 * refuse every other field of a `kind: List` item, and fail to compute an apply patch.
 */
function builtinSchema(t: ResourceType, version: OpenApiVersion): Schema {
  const official = officialDefinitions(t, version);
  const name = definitionName(t);
  if (official[name] !== undefined) return { ...official[name], [GVK]: gvkOf(t) };
  const description = `${t.kind} (served by the local control plane; its schema is not described here).`;
  if (version === 'v2') return { description, type: 'object' };
  return {
    description,
    type: 'object',
    properties: { ...TYPE_META_PROPERTIES, metadata: metadataField(version) },
    [PRESERVE]: true,
    [GVK]: gvkOf(t),
  };
}

/**
 * A stored built-in kind's official definitions (builtin-schemas/): its own and every one it
 * references; none for the kinds served without one.
 */
export function officialDefinitions(
  t: ResourceType,
  version: OpenApiVersion,
): Record<string, Schema> {
  if (t.custom) return {};
  return builtinOpenApiDefinitions(apiVersionOf(t), t.kind, version === 'v2', (name) =>
    refTo(version, name),
  );
}

/** A kind's schema, as the document of `version` publishes it. */
export function kindSchema(t: ResourceType, version: OpenApiVersion): Schema {
  if (!t.custom) return builtinSchema(t, version);
  // A CRD's schema is structural: the server refused it otherwise (schema/structural.ts).
  const source = t.schema;
  // v2 cannot say "unknown fields allowed" to kubectl, so it says nothing (buildKubeNative).
  if (source === undefined || (version === 'v2' && source[PRESERVE] === true)) {
    return { type: 'object', [GVK]: gvkOf(t) };
  }
  let schema = unfold(structural(source));
  if (version === 'v2') schema = toSwagger2(schema);
  schema.properties = {
    ...(schema.properties as Record<string, Schema> | undefined),
    ...TYPE_META_PROPERTIES,
    metadata: metadataField(version),
  };
  addEmbeddedProperties(schema, version);
  schema[GVK] = gvkOf(t);
  return schema;
}

/** A kind's list kind, as buildListSchema writes it. */
export function listSchema(t: ResourceType, version: OpenApiVersion): Schema {
  return {
    description: `${t.listKind} is a list of ${t.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      ...TYPE_META_PROPERTIES,
      items: {
        description: `List of ${t.resource}.`,
        type: 'array',
        items: { $ref: refTo(version, definitionName(t)) },
      },
      metadata: { $ref: refTo(version, LIST_META), description: 'Standard list metadata.' },
    },
    // Built-in kinds' lists go unnamed in v2, as the kinds themselves (builtinSchema).
    ...(version === 'v2' && !t.custom ? {} : { [GVK]: gvkOf(t, t.listKind) }),
  };
}

// --- the structural schema (apiextensions-apiserver's pkg/apiserver/schema) ----------------

/** What a structural schema keeps of a node, besides properties, items and additionalProperties. */
const STRUCTURAL_KEYS = new Set([
  'description',
  'title',
  'default',
  'format',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  // Value validations inside junctors are kept as written (NestedValueValidation).
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
/** Flags Structural keeps as booleans, so written only when true (ToKubeOpenAPI). */
const TRUE_ONLY = new Set(['nullable', PRESERVE, EMBEDDED, INT_OR_STRING]);

const isSchema = (v: unknown): v is Schema =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A copy of the node with what a structural schema holds of it (examples, titles of junctors... go). */
function structural(node: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (STRUCTURAL_KEYS.has(key)) out[key] = value;
    // One type, of the six: kubectl's v2 models refuse any other (and a list of them).
    else if (key === 'type') {
      if (typeof value === 'string' && TYPES.has(value)) out.type = value;
    } else if (TRUE_ONLY.has(key)) {
      if (value === true) out[key] = true;
    } else if (key === 'properties' && isSchema(value)) {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, isSchema(sub) ? structural(sub) : {}]),
      );
    } else if (key === 'items' && isSchema(value)) out.items = structural(value);
    else if (key === 'additionalProperties') {
      out.additionalProperties = isSchema(value) ? structural(value) : value;
    }
  }
  return out;
}

/** Calls `visit` on a node, then on the nodes under it that are still there. */
function walk(node: Schema, visit: (s: Schema) => void): void {
  visit(node);
  if (isSchema(node.items)) walk(node.items, visit);
  if (isSchema(node.properties))
    for (const sub of Object.values(node.properties)) walk(sub as Schema, visit);
  if (isSchema(node.additionalProperties)) walk(node.additionalProperties, visit);
}

const INT_OR_STRING_ANY_OF = [{ type: 'integer' }, { type: 'string' }];
const isIntOrStringAnyOf = (v: unknown): boolean =>
  Array.isArray(v) &&
  v.length === 2 &&
  isSchema(v[0]) &&
  isSchema(v[1]) &&
  Object.keys(v[0]).length === 1 &&
  Object.keys(v[1]).length === 1 &&
  v[0].type === 'integer' &&
  v[1].type === 'string';

/**
 * x-kubernetes-int-or-string spelled out as `anyOf: [integer, string]` (Structural.Unfold),
 * unless the node already says so, directly or first thing in allOf.
 */
function unfold(root: Schema): Schema {
  walk(root, (s) => {
    if (s[INT_OR_STRING] !== true || isIntOrStringAnyOf(s.anyOf)) return;
    const allOf = Array.isArray(s.allOf) ? (s.allOf as unknown[]) : undefined;
    if (allOf !== undefined && isSchema(allOf[0]) && isIntOrStringAnyOf(allOf[0].anyOf)) return;
    if (s.anyOf === undefined) s.anyOf = INT_OR_STRING_ANY_OF.map((x) => ({ ...x }));
    else s.allOf = [{ anyOf: INT_OR_STRING_ANY_OF.map((x) => ({ ...x })) }, ...(allOf ?? [])];
  });
  return root;
}

/**
 * What Swagger 2.0 and kubectl's v2 models cannot take, taken out (ToStructuralOpenAPIV2):
 * junctors; the type, items and properties of a nullable node; the items and properties of a
 * node that keeps unknown fields; the type of an array left without items; nullable fields from
 * `required`. Parents are changed before their children, as its visitor does.
 */
function toSwagger2(root: Schema): Schema {
  walk(root, (s) => {
    for (const junctor of ['allOf', 'oneOf', 'anyOf', 'not']) delete s[junctor];
    const properties = isSchema(s.properties) ? (s.properties as Record<string, Schema>) : {};
    if (Array.isArray(s.required)) {
      const required = (s.required as string[]).filter((f) => properties[f]?.nullable !== true);
      if (required.length !== s.required.length) {
        if (required.length > 0) s.required = required;
        else delete s.required;
      }
    }
    if (isSchema(s.additionalProperties) && s.additionalProperties.nullable === true) {
      delete s.required;
    }
    if (s.nullable === true) {
      for (const key of ['type', 'nullable', 'items', 'properties']) delete s[key];
    }
    if (s[PRESERVE] === true) {
      delete s.items;
      delete s.properties;
    }
    if (s.items === undefined && s.type === 'array') delete s.type;
  });
  return root;
}

/**
 * `apiVersion`, `kind` and `metadata` in every embedded resource (x-kubernetes-embedded-resource),
 * which must then name its kind and apiVersion; not in v2 where unknown fields are kept, as
 * kubectl would refuse those (addEmbeddedProperties).
 */
function addEmbeddedProperties(node: Schema, version: OpenApiVersion): void {
  if (isSchema(node.properties)) {
    for (const sub of Object.values(node.properties)) addEmbeddedProperties(sub as Schema, version);
  }
  if (isSchema(node.items)) addEmbeddedProperties(node.items, version);
  if (isSchema(node.additionalProperties))
    addEmbeddedProperties(node.additionalProperties, version);
  if (version === 'v2' && node[PRESERVE] === true) return;
  if (node[EMBEDDED] !== true) return;
  node.properties = {
    ...(node.properties as Record<string, Schema> | undefined),
    apiVersion: {
      description: 'apiVersion: the versioned schema of this representation of an object.',
      type: 'string',
    },
    kind: { description: 'kind: the type of this object, in CamelCase.', type: 'string' },
    metadata: metadataField(version),
  };
  const required = Array.isArray(node.required) ? [...(node.required as string[])] : [];
  for (const field of ['kind', 'apiVersion']) if (!required.includes(field)) required.push(field);
  node.required = required;
}
