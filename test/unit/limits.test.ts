// Every row of the "Limits" table of docs/interface.md (the page-size maximum too): accepted at the
// bound, refused one past it, with the error naming the field. Each bound is checked on the
// zod schema and on the generated CRD schema, which the API server enforces for manifests.
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  buildCrd,
  CreateScopeRequest,
  describeIssues,
  KINDS,
  ListServicesQuery,
  Paging,
  Scope,
  ScopeSpec,
  ScopeStatus,
  ServiceItem,
  ServiceSpec,
} from '../../src/api/index.js';

const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
const crdSchema = (kind: keyof typeof KINDS, part: 'spec' | 'status') => {
  const [version] = buildCrd(KINDS[kind]).spec.versions as Array<{
    schema: { openAPIV3Schema: { properties: Record<string, object> } };
  }>;
  return ajv.compile(version?.schema.openAPIV3Schema.properties[part] ?? {});
};

const createBody = {
  name: 'web',
  type: 'web_pool',
  application_id: 10,
  requested_spec: { memory_in_gb: 1, cpu_profile: 'standard', local_storage_in_gb: 2 },
};
const serviceSpec = {
  name: 'db',
  type: 'dependency',
  specification_id: '4f0e2a36-5f43-4a4b-9bf3-1c1e0f4f7d11',
  entity_nrn: 'organization=1:account=2',
};
const scopeStatus = { status: 'active', id: 3, slug: 'web', domain: 'app-web-abcde.example.com' };

function expectRefusedNaming(schema: z.ZodType, value: unknown, field: string) {
  const result = schema.safeParse(value);
  expect(result.success).toBe(false);
  if (!result.success) expect(describeIssues(result.error)).toMatch(new RegExp(`(^|; )${field}: `));
}

const at = (n: number) => 'a'.repeat(n);

describe('Scope name: length at most 60 (request and response)', () => {
  it.each([
    ['create request', CreateScopeRequest, createBody],
    ['Scope response', Scope, {}],
    ['Scope resource spec', ScopeSpec, createBody],
  ] as const)('%s', (_, schema, base) => {
    expect(schema.safeParse({ ...base, name: at(60) }).success).toBe(true);
    expectRefusedNaming(schema, { ...base, name: at(61) }, 'name');
  });

  it('in the Scope CRD', () => {
    const validate = crdSchema('Scope', 'spec');
    expect(validate({ ...createBody, name: at(60) })).toBe(true);
    expect(validate({ ...createBody, name: at(61) })).toBe(false);
    expect(validate.errors?.[0]?.instancePath).toBe('/name');
  });
});

describe('Scope slug and domain: length at most 60', () => {
  const slug60 = `${at(59)}b`;
  it.each(['slug', 'domain'])('%s in the Scope response', (field) => {
    expect(Scope.safeParse({ [field]: slug60 }).success).toBe(true);
    expectRefusedNaming(Scope, { [field]: `${slug60}c` }, field);
  });
  it.each(['slug', 'domain'])('%s in the Scope resource status and CRD', (field) => {
    expect(ScopeStatus.safeParse({ ...scopeStatus, [field]: slug60 }).success).toBe(true);
    expectRefusedNaming(ScopeStatus, { ...scopeStatus, [field]: `${slug60}c` }, field);
    const validate = crdSchema('Scope', 'status');
    expect(validate({ ...scopeStatus, [field]: slug60 })).toBe(true);
    expect(validate({ ...scopeStatus, [field]: `${slug60}c` })).toBe(false);
    expect(validate.errors?.[0]?.instancePath).toBe(`/${field}`);
  });
});

describe('List parameters limit and offset: string length at least 1', () => {
  it.each(['limit', 'offset'])('%s', (field) => {
    expect(ListServicesQuery.safeParse({ [field]: '1' }).success).toBe(true);
    expectRefusedNaming(ListServicesQuery, { [field]: '' }, field);
  });
  it.each(['limit', 'offset'])('%s must hold a non-negative integer', (field) => {
    for (const bad of ['-1', '1.5', 'ten', ' 1', '0x10', '1e3']) {
      expectRefusedNaming(ListServicesQuery, { [field]: bad }, field);
    }
  });
  it('limit: 1 to 1500 (docs/interface.md), offset from 0', () => {
    expect(ListServicesQuery.parse({ limit: '1500', offset: '0' })).toMatchObject({
      limit: 1500,
      offset: 0,
    });
    expectRefusedNaming(ListServicesQuery, { limit: '1501' }, 'limit');
    expectRefusedNaming(ListServicesQuery, { limit: '0' }, 'limit');
  });
});

describe('Paging limit in the response: integer at least 1', () => {
  it('limit', () => {
    expect(Paging.safeParse({ limit: 1, offset: 0 }).success).toBe(true);
    expectRefusedNaming(Paging, { limit: 0, offset: 0 }, 'limit');
    expectRefusedNaming(Paging, { limit: 1.5, offset: 0 }, 'limit');
  });
});

describe('Service name, slug, provider, category, sub_category: length at least 1', () => {
  it.each(['name', 'slug', 'provider', 'category', 'sub_category'])('%s in the list item', (f) => {
    expect(ServiceItem.safeParse({ [f]: 'a' }).success).toBe(true);
    expectRefusedNaming(ServiceItem, { [f]: '' }, f);
  });
  it.each(['name', 'provider', 'category', 'sub_category'])('%s in the resource and CRD', (f) => {
    expect(ServiceSpec.safeParse({ ...serviceSpec, [f]: 'a' }).success).toBe(true);
    expectRefusedNaming(ServiceSpec, { ...serviceSpec, [f]: '' }, f);
    const validate = crdSchema('Service', 'spec');
    expect(validate({ ...serviceSpec, [f]: 'a' })).toBe(true);
    expect(validate({ ...serviceSpec, [f]: '' })).toBe(false);
    expect(validate.errors?.[0]?.instancePath).toBe(`/${f}`);
  });
});
