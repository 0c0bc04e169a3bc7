// A ScopeClass's manifest templates against their kinds' published OpenAPI v3 schemas (ADR
// 0031): unknown fields and wrong types at their paths, the placeholder rule (a whole-value
// placeholder anywhere, one inside text where a string goes), kube's extensions
// (int-or-string, preserve-unknown-fields, embedded resources, allOf-wrapped $refs); and the
// warning for child names two scopes of a class would share.
import { describe, expect, it } from 'vitest';
import { ScopeClassSpec } from '../../src/api/index.js';
import { sharedChildNameWarnings } from '../../src/domain/scope-classes/child-names.js';
import {
  MAX_SCHEMA_PROBLEMS,
  manifestSchemaProblems,
  type PublishedSchema,
} from '../../src/domain/scope-classes/manifest-schema.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** Definitions written as kube-apiserver's /openapi/v3 documents write them. */
const components = {
  ObjectMeta: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      namespace: { type: 'string' },
      labels: { type: 'object', additionalProperties: { type: 'string', default: '' } },
      annotations: { type: 'object', additionalProperties: { type: 'string', default: '' } },
    },
  },
  IntOrString: { type: 'string', format: 'int-or-string' },
  Quantity: { oneOf: [{ type: 'string' }, { type: 'number' }] },
  ConfigMap: {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { allOf: [ref('ObjectMeta')], default: {}, description: 'meta' },
      data: { type: 'object', additionalProperties: { type: 'string', default: '' } },
      immutable: { type: 'boolean' },
    },
  },
  Widget: {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: ref('ObjectMeta'),
      spec: {
        type: 'object',
        properties: {
          replicas: { type: 'integer' },
          ratio: { type: 'number' },
          port: {
            'x-kubernetes-int-or-string': true,
            anyOf: [{ type: 'integer' }, { type: 'string' }],
          },
          target: ref('IntOrString'),
          memory: ref('Quantity'),
          hosts: { type: 'array', items: { type: 'string' } },
          free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          raw: { type: 'object' },
          template: {
            type: 'object',
            'x-kubernetes-embedded-resource': true,
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: ref('ObjectMeta'),
            },
          },
        },
      },
    },
  },
};
const configMap: PublishedSchema = { schema: components.ConfigMap, components };
const widget: PublishedSchema = { schema: components.Widget, components };
const P = 'spec.resources[1].manifest';
const check = (manifest: unknown, published = configMap) =>
  manifestSchemaProblems(manifest, published, P);
const cm = (extra: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', labels: { app: '${application.slug}' } },
  ...extra,
});

describe('a manifest against its kind’s published schema', () => {
  it('takes a manifest that fits, placeholders included', () => {
    expect(check(cm({ data: { a: '1', b: 'id-${scope.id}', c: '${scope.nrn}' } }))).toEqual([]);
  });

  it('refuses an unknown field at its path, in the kind and in a $ref behind allOf', () => {
    expect(check(cm({ datta: { a: '1' } }))).toEqual([
      { path: `${P}.datta`, message: 'unknown field "datta"' },
    ]);
    expect(check({ ...cm({}), metadata: { name: 'x', lables: {} } })).toEqual([
      { path: `${P}.metadata.lables`, message: 'unknown field "lables"' },
    ]);
  });

  it('refuses a wrong type at its path', () => {
    expect(check(cm({ data: { a: 1 } }))).toEqual([
      { path: `${P}.data.a`, message: 'expected string, got integer' },
    ]);
    expect(check(cm({ immutable: 'yes' }))).toEqual([
      { path: `${P}.immutable`, message: 'expected boolean, got string' },
    ]);
    expect(check(cm({ data: ['a'] }))).toEqual([
      { path: `${P}.data`, message: 'expected object, got array' },
    ]);
  });

  it('takes a whole-value placeholder anywhere, one inside text only where a string goes', () => {
    const spec = (s: Record<string, unknown>) => ({ ...cm({}), kind: 'Widget', spec: s });
    expect(check(spec({ replicas: '${scope.requested_spec.memory_in_gb}' }), widget)).toEqual([]);
    expect(check(spec({ hosts: '${[scope.domain]}' }), widget)).toEqual([]);
    expect(check(cm({ immutable: '${true}' }))).toEqual([]);
    expect(check(spec({ replicas: '${scope.id}0' }), widget)).toEqual([
      {
        path: `${P}.spec.replicas`,
        message: expect.stringMatching(
          /^expected integer, got a string with a placeholder inside text/,
        ),
      },
    ]);
    // `$${` is literal text, not a placeholder.
    expect(check(spec({ replicas: '$${x}' }), widget)).toEqual([
      { path: `${P}.spec.replicas`, message: 'expected integer, got string' },
    ]);
  });

  it('knows int-or-string, quantities, open and embedded objects, numbers and arrays', () => {
    const spec = (s: Record<string, unknown>) => ({ ...cm({}), kind: 'Widget', spec: s });
    expect(
      check(
        spec({
          replicas: 2,
          ratio: 1,
          port: 'http',
          target: 8080,
          memory: 1.5,
          hosts: ['a', 'b-${scope.id}'],
          free: { anything: { goes: [1] } },
          raw: { not: 'described' },
          template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
        }),
        widget,
      ),
    ).toEqual([]);
    expect(
      check(
        spec({
          port: true,
          target: 1.5,
          memory: {},
          hosts: ['a', 2],
          ratio: '1',
          template: { spex: 1 },
        }),
        widget,
      ),
    ).toEqual([
      { path: `${P}.spec.port`, message: 'expected integer or string, got boolean' },
      { path: `${P}.spec.target`, message: 'expected integer or string, got number' },
      { path: `${P}.spec.memory`, message: 'expected string or number, got object' },
      { path: `${P}.spec.hosts[1]`, message: 'expected string, got integer' },
      { path: `${P}.spec.ratio`, message: 'expected number, got string' },
      { path: `${P}.spec.template.spex`, message: 'unknown field "spex"' },
    ]);
  });

  it('writes odd keys as template paths do, takes null as unset, and stops at a bound', () => {
    expect(check(cm({ data: { 'a.b': 2 }, immutable: null }))).toEqual([
      { path: `${P}.data["a.b"]`, message: 'expected string, got integer' },
    ]);
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    expect(check(cm({ data: many }))).toHaveLength(MAX_SCHEMA_PROBLEMS);
  });

  it('takes a Quantity as a string or a number, however the document writes it', () => {
    const quantity = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
    const published: PublishedSchema = {
      schema: { type: 'object', properties: { limits: { additionalProperties: ref(quantity) } } },
      components: { [quantity]: { type: 'string' } },
    };
    expect(check({ limits: { cpu: 1, memory: '1Gi' } }, published)).toEqual([]);
    expect(check({ limits: { cpu: true } }, published)).toEqual([
      { path: `${P}.limits.cpu`, message: 'expected string or number, got boolean' },
    ]);
  });

  it('checks nothing behind a reference the document lacks', () => {
    expect(check(cm({}), { schema: ref('Missing'), components })).toEqual([]);
  });
});

describe('child names two scopes of a class would share', () => {
  const spec = (resources: { name?: string; namespace?: string }[], pattern?: string) =>
    ScopeClassSpec.parse({
      scope_type: 'web_pool',
      ...(pattern !== undefined ? { namespace: { name: pattern } } : {}),
      resources: resources.map((r, i) => ({
        name: `r${i}`,
        manifest: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: r.name ?? 'x',
            ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
          },
        },
      })),
    });
  const namespaced = () => true;

  it('warns of a name in a fixed namespace that uses no per-scope placeholder, naming the path', () => {
    const warnings = sharedChildNameWarnings(
      spec([{ name: '${scope.slug}', namespace: 'shared' }]),
      namespaced,
    );
    expect(warnings).toEqual([
      expect.stringMatching(
        /^spec\.resources\[0\]\.manifest\.metadata\.name: "\$\{scope\.slug\}" in namespace "shared" is the same for every scope of this class/,
      ),
    ]);
  });

  it('takes scope.id, scope.nrn, a slug with its application, and the scope namespace of a per-scope pattern', () => {
    const names = [
      'cfg-${scope.id}',
      '${scope.nrn.replace(":", "-")}',
      '${application.id}-${scope.slug}',
      "${scope['id']}",
    ];
    for (const name of names) {
      expect(sharedChildNameWarnings(spec([{ name, namespace: 'shared' }]), namespaced)).toEqual(
        [],
      );
    }
    expect(
      sharedChildNameWarnings(
        spec([{ name: '${scope.namespace}', namespace: 'shared' }]),
        namespaced,
      ),
    ).toEqual([]);
    // The namespace pattern is the application's: scope.namespace is not one scope's.
    expect(
      sharedChildNameWarnings(
        spec([{ name: '${scope.namespace}', namespace: 'shared' }], 'app-${application.slug}'),
        namespaced,
      ),
    ).toHaveLength(1);
    // A namespace that is per scope makes the pair per scope.
    expect(
      sharedChildNameWarnings(spec([{ name: 'cfg', namespace: 'ns-${scope.id}' }]), namespaced),
    ).toEqual([]);
  });

  it('warns of a cluster-scoped kind, and leaves a child in the scope’s own namespace alone', () => {
    expect(sharedChildNameWarnings(spec([{ name: 'role-${scope.slug}' }]), () => false)).toEqual([
      expect.stringContaining('in a cluster-scoped kind'),
    ]);
    expect(sharedChildNameWarnings(spec([{ name: 'settings' }]), namespaced)).toEqual([]);
    expect(sharedChildNameWarnings(spec([{ name: 'settings' }]), () => undefined)).toEqual([]);
  });
});
