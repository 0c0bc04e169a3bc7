import { describe, expect, it } from 'vitest';
import {
  ApplicationSpec,
  CreateScopeRequest,
  describeIssues,
  ErrorBody,
  ListServicesQuery,
  MessageItem,
  Provisioner,
  SCOPE_PHASES,
  SERVICE_PHASES,
  ServiceItem,
  ServicePage,
  ServiceSpecificationSpec,
} from '../../src/api/index.js';

const issues = (result: { success: boolean; error?: unknown }) =>
  result.success ? '' : describeIssues(result.error as Parameters<typeof describeIssues>[0]);

describe('lifecycle enums', () => {
  it('are exactly the spec lists, in its order', () => {
    expect(SERVICE_PHASES).toEqual([
      'pending_create',
      'pending',
      'creating',
      'updating',
      'deleting',
      'active',
      'deleted',
      'failed',
    ]);
    expect(SCOPE_PHASES).toEqual([
      'pending',
      'creating',
      'active',
      'updating',
      'deleting',
      'deleted',
      'failed',
    ]);
  });
});

describe('message item', () => {
  it('defaults level to info and requires message', () => {
    expect(MessageItem.parse({ message: 'hi' })).toEqual({ level: 'info', message: 'hi' });
    for (const level of ['debug', 'info', 'information', 'warn', 'warning', 'error', 'fatal']) {
      expect(MessageItem.parse({ level, message: 'x' }).level).toBe(level);
    }
    expect(issues(MessageItem.safeParse({ level: 'info' }))).toBe('message: required');
    expect(issues(MessageItem.safeParse({ level: 'loud', message: 'x' }))).toMatch(/^level: /);
  });
});

describe('create-scope request', () => {
  const body = {
    name: 'web',
    type: 'serverless',
    application_id: 4,
    requested_spec: {},
  };

  it('accepts the required fields alone and every optional one', () => {
    expect(CreateScopeRequest.parse(body)).toEqual(body);
    const full = {
      ...body,
      requested_spec: { memory_in_gb: 0.5, cpu_profile: 'intensive', local_storage_in_gb: 10 },
      capabilities: { logs: { provider: 'x' }, auto_scaling: { enabled: true } },
      messages: { note: 'anything' },
    };
    expect(CreateScopeRequest.parse(full)).toEqual(full);
  });

  it.each(['name', 'type', 'application_id', 'requested_spec'])('requires %s', (field) => {
    const { [field as keyof typeof body]: _, ...rest } = body;
    expect(issues(CreateScopeRequest.safeParse(rest))).toBe(`${field}: required`);
  });

  it('refuses unknown fields, at the top and inside requested_spec', () => {
    expect(issues(CreateScopeRequest.safeParse({ ...body, nmae: 'x' }))).toBe(
      'unknown field: nmae',
    );
    expect(
      issues(CreateScopeRequest.safeParse({ ...body, requested_spec: { memory_gb: 1 } })),
    ).toBe('unknown field in requested_spec: memory_gb');
  });

  it.each([
    ['type', { type: 'vm' }],
    ['application_id', { application_id: '4' }],
    ['application_id', { application_id: 4.5 }],
    ['application_id', { application_id: -1 }],
    ['name', { name: '' }],
    ['requested_spec.cpu_profile', { requested_spec: { cpu_profile: 'turbo' } }],
    ['requested_spec.memory_in_gb', { requested_spec: { memory_in_gb: -1 } }],
    ['requested_spec.memory_in_gb', { requested_spec: { memory_in_gb: '1' } }],
    ['capabilities', { capabilities: [] }],
  ])('refuses a bad %s', (field, patch) => {
    expect(issues(CreateScopeRequest.safeParse({ ...body, ...patch }))).toMatch(
      new RegExp(`^${field.replace('.', '\\.')}: `),
    );
  });
});

describe('list-services query', () => {
  it('applies the defaults of docs/interface.md', () => {
    expect(ListServicesQuery.parse({})).toEqual({
      limit: 30,
      offset: 0,
      include_secret_attributes: false,
    });
  });

  it('parses every parameter', () => {
    expect(
      ListServicesQuery.parse({
        id: 'organization=1:account=*',
        limit: '10',
        offset: '20',
        status: 'pending_create',
        entity_nrn: 'organization=1:account=2',
        type: 'scope',
        include_secret_attributes: 'true',
      }),
    ).toEqual({
      id: 'organization=1:account=*',
      limit: 10,
      offset: 20,
      status: 'pending_create',
      entity_nrn: 'organization=1:account=2',
      type: 'scope',
      include_secret_attributes: true,
    });
  });

  it('takes nrn as an alias of id, and refuses two different NRNs', () => {
    expect(ListServicesQuery.parse({ nrn: 'organization=1' }).id).toBe('organization=1');
    expect(ListServicesQuery.parse({ id: 'organization=1', nrn: 'organization=1' }).id).toBe(
      'organization=1',
    );
    expect(
      issues(ListServicesQuery.safeParse({ id: 'organization=1', nrn: 'organization=2' })),
    ).toBe('nrn: id and its alias nrn name different NRNs');
  });

  it.each([
    ['id', { id: 'organization=x' }],
    ['nrn', { nrn: 'account=1' }],
    ['entity_nrn', { entity_nrn: '' }],
    ['status', { status: 'running' }],
    ['type', { type: 'database' }],
    ['include_secret_attributes', { include_secret_attributes: 'yes' }],
    ['include_secret_attributes', { include_secret_attributes: '' }],
    ['limit', { limit: ['1', '2'] }],
  ])('refuses a bad %s', (field, query) => {
    expect(issues(ListServicesQuery.safeParse(query))).toMatch(new RegExp(`^${field}: `));
  });

  it('refuses unknown parameters, so a typo never widens a result', () => {
    expect(issues(ListServicesQuery.safeParse({ stauts: 'active' }))).toBe('unknown field: stauts');
  });
});

describe('service item and page', () => {
  const item = {
    id: '0b8a3c57-7f0e-4e93-8c8a-2f1b2d3e4f50',
    name: 'db',
    slug: 'db',
    specification_id: '4f0e2a36-5f43-4a4b-9bf3-1c1e0f4f7d11',
    messages: [{ level: 'info', message: 'ok' }],
    created_at: '2026-11-22T10:00:00Z',
    updated_at: '2026-11-22T10:00:01.5+02:00',
    status: 'active',
    linkable_to: ['organization=1:account=*'],
    dimensions: { environment: 'prod' },
    attributes: { host: 'db.local', port: 5432 },
    entity_nrn: 'organization=1:account=2',
    selectors: { category: 'database', imported: false },
    imported: false,
    provider: 'aws',
    category: 'database',
    sub_category: 'postgres',
    type: 'dependency',
  };

  it('accepts every field of the spec, and none', () => {
    expect(ServiceItem.parse(item)).toEqual(item);
    expect(ServiceItem.parse({})).toEqual({});
  });

  it('never carries null for an absent value', () => {
    expect(issues(ServiceItem.safeParse({ ...item, provider: null }))).toMatch(/^provider: /);
  });

  it.each([
    ['id', { id: 'not-a-uuid' }],
    ['created_at', { created_at: '22/11/2026' }],
    ['linkable_to[0]', { linkable_to: ['org=1'] }],
    ['status', { status: 'running' }],
    ['type', { type: 'scopes' }],
  ])('refuses a bad %s', (field, patch) => {
    expect(issues(ServiceItem.safeParse({ ...item, ...patch }))).toMatch(
      new RegExp(`^${field.replace(/[[\]]/g, '\\$&')}: `),
    );
  });

  it('wraps results in the paging response', () => {
    const page = { paging: { limit: 30, offset: 0 }, results: [item] };
    expect(ServicePage.parse(page)).toEqual(page);
  });
});

describe('error body', () => {
  it('has the spec shape, code optional', () => {
    const body = { statusCode: 400, code: 'BAD_REQUEST', error: 'Bad Request', message: 'x' };
    expect(ErrorBody.parse(body)).toEqual(body);
    const { code: _, ...noCode } = body;
    expect(ErrorBody.parse(noCode)).toEqual(noCode);
    expect(issues(ErrorBody.safeParse({ ...body, stack: 'at x' }))).toBe('unknown field: stack');
  });
});

describe('resources', () => {
  it('Application nrn ends in its own id', () => {
    const app = { id: 10, name: 'shop', nrn: 'organization=1:account=2:application=10' };
    expect(ApplicationSpec.parse(app)).toEqual(app);
    expect(issues(ApplicationSpec.safeParse({ ...app, id: 11 }))).toBe(
      'nrn: must end in application=11',
    );
    expect(issues(ApplicationSpec.safeParse({ ...app, nrn: 'organization=1:account=2' }))).toMatch(
      /^nrn: /,
    );
  });

  it('a webhook provisioner needs a url; none is the default', () => {
    expect(issues(Provisioner.safeParse({ type: 'webhook' }))).toBe(
      'url: a webhook provisioner needs a url',
    );
    expect(
      Provisioner.parse({ type: 'webhook', url: 'http://127.0.0.1:1/x' }).deadline_seconds,
    ).toBe(1800);
    expect(issues(Provisioner.safeParse({ type: 'webhook', url: 'ftp://x/y' }))).toMatch(/^url: /);
    const spec = ServiceSpecificationSpec.parse({
      id: '4f0e2a36-5f43-4a4b-9bf3-1c1e0f4f7d11',
      name: 'postgres',
      type: 'dependency',
      attributes: { schema: { type: 'object' } },
    });
    expect(spec.provisioner).toEqual({ type: 'none', deadline_seconds: 1800 });
  });
});
