// The facade's OpenAPI document: valid OpenAPI 3.1, and faithful to the zod schemas it is
// generated from (every field, the refusal of unknown fields, every spec query parameter).
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import {
  CreateScopeRequest,
  ListServicesQuery,
  Scope,
  ServiceItem,
} from '../../../src/api/index.js';
import { openApiDocument } from '../../../src/facade/openapi.js';

type Json = Record<string, unknown>;

const doc = openApiDocument() as Json & {
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json>; securitySchemes: Record<string, Json> };
};
const schemas = doc.components.schemas;
const component = (name: string) => {
  const schema = schemas[name];
  if (schema === undefined) throw new Error(`no component ${name}`);
  return schema as Json & { properties: Record<string, Json>; required?: string[] };
};
const operation = (path: string, method: string) => {
  const op = doc.paths[path]?.[method];
  if (op === undefined) throw new Error(`no ${method} ${path}`);
  return op as Json & { responses: Record<string, Json>; parameters?: Json[] };
};

/** Every value of `key` anywhere in the document. */
function collect(node: unknown, key: string, into: unknown[] = []): unknown[] {
  if (Array.isArray(node)) for (const item of node) collect(item, key, into);
  else if (typeof node === 'object' && node !== null) {
    for (const [k, v] of Object.entries(node)) {
      if (k === key) into.push(v);
      collect(v, key, into);
    }
  }
  return into;
}

/** The error codes a response declares, from its schema's `code` enum. */
const codesOf = (response: Json | undefined): unknown => {
  const content = response?.content as Record<string, { schema: Json }> | undefined;
  const schema = content?.['application/json']?.schema as
    | { $ref?: string; properties?: { code?: { enum?: string[] } } }
    | undefined;
  expect(schema?.$ref).toBe('#/components/schemas/Error');
  return schema?.properties?.code?.enum;
};

describe('openApiDocument', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('resolves every $ref to a component, and carries no standalone-schema keywords', () => {
    const refs = collect(doc, '$ref') as string[];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(schemas).toHaveProperty([ref.slice('#/components/schemas/'.length)]);
    }
    expect(collect(doc, '$schema')).toEqual([]);
    expect(collect(doc, '$id')).toEqual([]);
    expect(collect(doc, '$defs')).toEqual([]);
    expect(JSON.stringify(doc)).not.toContain('x-kubernetes-');
  });

  it('names the components', () => {
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([
        'Service',
        'ServicePage',
        'Paging',
        'MessageItem',
        'CreateScopeRequest',
        'RequestedSpec',
        'Scope',
        'Error',
      ]),
    );
    expect(schemas).not.toHaveProperty('ListServicesQuery');
  });

  it('describes every field of a service and of a scope', () => {
    expect(Object.keys(component('Service').properties).sort()).toEqual(
      Object.keys(ServiceItem.shape).sort(),
    );
    expect(Object.keys(component('Scope').properties).sort()).toEqual(
      Object.keys(Scope.shape).sort(),
    );
    expect(component('ServicePage').properties.results).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Service' },
    });
  });

  it('describes the create-scope body field by field, requiring what zod requires', () => {
    const body = component('CreateScopeRequest');
    const shape = CreateScopeRequest.shape;
    expect(Object.keys(body.properties).sort()).toEqual(Object.keys(shape).sort());
    const required = Object.entries(shape)
      .filter(([, field]) => !field.safeParse(undefined).success)
      .map(([name]) => name);
    expect([...(body.required ?? [])].sort()).toEqual(required.sort());
    expect(body.required).toEqual(
      expect.arrayContaining(['name', 'type', 'application_id', 'requested_spec']),
    );
    expect(body.properties.name).toMatchObject({ type: 'string', maxLength: 60 });
    expect(body.properties.type).toMatchObject({
      enum: ['web_pool', 'scheduled_tasks', 'serverless'],
    });
    expect(component('RequestedSpec').properties.cpu_profile).toMatchObject({
      enum: ['standard', 'intensive'],
    });
  });

  it('forbids unknown fields in the create-scope body, at every level', () => {
    expect(component('CreateScopeRequest').additionalProperties).toBe(false);
    expect(component('RequestedSpec').additionalProperties).toBe(false);
    const op = operation('/scope', 'post');
    expect(op.requestBody).toEqual({
      required: true,
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/CreateScopeRequest' } },
      },
    });
  });

  it('agrees with zod on what a create-scope body may be', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema({ $id: 'https://nrn.test/openapi.json', components: doc.components });
    const validate = ajv.compile({
      $ref: 'https://nrn.test/openapi.json#/components/schemas/CreateScopeRequest',
    });
    const good = {
      name: 'web',
      type: 'web_pool',
      application_id: 4,
      requested_spec: { memory_in_gb: 1, cpu_profile: 'standard' },
    };
    const bodies = [
      good,
      { ...good, extra: true },
      { ...good, requested_spec: { memory_in_gb: 1, gpu: 1 } },
      { ...good, name: 'x'.repeat(61) },
      { ...good, type: 'lambda' },
      { ...good, application_id: -1 },
      { name: 'web', type: 'web_pool', application_id: 4 },
    ];
    for (const body of bodies) {
      expect(validate(body), JSON.stringify(body)).toBe(CreateScopeRequest.safeParse(body).success);
    }
  });

  it('lists the three operations, with their success and error responses', () => {
    const list = operation('/service', 'get');
    const create = operation('/scope', 'post');
    const get = operation('/scope/{id}', 'get');
    expect([list.operationId, create.operationId, get.operationId]).toEqual([
      'listServices',
      'createScope',
      'getScope',
    ]);

    expect(list.responses['200']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ServicePage' } } },
    });
    for (const op of [create, get]) {
      expect(op.responses['200']).toMatchObject({
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Scope' } } },
      });
    }

    const statuses = (op: { responses: Record<string, Json> }) => Object.keys(op.responses);
    expect(statuses(list)).toEqual(expect.arrayContaining(['400', '401', '403', '503']));
    expect(statuses(create)).toEqual(
      expect.arrayContaining(['400', '401', '403', '409', '413', '415', '503']),
    );
    expect(statuses(get)).toEqual(expect.arrayContaining(['400', '401', '403', '404', '503']));

    expect(codesOf(create.responses['400'])).toEqual(
      expect.arrayContaining(['VALIDATION_FAILED', 'APPLICATION_NOT_FOUND']),
    );
    expect(codesOf(create.responses['409'])).toEqual(['SCOPE_ALREADY_EXISTS']);
    expect(codesOf(get.responses['404'])).toEqual(['SCOPE_NOT_FOUND']);
    for (const op of [list, create, get]) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (status === '200') continue;
        expect(Number(status)).toBeGreaterThanOrEqual(400);
        expect(codesOf(response)).toEqual(expect.any(Array));
      }
    }
  });

  it('has a query parameter for every list filter of the spec, taken from ListServicesQuery', () => {
    const parameters = operation('/service', 'get').parameters ?? [];
    const byName = new Map(parameters.map((p) => [p.name, p]));
    const spec = [
      'id',
      'limit',
      'offset',
      'status',
      'entity_nrn',
      'type',
      'include_secret_attributes',
    ];
    for (const name of spec) {
      expect(byName.get(name), name).toMatchObject({ in: 'query', required: false });
      expect(byName.get(name)?.schema, name).toEqual(expect.any(Object));
    }
    expect([...byName.keys()].sort()).toEqual(Object.keys(ListServicesQuery.in.shape).sort());
    // The query as it arrives is strings; the transform's numbers are not what callers send.
    expect(byName.get('limit')?.schema).toMatchObject({ type: 'string', minLength: 1 });
    expect(byName.get('status')?.schema).toMatchObject({
      enum: expect.arrayContaining(['active']),
    });
    expect(byName.get('type')?.schema).toMatchObject({ enum: ['dependency', 'scope'] });
    expect(byName.get('id')?.description).toEqual(expect.any(String));
  });

  it('takes the scope id as a non-negative integer path parameter', () => {
    expect(operation('/scope/{id}', 'get').parameters).toEqual([
      expect.objectContaining({
        name: 'id',
        in: 'path',
        required: true,
        schema: expect.objectContaining({ type: 'integer', minimum: 0 }),
      }),
    ]);
  });

  it('asks for a bearer token on every operation', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
  });

  it('is built once, frozen, and takes its servers and version from the options', () => {
    expect(openApiDocument()).toBe(doc);
    expect(Object.isFrozen(doc)).toBe(true);
    expect(Object.isFrozen(component('Service'))).toBe(true);
    expect(doc.servers).toBeUndefined();
    expect(doc.info).toMatchObject({ title: 'nrn-operator facade', version: expect.any(String) });

    const served = openApiDocument({ serverUrl: 'http://127.0.0.1:8080', version: '9.9.9' });
    expect(served.servers).toEqual([{ url: 'http://127.0.0.1:8080' }]);
    expect(served.info).toMatchObject({ version: '9.9.9' });
    expect(openApiDocument({ serverUrl: 'http://127.0.0.1:8080', version: '9.9.9' })).toBe(served);
    expect((served.components as Json).schemas).toStrictEqual(schemas);
  });
});
