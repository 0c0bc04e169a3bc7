// Secret properties below the top of the attributes: found through `properties` (and in-place
// subschemas and `$ref`), refused where no Secret key can name them, kept out of the plain
// spec, and merged in from the Secret under their dotted keys, typed as their schema says.
import { describe, expect, it } from 'vitest';
import {
  mergeAttributes,
  propertiesOf,
  resolveAttributes,
  SchemaCache,
} from '../../../src/domain/services/attributes.js';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    db: {
      type: 'object',
      properties: {
        host: { type: 'string' },
        password: { type: 'string', secret: true, minLength: 8 },
        port: { type: 'integer', secret: true },
        tls: {
          type: 'object',
          properties: { key: { type: 'string', secret: true }, mode: { enum: ['on', 'off'] } },
          additionalProperties: false,
        },
      },
      required: ['host', 'password'],
      additionalProperties: false,
    },
  },
  required: ['db'],
  additionalProperties: false,
};

const keysOf = (s: Record<string, unknown>) => [...propertiesOf(s).secret.keys()];

describe('propertiesOf: nested secret properties', () => {
  it('finds secrets at any depth through properties, keyed by the dotted path', () => {
    const { secret, problems } = propertiesOf(schema);
    expect(problems).toEqual([]);
    expect([...secret.values()]).toEqual([
      { key: 'db.password', path: ['db', 'password'], types: ['string'] },
      { key: 'db.port', path: ['db', 'port'], types: ['integer'] },
      { key: 'db.tls.key', path: ['db', 'tls', 'key'], types: ['string'] },
    ]);
  });

  it('keeps top-level secrets as they were', () => {
    const props = propertiesOf({
      properties: { password: { type: 'string', secret: true }, size: { type: 'string' } },
    });
    expect([...props.secret.keys()]).toEqual(['password']);
    expect(props.types.get('size')).toEqual(['string']);
  });

  it('follows allOf/anyOf/oneOf/if/then/else branches, which apply to the same value', () => {
    expect(
      keysOf({
        allOf: [{ properties: { a: { secret: true } } }],
        anyOf: [{ properties: { b: { properties: { c: { secret: true } } } } }],
        oneOf: [{ properties: { d: { secret: true } } }, { properties: { d: { type: 'string' } } }],
        if: { properties: { kind: { const: 'x' } } },
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else
        then: { properties: { e: { secret: true } } },
        else: { properties: { f: { secret: true } } },
      }),
    ).toEqual(['a', 'b.c', 'd', 'e', 'f']);
  });

  it('follows a $ref to a JSON pointer in the schema, types included', () => {
    const props = propertiesOf({
      $defs: {
        credentials: {
          type: 'object',
          properties: { user: { type: 'string' }, token: { secret: true, $ref: '#/$defs/port' } },
        },
        port: { type: 'integer' },
      },
      properties: {
        primary: { $ref: '#/$defs/credentials' },
        replica: { $ref: '#/$defs/credentials' },
      },
    });
    expect(props.problems).toEqual([]);
    expect([...props.secret.values()]).toEqual([
      { key: 'primary.token', path: ['primary', 'token'], types: ['integer'] },
      { key: 'replica.token', path: ['replica', 'token'], types: ['integer'] },
    ]);
  });

  it('treats a secret object as one value: marks inside it are covered by it', () => {
    const props = propertiesOf({
      properties: {
        db: {
          type: 'object',
          secret: true,
          properties: { password: { secret: true }, hosts: { items: { secret: true } } },
        },
      },
    });
    expect(props.problems).toEqual([]);
    expect([...props.secret.values()]).toEqual([{ key: 'db', path: ['db'], types: ['object'] }]);
  });

  it('does not take `secret: true` in data (enum, const, default, examples) for a mark', () => {
    const props = propertiesOf({
      properties: {
        a: { enum: [{ secret: true }], default: { secret: true }, examples: [{ secret: true }] },
        b: { const: { secret: true } },
      },
    });
    expect(props.secret.size).toBe(0);
    expect(props.problems).toEqual([]);
  });

  it('takes types from every branch at the place, but not from `not` or `if`', () => {
    const props = propertiesOf({
      properties: {
        a: { secret: true, anyOf: [{ type: 'integer' }, { type: 'boolean' }] },
        b: { secret: true, not: { type: 'integer' }, if: { type: 'number' } },
        port: { $ref: '#/$defs/port' },
      },
      $defs: { port: { type: 'integer' } },
    });
    expect(props.secret.get('a')?.types).toEqual(['integer', 'boolean']);
    expect(props.secret.get('b')?.types).toEqual([]);
    // Other keys of the Secret are read by the top-level types, through $ref too.
    expect(props.types.get('port')).toEqual(['integer']);
  });

  it('does not mind a $ref it cannot follow when nothing is secret', () => {
    expect(
      propertiesOf({ properties: { a: { $ref: 'https://example.com/a.json' } } }).problems,
    ).toEqual([]);
  });
});

describe('propertiesOf: secrets no Secret key can name', () => {
  const cases: [string, Record<string, unknown>, string, string[]][] = [
    [
      'in array items',
      {
        properties: { tags: { type: 'array', items: { properties: { token: { secret: true } } } } },
      },
      '#/properties/tags/items/properties/token has no fixed path in the attributes (it is under #/properties/tags/items)',
      ['tags'],
    ],
    [
      'in prefixItems',
      { properties: { pair: { prefixItems: [{ secret: true }] } } },
      'under #/properties/pair/prefixItems/0',
      ['pair'],
    ],
    [
      'in additionalProperties',
      { properties: { env: { additionalProperties: { secret: true } } } },
      'under #/properties/env/additionalProperties',
      ['env'],
    ],
    [
      'in patternProperties, deeper',
      {
        properties: {
          a: {
            properties: {
              b: { patternProperties: { '^x': { properties: { s: { secret: true } } } } },
            },
          },
        },
      },
      'mark attributes.a.b secret instead',
      ['a', 'b'],
    ],
    [
      'at the top of the schema',
      { type: 'object', secret: true },
      'marks the whole attributes',
      [],
    ],
    [
      'in a $ref reached from array items',
      {
        $defs: { item: { properties: { token: { secret: true } } } },
        properties: { list: { items: { $ref: '#/$defs/item' } } },
      },
      'secret: true at #/$defs/item/properties/token has no fixed path',
      ['list'],
    ],
    [
      'under a recursive $ref',
      {
        $defs: {
          node: {
            properties: { token: { secret: true }, child: { $ref: '#/$defs/node' } },
          },
        },
        properties: { tree: { $ref: '#/$defs/node' } },
      },
      '$ref "#/$defs/node" at #/$defs/node/properties/child/$ref is recursive',
      ['tree', 'child'],
    ],
    [
      'in a schema referring to itself',
      { properties: { password: { secret: true }, child: { $ref: '#' } } },
      '$ref "#" at #/properties/child/$ref is recursive',
      ['child'],
    ],
    [
      'beside a $ref that is not a JSON pointer',
      {
        properties: {
          password: { secret: true },
          other: { $ref: 'https://example.com/other.json' },
        },
      },
      '$ref "https://example.com/other.json" at #/properties/other/$ref is not a JSON pointer',
      ['other'],
    ],
    [
      'whose key Kubernetes refuses',
      { properties: { 'db password': { secret: true } } },
      'its Secret key would be "db password"',
      ['db password'],
    ],
  ];

  it.each(cases)('refuses a secret %s, naming where', (_, schema, message, holder) => {
    const props = propertiesOf(schema);
    expect(props.problems.length).toBeGreaterThan(0);
    expect(props.problems.join('; ')).toContain(message);
    expect(props.concealed).toContainEqual(holder);
  });

  it('refuses two secret paths that would share a key', () => {
    const props = propertiesOf({
      properties: {
        'db.password': { secret: true },
        db: { properties: { password: { secret: true } } },
      },
    });
    expect(props.problems).toEqual([
      'secret properties #/properties/db.password and #/properties/db/properties/password would share the Secret key "db.password": rename one',
      'secret properties #/properties/db.password and #/properties/db/properties/password would share the Secret key "db.password": rename one',
    ]);
    expect(props.secret.size).toBe(0);
    expect(props.concealed).toEqual([['db.password'], ['db', 'password']]);
  });

  it('does not refuse a mark below a secret property, whatever its place', () => {
    const props = propertiesOf({
      properties: { list: { secret: true }, other: {} },
      allOf: [{ properties: { list: { items: { secret: true } } } }],
    });
    expect(props.problems).toEqual([]);
    expect([...props.secret.keys()]).toEqual(['list']);
  });

  it('stops on a schema that expands too far, when it has secrets', () => {
    // Each level refers to the one below twice: 2^20 expansions if followed to the end.
    const $defs: Record<string, unknown> = { d20: { properties: { s: { secret: true } } } };
    for (let i = 0; i < 20; i++) {
      $defs[`d${i}`] = {
        properties: { a: { $ref: `#/$defs/d${i + 1}` }, b: { $ref: `#/$defs/d${i + 1}` } },
      };
    }
    const props = propertiesOf({ $defs, properties: { root: { $ref: '#/$defs/d0' } } });
    expect(props.problems.join('; ')).toContain('too many to find its secret properties');
    expect(props.concealed).toContainEqual([]);
  });

  it('is refused by SchemaCache.get, so the specification is InvalidSchema', () => {
    const cache = new SchemaCache();
    expect(() =>
      cache.get('uid-x', 1, {
        properties: { tags: { items: { properties: { t: { secret: true } } } } },
      }),
    ).toThrow(
      /secret: true at #\/properties\/tags\/items\/properties\/t has no fixed path.*mark attributes\.tags secret instead/,
    );
  });
});

describe('resolveAttributes: nested secrets', () => {
  const cache = new SchemaCache();
  const compiled = cache.get('uid-nested', 1, schema);

  it('refuses a nested secret in the plain spec, naming its path, never its value', () => {
    const result = resolveAttributes(
      compiled,
      { db: { host: 'h', password: 'hunter22x', tls: { key: 'PRIVATE-KEY-PEM' } } },
      {},
      undefined,
    );
    expect(result).toEqual({
      ok: false,
      reason: 'SecretInSpec',
      message:
        'attributes.db.password, attributes.db.tls.key are secret: put them in the Secret named by spec.secret_attributes_ref (keys db.password, db.tls.key), not in spec.attributes',
    });
  });

  it('merges values of dotted Secret keys into the nested objects, typed by the schema', () => {
    const plain = { name: 'orders', db: { host: 'db.internal', tls: { mode: 'on' } } };
    const before = JSON.stringify(plain);
    const result = resolveAttributes(
      compiled,
      plain,
      { 'db.password': 's3cret-value', 'db.port': '5432', 'db.tls.key': 'PEM' },
      'creds',
    );
    expect(result).toEqual({
      ok: true,
      attributes: {
        name: 'orders',
        db: {
          host: 'db.internal',
          password: 's3cret-value',
          port: 5432,
          tls: { mode: 'on', key: 'PEM' },
        },
      },
    });
    // The resource's own objects are not written to.
    expect(JSON.stringify(plain)).toBe(before);
  });

  it('makes the objects on the way when the plain spec has none', () => {
    const loose = new SchemaCache().get('uid-loose', 1, {
      properties: {
        a: { properties: { b: { properties: { c: { type: 'boolean', secret: true } } } } },
      },
    });
    expect(resolveAttributes(loose, {}, { 'a.b.c': 'true' }, 's')).toEqual({
      ok: true,
      attributes: { a: { b: { c: true } } },
    });
  });

  it('names nested fields in schema errors, secret values left out', () => {
    const result = resolveAttributes(
      compiled,
      { db: { host: 'h', tls: { mode: 'maybe' } } },
      { 'db.password': 'short', 'db.port': 'many' },
      'creds',
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe('InvalidAttributes');
    expect(result.message).toContain(
      'attributes.db.password: must NOT have fewer than 8 characters',
    );
    expect(result.message).toContain('attributes.db.port: must be integer');
    expect(result.message).toContain(
      'attributes.db.tls.mode: must be equal to one of the allowed values',
    );
    expect(result.message).not.toContain('short');
    expect(result.message).not.toContain('many');
  });

  it('names a missing nested secret as required', () => {
    const result = resolveAttributes(compiled, { db: { host: 'h' } }, {}, 'creds');
    expect(result).toMatchObject({ ok: false, message: 'attributes.db.password: required' });
  });

  it('refuses a secret whose parent in the plain spec is not an object', () => {
    const result = resolveAttributes(
      compiled,
      { db: 'postgres://u:p@h' },
      { 'db.password': 'x' },
      'creds',
    );
    expect(result).toEqual({
      ok: false,
      reason: 'InvalidAttributes',
      message:
        'attributes.db must be an object to hold secret attributes.db.password (key db.password of secret creds)',
    });
  });

  it('keeps other Secret keys top-level attributes, as before', () => {
    const open = new SchemaCache().get('uid-open', 1, {
      properties: {
        db: { properties: { password: { secret: true } } },
        region: { type: 'string' },
      },
    });
    expect(
      resolveAttributes(open, {}, { region: 'eu', 'db.password': 'p', 'x.y': 'z' }, 's'),
    ).toEqual({ ok: true, attributes: { region: 'eu', db: { password: 'p' }, 'x.y': 'z' } });
    const both = resolveAttributes(open, { region: 'us' }, { region: 'eu' }, 's');
    expect(both).toMatchObject({
      ok: false,
      message: 'attributes.region set both in spec.attributes and in secret s',
    });
  });

  it('merges a secret into an object the Secret itself gives as JSON', () => {
    const open = new SchemaCache().get('uid-json', 1, {
      properties: { db: { type: 'object', properties: { password: { secret: true } } } },
    });
    expect(resolveAttributes(open, {}, { db: '{"host":"h"}', 'db.password': 'p' }, 's')).toEqual({
      ok: true,
      attributes: { db: { host: 'h', password: 'p' } },
    });
  });

  it('keeps `__proto__` a property, in the plain spec and on the path', () => {
    const proto = new SchemaCache().get(
      'uid-proto',
      1,
      JSON.parse(
        '{"properties":{"__proto__":{"properties":{"x":{"type":"integer","secret":true}}}}}',
      ),
    );
    expect([...proto.secret.keys()]).toEqual(['__proto__.x']);
    const result = resolveAttributes(proto, {}, { '__proto__.x': '1' }, 's');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(Object.getPrototypeOf(result.attributes)).toBe(Object.prototype);
    expect(JSON.stringify(result.attributes)).toBe('{"__proto__":{"x":1}}');
  });

  it('mergeAttributes puts the values in without validating (a delete)', () => {
    const { attributes, unplaced } = mergeAttributes(
      compiled,
      { db: { host: 'h' }, extra: 1 },
      { 'db.password': 'p', 'db.port': 'x' },
    );
    expect(attributes).toEqual({ db: { host: 'h', password: 'p', port: 'x' }, extra: 1 });
    expect(unplaced).toEqual([]);
  });
});
