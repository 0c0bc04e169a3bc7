// Fast paths of the write path against what they stand in for: recordUpdate's create path
// (managedFields built straight from the new object) against the general one (trackUpdate
// from an empty live object), byte for byte on random objects of several kinds and field
// types; the JSON clone against structuredClone; sameJson against comparing JSON.stringify;
// zlib's CRC-32 against the JavaScript one; schema positions past the bound of those kept.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ListTypeInfo,
  recordUpdate,
  type UpdateOptions,
} from '../../../src/local/patch/index.js';
import { Schema } from '../../../src/local/patch/kind-schema.js';
import { clone, sameJson } from '../../../src/local/patch/util.js';
import { crc32, crc32Js } from '../../../src/local/storage/crc32.js';
import type { KubeObject } from '../../../src/local/types.js';

const T0 = '2026-11-22T10:00:00Z';

/** Field types that reach every branch: maps, sets, keyed lists, atomics, deduced, structs. */
const CRD_TYPES: ListTypeInfo = {
  'spec.attrs': { object: 'map' },
  'spec.attrs.*.tags': { list: 'set' },
  'spec.items': { list: 'map', keys: ['name', 'port'] },
  'spec.items[].env': { list: 'map', keys: ['name'] },
  'spec.tags': { list: 'set' },
  'spec.blob': { object: 'atomic' },
  'spec.free': { object: 'deduced' },
  'spec.order': { list: 'atomic' },
  status: { object: 'struct', alwaysPresent: true },
  'status.conditions': { list: 'map', keys: ['type'] },
};

const KINDS: Array<{ apiVersion: string; kind: string; listTypes?: ListTypeInfo }> = [
  { apiVersion: 'platform.nrn.dev/v1alpha1', kind: 'Scope', listTypes: CRD_TYPES },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'v1', kind: 'Namespace' },
  { apiVersion: 'v1', kind: 'ServiceAccount' },
  { apiVersion: 'v1', kind: 'ResourceQuota' },
];

const NAMES = ['name', 'port', 'type', 'env', 'tags', 'a', 'b', '__proto__', 'x.y'];
const scalar = fc.oneof(
  fc.constantFrom('a', 'b', '', 'name'),
  fc.integer({ min: -2, max: 3 }),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('json'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...NAMES), tie('json'), { maxKeys: 4 }),
  ),
})).json;
/** Keyed items that mostly carry their keys, sometimes not (the TypedError path), sometimes twice. */
const item = fc.record(
  {
    name: fc.constantFrom('a', 'b'),
    port: fc.constantFrom(1, 2),
    type: fc.constantFrom('Ready', 'Done'),
    env: fc.array(fc.record({ name: fc.constantFrom('x', 'y'), value }, { requiredKeys: [] })),
    other: value,
  },
  { requiredKeys: [] },
);

const spec = fc.record(
  {
    attrs: fc.dictionary(
      fc.constantFrom('p', 'q', '__proto__'),
      fc.oneof(fc.record({ tags: fc.array(scalar, { maxLength: 3 }) }), value),
    ),
    items: fc.array(item, { maxLength: 3 }),
    tags: fc.array(scalar, { maxLength: 3 }),
    blob: value,
    free: value,
    order: fc.array(value, { maxLength: 2 }),
    finalizers: fc.array(fc.constantFrom('kubernetes', 'x'), { maxLength: 2 }),
    other: value,
  },
  { requiredKeys: [] },
);

const object = fc.record(
  {
    metadata: fc.record(
      {
        name: fc.constant('n'),
        namespace: fc.constant('ns'),
        uid: fc.constant('u-1'),
        creationTimestamp: fc.constant(T0),
        generation: fc.constant(1),
        labels: fc.dictionary(fc.constantFrom('app', 'tier'), fc.constantFrom('a', 'b')),
        annotations: fc.dictionary(fc.constantFrom('note', 'x/y'), fc.string({ maxLength: 3 })),
        finalizers: fc.array(fc.constantFrom('f1', 'f2'), { maxLength: 3 }),
        ownerReferences: fc.array(
          fc.record(
            { uid: fc.constantFrom('o1', 'o2'), kind: fc.constant('K') },
            { requiredKeys: [] },
          ),
          { maxLength: 2 },
        ),
        managedFields: fc.constantFrom(undefined, [], [{}]),
      },
      { requiredKeys: ['name'] },
    ),
    spec: fc.oneof(spec, value),
    status: fc.oneof(
      fc.record(
        {
          conditions: fc.array(item, { maxLength: 2 }),
          phase: fc.constantFrom('Active', 'Terminating'),
        },
        { requiredKeys: [] },
      ),
      value,
    ),
    data: fc.dictionary(fc.constantFrom('k', 'v'), fc.oneof(fc.string({ maxLength: 2 }), value)),
    secrets: fc.array(item, { maxLength: 2 }),
    extra: value,
  },
  { requiredKeys: ['metadata'] },
);

const resetFields = fc.constantFrom<readonly string[] | undefined>(
  undefined,
  [],
  ['status'],
  ['spec.items', 'status'],
);

describe('recordUpdate on create', () => {
  it('records what the general path records, on random objects', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...KINDS),
        object,
        fc.constantFrom('kubectl', '', 'autocannon'),
        resetFields,
        (kind, body, manager, reset) => {
          const after = { apiVersion: kind.apiVersion, kind: kind.kind, ...body } as KubeObject;
          const options: UpdateOptions = {
            apiVersion: kind.apiVersion,
            now: T0,
            ...(kind.listTypes !== undefined ? { listTypes: kind.listTypes } : {}),
            ...(reset !== undefined ? { resetFields: reset } : {}),
          };
          const input = JSON.stringify(after);
          const fast = recordUpdate(undefined, after, manager, options);
          // A live object with nothing in it, not even a uid, takes the general path.
          const general = recordUpdate({} as KubeObject, after, manager, options);
          expect(JSON.stringify(fast)).toBe(JSON.stringify(general));
          // Neither changes what it was given.
          expect(JSON.stringify(after)).toBe(input);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('owns every field a plain create sets, as the real field manager does', () => {
    const created = recordUpdate(
      undefined,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c', namespace: 'ns', uid: 'u', labels: { app: 'a' } },
        data: { v: 'x' },
      },
      'kubectl',
      { apiVersion: 'v1', now: T0, resetFields: [] },
    );
    expect(created.metadata.managedFields).toEqual([
      {
        manager: 'kubectl',
        operation: 'Update',
        apiVersion: 'v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:data': { '.': {}, 'f:v': {} },
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
        },
      },
    ]);
  });
});

/** JSON-ish values with the awkward members: `__proto__` keys, undefined, NaN, -0, holes. */
const loose = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(
      fc.constantFrom('a', '', '1', 1, 0, -0, Number.NaN, Number.POSITIVE_INFINITY, true, false),
      fc.constant(null),
      fc.constant(undefined),
    ),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.sparseArray(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', '__proto__', '1', 'constructor'), tie('v'), {
      maxKeys: 3,
    }),
  ),
})).v;

describe('clone', () => {
  it('copies JSON as structuredClone does, sharing nothing', () => {
    fc.assert(
      fc.property(value, (v) => {
        const copy = clone(v);
        expect(copy).toStrictEqual(structuredClone(v));
        expect(JSON.stringify(copy)).toBe(JSON.stringify(v));
        if (typeof v === 'object' && v !== null) expect(copy).not.toBe(v);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps an own __proto__ member as a member', () => {
    const v = JSON.parse('{"__proto__":{"x":1},"a":[1,{"__proto__":2}]}') as unknown;
    const copy = clone(v) as Record<string, unknown>;
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(v));
  });

  it('hands what is not plain JSON to structuredClone', () => {
    const when = new Date(0);
    const copy = clone({ when }) as { when: Date };
    expect(copy.when).toBeInstanceOf(Date);
    expect(copy.when).not.toBe(when);
    expect(copy.when.getTime()).toBe(0);
  });
});

describe('sameJson', () => {
  it('agrees with comparing JSON.stringify', () => {
    fc.assert(
      fc.property(loose, loose, (a, b) => {
        expect(sameJson(a, b)).toBe(JSON.stringify(a) === JSON.stringify(b));
        expect(sameJson(a, clone(a))).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('counts key order, as the JSON text does', () => {
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson([undefined], [null])).toBe(true);
    expect(sameJson({ d: new Date(0) }, { d: '1970-01-01T00:00:00.000Z' })).toBe(true);
  });
});

describe('crc32', () => {
  it('gives what the JavaScript CRC gives, whole and continued', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.nat(100), (data, cut) => {
        const at = Math.min(cut, data.length);
        expect(crc32(data)).toBe(crc32Js(data));
        expect(crc32(data.subarray(at), crc32(data.subarray(0, at)))).toBe(crc32Js(data));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('schema positions', () => {
  it('are kept, up to a bound, and read the same past it', () => {
    const schema = Schema.of('example.dev/v1', 'Made', CRD_TYPES);
    const spec = schema.field(schema.root, 'spec');
    expect(schema.field(schema.root, 'spec')).toBe(spec);
    const attrs = schema.field(spec, 'attrs');
    expect(schema.objectKind(attrs)).toBe('map');
    // Made-up struct fields, far more than the schema keeps.
    const names = Array.from({ length: 10_000 }, (_, i) => `made${i}`);
    const first = names.map((name) => schema.field(spec, name));
    const again = names.map((name) => schema.field(spec, name));
    expect(again.map((p) => p.path)).toEqual(names.map((name) => `spec.${name}`));
    expect(again.filter((p, i) => p === first[i]).length).toBeLessThan(names.length);
    // Past the bound the typed positions still carry their types.
    const items = schema.field(schema.field(schema.root, 'spec'), 'items');
    expect(schema.listKind(items)).toEqual({ keys: ['name', 'port'] });
    expect(schema.listKind(schema.field(schema.item(items), 'env'))).toEqual({ keys: ['name'] });
    expect(schema.objectKind(schema.field(attrs, 'any'))).toBe('struct');
    expect(schema.listKind(schema.field(schema.field(attrs, 'other'), 'tags'))).toBe('set');
  });
});
