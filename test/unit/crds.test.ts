import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { allCrds, CrdSchemaError, renderCrdFiles, toStructural } from '../../src/api/index.js';
import { crdSchemaIssues, STRICTEST } from '../../src/local/schema/crd-schema.js';

const CRDS_DIR = join(import.meta.dirname, '../../crds');
type Version = {
  name: string;
  subresources?: { status?: object };
  additionalPrinterColumns: Array<{ name: string; jsonPath: string }>;
  schema: { openAPIV3Schema: Record<string, unknown> };
};
const dig = (value: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], value);
const versionOf = (crd: { spec: Record<string, unknown> }) =>
  (crd.spec.versions as Version[])[0] as Version;

/** OpenAPI v3.0's boolean exclusive bounds as draft-07 (Ajv's) numeric ones. */
function draft7(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(draft7);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = draft7(value);
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (out[flag] === true) {
      out[flag] = out[bound];
      delete out[bound];
    }
  }
  return out;
}

describe('crds/', () => {
  it('is what `npm run generate` writes from src/api (run it after changing a schema)', async () => {
    const expected = renderCrdFiles();
    const committed = (await readdir(CRDS_DIR)).filter((f) => f.endsWith('.yaml')).sort();
    expect(committed).toEqual([...expected.keys()].sort());
    for (const [name, text] of expected) {
      expect(await readFile(join(CRDS_DIR, name), 'utf8'), name).toBe(text);
    }
  });

  it('holds the five kinds of group platform.nrn.dev, category nrn; ScopeClass is cluster-scoped', () => {
    const crds = allCrds();
    expect(crds.map((c) => c.metadata.name).sort()).toEqual([
      'applications.platform.nrn.dev',
      'scopeclasses.platform.nrn.dev',
      'scopes.platform.nrn.dev',
      'services.platform.nrn.dev',
      'servicespecifications.platform.nrn.dev',
    ]);
    for (const crd of crds) {
      expect(crd.spec.scope).toBe(
        crd.metadata.name.startsWith('scopeclasses.') ? 'Cluster' : 'Namespaced',
      );
      expect((crd.spec.names as { categories: string[] }).categories).toEqual(['nrn']);
      expect(versionOf(crd).subresources).toEqual({ status: {} });
    }
  });

  it.each(allCrds().map((crd) => [crd.metadata.name, crd] as const))(
    '%s is a valid apiextensions.k8s.io/v1 CustomResourceDefinition',
    (_, crd) => {
      expect(() => new CustomResourceDefinition(crd as never).validate()).not.toThrow();
    },
  );

  it.each(allCrds().map((crd) => [crd.metadata.name, crd] as const))(
    '%s has a structural schema',
    (_, crd) => {
      expect(checkStructuralSchema(versionOf(crd).schema.openAPIV3Schema)).toEqual([]);
    },
  );

  it.each(allCrds().map((crd) => [crd.metadata.name, crd] as const))(
    '%s: every default validates against its own schema, as the API server requires',
    (_, crd) => {
      const ajv = new Ajv({ strict: false, validateFormats: false });
      const walk = (node: unknown, path: string): void => {
        if (typeof node !== 'object' || node === null) return;
        const schema = node as Record<string, unknown>;
        if ('default' in schema) {
          const { default: value, ...rest } = schema;
          expect(ajv.validate(draft7(rest) as object, value), `${path}: ${ajv.errorsText()}`).toBe(
            true,
          );
        }
        for (const [key, child] of Object.entries(schema)) walk(child, `${path}.${key}`);
      };
      walk(versionOf(crd).schema.openAPIV3Schema, '');
    },
  );

  it('prints the columns tools and people look for', () => {
    const columns = Object.fromEntries(
      allCrds().map((crd) => [
        (crd.spec.names as { kind: string }).kind,
        versionOf(crd).additionalPrinterColumns.map((c) => c.name.toUpperCase()),
      ]),
    );
    expect(columns.Scope).toEqual([
      'ID',
      'TYPE',
      'STATUS',
      'READY',
      'CLASS',
      'APP',
      'DOMAIN',
      'AGE',
    ]);
    expect(columns.ScopeClass).toEqual([
      'SCOPE-TYPE',
      'DEFAULT',
      'PROVISIONER',
      'SCOPES',
      'UP-TO-DATE',
      'READY',
      'AGE',
    ]);
    expect(columns.Service).toEqual(['TYPE', 'STATUS', 'READY', 'ENTITY', 'AGE']);
    expect(columns.Application).toEqual(['ID', 'NRN', 'READY', 'AGE']);
    expect(columns.ServiceSpecification).toEqual(['ID', 'TYPE', 'PROVISIONER', 'READY', 'AGE']);
    const service = allCrds().find((c) => c.metadata.name.startsWith('services.'));
    expect(dig(service, 'spec', 'names', 'shortNames')).toEqual(['nsvc']);
  });

  it('carries the spec bounds into the schema', () => {
    const scope = allCrds().find((c) => c.metadata.name.startsWith('scopes.'));
    const spec = dig(versionOf(scope as never).schema.openAPIV3Schema, 'properties', 'spec');
    expect(dig(spec, 'properties', 'name')).toMatchObject({ type: 'string', maxLength: 60 });
    expect(dig(spec, 'properties', 'type', 'enum')).toEqual([
      'web_pool',
      'scheduled_tasks',
      'serverless',
    ]);
    expect(dig(spec, 'required')).toEqual(['name', 'type', 'application_id', 'requested_spec']);
  });
});

describe('toStructural', () => {
  const convert = (schema: z.ZodType) => {
    const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input' });
    return toStructural(json);
  };

  it('turns records into maps or preserved objects, nullables into nullable, ints into int64', () => {
    expect(convert(z.record(z.string(), z.string()))).toEqual({
      type: 'object',
      additionalProperties: { type: 'string' },
    });
    expect(convert(z.record(z.string(), z.unknown()))).toEqual({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(convert(z.string().nullable())).toEqual({ type: 'string', nullable: true });
    expect(convert(z.number().int())).toEqual({ type: 'integer', format: 'int64' });
    expect(convert(z.object({ a: z.string() }).strict())).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    });
  });

  it('refuses what has no structural form, naming where', () => {
    expect(() => convert(z.object({ a: z.union([z.string(), z.object({})]) }))).toThrow(
      new CrdSchemaError('.a', 'anyOf has no structural form; restate the schema'),
    );
    expect(() => convert(z.object({ a: z.union([z.string(), z.number()]).array() }))).toThrow(
      CrdSchemaError,
    );
  });
});

/** Every issue kube-apiserver would find in this openAPIV3Schema, paths from `openAPIV3Schema`. */
const checkStructuralSchema = (schema: unknown) =>
  crdSchemaIssues({ openAPIV3Schema: schema }, '', { ...STRICTEST, statusEnabled: false });

describe('crdSchemaIssues', () => {
  const root = (properties: Record<string, unknown>) => ({ type: 'object', properties });
  it.each([
    ['a field with no type', root({ a: {} }), 'openAPIV3Schema.properties[a].type'],
    ['an unknown type', root({ a: { type: 'str' } }), 'openAPIV3Schema.properties[a].type'],
    [
      'properties beside additionalProperties',
      root({
        a: {
          type: 'object',
          properties: { b: { type: 'string' } },
          additionalProperties: { type: 'string' },
        },
      }),
      'openAPIV3Schema.properties[a].additionalProperties',
    ],
    [
      'an array with no items',
      root({ a: { type: 'array' } }),
      'openAPIV3Schema.properties[a].items',
    ],
    ['a $ref', root({ a: { $ref: '#/x' } }), 'openAPIV3Schema.properties[a].$ref'],
    [
      'a type inside anyOf',
      root({ a: { type: 'string', anyOf: [{ type: 'string' }] } }),
      'openAPIV3Schema.properties[a].anyOf[0].type',
    ],
    [
      'a lookahead pattern',
      root({ a: { type: 'string', pattern: '^(?!x)' } }),
      'openAPIV3Schema.properties[a].pattern',
    ],
    [
      'a map list keyed by an optional field',
      root({
        a: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['k'],
          items: { type: 'object', properties: { k: { type: 'string' } } },
        },
      }),
      'openAPIV3Schema.properties[a].items.properties[k].default',
    ],
    [
      'constraints on metadata beyond name',
      root({ metadata: { type: 'object', properties: { labels: { type: 'object' } } } }),
      'openAPIV3Schema.properties[metadata]',
    ],
    [
      'additionalProperties: false beside properties',
      root({
        a: { type: 'object', additionalProperties: false, properties: { b: { type: 'string' } } },
      }),
      'openAPIV3Schema.properties[a].additionalProperties',
    ],
  ])('finds %s', (_, schema, path) => {
    expect(checkStructuralSchema(schema).map((p) => p.field)).toContain(path);
  });

  it.each([
    ['a lookbehind', '(?<=a)b', 'invalid named capture: `(?<=a)b`'],
    ['a back-reference', '^(a)\\1$', 'invalid escape sequence: `\\1`'],
    ['a repetition of nothing', '+', 'missing argument to repetition operator: `+`'],
  ])('refuses %s as Go regexp.Compile does, in the server words', (_, pattern, why) => {
    expect(checkStructuralSchema(root({ a: { type: 'string', pattern } }))).toEqual([
      {
        field: 'openAPIV3Schema.properties[a].pattern',
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(pattern)}: must be a valid regular expression, but isn't: error parsing regexp: ${why}`,
      },
    ]);
  });

  it('accepts RE2 syntax that JavaScript does not have', () => {
    const patterns = [
      '\\A[a-z]+\\z',
      'a(?i)b',
      '^[[:alpha:]]+$',
      '^\\pL$',
      '(?P<w>x)',
      '\\Qa.b\\E',
    ];
    expect(
      checkStructuralSchema(
        root(
          Object.fromEntries(patterns.map((pattern, i) => [`p${i}`, { type: 'string', pattern }])),
        ),
      ),
    ).toEqual([]);
  });

  it('accepts preserved and int-or-string nodes without a type', () => {
    expect(
      checkStructuralSchema(
        root({
          a: { 'x-kubernetes-preserve-unknown-fields': true },
          b: { 'x-kubernetes-int-or-string': true },
          c: { type: 'string', anyOf: [{ pattern: '^a' }, { maxLength: 3 }] },
        }),
      ),
    ).toEqual([]);
  });

  it('accepts what apiextensions-apiserver accepts: an enum of another type, additionalProperties: false alone or true beside properties', () => {
    expect(
      checkStructuralSchema(
        root({
          a: { type: 'integer', enum: ['1'] },
          b: { type: 'object', additionalProperties: false },
          c: { type: 'object', additionalProperties: true, properties: { d: { type: 'string' } } },
        }),
      ),
    ).toEqual([]);
  });
});

describe('the CLI', () => {
  it('prints the CRDs as one YAML stream for kubectl apply -f -', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      join(import.meta.dirname, '../../src/cli.ts'),
      'crds',
    ]);
    const docs = stdout.split(/^---$/m).map((d) => parse(d));
    expect(docs.map((d) => d.metadata.name)).toEqual(allCrds().map((c) => c.metadata.name));
  });
});
