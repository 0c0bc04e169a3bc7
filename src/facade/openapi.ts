// The facade's OpenAPI 3.1 document, generated from the src/api zod schemas the routes
// validate with, so the published contract cannot drift from what the facade enforces.
import { createRequire } from 'node:module';
import { z } from 'zod';
import {
  CreateScopeRequest,
  ErrorBody,
  ListServicesQuery,
  MessageItem,
  Paging,
  RequestedSpec,
  Scope,
  ScopeMetadata,
  ServiceItem,
  ServicePage,
} from '../api/index.js';
import { ERROR_CODES, type ErrorCode } from './errors.js';

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  /** Base URL the document advertises in `servers`; left out, clients resolve against `/`. */
  serverUrl?: string;
  /** `info.version`; defaults to the package's own version. */
  version?: string;
}

const FALLBACK_VERSION = '0.1.0';
const COMPONENTS_PREFIX = '#/components/schemas/';
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
  { name: 'Error', schema: ErrorBody, io: 'output' },
] as const satisfies ReadonlyArray<{
  name: string;
  schema: z.ZodType;
  io: 'input' | 'output' | 'both';
}>;
type ComponentName = (typeof COMPONENTS)[number]['name'];

// Converted next to the request components so its fields can `$ref` them, then spread into
// query parameters rather than published as a body schema.
const QUERY_ID = 'ListServicesQuery';

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

interface Generated {
  schemas: Map<string, Json>;
  query: Json;
}

function generate(): Generated {
  const withIds = (io: 'input' | 'output') =>
    COMPONENTS.filter((c) => c.io === io || c.io === 'both').map((c) => ({
      id: c.name,
      schema: c.schema,
    }));
  const output = convert(withIds('output'), 'output');
  const input = convert(
    [...withIds('input'), { id: QUERY_ID, schema: ListServicesQuery }],
    'input',
  );
  const query = input.get(QUERY_ID);
  input.delete(QUERY_ID);
  if (query === undefined) throw new Error(`${QUERY_ID} did not convert`);

  const schemas = new Map<string, Json>();
  for (const [name, schema] of output) put(schemas, name, schema);
  for (const [name, schema] of input) put(schemas, name, schema);
  return { schemas, query };
}

const ref = (name: ComponentName): Json => ({ $ref: COMPONENTS_PREFIX + name });

const json = (schema: Json): Json => ({ 'application/json': { schema } });

/** One response per status, naming the codes an operation can answer with at that status. */
function errorResponses(codes: readonly ErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const { statusCode } = ERROR_CODES[code];
    byStatus.set(statusCode, [...(byStatus.get(statusCode) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => [
        String(status),
        {
          description: `${ERROR_CODES[list[0] as ErrorCode].error}: ${list.join(', ')}.`,
          content: json({
            ...ref('Error'),
            properties: { statusCode: { const: status }, code: { enum: list } },
          }),
        },
      ]),
  );
}

// Every operation can meet these: no or a bad token, RBAC refusing, the API server or the
// facade's caches not ready, an unexpected fault.
const COMMON_ERRORS = [
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'INTERNAL_ERROR',
  'API_SERVER_UNAVAILABLE',
  'NOT_READY',
] as const satisfies readonly ErrorCode[];

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

function paths(generated: Generated): Json {
  const scope = generated.schemas.get('Scope');
  const scopeId = isObject(scope?.properties) ? scope.properties.id : undefined;
  if (!isObject(scopeId)) throw new Error('Scope has no id property to describe /scope/{id}');
  const { description: idDescription, ...idSchema } = scopeId;

  return {
    '/service': {
      get: {
        operationId: 'listServices',
        tags: ['services'],
        summary: 'List services',
        description:
          'Services visible at an NRN, filtered and paged. Unknown query parameters are refused. ' +
          'Secret attribute values are left out unless include_secret_attributes=true and the ' +
          'caller may read them.',
        parameters: queryParameters(generated.query),
        responses: {
          '200': { description: 'A page of services.', content: json(ref('ServicePage')) },
          ...errorResponses(['VALIDATION_FAILED', ...COMMON_ERRORS]),
        },
      },
    },
    '/scope': {
      post: {
        operationId: 'createScope',
        tags: ['scopes'],
        summary: 'Create a scope',
        description: 'Creates a scope in an existing application. Unknown fields are refused.',
        requestBody: { required: true, content: json(ref('CreateScopeRequest')) },
        responses: {
          '200': { description: 'The scope created.', content: json(ref('Scope')) },
          ...errorResponses([
            'VALIDATION_FAILED',
            'INVALID_JSON',
            'APPLICATION_NOT_FOUND',
            'SCOPE_ALREADY_EXISTS',
            'BODY_TOO_LARGE',
            'UNSUPPORTED_MEDIA_TYPE',
            ...COMMON_ERRORS,
          ]),
        },
      },
    },
    '/scope/{id}': {
      get: {
        operationId: 'getScope',
        tags: ['scopes'],
        summary: 'Get a scope',
        description: 'One scope, so a caller can watch its status after creating it.',
        parameters: [
          {
            name: 'id',
            in: 'path',
            required: true,
            ...(typeof idDescription === 'string' ? { description: idDescription } : {}),
            schema: idSchema,
          },
        ],
        responses: {
          '200': { description: 'The scope.', content: json(ref('Scope')) },
          ...errorResponses(['VALIDATION_FAILED', 'SCOPE_NOT_FOUND', ...COMMON_ERRORS]),
        },
      },
    },
  };
}

function packageVersion(): string {
  try {
    // Two levels up from both src/facade and dist/facade.
    const pkg = createRequire(import.meta.url)('../../package.json') as {
      name?: unknown;
      version?: unknown;
    };
    if (pkg.name === 'nrn-operator' && typeof pkg.version === 'string') return pkg.version;
  } catch {
    // Bundled or relocated: the fallback below is still a valid document.
  }
  return FALLBACK_VERSION;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

let generated: Generated | undefined;
const documents = new Map<string, Json>();

/**
 * The OpenAPI 3.1 document of the facade's operations. Built once per distinct options and
 * frozen, since every caller (and every `/openapi.json` request) shares the same object.
 */
export function openApiDocument(options: OpenApiOptions = {}): Record<string, unknown> {
  const version = options.version ?? packageVersion();
  const key = JSON.stringify([options.serverUrl ?? null, version]);
  const cached = documents.get(key);
  if (cached !== undefined) return cached;

  generated ??= generate();
  const document: Json = {
    openapi: '3.1.0',
    info: {
      title: 'nrn-operator facade',
      version,
      description:
        'Service catalog and scopes, backed by Kubernetes custom resources. Every 4XX and 5XX ' +
        'answer has the Error shape; its code is stable.',
    },
    ...(options.serverUrl !== undefined ? { servers: [{ url: options.serverUrl }] } : {}),
    security: [{ bearer: [] }],
    tags: [{ name: 'services' }, { name: 'scopes' }],
    paths: paths(generated),
    components: {
      schemas: Object.fromEntries(generated.schemas),
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'In a cluster, a Kubernetes token, checked with TokenReview and authorized with ' +
            "the caller's own RBAC; elsewhere, the facade's static token.",
        },
      },
    },
  };
  // Generated schemas are shared between documents; freezing keeps one caller's edit from
  // leaking into another's.
  deepFreeze(document);
  documents.set(key, document);
  return document;
}
