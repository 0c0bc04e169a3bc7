// The OpenAPI documents' parts on their own: a custom resource's schema as apiextensions-
// apiserver's builder publishes it in v3 and v2 (the cases of its builder_test.go), definition
// names and operation ids as kube-openapi spells them, goautoneg's Accept order, and the
// protobuf wire form of a Swagger 2.0 document (read back with a minimal decoder).
import { describe, expect, it } from 'vitest';
import { INFO, openApiV2 } from '../../../src/local/openapi/documents.js';
import { encodeSwagger } from '../../../src/local/openapi/gnostic.js';
import { definitionName, kindSchema } from '../../../src/local/openapi/kind-schemas.js';
import { pathsOf } from '../../../src/local/openapi/operations.js';
import { parseAccept } from '../../../src/local/openapi.js';
import type { ResourceType } from '../../../src/local/resource-type.js';
import { KUBERNETES_VERSION } from '../../../src/local/server.js';

type Json = Record<string, any>;

const custom = (schema?: Json): ResourceType => ({
  group: 'bar.k8s.io',
  version: 'v1',
  kind: 'Foo',
  listKind: 'FooList',
  resource: 'foos',
  singular: 'foo',
  namespaced: true,
  shortNames: [],
  categories: [],
  hasStatus: true,
  custom: true,
  nameRule: 'subdomain',
  ...(schema !== undefined ? { schema } : {}),
});

const builtin = (group: string, kind: string, resource: string): ResourceType => ({
  ...custom(),
  group,
  kind,
  listKind: `${kind}List`,
  resource,
  custom: false,
  hasStatus: false,
});

const GVK = [{ group: 'bar.k8s.io', kind: 'Foo', version: 'v1' }];
/** Properties and extensions, without the meta fields' descriptions (as builder_test wipes them). */
const shape = (s: Json): Json => {
  const properties = { ...s.properties };
  for (const meta of ['apiVersion', 'kind', 'metadata']) {
    if (properties[meta] !== undefined) {
      const { description: _, ...rest } = properties[meta];
      properties[meta] = rest;
    }
  }
  return { ...s, ...(s.properties !== undefined ? { properties } : {}) };
};
const META = (ref: string) => ({
  apiVersion: { type: 'string' },
  kind: { type: 'string' },
  metadata: { $ref: `${ref}io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta` },
});

describe("a custom resource's schema (apiextensions-apiserver's builder)", () => {
  it('is an open object without a schema', () => {
    for (const version of ['v2', 'v3'] as const) {
      expect(kindSchema(custom(), version)).toEqual({
        type: 'object',
        'x-kubernetes-group-version-kind': GVK,
      });
    }
  });

  it('gains apiVersion, kind and metadata (a $ref to ObjectMeta)', () => {
    const schema = { type: 'object', properties: { spec: { type: 'object' } } };
    expect(shape(kindSchema(custom(schema), 'v2'))).toEqual({
      type: 'object',
      properties: { spec: { type: 'object' }, ...META('#/definitions/') },
      'x-kubernetes-group-version-kind': GVK,
    });
    expect(shape(kindSchema(custom({ type: 'object' }), 'v3'))).toEqual({
      type: 'object',
      properties: META('#/components/schemas/'),
      'x-kubernetes-group-version-kind': GVK,
    });
  });

  it('says nothing in v2 when the root keeps unknown fields, and adds metadata in v3', () => {
    const schema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    expect(kindSchema(custom(schema), 'v2')).toEqual({
      type: 'object',
      'x-kubernetes-group-version-kind': GVK,
    });
    expect(shape(kindSchema(custom(schema), 'v3'))).toEqual({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: META('#/components/schemas/'),
      'x-kubernetes-group-version-kind': GVK,
    });
  });

  const withExtensions = {
    type: 'object',
    properties: {
      intOrString: { 'x-kubernetes-int-or-string': true },
      spelledOut: {
        'x-kubernetes-int-or-string': true,
        anyOf: [{ type: 'integer' }, { type: 'string' }],
      },
      bounded: { 'x-kubernetes-int-or-string': true, anyOf: [{ minimum: 42 }] },
      open: { 'x-kubernetes-preserve-unknown-fields': true },
      embedded: {
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        'x-kubernetes-preserve-unknown-fields': true,
      },
      nullableList: { type: 'array', nullable: true, items: { type: 'string' } },
      openList: {
        type: 'array',
        'x-kubernetes-preserve-unknown-fields': true,
        items: { type: 'string' },
      },
      withDefault: {
        type: 'string',
        default: 'x',
        example: 'y',
        'x-kubernetes-embedded-resource': false,
      },
    },
    required: ['nullableList', 'open'],
  };

  it('unfolds int-or-string and completes embedded resources in v3', () => {
    const p = (kindSchema(custom(withExtensions), 'v3') as Json).properties;
    expect(p.intOrString.anyOf).toEqual([{ type: 'integer' }, { type: 'string' }]);
    expect(p.spelledOut.allOf).toBeUndefined();
    expect(p.bounded).toEqual({
      'x-kubernetes-int-or-string': true,
      anyOf: [{ minimum: 42 }],
      allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }],
    });
    expect(Object.keys(p.embedded.properties)).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(p.embedded.required).toEqual(['kind', 'apiVersion']);
    expect(p.nullableList).toEqual({ type: 'array', nullable: true, items: { type: 'string' } });
    // What a structural schema does not hold is not published.
    expect(p.withDefault).toEqual({ type: 'string', default: 'x' });
  });

  it('drops in v2 what Swagger 2.0 and kubectl cannot take (ToStructuralOpenAPIV2)', () => {
    const s = kindSchema(custom(withExtensions), 'v2') as Json;
    const p = s.properties;
    expect(p.intOrString).toEqual({ 'x-kubernetes-int-or-string': true });
    expect(p.bounded).toEqual({ 'x-kubernetes-int-or-string': true });
    expect(p.embedded).toEqual({
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(p.nullableList).toEqual({});
    expect(p.openList).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    expect(s.required).toEqual(['open']);
  });

  it('serves no defaults in v2', () => {
    const doc = openApiV2([custom(withExtensions)]) as Json;
    expect(doc.definitions['io.k8s.bar.v1.Foo'].properties.withDefault).toEqual({
      type: 'string',
    });
  });
});

describe('names', () => {
  it('names definitions after the CRD group, or the Go package of a built-in kind', () => {
    expect(definitionName(custom())).toBe('io.k8s.bar.v1.Foo');
    expect(definitionName(builtin('', 'ConfigMap', 'configmaps'))).toBe(
      'io.k8s.api.core.v1.ConfigMap',
    );
    expect(definitionName(builtin('coordination.k8s.io', 'Lease', 'leases'))).toBe(
      'io.k8s.api.coordination.v1.Lease',
    );
    expect(definitionName(builtin('events.k8s.io', 'Event', 'events'))).toBe(
      'io.k8s.api.events.v1.Event',
    );
    expect(
      definitionName(builtin('apiextensions.k8s.io', 'CustomResourceDefinition', 'crds')),
    ).toBe('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition');
  });

  it('names operations as apiserver does, and tags them by group version', () => {
    const ids = pathsOf({ ...custom(), group: 'platform.nrn.dev', version: 'v1alpha1' }).flatMap(
      (p) => p.operations.map((o) => `${o.operationId} ${o.tag}`),
    );
    expect(ids).toEqual([
      'listPlatformNrnDevV1alpha1FooForAllNamespaces platformNrnDev_v1alpha1',
      'listPlatformNrnDevV1alpha1NamespacedFoo platformNrnDev_v1alpha1',
      'createPlatformNrnDevV1alpha1NamespacedFoo platformNrnDev_v1alpha1',
      'deletePlatformNrnDevV1alpha1CollectionNamespacedFoo platformNrnDev_v1alpha1',
      'readPlatformNrnDevV1alpha1NamespacedFoo platformNrnDev_v1alpha1',
      'replacePlatformNrnDevV1alpha1NamespacedFoo platformNrnDev_v1alpha1',
      'deletePlatformNrnDevV1alpha1NamespacedFoo platformNrnDev_v1alpha1',
      'patchPlatformNrnDevV1alpha1NamespacedFoo platformNrnDev_v1alpha1',
      'readPlatformNrnDevV1alpha1NamespacedFooStatus platformNrnDev_v1alpha1',
      'replacePlatformNrnDevV1alpha1NamespacedFooStatus platformNrnDev_v1alpha1',
      'patchPlatformNrnDevV1alpha1NamespacedFooStatus platformNrnDev_v1alpha1',
    ]);
    const core = pathsOf(builtin('', 'Event', 'events'))[1]?.operations[1];
    expect([core?.operationId, core?.tag, core?.description]).toEqual([
      'createCoreV1NamespacedEvent',
      'core_v1',
      'create an Event',
    ]);
  });

  it("says the version kube-apiserver's genericapiserver derives from ours", () => {
    expect(INFO.version).toBe(`v${KUBERNETES_VERSION.major}.${KUBERNETES_VERSION.minor}.0`);
  });
});

describe('Accept, as goautoneg orders it', () => {
  const order = (header: string) => parseAccept(header).map((c) => `${c.type}/${c.subtype};${c.q}`);
  it('puts higher q first, then named types before wildcards, keeping the order of ties', () => {
    expect(order('*/*;q=0.8, application/json;q=0.9, text/plain')).toEqual([
      'text/plain;1',
      'application/json;0.9',
      '*/*;0.8',
    ]);
    expect(order('*/*, application/*, application/json')).toEqual([
      'application/json;1',
      'application/*;1',
      '*/*;1',
    ]);
    expect(order('a/b;q=nope, *, bad, c/d')).toEqual(['c/d;1', '*/*;1', 'a/b;0']);
  });
});

/** Protocol buffers wire format, read back: field number → values (bytes for messages). */
function decode(buf: Buffer): Map<number, Array<bigint | Buffer>> {
  const fields = new Map<number, Array<bigint | Buffer>>();
  let at = 0;
  const varint = () => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = buf[at++] as number;
      v |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return v;
    }
  };
  while (at < buf.length) {
    const tag = Number(varint());
    const wire = tag & 7;
    let value: bigint | Buffer;
    if (wire === 0) value = varint();
    else if (wire === 1) {
      value = buf.subarray(at, at + 8);
      at += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      value = buf.subarray(at, at + length);
      at += length;
    } else throw new Error(`wire type ${wire}`);
    fields.set(tag >> 3, [...(fields.get(tag >> 3) ?? []), value]);
  }
  return fields;
}
const msg = (fields: Map<number, Array<bigint | Buffer>>, n: number, i = 0) =>
  decode(fields.get(n)?.[i] as Buffer);
const text = (fields: Map<number, Array<bigint | Buffer>>, n: number, i = 0) =>
  (fields.get(n)?.[i] as Buffer | undefined)?.toString('utf8');

describe("gnostic's protobuf form of a Swagger 2.0 document", () => {
  const doc = {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: 'v1.32.0' },
    paths: {
      '/apis/g/v1/foos': {
        parameters: [{ name: 'pretty', in: 'query', type: 'string', uniqueItems: true }],
        patch: {
          consumes: ['application/merge-patch+json'],
          operationId: 'patchGV1Foo',
          parameters: [
            { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/P' } },
          ],
          responses: { '200': { description: 'OK', schema: { $ref: '#/definitions/Foo' } } },
          'x-kubernetes-group-version-kind': { group: 'g', kind: 'Foo', version: 'v1' },
        },
      },
    },
    definitions: {
      Foo: {
        type: 'object',
        required: ['spec'],
        properties: {
          spec: { type: 'object', additionalProperties: false, minimum: -1.5, maxLength: 3 },
          mode: { type: 'string', enum: ['on', 'off'] },
        },
        'x-kubernetes-group-version-kind': [{ group: 'g', kind: 'Foo', version: 'v1' }],
      },
    },
  };

  it('writes the fields kubectl reads, by their numbers', () => {
    const top = decode(encodeSwagger(doc));
    expect(text(top, 1)).toBe('2.0');
    expect(text(msg(top, 2), 2)).toBe('v1.32.0');
    // Paths.path → NamedPathItem { name, PathItem.patch = 8 } → Operation.
    const named = msg(msg(top, 8), 2);
    expect(text(named, 1)).toBe('/apis/g/v1/foos');
    const item = msg(named, 2);
    const patch = msg(item, 8);
    expect(text(patch, 7)).toBe('application/merge-patch+json');
    expect(text(patch, 5)).toBe('patchGV1Foo');
    const extension = msg(patch, 13);
    expect(text(extension, 1)).toBe('x-kubernetes-group-version-kind');
    expect(JSON.parse(text(msg(extension, 2), 2) as string)).toEqual({
      group: 'g',
      kind: 'Foo',
      version: 'v1',
    });
    // A query parameter of the path: ParametersItem.parameter → NonBodyParameter.query = 3.
    const query = msg(msg(msg(msg(item, 9), 1), 2), 3);
    expect([text(query, 2), text(query, 4), text(query, 6), query.get(20)]).toEqual([
      'query',
      'pretty',
      'string',
      [1n],
    ]);
    // Definitions → NamedSchema { name, Schema }.
    const foo = msg(msg(msg(top, 9), 1), 2);
    expect(text(msg(foo, 22), 1)).toBe('object');
    expect(text(foo, 19)).toBe('spec');
    const properties = msg(foo, 25).get(1) as Buffer[];
    expect(properties.map((p) => text(decode(p), 1))).toEqual(['mode', 'spec']);
    const mode = msg(decode(properties[0] as Buffer), 2);
    expect((mode.get(20) as Buffer[]).map((e) => text(decode(e), 2))).toEqual([
      '"on"\n',
      '"off"\n',
    ]);
    const spec = msg(decode(properties[1] as Buffer), 2);
    // additionalProperties: false is written (a oneof member), the double and the int64 too.
    expect(msg(spec, 21).get(2)).toEqual([0n]);
    expect((spec.get(9) as Buffer[])[0]?.readDoubleLE()).toBe(-1.5);
    expect(spec.get(11)).toEqual([3n]);
  });

  it('refuses what gnostic would refuse', () => {
    expect(() =>
      encodeSwagger({ ...doc, definitions: { Foo: { type: 'string', nullable: true } } }),
    ).toThrow('Schema has invalid property: nullable');
  });
});
