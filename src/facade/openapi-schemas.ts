// The schemas of the facade's OpenAPI document, converted from the src/api zod schemas the
// routes validate with, so the published contract cannot drift from what the facade enforces:
// the named components, and the query strings the endpoints declare, as query parameters.
import { z } from 'zod';
import {
  CreateScopeRequest,
  ErrorBody,
  MessageItem,
  Paging,
  RequestedSpec,
  ResourceDetail,
  ResourcePage,
  ResourceSummary,
  Scope,
  ScopeMetadata,
  ServiceItem,
  ServicePage,
  StatusTree,
} from '../api/index.js';

export type Json = Record<string, unknown>;

export const COMPONENTS_PREFIX = '#/components/schemas/';
// Where zod's registry conversion puts schemas that carry a global `.meta({ id })` but are not
// components of ours; they are promoted to components so no `$ref` dangles.
const SHARED = '__shared';

/**
 * Named components. `io` picks which side of a transform or default the component shows:
 * requests are described as the caller sends them, responses as the facade writes them.
 * `both` is for parts of requests and responses alike, and must read the same either way.
 */
const COMPONENTS = [
  { name: 'Service', schema: ServiceItem, io: 'output' },
  { name: 'ServicePage', schema: ServicePage, io: 'output' },
  { name: 'Paging', schema: Paging, io: 'output' },
  { name: 'MessageItem', schema: MessageItem, io: 'output' },
  { name: 'Scope', schema: Scope, io: 'output' },
  { name: 'ScopeMetadata', schema: ScopeMetadata, io: 'output' },
  { name: 'RequestedSpec', schema: RequestedSpec, io: 'both' },
  { name: 'CreateScopeRequest', schema: CreateScopeRequest, io: 'input' },
  { name: 'ResourceSummary', schema: ResourceSummary, io: 'output' },
  { name: 'StatusTree', schema: StatusTree, io: 'output' },
  { name: 'ResourcePage', schema: ResourcePage, io: 'output' },
  { name: 'ResourceDetail', schema: ResourceDetail, io: 'output' },
  { name: 'Error', schema: ErrorBody, io: 'output' },
] as const satisfies ReadonlyArray<{
  name: string;
  schema: z.ZodType;
  io: 'input' | 'output' | 'both';
}>;
export type ComponentName = (typeof COMPONENTS)[number]['name'];

/** The document's converted schemas, as the endpoints' operations read them. */
export interface DocumentSchemas {
  /** The components, by name, in the document's order. */
  readonly components: ReadonlyMap<string, Json>;
  /** The schema of one property of a component (a path parameter may reuse it). */
  property(component: ComponentName, name: string): Json | undefined;
  /** The query parameters of a query schema an endpoint declared (DocumentedOperation.query). */
  queryParameters(query: z.ZodType): Json[];
}

const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

// JSON Schema keywords whose value is a subschema, a map of them, or a list of them; every
// other keyword holds data (enum, const, default, required...) and is copied untouched.
const ONE_SCHEMA = new Set([
  'items',
  'additionalProperties',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
]);
const SCHEMA_MAP = new Set(['properties', 'patternProperties', 'dependentSchemas']);
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);

/**
 * Makes one zod-emitted node fit inside an OpenAPI document: `$schema` and `$id` would rebase
 * `$ref`s (the components are not standalone documents), `x-kubernetes-*` is CRD-only
 * metadata, and refs to zod's shared bucket point at the promoted components instead.
 */
function clean(node: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema' || key === '$id' || key === '$defs' || key.startsWith('x-kubernetes-')) {
      continue;
    }
    if (key === '$ref' && typeof value === 'string' && value.startsWith(`${SHARED}#/$defs/`)) {
      out.$ref = COMPONENTS_PREFIX + value.slice(`${SHARED}#/$defs/`.length);
    } else if (ONE_SCHEMA.has(key) && isObject(value)) {
      out[key] = clean(value);
    } else if (SCHEMA_MAP.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, isObject(v) ? clean(v) : v]),
      );
    } else if (SCHEMA_LIST.has(key) && Array.isArray(value)) {
      out[key] = value.map((v) => (isObject(v) ? clean(v) : v));
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** Converts a registry of named schemas in one io mode into cleaned, named schemas. */
function convert(
  entries: ReadonlyArray<{ id: string; schema: z.ZodType }>,
  io: 'input' | 'output',
): Map<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const { id, schema } of entries) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    io,
    target: 'draft-2020-12',
    unrepresentable: 'throw',
    uri: (id) => (id === SHARED ? SHARED : COMPONENTS_PREFIX + id),
  });
  const named = new Map<string, Json>();
  for (const [id, schema] of Object.entries(schemas)) {
    if (id !== SHARED) {
      named.set(id, clean(schema as Json));
      continue;
    }
    const defs = (schema as Json).$defs;
    if (!isObject(defs)) continue;
    for (const [defId, def] of Object.entries(defs)) named.set(defId, clean(def as Json));
  }
  return named;
}

/** Adds a schema under a name, refusing two different schemas under one name. */
function put(into: Map<string, Json>, name: string, schema: Json): void {
  const existing = into.get(name);
  if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(schema)) {
    throw new Error(
      `OpenAPI component ${name} differs between request and response; give each its own name`,
    );
  }
  into.set(name, schema);
}

/**
 * The components, and the query schemas given: these are converted next to the request
 * components so their fields can `$ref` them, then spread into query parameters rather than
 * published as body schemas.
 */
export function documentSchemas(queries: readonly z.ZodType[]): DocumentSchemas {
  const withIds = (io: 'input' | 'output') =>
    COMPONENTS.filter((c) => c.io === io || c.io === 'both').map((c) => ({
      id: c.name,
      schema: c.schema,
    }));
  // Ids no component has: the query schemas are not components.
  const queryIds = queries.map((_, i) => `__query${i}`);
  const output = convert(withIds('output'), 'output');
  const input = convert(
    [...withIds('input'), ...queries.map((schema, i) => ({ id: queryIds[i] as string, schema }))],
    'input',
  );
  const converted = new Map<z.ZodType, Json>();
  for (const [i, schema] of queries.entries()) {
    const id = queryIds[i] as string;
    const query = input.get(id);
    input.delete(id);
    if (query === undefined) throw new Error(`query schema ${i} did not convert`);
    converted.set(schema, query);
  }

  const components = new Map<string, Json>();
  for (const [name, schema] of output) put(components, name, schema);
  for (const [name, schema] of input) put(components, name, schema);
  return {
    components,
    property: (component, name) => {
      const properties = components.get(component)?.properties;
      const property = isObject(properties) ? properties[name] : undefined;
      return isObject(property) ? property : undefined;
    },
    queryParameters: (schema) => {
      const query = converted.get(schema);
      if (query === undefined) throw new Error('a query schema no endpoint declared');
      return queryParameters(query);
    },
  };
}

function queryParameters(query: Json): Json[] {
  const properties = isObject(query.properties) ? query.properties : {};
  const required = new Set(Array.isArray(query.required) ? query.required : []);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...schema } = property as Json;
    return {
      name,
      in: 'query',
      required: required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema,
    };
  });
}
