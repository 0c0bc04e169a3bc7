// The catalog behind GET /service: the Service item mapping (no nulls, secrets left out), each
// filter and its combinations, order and paging, updates and deletes, and a property test
// holding the index to a naive filter + sort + slice over random catalogs and queries.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../bench/support/random.js';
import {
  nrnEquals,
  nrnMatches,
  parseNrn,
  ServiceItem as ServiceItemSchema,
  type ServicePhase,
  type ServiceSpec,
  type ServiceType,
} from '../../../src/api/index.js';
import {
  type CatalogQuery,
  ServiceCatalog,
  type ServiceCatalogOptions,
  type ServiceObject,
  type SpecificationObject,
  type WatchedKind,
  withSecretValues,
} from '../../../src/facade/catalog/index.js';
import { serviceItem } from '../../../src/facade/catalog/render.js';
import { hiddenAttributes } from '../../../src/facade/catalog/secrets.js';

const SPEC_ID = '11111111-1111-4111-8111-111111111111';
const OTHER_SPEC_ID = '22222222-2222-4222-8222-222222222222';

const uidOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const at = (second: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, second)).toISOString();

interface ServiceInput {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly created?: string | undefined;
  readonly entity?: string;
  readonly links?: string[];
  readonly type?: ServiceType;
  readonly status?: ServicePhase;
  readonly attributes?: Record<string, unknown>;
  readonly specificationId?: string;
  readonly secretRef?: string;
  readonly spec?: Partial<ServiceSpec>;
}

let counter = 0;

function service(input: ServiceInput): ServiceObject {
  counter++;
  return {
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'Service',
    metadata: {
      name: input.name,
      namespace: input.namespace ?? 'team',
      uid: input.uid ?? uidOf(counter),
      resourceVersion: String(counter),
      ...('created' in input
        ? input.created === undefined
          ? {}
          : { creationTimestamp: input.created }
        : { creationTimestamp: at(0) }),
    },
    spec: {
      name: input.name,
      type: input.type ?? 'dependency',
      specification_id: input.specificationId ?? SPEC_ID,
      entity_nrn: input.entity ?? 'organization=1',
      ...(input.links !== undefined ? { linkable_to: input.links } : {}),
      ...(input.attributes !== undefined ? { attributes: input.attributes } : {}),
      ...(input.secretRef !== undefined
        ? { secret_attributes_ref: { name: input.secretRef } }
        : {}),
      ...input.spec,
    },
    ...(input.status !== undefined ? { status: { status: input.status } } : {}),
  };
}

function specification(
  name: string,
  id: string,
  properties: Record<string, Record<string, unknown>>,
  created = at(0),
): SpecificationObject {
  counter++;
  return {
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'ServiceSpecification',
    metadata: {
      name,
      namespace: 'team',
      uid: uidOf(900_000 + counter),
      resourceVersion: String(counter),
      creationTimestamp: created,
    },
    spec: {
      id,
      name,
      type: 'dependency',
      attributes: { schema: { type: 'object', properties } },
      provisioner: { type: 'none', deadline_seconds: 1800 },
    },
  };
}

/** Stands in for an Informer: a cache to list, and listeners to call. */
class FakeInformer<O> implements WatchedKind<O> {
  readonly objects: O[] = [];
  readonly cache = { list: () => [...this.objects] };
  private readonly listeners = {
    add: new Set<(o: O) => void>(),
    update: new Set<(o: O, old: O) => void>(),
    delete: new Set<(o: O) => void>(),
  };
  on(event: 'add' | 'delete', listener: (object: O) => void): () => void;
  on(event: 'update', listener: (object: O, old: O) => void): () => void;
  on(event: 'add' | 'update' | 'delete', listener: (object: O, old: O) => void): () => void {
    const set = this.listeners[event] as Set<(o: O, old: O) => void>;
    set.add(listener);
    return () => set.delete(listener);
  }
  emit(event: 'add' | 'delete', object: O): void;
  emit(event: 'update', object: O, old: O): void;
  emit(event: 'add' | 'update' | 'delete', object: O, old?: O): void {
    for (const l of this.listeners[event] as Set<(o: O, old: O) => void>) l(object, old ?? object);
  }
  get listenerCount(): number {
    return this.listeners.add.size + this.listeners.update.size + this.listeners.delete.size;
  }
}

const page = (catalog: ServiceCatalog, query: Partial<CatalogQuery> = {}) =>
  catalog.query({ limit: 30, offset: 0, ...query }).entries.map((e) => e.item.name ?? '');

function catalogOf(objects: ServiceObject[], options?: ServiceCatalogOptions): ServiceCatalog {
  const catalog = new ServiceCatalog(options);
  for (const object of objects) catalog.upsertService(object);
  return catalog;
}

function hasNull(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value !== 'object') return false;
  return Object.values(value as object).some(hasNull);
}

describe('serviceItem', () => {
  it('maps every field of the resource to the spec item, snake_case, nothing else', () => {
    const object: ServiceObject = {
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'Service',
      metadata: {
        name: 'orders-db',
        namespace: 'team',
        uid: uidOf(1),
        creationTimestamp: '2024-01-01T00:00:00Z',
      },
      spec: {
        name: 'Orders DB',
        type: 'dependency',
        specification_id: SPEC_ID,
        desired_specification_id: OTHER_SPEC_ID,
        entity_nrn: 'organization=1:account=2',
        linkable_to: ['organization=1:account=2:namespace=3'],
        dimensions: { env: 'prod' },
        selectors: { tier: 'gold' },
        attributes: { size: 'large', password: 'hunter2' },
        provider: 'aws',
        category: 'database',
        sub_category: 'postgres',
        imported: false,
        secret_attributes_ref: { name: 'orders-db-secrets' },
      },
      status: {
        status: 'active',
        slug: 'orders-db',
        messages: [{ level: 'info', message: 'ready' }],
        updated_at: '2024-01-02T00:00:00Z',
      },
    };
    const item = serviceItem(object, hiddenAttributes([['password']]));
    expect(item).toStrictEqual({
      id: uidOf(1),
      name: 'Orders DB',
      slug: 'orders-db',
      specification_id: SPEC_ID,
      desired_specification_id: OTHER_SPEC_ID,
      messages: [{ level: 'info', message: 'ready' }],
      created_at: '2024-01-01T00:00:00Z',
      updated_at: '2024-01-02T00:00:00Z',
      status: 'active',
      linkable_to: ['organization=1:account=2:namespace=3'],
      dimensions: { env: 'prod' },
      attributes: { size: 'large' },
      entity_nrn: 'organization=1:account=2',
      selectors: { tier: 'gold' },
      imported: false,
      provider: 'aws',
      category: 'database',
      sub_category: 'postgres',
      type: 'dependency',
    });
    // The spec's own (strict) item schema accepts it: no stray field, valid dates.
    expect(ServiceItemSchema.parse(item)).toEqual(item);
  });

  it('leaves out what has no value (never null) and derives what it can', () => {
    const object = service({
      name: 'Cache Store!',
      spec: { selectors: { imported: true } },
    });
    const item = serviceItem(object);
    expect(hasNull(item)).toBe(false);
    expect(Object.keys(item).sort()).toEqual(
      [
        'id',
        'name',
        'slug',
        'specification_id',
        'created_at',
        'updated_at',
        'entity_nrn',
        'selectors',
        'imported',
        'type',
      ].sort(),
    );
    expect(item.slug).toBe('cache-store');
    expect(item.updated_at).toBe(item.created_at);
    expect(item.imported).toBe(true); // from selectors.imported, spec.imported being absent
    expect(ServiceItemSchema.parse(item)).toEqual(item);

    const bare = serviceItem({
      apiVersion: 'v',
      kind: 'Service',
      metadata: { name: 'bare' },
    });
    expect(bare).toStrictEqual({});
  });

  it('prefers spec.imported over selectors.imported', () => {
    const item = serviceItem(
      service({ name: 'x', spec: { imported: false, selectors: { imported: true } } }),
    );
    expect(item.imported).toBe(false);
  });

  it('shares the attributes object when none is secret, copies it when some are', () => {
    const attributes = { size: 'l' };
    const object = service({ name: 'x', attributes });
    expect(serviceItem(object).attributes).toBe(attributes);
    expect(serviceItem(object, hiddenAttributes([['password']])).attributes).toBe(attributes);
    const withProto = JSON.parse('{"__proto__": {"x": 1}, "password": "p"}') as Record<
      string,
      unknown
    >;
    const stripped = serviceItem(
      service({ name: 'y', attributes: withProto }),
      hiddenAttributes([['password']]),
    );
    expect(JSON.stringify(stripped.attributes)).toBe('{"__proto__":{"x":1}}');
  });
});

describe('hiddenAttributes', () => {
  it('leaves out nested paths, copying only the objects on the way', () => {
    const tls = { mode: 'on', key: 'k' };
    const other = { a: 1 };
    const attributes = { db: { host: 'h', password: 'p', tls }, other };
    const item = serviceItem(
      service({ name: 'x', attributes }),
      hiddenAttributes([
        ['db', 'password'],
        ['db', 'tls', 'key'],
        ['missing', 'deep'],
      ]),
    );
    expect(item.attributes).toEqual({ db: { host: 'h', tls: { mode: 'on' } }, other: { a: 1 } });
    expect((item.attributes as { other: unknown }).other).toBe(other);
    expect(attributes.db.password).toBe('p');
    expect(tls.key).toBe('k');
  });

  it('lets a shorter path cover a longer one, in either order', () => {
    const attributes = { db: { password: 'p' }, keep: 1 };
    for (const paths of [
      [['db'], ['db', 'password']],
      [['db', 'password'], ['db']],
    ]) {
      expect(
        serviceItem(service({ name: 'x', attributes }), hiddenAttributes(paths)).attributes,
      ).toEqual({ keep: 1 });
    }
    expect(hiddenAttributes([['a'], []])).toBe(true);
    expect(serviceItem(service({ name: 'x', attributes }), true).attributes).toEqual({});
  });

  it('does not go into arrays or values that are not objects', () => {
    const attributes = { db: ['password'], s: 'password' };
    const item = serviceItem(
      service({ name: 'x', attributes }),
      hiddenAttributes([
        ['db', 'password'],
        ['s', 'password'],
      ]),
    );
    expect(item.attributes).toBe(attributes);
  });
});

describe('ServiceCatalog: secret attributes', () => {
  const schema = {
    size: { type: 'string' },
    password: { type: 'string', secret: true },
    port: { type: 'integer', secret: true },
  };

  it('leaves out the keys the specification marks secret, in the item and its JSON', () => {
    const catalog = new ServiceCatalog();
    catalog.upsertSpecification(specification('db', SPEC_ID, schema));
    catalog.upsertService(
      service({
        name: 'db',
        attributes: { size: 'l', password: 'hunter2' },
        secretRef: 'db-secrets',
      }),
    );
    const [entry] = catalog.query({ limit: 30, offset: 0 }).entries;
    expect(entry?.item.attributes).toEqual({ size: 'l' });
    expect(entry?.json).not.toContain('hunter2');
    expect(JSON.parse(entry?.json ?? '')).toEqual(entry?.item);
    expect(entry?.namespace).toBe('team');
    expect(entry?.name).toBe('db');
    expect(entry?.secret?.name).toBe('db-secrets');
    expect(entry?.secret?.keys).toEqual(['password', 'port']);
    expect(catalog.secretKeys(SPEC_ID)).toEqual(['password', 'port']);
    expect(catalog.secretKeys(OTHER_SPEC_ID)).toEqual([]);
  });

  it('has no secret info for a service without secret_attributes_ref', () => {
    const catalog = new ServiceCatalog();
    catalog.upsertSpecification(specification('db', SPEC_ID, schema));
    catalog.upsertService(service({ name: 'db' }));
    expect(catalog.query({ limit: 1, offset: 0 }).entries[0]?.secret).toBeUndefined();
  });

  it('re-renders the services of a specification when its secret keys change', () => {
    const catalog = new ServiceCatalog();
    catalog.upsertService(
      service({ name: 'db', attributes: { size: 'l', password: 'p' }, secretRef: 's' }),
    );
    catalog.upsertService(
      service({ name: 'other', specificationId: OTHER_SPEC_ID, attributes: { password: 'q' } }),
    );
    const attributes = () =>
      Object.fromEntries(
        catalog.query({ limit: 30, offset: 0 }).entries.map((e) => [e.name, e.item.attributes]),
      );
    // Its specification unknown yet: nothing is known to be secret.
    expect(attributes().db).toEqual({ size: 'l', password: 'p' });
    const spec = specification('db', SPEC_ID, schema);
    catalog.upsertSpecification(spec);
    expect(attributes()).toEqual({ db: { size: 'l' }, other: { password: 'q' } });
    expect(catalog.get('team', 'db')?.json).not.toContain('"password"');
    expect(catalog.get('team', 'db')?.secret?.keys).toEqual(['password', 'port']);
    // A second specification claiming the same id: what either calls secret stays hidden.
    const duplicate = specification('db-copy', SPEC_ID, { size: { type: 'string', secret: true } });
    catalog.upsertSpecification(duplicate);
    expect(attributes().db).toEqual({});
    catalog.removeSpecification(duplicate);
    expect(attributes().db).toEqual({ size: 'l' });
    // The schema changes: password is no longer secret.
    catalog.upsertSpecification(specification('db', SPEC_ID, { size: { type: 'string' } }));
    expect(attributes().db).toEqual({ size: 'l', password: 'p' });
    expect(catalog.get('team', 'db')?.secret?.keys).toEqual([]);
    // Its id changes: the services of the old id are re-rendered too.
    catalog.upsertSpecification(specification('db', SPEC_ID, schema));
    expect(attributes().db).toEqual({ size: 'l' });
    catalog.upsertSpecification(specification('db', OTHER_SPEC_ID, schema));
    expect(attributes()).toEqual({ db: { size: 'l', password: 'p' }, other: {} });
    catalog.removeSpecification(spec);
    expect(attributes()).toEqual({ db: { size: 'l', password: 'p' }, other: { password: 'q' } });
  });

  it('merges secret values on request, typed as the schema says', () => {
    const catalog = new ServiceCatalog();
    catalog.upsertSpecification(specification('db', SPEC_ID, schema));
    catalog.upsertService(service({ name: 'db', attributes: { size: 'l' }, secretRef: 's' }));
    const entry = catalog.get('team', 'db');
    if (entry === undefined) throw new Error('no entry');
    const shown = JSON.parse(
      withSecretValues(entry, { password: 'hunter2', port: '5432', unrelated: 'x' }),
    ) as { attributes: unknown };
    expect(shown.attributes).toEqual({ size: 'l', password: 'hunter2', port: 5432 });
    expect(withSecretValues(entry, {})).toBe(entry.json);
    expect(JSON.parse(withSecretValues(entry, { port: 'not json' })).attributes.port).toBe(
      'not json',
    );
  });
});

describe('ServiceCatalog: nested secret attributes', () => {
  const schema = {
    size: { type: 'string' },
    db: {
      type: 'object',
      properties: {
        host: { type: 'string' },
        password: { type: 'string', secret: true },
        tls: { type: 'object', properties: { key: { type: 'string', secret: true } } },
        port: { type: 'integer', secret: true },
      },
    },
  };
  const attributes = {
    size: 'l',
    db: { host: 'h', password: 'hunter2', tls: { key: 'PRIVATE-PEM', mode: 'on' } },
  };

  function catalogWith(input: Partial<ServiceInput> = {}): ServiceCatalog {
    const catalog = new ServiceCatalog();
    catalog.upsertSpecification(specification('db', SPEC_ID, schema));
    catalog.upsertService(service({ name: 'db', attributes, secretRef: 'db-secrets', ...input }));
    return catalog;
  }

  it('leaves nested secret values out of the item and its JSON, the resource untouched', () => {
    const before = JSON.stringify(attributes);
    const entry = catalogWith().get('team', 'db');
    expect(entry?.item.attributes).toEqual({ size: 'l', db: { host: 'h', tls: { mode: 'on' } } });
    expect(entry?.json).not.toContain('hunter2');
    expect(entry?.json).not.toContain('PRIVATE-PEM');
    expect(JSON.stringify(attributes)).toBe(before);
    expect(entry?.secret?.keys).toEqual(['db.password', 'db.port', 'db.tls.key']);
    expect(entry?.secret?.paths.get('db.tls.key')).toEqual(['db', 'tls', 'key']);
    expect(entry?.secret?.jsonValued).toEqual(new Set(['db.port']));
  });

  it('shares what holds no secret value', () => {
    const plain = { size: 'l', db: { host: 'h' } };
    const entry = catalogWith({ attributes: plain }).get('team', 'db');
    expect(entry?.item.attributes).toBe(plain);
  });

  it('merges nested secret values at their paths on request, typed as the schema says', () => {
    const entry = catalogWith().get('team', 'db');
    if (entry === undefined) throw new Error('no entry');
    const shown = JSON.parse(
      withSecretValues(entry, {
        'db.password': 'hunter2',
        'db.port': '5432',
        'db.tls.key': 'PEM',
        password: 'not a secret key',
      }),
    ) as { attributes: unknown };
    expect(shown.attributes).toEqual({
      size: 'l',
      db: { host: 'h', password: 'hunter2', port: 5432, tls: { mode: 'on', key: 'PEM' } },
    });
    // The rendered entry is not changed by it.
    expect(entry.item.attributes).toEqual({ size: 'l', db: { host: 'h', tls: { mode: 'on' } } });
  });

  it('makes the objects a secret value goes in, and skips one whose parent is not an object', () => {
    const bare = catalogWith({ attributes: { size: 'l' } }).get('team', 'db');
    if (bare === undefined) throw new Error('no entry');
    expect(JSON.parse(withSecretValues(bare, { 'db.tls.key': 'PEM' })).attributes).toEqual({
      size: 'l',
      db: { tls: { key: 'PEM' } },
    });
    const odd = catalogWith({ attributes: { db: 'a string' } }).get('team', 'db');
    if (odd === undefined) throw new Error('no entry');
    expect(withSecretValues(odd, { 'db.password': 'hunter2' })).toBe(odd.json);
  });

  it('hides what holds a secret the specification cannot address', () => {
    const catalog = new ServiceCatalog();
    catalog.upsertSpecification(
      specification('db', SPEC_ID, {
        size: { type: 'string' },
        users: { type: 'array', items: { properties: { token: { secret: true } } } },
      }),
    );
    catalog.upsertService(
      service({
        name: 'db',
        attributes: { size: 'l', users: [{ token: 't0k3n' }] },
        secretRef: 's',
      }),
    );
    const entry = catalog.get('team', 'db');
    expect(entry?.item.attributes).toEqual({ size: 'l' });
    expect(entry?.secret?.keys).toEqual([]);
    // One the schema gives no place at all hides every attribute.
    catalog.upsertSpecification(specification('db', SPEC_ID, { size: { type: 'string' } }));
    expect(catalog.get('team', 'db')?.item.attributes).toEqual({
      size: 'l',
      users: [{ token: 't0k3n' }],
    });
    const whole = specification('db', SPEC_ID, {});
    if (whole.spec === undefined) throw new Error('no spec');
    catalog.upsertSpecification({
      ...whole,
      spec: {
        ...whole.spec,
        attributes: {
          schema: { type: 'object', additionalProperties: { secret: true } },
        },
      },
    });
    expect(catalog.get('team', 'db')?.item.attributes).toEqual({});
  });

  it('re-renders when a property becomes a nested secret, and back', () => {
    const catalog = new ServiceCatalog();
    catalog.upsertSpecification(
      specification('db', SPEC_ID, { db: { properties: { password: { type: 'string' } } } }),
    );
    catalog.upsertService(
      service({ name: 'db', attributes: { db: { password: 'p', host: 'h' } }, secretRef: 's' }),
    );
    expect(catalog.get('team', 'db')?.item.attributes).toEqual({
      db: { password: 'p', host: 'h' },
    });
    catalog.upsertSpecification(specification('db', SPEC_ID, schema));
    expect(catalog.get('team', 'db')?.item.attributes).toEqual({ db: { host: 'h' } });
    expect(catalog.secretKeys(SPEC_ID)).toEqual(['db.password', 'db.port', 'db.tls.key']);
    catalog.upsertSpecification(specification('db', SPEC_ID, {}));
    expect(catalog.get('team', 'db')?.item.attributes).toEqual({
      db: { password: 'p', host: 'h' },
    });
    expect(catalog.secretKeys(SPEC_ID)).toEqual([]);
  });

  it('hides both places when claimants of one id put a key at different paths', () => {
    const catalog = new ServiceCatalog();
    catalog.upsertSpecification(
      specification('a', SPEC_ID, { 'db.password': { type: 'string', secret: true } }),
    );
    catalog.upsertSpecification(
      specification('b', SPEC_ID, { db: { properties: { password: { secret: true } } } }),
    );
    catalog.upsertService(
      service({
        name: 'db',
        attributes: { 'db.password': 'x', db: { password: 'y', host: 'h' } },
        secretRef: 's',
      }),
    );
    const entry = catalog.get('team', 'db');
    expect(entry?.item.attributes).toEqual({ db: { host: 'h' } });
    expect(entry?.secret?.keys).toEqual(['db.password']);
  });
});

// The owners of the NRN filter examples of docs/interface.md.
const ORG = 'organization=7';
const ACCOUNT = 'organization=7:account=8';
const APP = 'organization=7:account=8:namespace=9:application=10';
const OTHER_ACCOUNT = 'organization=7:account=99';

function designCatalog(options?: ServiceCatalogOptions): ServiceCatalog {
  return catalogOf(
    [
      service({ name: 'org', entity: ORG, created: at(1) }),
      service({ name: 'account', entity: ACCOUNT, created: at(2), type: 'scope' }),
      service({ name: 'app', entity: APP, created: at(3), status: 'active' }),
      service({ name: 'other', entity: OTHER_ACCOUNT, created: at(4), status: 'failed' }),
    ],
    options,
  );
}

describe.each([
  ['default', {}],
  ['scanning', { strategy: 'scan' }],
  ['from the NRN buckets', { strategy: 'index', nodeBudget: Number.POSITIVE_INFINITY }],
  ['from the NRN buckets, a small budget', { strategy: 'index', nodeBudget: 2 }],
] as const)('ServiceCatalog filters (%s)', (_, options) => {
  it.each([
    [ORG, ['org']],
    [ACCOUNT, ['org', 'account']],
    [APP, ['org', 'account', 'app']],
    ['organization=7:account=*', ['org', 'account', 'app', 'other']],
    [`${APP}:scope=11`, ['org', 'account', 'app']],
    ['organization=7:account=9*', ['org', 'other']],
    ['organization=8', []],
  ])('the NRN filter of docs/interface.md: %s sees %j', (nrn, expected) => {
    expect(page(designCatalog(options), { nrn })).toEqual(expected);
  });

  it('filters on entity_nrn exactly, a * matching any id at its level', () => {
    const catalog = designCatalog(options);
    expect(page(catalog, { entityNrn: ACCOUNT })).toEqual(['account']);
    expect(page(catalog, { entityNrn: 'organization=7:account=*' })).toEqual(['account', 'other']);
    expect(page(catalog, { entityNrn: 'organization=*' })).toEqual(['org']);
    expect(page(catalog, { entityNrn: 'organization=7:account=8:namespace=9' })).toEqual([]);
  });

  it('filters on type and status, and combines every filter', () => {
    const catalog = designCatalog(options);
    expect(page(catalog, { type: 'scope' })).toEqual(['account']);
    expect(page(catalog, { type: 'dependency' })).toEqual(['org', 'app', 'other']);
    expect(page(catalog, { status: 'failed' })).toEqual(['other']);
    expect(page(catalog, { status: 'deleted' })).toEqual([]);
    expect(page(catalog, { nrn: APP, type: 'dependency' })).toEqual(['org', 'app']);
    expect(page(catalog, { nrn: APP, status: 'active' })).toEqual(['app']);
    expect(page(catalog, { nrn: 'organization=7:account=*', status: 'failed' })).toEqual(['other']);
    expect(page(catalog, { nrn: APP, entityNrn: 'organization=7:account=*' })).toEqual(['account']);
    expect(
      page(catalog, {
        nrn: 'organization=7:account=*',
        entityNrn: 'organization=7',
        type: 'scope',
      }),
    ).toEqual([]);
  });

  it('shows a service wherever it is linkable, once', () => {
    const catalog = catalogOf(
      [
        service({
          name: 'shared',
          entity: 'organization=1:account=2',
          links: [
            'organization=1:account=3',
            'organization=1:account=2',
            'organization=1:account=3',
          ],
          created: at(1),
        }),
        service({
          name: 'everywhere',
          entity: 'organization=2',
          links: ['organization=*'],
          created: at(2),
        }),
      ],
      options,
    );
    expect(page(catalog, { nrn: 'organization=1:account=3' })).toEqual(['shared', 'everywhere']);
    expect(page(catalog, { nrn: 'organization=1:account=2:namespace=4' })).toEqual([
      'shared',
      'everywhere',
    ]);
    expect(page(catalog, { nrn: 'organization=1:account=*' })).toEqual(['shared', 'everywhere']);
    expect(page(catalog, { nrn: 'organization=3' })).toEqual(['everywhere']);
    expect(page(catalog, { entityNrn: 'organization=1:account=3' })).toEqual([]);
  });
});

describe('ServiceCatalog order and paging', () => {
  const many = () =>
    catalogOf([
      service({ name: 'c', uid: uidOf(3), created: at(5) }),
      service({ name: 'b', uid: uidOf(2), created: at(5) }),
      service({ name: 'd', uid: uidOf(1), created: at(9) }),
      service({ name: 'a', uid: uidOf(9), created: at(1) }),
      service({ name: 'e', uid: uidOf(4), created: at(9) }),
    ]);

  it('orders by created_at, then id', () => {
    expect(page(many())).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(page(many(), { nrn: 'organization=1' })).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('orders by the instant, whatever the notation', () => {
    const catalog = catalogOf([
      service({ name: 'late', created: '2024-01-01T01:00:00Z' }),
      service({ name: 'early', created: '2024-01-01T01:30:00+02:00' }),
      service({ name: 'undated', created: undefined }),
    ]);
    expect(page(catalog)).toEqual(['undated', 'early', 'late']);
    expect(catalog.get('team', 'undated')?.item.created_at).toBeUndefined();
  });

  it('pages: offset past the end, limit 1, the last partial page', () => {
    for (const query of [{}, { nrn: 'organization=1' }, { type: 'dependency' as const }]) {
      const catalog = many();
      expect(page(catalog, { ...query, offset: 5 })).toEqual([]);
      expect(page(catalog, { ...query, offset: 500 })).toEqual([]);
      expect(page(catalog, { ...query, limit: 1 })).toEqual(['a']);
      expect(page(catalog, { ...query, limit: 1, offset: 4 })).toEqual(['e']);
      expect(page(catalog, { ...query, limit: 2, offset: 2 })).toEqual(['c', 'd']);
      expect(page(catalog, { ...query, limit: 2, offset: 4 })).toEqual(['e']);
      expect(page(catalog, { ...query, limit: 0 })).toEqual([]);
    }
    expect(new ServiceCatalog().query({ limit: 30, offset: 0 }).entries).toEqual([]);
  });

  it('refuses a query NRN that is not one', () => {
    expect(() => many().query({ nrn: 'account=1', limit: 1, offset: 0 })).toThrow(/not an NRN/);
  });
});

describe('ServiceCatalog updates', () => {
  it('moves a service between buckets when its entity_nrn, links, type or status change', () => {
    const catalog = new ServiceCatalog();
    const first = service({ name: 'svc', entity: 'organization=1:account=2', created: at(1) });
    catalog.upsertService(first);
    catalog.upsertService(
      service({ name: 'peer', entity: 'organization=1:account=2', created: at(2) }),
    );
    expect(page(catalog, { nrn: 'organization=1:account=2' })).toEqual(['svc', 'peer']);
    const moved = service({
      name: 'svc',
      uid: first.metadata.uid ?? '',
      entity: 'organization=1:account=3',
      links: ['organization=2'],
      type: 'scope',
      status: 'active',
      created: at(1),
    });
    catalog.upsertService(moved);
    expect(catalog.size).toBe(2);
    expect(page(catalog, { nrn: 'organization=1:account=2' })).toEqual(['peer']);
    expect(page(catalog, { nrn: 'organization=1:account=3' })).toEqual(['svc']);
    expect(page(catalog, { nrn: 'organization=2' })).toEqual(['svc']);
    expect(page(catalog, { entityNrn: 'organization=1:account=3' })).toEqual(['svc']);
    expect(page(catalog, { type: 'scope' })).toEqual(['svc']);
    expect(page(catalog, { type: 'dependency' })).toEqual(['peer']);
    expect(page(catalog, { status: 'active' })).toEqual(['svc']);
    catalog.upsertService({ ...moved, status: { status: 'failed' } });
    expect(page(catalog, { status: 'active' })).toEqual([]);
    expect(page(catalog, { status: 'failed' })).toEqual(['svc']);
    expect(catalog.get('team', 'svc')?.item.status).toBe('failed');
  });

  it('re-files a service made again under its name (a new uid, a new created_at)', () => {
    const catalog = new ServiceCatalog();
    catalog.upsertService(service({ name: 'svc', created: at(1) }));
    catalog.upsertService(service({ name: 'peer', created: at(2) }));
    catalog.upsertService(service({ name: 'svc', created: at(3), uid: uidOf(77) }));
    expect(page(catalog)).toEqual(['peer', 'svc']);
    expect(page(catalog, { nrn: 'organization=1' })).toEqual(['peer', 'svc']);
    expect(catalog.get('team', 'svc')?.item.id).toBe(uidOf(77));
    // Alone at its NRN: unfiling it empties that trie node, which must not lose it.
    catalog.upsertService(service({ name: 'lone', entity: 'organization=5', created: at(4) }));
    catalog.upsertService(service({ name: 'lone', entity: 'organization=5', created: at(5) }));
    expect(page(catalog, { nrn: 'organization=5' })).toEqual(['lone']);
    expect(page(catalog, { nrn: 'organization=*' })).toEqual(['peer', 'svc', 'lone']);
  });

  it('deletes', () => {
    const catalog = designCatalog();
    catalog.removeService({ metadata: { name: 'account', namespace: 'team' } });
    catalog.removeService({ metadata: { name: 'nothing', namespace: 'team' } });
    expect(catalog.size).toBe(3);
    expect(page(catalog)).toEqual(['org', 'app', 'other']);
    expect(page(catalog, { nrn: APP })).toEqual(['org', 'app']);
    expect(page(catalog, { type: 'scope' })).toEqual([]);
    expect(catalog.get('team', 'account')).toBeUndefined();
  });

  it('follows informers once attached, and stops when detached', () => {
    const services = new FakeInformer<ServiceObject>();
    const specifications = new FakeInformer<SpecificationObject>();
    specifications.objects.push(
      specification('db', SPEC_ID, { password: { type: 'string', secret: true } }),
    );
    const loaded = service({ name: 'loaded', attributes: { password: 'p' }, created: at(1) });
    services.objects.push(loaded);
    const catalog = new ServiceCatalog();
    const detach = catalog.attach(services, specifications);
    expect(catalog.get('team', 'loaded')?.item.attributes).toEqual({});

    const added = service({ name: 'added', created: at(2) });
    services.emit('add', added);
    expect(page(catalog)).toEqual(['loaded', 'added']);
    const updated = { ...added, status: { status: 'active' as const } };
    services.emit('update', updated, added);
    expect(page(catalog, { status: 'active' })).toEqual(['added']);
    services.emit('delete', loaded);
    expect(page(catalog)).toEqual(['added']);
    const spec = specifications.objects[0] as SpecificationObject;
    specifications.emit('update', specification('db', SPEC_ID, {}), spec);
    specifications.emit('delete', spec);
    expect(catalog.secretKeys(SPEC_ID)).toEqual([]);
    specifications.emit('add', spec);
    expect(catalog.secretKeys(SPEC_ID)).toEqual(['password']);

    detach();
    expect(services.listenerCount + specifications.listenerCount).toBe(0);
    services.emit('add', service({ name: 'late' }));
    expect(catalog.size).toBe(1);
  });

  it.each([
    ['default', {}],
    ['from the NRN buckets', { strategy: 'index' }],
  ] as const)(
    'keeps thousands of services in order through updates and deletes (%s)',
    (_, options) => {
      const random = mulberry32(42);
      const pick = <T>(values: readonly T[]): T =>
        values[Math.floor(random() * values.length)] as T;
      const entities = [
        'organization=1',
        'organization=1:account=2',
        'organization=1:account=3',
        'organization=1:account=2:namespace=4',
        'organization=1:account=3:namespace=4:application=5',
        'organization=2:account=2:namespace=4:application=5',
        'organization=2:account=6',
      ];
      const links = [...entities, 'organization=1:account=*', 'organization=*:account=2'];
      const catalog = new ServiceCatalog(options);
      const live = new Map<string, ServiceObject>();
      const make = (name: string, seconds: number) => {
        const old = live.get(name);
        // Half the updates keep their place in the order (same uid and created_at).
        const keep = old !== undefined && random() < 0.5;
        return service({
          name,
          uid: keep ? (old.metadata.uid ?? '') : uidOf(Math.floor(random() * 1e9)),
          created: keep ? old.metadata.creationTimestamp : at(Math.floor(random() * seconds)),
          entity: pick(entities),
          links: random() < 0.3 ? [pick(links), pick(links)] : [],
          type: pick(['dependency', 'scope'] as const),
          status: pick(['active', 'failed', 'pending'] as const),
        });
      };
      for (let i = 0; i < 3000; i++) {
        const object = make(`s${i}`, 50);
        live.set(`s${i}`, object);
        catalog.upsertService(object);
      }
      const check = () => {
        for (const query of [
          {},
          { nrn: 'organization=1:account=2' },
          {
            nrn: 'organization=1:account=3:namespace=4:application=5:scope=9',
            type: 'scope' as const,
          },
          { nrn: 'organization=1:account=*', status: 'failed' as const },
          { nrn: 'organization=*', offset: 900 },
          { nrn: 'organization=2:account=*' },
          { nrn: 'organization=1:account=2:namespace=*', type: 'dependency' as const },
          { type: 'scope' as const, offset: 700 },
          { entityNrn: 'organization=1:account=3', limit: 1500 },
          { entityNrn: 'organization=*:account=2', status: 'pending' as const },
        ]) {
          const q: CatalogQuery = { limit: 100, offset: 0, ...query };
          expect(catalog.query(q).entries.map((e) => e.item.id)).toEqual(
            reference([...live.values()], q),
          );
        }
      };
      check();
      // Rounds of a few changes (filed one by one), of many (sorted at once), and of many within
      // one second (one by one into the same chunk, which splits).
      for (const [changes, seconds] of [
        [1, 50],
        [5, 50],
        [40, 50],
        [1200, 50],
        [3, 50],
        [300, 1],
        [2500, 50],
      ] as const) {
        for (let i = 0; i < changes; i++) {
          const name = `s${Math.floor(random() * 3500)}`;
          if (random() < 0.3 && live.has(name)) {
            live.delete(name);
            catalog.removeService({ metadata: { name, namespace: 'team' } });
          } else {
            const object = make(name, seconds);
            live.set(name, object);
            catalog.upsertService(object);
          }
        }
        check();
      }
      expect(catalog.size).toBe(live.size);
    },
  );
});

// --- The index against a naive reference ------------------------------------------------

function timeOf(object: ServiceObject): number {
  const ms = Date.parse(object.metadata.creationTimestamp ?? '');
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
}

function keyOf(object: ServiceObject): string {
  return `${object.metadata.namespace}/${object.metadata.name}`;
}

/** Filter everything, sort everything, slice: what the index must agree with. */
function reference(objects: readonly ServiceObject[], query: CatalogQuery): string[] {
  const q = query.nrn !== undefined ? parseNrn(query.nrn) : undefined;
  const e = query.entityNrn !== undefined ? parseNrn(query.entityNrn) : undefined;
  const nrns = (o: ServiceObject) =>
    [o.spec?.entity_nrn, ...(o.spec?.linkable_to ?? [])].flatMap((t) => {
      const parsed = t === undefined ? undefined : parseNrn(t);
      return parsed === undefined ? [] : [parsed];
    });
  return objects
    .filter((o) => q === undefined || nrns(o).some((owned) => nrnMatches(q, owned)))
    .filter((o) => {
      if (e === undefined) return true;
      const owner = parseNrn(o.spec?.entity_nrn ?? '');
      return owner !== undefined && nrnEquals(e, owner);
    })
    .filter((o) => query.type === undefined || o.spec?.type === query.type)
    .filter((o) => query.status === undefined || o.status?.status === query.status)
    .sort((a, b) => {
      const ta = timeOf(a);
      const tb = timeOf(b);
      if (ta !== tb) return ta < tb ? -1 : 1;
      const ua = a.metadata.uid ?? '';
      const ub = b.metadata.uid ?? '';
      if (ua !== ub) return ua < ub ? -1 : 1;
      return keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0;
    })
    .slice(query.offset, query.offset + query.limit)
    .map((o) => o.metadata.uid ?? '');
}

// NRNs from a small alphabet, so that services and queries meet often: levels skipped,
// wildcards alone, in a value (`1*`), at the end or in the middle.
const value = fc.oneof(
  { arbitrary: fc.constantFrom('1', '2', '*'), weight: 3 },
  { arbitrary: fc.constantFrom('12', '1*', '*2'), weight: 1 },
);
const segment = (level: string) => value.map((v) => `${level}=${v}`);
const nrnArb = fc
  .tuple(
    segment('organization'),
    fc.option(segment('account'), { freq: 3 }),
    fc.option(segment('namespace'), { freq: 2 }),
    fc.option(segment('application'), { freq: 2 }),
    fc.option(segment('scope'), { freq: 4 }),
  )
  .map((parts) => parts.filter((p) => p !== null).join(':'));
const concreteNrnArb = nrnArb.filter((n) => !n.includes('*'));
const ownedNrnArb = fc.oneof(
  { arbitrary: concreteNrnArb, weight: 4 },
  { arbitrary: nrnArb, weight: 1 },
);

const serviceArb = (name: fc.Arbitrary<string>) =>
  fc
    .record({
      name,
      namespace: fc.constantFrom('a', 'b'),
      uid: fc.integer({ min: 0, max: 12 }).map(uidOf),
      created: fc.option(fc.integer({ min: 0, max: 4 }).map(at), { freq: 8 }),
      entity: ownedNrnArb,
      links: fc.array(ownedNrnArb, { maxLength: 3 }),
      type: fc.constantFrom('dependency', 'scope') as fc.Arbitrary<ServiceType>,
      status: fc.option(
        fc.constantFrom('active', 'failed', 'pending') as fc.Arbitrary<ServicePhase>,
      ),
    })
    .map(({ created, status, ...rest }) =>
      service({ ...rest, created: created ?? undefined, ...(status !== null ? { status } : {}) }),
    );

const queryArb: fc.Arbitrary<CatalogQuery> = fc.record(
  {
    nrn: nrnArb,
    entityNrn: nrnArb,
    type: fc.constantFrom('dependency', 'scope') as fc.Arbitrary<ServiceType>,
    status: fc.constantFrom('active', 'failed', 'pending', 'deleted') as fc.Arbitrary<ServicePhase>,
    limit: fc.integer({ min: 1, max: 12 }),
    offset: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 25 })),
  },
  { requiredKeys: ['limit', 'offset'] },
);

const PROBES = [
  'organization=*',
  'organization=1*',
  'organization=1:account=*',
  'organization=*:account=*:namespace=*',
];

type Op =
  | { readonly op: 'upsert'; readonly object: ServiceObject }
  /** Changes a live service in place: its uid and created_at, so its order, stay. */
  | { readonly op: 'change'; readonly object: ServiceObject }
  | { readonly op: 'remove'; readonly name: string; readonly namespace: string }
  | { readonly op: 'query'; readonly query: CatalogQuery };

const nameArb = fc.constantFrom('s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: serviceArb(nameArb).map((object) => ({ op: 'upsert' as const, object })),
    weight: 4,
  },
  {
    arbitrary: fc
      .tuple(nameArb, fc.constantFrom('a', 'b'))
      .map(([name, namespace]) => ({ op: 'remove' as const, name, namespace })),
    weight: 1,
  },
  {
    arbitrary: serviceArb(nameArb).map((object) => ({ op: 'change' as const, object })),
    weight: 3,
  },
  { arbitrary: queryArb.map((query) => ({ op: 'query' as const, query })), weight: 3 },
);

describe('ServiceCatalog against a naive reference (property)', () => {
  it.each([
    ['default', {}],
    ['scanning', { strategy: 'scan' }],
    ['from the NRN buckets', { strategy: 'index', nodeBudget: Number.POSITIVE_INFINITY }],
    ['from the NRN buckets, a small budget', { strategy: 'index', nodeBudget: 4 }],
  ] as const)('answers every query as filter + sort + slice would (%s)', (_, options) => {
    fc.assert(
      fc.property(
        fc.array(serviceArb(fc.string({ minLength: 1, maxLength: 4 })), { maxLength: 40 }),
        fc.array(opArb, { maxLength: 40 }),
        (initial, ops) => {
          // The initial objects arrive as an informer's cache (filed in bulk), the ops one by one.
          const informer = new FakeInformer<ServiceObject>();
          const live = new Map<string, ServiceObject>();
          for (const object of initial) live.set(keyOf(object), object);
          informer.objects.push(...live.values());
          const catalog = new ServiceCatalog(options);
          catalog.attach(informer, new FakeInformer<SpecificationObject>());
          const check = (query: CatalogQuery) => {
            expect(catalog.query(query).entries.map((e) => e.item.id)).toEqual(
              reference([...live.values()], query),
            );
          };
          for (const op of ops) {
            if (op.op === 'upsert') {
              live.set(keyOf(op.object), op.object);
              informer.emit('add', op.object);
            } else if (op.op === 'change') {
              const old = live.get(keyOf(op.object));
              if (old === undefined) continue;
              const object = { ...op.object, metadata: old.metadata };
              live.set(keyOf(object), object);
              informer.emit('update', object, old);
            } else if (op.op === 'remove') {
              const key = `${op.namespace}/${op.name}`;
              const object = live.get(key);
              live.delete(key);
              if (object !== undefined) informer.emit('delete', object);
            } else {
              check(op.query);
              continue;
            }
            // Broad queries after every change: what a change left behind shows in them.
            for (const nrn of PROBES) check({ nrn, limit: 100, offset: 0 });
          }
          expect(catalog.size).toBe(live.size);
          check({ limit: 100, offset: 0 });
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('ServiceCatalog.version', () => {
  it('moves with every change a page could show, and not on an informer resync', () => {
    const catalog = new ServiceCatalog();
    const seen = [catalog.version];
    const moved = () => {
      const now = catalog.version;
      const changed = now !== seen[seen.length - 1];
      seen.push(now);
      return changed;
    };
    const first = service({ name: 'a' });
    catalog.upsertService(first);
    expect(moved()).toBe(true);
    catalog.upsertService(first); // the same object again: a resync
    expect(moved()).toBe(false);
    catalog.upsertService({ ...first, status: { status: 'active' } });
    expect(moved()).toBe(true);
    const spec = specification('s', SPEC_ID, { password: { type: 'string', secret: true } });
    catalog.upsertSpecification(spec);
    expect(moved()).toBe(true);
    catalog.removeSpecification(spec);
    expect(moved()).toBe(true);
    catalog.removeSpecification(spec); // already gone
    expect(moved()).toBe(false);
    catalog.removeService(first);
    expect(moved()).toBe(true);
    catalog.removeService(first);
    expect(moved()).toBe(false);
  });
});
