// The two OpenAPI documents built from the served types: one OpenAPI 3.0 document per group
// version (`/openapi/v3/<api|apis/group>/<version>`) and the single Swagger 2.0 document of
// `/openapi/v2`, with the same schemas and operations (kind-schemas.ts, operations.ts) written
// the way each version spells them.
import type { ResourceType } from '../resource-type.js';
import {
  definitionName,
  kindSchema,
  listDefinitionName,
  listSchema,
  officialDefinitions,
} from './kind-schemas.js';
import { metaDefinitions, type OpenApiVersion, refTo } from './meta-schemas.js';
import { type Operation, type Parameter, PRODUCES, pathsOf } from './operations.js';

type Schema = Record<string, unknown>;

/**
 * What `info` says: kube-apiserver's title and its version cut at the first '-'
 * (genericapiserver's Complete), from KUBERNETES_VERSION's `v1.32.0-nrn-local`.
 */
export const INFO = { title: 'Kubernetes', version: 'v1.32.0' };

const GVK = 'x-kubernetes-group-version-kind';

function definitionsOf(
  types: readonly ResourceType[],
  version: OpenApiVersion,
): Record<string, Schema> {
  const definitions: Record<string, Schema> = metaDefinitions(version);
  for (const t of types) {
    // What a stored built-in kind references (PodSpec...); apimachinery's own stay meta's.
    for (const [name, schema] of Object.entries(officialDefinitions(t, version)))
      definitions[name] ??= schema;
    definitions[definitionName(t)] = kindSchema(t, version);
    definitions[listDefinitionName(t)] = listSchema(t, version);
  }
  return definitions;
}

/** The OpenAPI 3.0 document of one group version, of its types. */
export function openApiV3(types: readonly ResourceType[]): Schema {
  const param = (p: Parameter): Schema => ({
    name: p.name,
    in: p.in,
    description: p.description,
    ...(p.required ? { required: true } : {}),
    schema: { type: p.type, uniqueItems: true },
  });
  const requestBody = ({ body, consumes }: Operation): Schema =>
    body === undefined
      ? {}
      : {
          requestBody: {
            content: Object.fromEntries(
              consumes.map((c) => [c, { schema: { $ref: refTo('v3', body.definition) } }]),
            ),
            ...(body.required ? { required: true } : {}),
          },
        };
  const operation = (o: Operation): Schema => ({
    tags: [o.tag],
    description: o.description,
    operationId: o.operationId,
    ...(o.parameters.length > 0 ? { parameters: o.parameters.map(param) } : {}),
    ...requestBody(o),
    responses: Object.fromEntries(
      o.responses.map(([code, description, definition]) => [
        code,
        {
          description,
          ...(definition !== undefined
            ? {
                content: Object.fromEntries(
                  PRODUCES.map((c) => [c, { schema: { $ref: refTo('v3', definition) } }]),
                ),
              }
            : {}),
        },
      ]),
    ),
    'x-kubernetes-action': o.action,
    [GVK]: o.gvk,
  });
  return {
    openapi: '3.0.0',
    info: INFO,
    paths: pathsObject(types, param, operation),
    components: { schemas: definitionsOf(types, 'v3') },
  };
}

/** The Swagger 2.0 document of every served type. */
export function openApiV2(types: readonly ResourceType[]): Schema {
  const param = (p: Parameter): Schema => ({
    uniqueItems: true,
    type: p.type,
    description: p.description,
    name: p.name,
    in: p.in,
    ...(p.required ? { required: true } : {}),
  });
  const operation = (o: Operation): Schema => ({
    description: o.description,
    ...(o.consumes.length > 0 ? { consumes: o.consumes } : {}),
    produces: PRODUCES,
    schemes: ['https'],
    tags: [o.tag],
    operationId: o.operationId,
    parameters: [
      ...(o.body !== undefined
        ? [
            {
              name: 'body',
              in: 'body',
              ...(o.body.required ? { required: true } : {}),
              schema: { $ref: refTo('v2', o.body.definition) },
            },
          ]
        : []),
      ...o.parameters.map(param),
    ],
    responses: Object.fromEntries(
      o.responses.map(([code, description, definition]) => [
        code,
        {
          description,
          ...(definition !== undefined ? { schema: { $ref: refTo('v2', definition) } } : {}),
        },
      ]),
    ),
    'x-kubernetes-action': o.action,
    [GVK]: o.gvk,
  });
  const definitions = definitionsOf(types, 'v2');
  // kube-apiserver prunes defaults from what it serves in v2 (kube-openapi's PruneDefaults).
  for (const schema of Object.values(definitions)) pruneDefaults(schema);
  return {
    swagger: '2.0',
    info: INFO,
    paths: pathsObject(types, param, operation),
    definitions,
    securityDefinitions: {
      BearerToken: {
        description: 'Bearer Token authentication',
        type: 'apiKey',
        name: 'authorization',
        in: 'header',
      },
    },
    security: [{ BearerToken: [] }],
  };
}

function pathsObject(
  types: readonly ResourceType[],
  param: (p: Parameter) => Schema,
  operation: (o: Operation) => Schema,
): Record<string, Schema> {
  const paths: Record<string, Schema> = {};
  for (const t of types) {
    for (const item of pathsOf(t)) {
      const entry: Schema = { parameters: item.parameters.map(param) };
      for (const o of item.operations) entry[o.method] = operation(o);
      paths[item.path] = entry;
    }
  }
  return paths;
}

const isSchema = (v: unknown): v is Schema =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Takes `default` out of a schema and every schema under it (not out of a field named so). */
function pruneDefaults(schema: Schema): void {
  delete schema.default;
  if (isSchema(schema.properties))
    for (const sub of Object.values(schema.properties)) if (isSchema(sub)) pruneDefaults(sub);
  for (const key of ['items', 'additionalProperties', 'not']) {
    const sub = schema[key];
    if (isSchema(sub)) pruneDefaults(sub);
  }
  for (const key of ['allOf', 'anyOf', 'oneOf']) {
    const subs = schema[key];
    if (Array.isArray(subs)) for (const sub of subs) if (isSchema(sub)) pruneDefaults(sub);
  }
}
