// Custom resources against their CRD schema: pruning, defaulting and validation with the
// messages a real API server gives, on hand-made schemas and on this project's CRDs.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { goFloat, goJSON, goQuote } from '../../../src/local/schema/goformat.js';
import {
  compileSchema,
  type FieldIssue,
  formatInvalid,
  invalidError,
} from '../../../src/local/schema/validate.js';

type Json = Record<string, unknown>;

const rootWith = (spec: Json): Json => ({
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec,
  },
});
const resource = (spec: unknown, extra: Json = {}) => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'default' },
  spec,
  ...extra,
});
/** A schema whose spec has the one property `v`. */
const withField = (v: Json, spec: Json = {}) =>
  compileSchema(rootWith({ type: 'object', properties: { v }, ...spec }));

const CRDS = join(import.meta.dirname, '../../../crds');
function crdSchema(file: string) {
  const crd = parse(readFileSync(join(CRDS, file), 'utf8')) as {
    spec: { versions: Array<{ schema: { openAPIV3Schema: Json } }> };
  };
  const version = crd.spec.versions[0];
  if (!version) throw new Error(`${file} has no version`);
  return compileSchema(version.schema.openAPIV3Schema);
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const child of Object.values(v)) deepFreeze(child);
    Object.freeze(v);
  }
  return v;
}

interface Rule {
  rule: string;
  schema: Json;
  ok: unknown;
  bad: unknown;
  reason: FieldIssue['reason'];
  message: string;
  field?: string;
}

const TOO_LONG = 'Too long: may not be more than 60 bytes';
const RULES: Rule[] = [
  {
    rule: 'maxLength',
    schema: { type: 'string', maxLength: 60 },
    ok: 'a'.repeat(60),
    bad: 'a'.repeat(61),
    reason: 'FieldValueTooLong',
    message: TOO_LONG,
  },
  {
    rule: 'maxLength counts code points, not UTF-16 units',
    schema: { type: 'string', maxLength: 3 },
    ok: '😀😀😀',
    bad: '😀😀😀😀',
    reason: 'FieldValueTooLong',
    message: 'Too long: may not be more than 3 bytes',
  },
  {
    rule: 'maxLength 1 (singular)',
    schema: { type: 'string', maxLength: 1 },
    ok: 'a',
    bad: 'ab',
    reason: 'FieldValueTooLong',
    message: 'Too long: may not be more than 1 byte',
  },
  {
    rule: 'minLength',
    schema: { type: 'string', minLength: 2 },
    ok: 'ab',
    bad: 'a',
    reason: 'FieldValueInvalid',
    message: 'Invalid value: "a": spec.v in body should be at least 2 chars long',
  },
  {
    rule: 'pattern',
    schema: { type: 'string', pattern: '^[a-z]+$' },
    ok: 'abc',
    bad: 'ab1',
    reason: 'FieldValueInvalid',
    message: `Invalid value: "ab1": spec.v in body should match '^[a-z]+$'`,
  },
  {
    rule: 'enum',
    schema: { type: 'string', enum: ['web_pool', 'scheduled_tasks', 'serverless'] },
    ok: 'serverless',
    bad: 'vm',
    reason: 'FieldValueNotSupported',
    message:
      'Unsupported value: "vm": supported values: "web_pool", "scheduled_tasks", "serverless"',
  },
  {
    rule: 'enum of integers',
    schema: { type: 'integer', enum: [1, 2] },
    ok: 2,
    bad: 3,
    reason: 'FieldValueNotSupported',
    message: 'Unsupported value: 3: supported values: "1", "2"',
  },
  {
    rule: 'minimum',
    schema: { type: 'integer', minimum: 0 },
    ok: 0,
    bad: -1,
    reason: 'FieldValueInvalid',
    message: 'Invalid value: -1: spec.v in body should be greater than or equal to 0',
  },
  {
    rule: 'maximum',
    schema: { type: 'integer', maximum: 10 },
    ok: 10,
    bad: 11,
    reason: 'FieldValueInvalid',
    message: 'Invalid value: 11: spec.v in body should be less than or equal to 10',
  },
  {
    rule: 'exclusiveMinimum',
    schema: { type: 'integer', minimum: 0, exclusiveMinimum: true },
    ok: 1,
    bad: 0,
    reason: 'FieldValueInvalid',
    message: 'Invalid value: 0: spec.v in body should be greater than 0',
  },
  {
    rule: 'exclusiveMaximum',
    schema: { type: 'integer', maximum: 10, exclusiveMaximum: true },
    ok: 9,
    bad: 10,
    reason: 'FieldValueInvalid',
    message: 'Invalid value: 10: spec.v in body should be less than 10',
  },
  {
    rule: 'multipleOf',
    schema: { type: 'integer', multipleOf: 5 },
    ok: 15,
    bad: 12,
    reason: 'FieldValueInvalid',
    message: 'Invalid value: 12: spec.v in body should be a multiple of 5',
  },
  {
    rule: 'multipleOf a fraction',
    schema: { type: 'number', multipleOf: 0.5 },
    ok: 2.5,
    bad: 2.25,
    reason: 'FieldValueInvalid',
    message: 'Invalid value: 2.25: spec.v in body should be a multiple of 0.5',
  },
  {
    rule: 'maximum on a float (Go prints float64 bounds with %v)',
    schema: { type: 'number', maximum: 1000000 },
    ok: 999999.5,
    bad: 1000000.5,
    reason: 'FieldValueInvalid',
    message: 'Invalid value: 1.0000005e+06: spec.v in body should be less than or equal to 1e+06',
  },
  {
    rule: 'minItems',
    schema: { type: 'array', items: { type: 'string' }, minItems: 1 },
    ok: ['a'],
    bad: [],
    reason: 'FieldValueInvalid',
    message: 'Invalid value: 0: spec.v in body should have at least 1 items',
  },
  {
    rule: 'maxItems',
    schema: { type: 'array', items: { type: 'string' }, maxItems: 2 },
    ok: ['a', 'b'],
    bad: ['a', 'b', 'c'],
    reason: 'FieldValueTooMany',
    message: 'Too many: 3: must have at most 2 items',
  },
  {
    rule: 'minProperties',
    schema: { type: 'object', additionalProperties: { type: 'string' }, minProperties: 1 },
    ok: { a: 'x' },
    bad: {},
    reason: 'FieldValueInvalid',
    message: 'Invalid value: 0: spec.v in body should have at least 1 properties',
  },
  {
    rule: 'maxProperties',
    schema: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1 },
    ok: { a: 'x' },
    bad: { a: 'x', b: 'y' },
    reason: 'FieldValueTooMany',
    message: 'Too many: 2: must have at most 1 item',
  },
  {
    rule: 'type string',
    schema: { type: 'string' },
    ok: '',
    bad: 1,
    reason: 'FieldValueTypeInvalid',
    message: 'Invalid value: "integer": spec.v in body must be of type string: "integer"',
  },
  {
    rule: 'type integer (a whole float is an integer)',
    schema: { type: 'integer' },
    ok: 3.0,
    bad: 1.5,
    reason: 'FieldValueTypeInvalid',
    message: 'Invalid value: "number": spec.v in body must be of type integer: "number"',
  },
  {
    rule: 'type number',
    schema: { type: 'number' },
    ok: 1,
    bad: '1',
    reason: 'FieldValueTypeInvalid',
    message: 'Invalid value: "string": spec.v in body must be of type number: "string"',
  },
  {
    rule: 'type boolean',
    schema: { type: 'boolean' },
    ok: false,
    bad: 'true',
    reason: 'FieldValueTypeInvalid',
    message: 'Invalid value: "string": spec.v in body must be of type boolean: "string"',
  },
  {
    rule: 'type object',
    schema: { type: 'object', additionalProperties: { type: 'string' } },
    ok: {},
    bad: [],
    reason: 'FieldValueTypeInvalid',
    message: 'Invalid value: "array": spec.v in body must be of type object: "array"',
  },
  {
    rule: 'type array',
    schema: { type: 'array', items: { type: 'string' } },
    ok: [],
    bad: {},
    reason: 'FieldValueTypeInvalid',
    message: 'Invalid value: "object": spec.v in body must be of type array: "object"',
  },
  {
    rule: 'x-kubernetes-int-or-string',
    schema: { 'x-kubernetes-int-or-string': true },
    ok: '50%',
    bad: true,
    reason: 'FieldValueTypeInvalid',
    message: 'Invalid value: "boolean": spec.v in body must be of type integer,string: "boolean"',
  },
  {
    rule: 'format date-time',
    schema: { type: 'string', format: 'date-time' },
    ok: '2024-02-29T23:59:59.123+02:00',
    bad: '2023-02-29T00:00:00Z',
    reason: 'FieldValueTypeInvalid',
    message:
      'Invalid value: "2023-02-29T00:00:00Z": spec.v in body must be of type date-time: "2023-02-29T00:00:00Z"',
  },
  {
    rule: 'format uuid',
    schema: { type: 'string', format: 'uuid' },
    ok: '123e4567-E89B-12d3-a456-426614174000',
    bad: '123e4567-e89b-12d3-a456',
    reason: 'FieldValueTypeInvalid',
    message:
      'Invalid value: "123e4567-e89b-12d3-a456": spec.v in body must be of type uuid: "123e4567-e89b-12d3-a456"',
  },
  {
    rule: 'format uri (an absolute URI or path)',
    schema: { type: 'string', format: 'uri' },
    ok: 'https://hooks.example.com:8443/provision?x=1',
    bad: 'hooks.example.com/provision',
    reason: 'FieldValueTypeInvalid',
    message:
      'Invalid value: "hooks.example.com/provision": spec.v in body must be of type uri: "hooks.example.com/provision"',
  },
  {
    rule: 'format byte (padded base64)',
    schema: { type: 'string', format: 'byte' },
    ok: 'aGVsbG8=',
    bad: 'aGVsbG8',
    reason: 'FieldValueTypeInvalid',
    message: 'Invalid value: "aGVsbG8": spec.v in body must be of type byte: "aGVsbG8"',
  },
  {
    rule: 'format date',
    schema: { type: 'string', format: 'date' },
    ok: '2024-12-31',
    bad: '2024-12-32',
    reason: 'FieldValueTypeInvalid',
    message: 'Invalid value: "2024-12-32": spec.v in body must be of type date: "2024-12-32"',
  },
  {
    rule: 'format int64 (ignored: the type speaks)',
    schema: { type: 'integer', format: 'int64' },
    ok: 2 ** 40,
    bad: 0.5,
    reason: 'FieldValueTypeInvalid',
    message: 'Invalid value: "number": spec.v in body must be of type integer: "number"',
  },
  {
    rule: 'x-kubernetes-list-type set',
    schema: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
    ok: ['a', 'b'],
    bad: ['a', 'b', 'a'],
    reason: 'FieldValueDuplicate',
    message: 'Duplicate value: "a"',
    field: 'spec.v[2]',
  },
  {
    rule: 'x-kubernetes-list-type map',
    schema: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, port: { type: 'integer' } },
        required: ['name'],
      },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    },
    ok: [
      { name: 'a', port: 1 },
      { name: 'b', port: 1 },
    ],
    bad: [
      { name: 'a', port: 1 },
      { name: 'a', port: 2 },
    ],
    reason: 'FieldValueDuplicate',
    message: 'Duplicate value: {"name":"a"}',
    field: 'spec.v[1]',
  },
];

describe('compileSchema(...).validate: value validations', () => {
  it.each(RULES)('$rule: accepted at its bound, refused one past it', (row) => {
    const schema = withField(row.schema);
    expect(schema.validate(resource({ v: row.ok })).issues).toEqual([]);
    expect(schema.validate(resource({ v: row.bad })).issues).toEqual([
      { field: row.field ?? 'spec.v', reason: row.reason, message: row.message },
    ]);
  });

  // The server evaluates `pattern` with Go's regexp: RE2 syntax, unanchored MatchString.
  it.each([
    ['\\A and \\z anchor the text', '\\A[a-z]+\\z', 'abc', 'abc\n'],
    ['a flag group past the start', '^a(?i)bc$', 'aBC', 'ABC'],
    ['a scoped flag group', '^(?i:ab)c$', 'ABc', 'ABC'],
    ['(?s) lets . match a newline', '^(?s)a.b$', 'a\nb', 'ab'],
    ['a POSIX class', '^[[:alpha:]]+$', 'abc', 'a]'],
    ['a one-letter Unicode class', '^\\pL+$', 'héllo', 'h3llo'],
    ['a code point in braces', '^\\x{1F600}$', '😀', 'x'],
    ['a quoted literal', '^\\Qa.b\\E$', 'a.b', 'axb'],
    ['a (?P<name>) group', '^(?P<word>[a-z]+)$', 'abc', 'ab1'],
    ['. matches one code point', '^.$', '😀', 'ab'],
    ['an unanchored pattern matches anywhere', '[0-9]', 'a1b', 'ab'],
  ])('pattern, %s: %j', (_, pattern, ok, bad) => {
    const schema = withField({ type: 'string', pattern });
    expect(schema.validate(resource({ v: ok })).issues).toEqual([]);
    expect(schema.validate(resource({ v: bad })).issues).toEqual([
      {
        field: 'spec.v',
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${goQuote(bad)}: spec.v in body should match '${pattern}'`,
      },
    ]);
  });

  // strfmt's duration: Go's time.ParseDuration, else a "<digits> <unit>" anywhere in the text.
  it.each([
    ['1h30m', true],
    ['-1.5µs', true],
    ['.5s', true],
    ['0', true],
    ['3 days', true],
    ['in 2\tweeks', true],
    ['10 Minutes, give or take', true],
    ['1 2h', true],
    ['5 parsecs', false],
    ['1.5', false],
    ['h', false],
    [`${'1'.repeat(10_000)}..`, false],
  ])('format duration: %.20j is %s', (value, ok) => {
    const issues = withField({ type: 'string', format: 'duration' }).validate(
      resource({ v: value }),
    ).issues;
    expect(issues).toEqual(
      ok
        ? []
        : [
            {
              field: 'spec.v',
              reason: 'FieldValueTypeInvalid',
              message: `Invalid value: ${goQuote(value)}: spec.v in body must be of type duration: ${goQuote(value)}`,
            },
          ],
    );
  });

  it('stops at the first failing string check, as the server does (maxLength, minLength, pattern)', () => {
    const schema = withField({ type: 'string', maxLength: 3, pattern: '^[a-z]+$' });
    expect(schema.validate(resource({ v: 'ABCDE' })).issues).toEqual([
      {
        field: 'spec.v',
        reason: 'FieldValueTooLong',
        message: 'Too long: may not be more than 3 bytes',
      },
    ]);
  });

  it('reports a missing required field at its path', () => {
    const schema = withField({ type: 'string' }, { required: ['v', 'w'] });
    expect(schema.validate(resource({})).issues).toEqual([
      { field: 'spec.v', reason: 'FieldValueRequired', message: 'Required value' },
      { field: 'spec.w', reason: 'FieldValueRequired', message: 'Required value' },
    ]);
    const root = compileSchema({ ...rootWith({ type: 'object' }), required: ['spec'] });
    expect(root.validate({ apiVersion: 'v1', kind: 'K', metadata: {} }).issues).toEqual([
      { field: 'spec', reason: 'FieldValueRequired', message: 'Required value' },
    ]);
  });

  it('names array items and map entries in paths', () => {
    const schema = compileSchema(
      rootWith({
        type: 'object',
        properties: {
          items: {
            type: 'array',
            items: { type: 'object', properties: { port: { type: 'integer', maximum: 65535 } } },
          },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
        },
      }),
    );
    const { issues } = schema.validate(
      resource({ items: [{ port: 80 }, { port: 70000 }], labels: { team: 7 } }),
    );
    expect(issues).toEqual([
      {
        field: 'spec.items[1].port',
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: 70000: spec.items[1].port in body should be less than or equal to 65535',
      },
      {
        field: 'spec.labels.team',
        reason: 'FieldValueTypeInvalid',
        message:
          'Invalid value: "integer": spec.labels.team in body must be of type string: "integer"',
      },
    ]);
  });

  it('applies nullable: null passes a nullable field, fails a non-nullable array item', () => {
    expect(
      withField({ type: 'string', nullable: true }).validate(resource({ v: null })).issues,
    ).toEqual([]);
    const list = withField({ type: 'array', items: { type: 'string' } });
    expect(list.validate(resource({ v: ['a', null] })).issues).toEqual([
      {
        field: 'spec.v[1]',
        reason: 'FieldValueTypeInvalid',
        message: 'Invalid value: "null": spec.v[1] in body must be of type string: "null"',
      },
    ]);
  });

  // field.Error prints a nil bad value as the string "null", quoted (ErrorBody).
  it('refuses null against an enum even when nullable (kube-openapi compares typed values)', () => {
    const schema = withField({ type: 'string', nullable: true, enum: ['a', 'b'] });
    expect(schema.validate(resource({ v: null })).issues).toEqual([
      {
        field: 'spec.v',
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "null": supported values: "a", "b"',
      },
    ]);
  });

  it('ignores formats the server does not know, and int32 ranges it does not check', () => {
    expect(
      withField({ type: 'string', format: 'k8s-nonsense' }).validate(resource({ v: 'x' })).issues,
    ).toEqual([]);
    expect(
      withField({ type: 'integer', format: 'int32' }).validate(resource({ v: 2 ** 40 })).issues,
    ).toEqual([]);
  });

  it('checks integer data against truncated integer bounds, as the server does', () => {
    const schema = withField({ type: 'integer', maximum: 1000000 });
    expect(schema.validate(resource({ v: 1000001 })).issues[0]?.message).toBe(
      'Invalid value: 1000001: spec.v in body should be less than or equal to 1000000',
    );
  });
});

describe('compileSchema(...).validate: allOf, anyOf, oneOf, not', () => {
  const composite = (message: string): FieldIssue => ({
    field: '<nil>',
    reason: 'FieldValueInvalid',
    message: `Invalid value: "": ${message}`,
  });

  it('anyOf: one branch suffices; else the failure and the best branch errors', () => {
    const schema = withField({ type: 'string', anyOf: [{ minLength: 3 }, { pattern: '^x' }] });
    expect(schema.validate(resource({ v: 'xy' })).issues).toEqual([]);
    expect(schema.validate(resource({ v: 'ab' })).issues).toEqual([
      composite('"spec.v" must validate at least one schema (anyOf)'),
      {
        field: 'spec.v',
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "ab": spec.v in body should be at least 3 chars long',
      },
    ]);
  });

  it('oneOf: exactly one branch', () => {
    const schema = withField({ type: 'integer', oneOf: [{ minimum: 0 }, { maximum: 10 }] });
    expect(schema.validate(resource({ v: -1 })).issues).toEqual([]);
    expect(schema.validate(resource({ v: 5 })).issues).toEqual([
      composite(
        '"spec.v" must validate one and only one schema (oneOf). Found 2 valid alternatives',
      ),
    ]);
  });

  it('allOf: every branch, with each failing branch reported', () => {
    const schema = withField({ type: 'string', allOf: [{ minLength: 2 }, { maxLength: 3 }] });
    expect(schema.validate(resource({ v: 'abc' })).issues).toEqual([]);
    expect(schema.validate(resource({ v: 'a' })).issues).toEqual([
      {
        field: 'spec.v',
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "a": spec.v in body should be at least 2 chars long',
      },
      composite('"spec.v" must validate all the schemas (allOf)'),
    ]);
  });

  it('not: the branch must fail', () => {
    const schema = withField({ type: 'string', not: { enum: ['root'] } });
    expect(schema.validate(resource({ v: 'user' })).issues).toEqual([]);
    expect(schema.validate(resource({ v: 'root' })).issues).toEqual([
      composite('"spec.v" must not validate the schema (not)'),
    ]);
  });
});

describe('compileSchema(...).validate: pruning', () => {
  const schema = compileSchema(
    rootWith({
      type: 'object',
      properties: {
        name: { type: 'string' },
        items: {
          type: 'array',
          items: { type: 'object', properties: { port: { type: 'integer' } } },
        },
        byName: {
          type: 'object',
          additionalProperties: { type: 'object', properties: { on: { type: 'boolean' } } },
        },
        free: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { known: { type: 'object', properties: { a: { type: 'string' } } } },
        },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } } },
        },
      },
    }),
  );

  it('drops unknown fields at every depth and reports their sorted paths', () => {
    const outcome = schema.validate(
      resource(
        {
          name: 'n',
          zeta: 1,
          alpha: { deep: true },
          items: [{ port: 1, bar: 2 }, { port: 2 }],
          byName: { x: { on: true, off: false } },
        },
        { extra: 'top' },
      ),
    );
    expect(outcome.unknownFields).toEqual([
      'extra',
      'spec.alpha',
      'spec.byName.x.off',
      'spec.items[0].bar',
      'spec.zeta',
    ]);
    expect(outcome.object).toEqual(
      resource({ name: 'n', items: [{ port: 1 }, { port: 2 }], byName: { x: { on: true } } }),
    );
    expect(outcome.issues).toEqual([]);
  });

  it('keeps apiVersion, kind and metadata at the root whatever the schema says of them', () => {
    const bare = compileSchema({ type: 'object', properties: { spec: { type: 'object' } } });
    const input = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', labels: { a: 'b' }, annotations: { c: 'd' }, finalizers: ['f'] },
      spec: {},
    };
    const outcome = bare.validate(input);
    expect(outcome.object).toEqual(input);
    expect(outcome.unknownFields).toEqual([]);
  });

  it('keeps unknown fields under x-kubernetes-preserve-unknown-fields, pruning the known ones', () => {
    const outcome = schema.validate(
      resource({ free: { anything: { goes: [1, { x: 2 }] }, known: { a: 'x', b: 'y' } } }),
    );
    expect(outcome.object).toEqual(
      resource({ free: { anything: { goes: [1, { x: 2 }] }, known: { a: 'x' } } }),
    );
    expect(outcome.unknownFields).toEqual(['spec.free.known.b']);
  });

  it('honours x-kubernetes-preserve-unknown-fields at the root, still sparing metadata', () => {
    const open = compileSchema({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: {
        metadata: { type: 'object' },
        spec: { type: 'object', properties: { a: { type: 'string' } } },
      },
    });
    const outcome = open.validate(resource({ a: 'x', b: 'y' }, { anything: { goes: 1 } }));
    expect(outcome.object).toEqual(resource({ a: 'x' }, { anything: { goes: 1 } }));
    expect(outcome.unknownFields).toEqual(['spec.b']);
  });

  it('keeps apiVersion, kind and metadata inside an embedded resource, and requires the first two', () => {
    const template = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', labels: { app: 'x' } },
      spec: { replicas: 1, extra: true },
    };
    const outcome = schema.validate(resource({ template }));
    expect(outcome.object).toEqual(resource({ template: { ...template, spec: { replicas: 1 } } }));
    expect(outcome.unknownFields).toEqual(['spec.template.spec.extra']);
    expect(outcome.issues).toEqual([]);

    const bad = schema.validate(resource({ template: { apiVersion: 'a/b/c' } })).issues;
    expect(bad).toEqual([
      { field: 'spec.template.kind', reason: 'FieldValueRequired', message: 'Required value' },
      {
        field: 'spec.template.apiVersion',
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      },
    ]);
  });

  it('checks metadata.name against the schema, without pruning the rest of metadata', () => {
    const named = compileSchema({
      type: 'object',
      properties: {
        metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 5 } } },
      },
    });
    const input = { apiVersion: 'v1', kind: 'K', metadata: { name: 'toolong', uid: 'u' } };
    const outcome = named.validate(input);
    expect(outcome.object).toEqual(input);
    expect(outcome.issues).toEqual([
      {
        field: 'metadata.name',
        reason: 'FieldValueTooLong',
        message: 'Too long: may not be more than 5 bytes',
      },
    ]);
  });
});

describe('compileSchema(...).validate: defaulting', () => {
  const schema = compileSchema(
    rootWith({
      type: 'object',
      properties: {
        level: { type: 'string', default: 'info' },
        maybe: { type: 'string', nullable: true, default: 'x' },
        gone: { type: 'string' },
        provisioner: {
          type: 'object',
          default: { type: 'none', stray: true },
          properties: {
            type: { type: 'string' },
            deadline: { type: 'integer', default: 1800 },
            retry: {
              type: 'object',
              default: {},
              properties: { max: { type: 'integer', default: 3 } },
            },
          },
        },
        tags: { type: 'array', items: { type: 'string', default: 'none' } },
        limits: { type: 'object', additionalProperties: { type: 'integer', default: 1 } },
      },
    }),
  );

  it('applies defaults to absent fields, top down, pruning the defaults themselves', () => {
    const { object, issues, unknownFields } = schema.validate(resource({}));
    expect(object).toEqual(
      resource({
        level: 'info',
        maybe: 'x',
        provisioner: { type: 'none', deadline: 1800, retry: { max: 3 } },
      }),
    );
    expect(issues).toEqual([]);
    expect(unknownFields).toEqual([]);
  });

  it('leaves a present value alone and fills in the missing children of a given object', () => {
    const { object } = schema.validate(
      resource({ level: 'debug', provisioner: { type: 'webhook', retry: { max: 0 } } }),
    );
    expect(object).toEqual(
      resource({
        level: 'debug',
        maybe: 'x',
        provisioner: { type: 'webhook', deadline: 1800, retry: { max: 0 } },
      }),
    );
  });

  it('defaults a null non-nullable field, keeps a null nullable one, drops a null without default', () => {
    const { object } = schema.validate(
      resource({ level: null, maybe: null, gone: null, tags: ['a', null], limits: { cpu: null } }),
    );
    expect(object).toEqual(
      resource({
        level: 'info',
        maybe: null,
        provisioner: { type: 'none', deadline: 1800, retry: { max: 3 } },
        tags: ['a', 'none'],
        limits: { cpu: 1 },
      }),
    );
  });

  it('reports a required field whose null was dropped as missing', () => {
    const required = withField({ type: 'string' }, { required: ['v'] });
    expect(required.validate(resource({ v: null })).issues).toEqual([
      { field: 'spec.v', reason: 'FieldValueRequired', message: 'Required value' },
    ]);
  });

  it('hands out a fresh copy of a default each time', () => {
    const first = schema.validate(resource({})).object as { spec: { provisioner: Json } };
    first.spec.provisioner.type = 'changed';
    const second = schema.validate(resource({})).object as { spec: { provisioner: Json } };
    expect(second.spec.provisioner.type).toBe('none');
  });
});

describe('compileSchema(...).validate: the input', () => {
  it('is never mutated: pruning, nulls and defaults all work on a copy', () => {
    const schema = crdSchema('servicespecifications.platform.nrn.dev.yaml');
    const input = deepFreeze({
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'ServiceSpecification',
      metadata: { name: 'postgres', labels: { a: 'b' } },
      spec: {
        id: '0f8fad5b-d9cb-469f-a165-70867728950e',
        name: 'Postgres',
        type: 'dependency',
        attributes: { schema: { type: 'object' }, unknown: 1 },
        selectors: null,
        extra: { deep: [1, 2] },
      },
      status: { messages: [{ message: 'hello' }] },
    });
    const snapshot = structuredClone(input);
    const outcome = schema.validate(input);
    expect(input).toEqual(snapshot);
    expect(outcome.unknownFields).toEqual(['spec.attributes.unknown', 'spec.extra']);
    const object = outcome.object as typeof snapshot & {
      spec: { provisioner: Json };
      status: { messages: Json[] };
    };
    expect(object).not.toBe(input);
    expect(object.metadata).not.toBe(input.metadata);
    expect(object.spec.provisioner).toEqual({ type: 'none', deadline_seconds: 1800 });
    expect(object.status.messages).toEqual([{ message: 'hello', level: 'info' }]);
    expect('selectors' in object.spec).toBe(false);
  });
});

describe("this project's CRDs", () => {
  const scopes = crdSchema('scopes.platform.nrn.dev.yaml');
  const scope = {
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'Scope',
    metadata: { name: 'web', namespace: 'team-a', labels: { 'nrn.dev/app': '7' } },
    spec: {
      name: 'web',
      type: 'web_pool',
      application_id: 7,
      requested_spec: { memory_in_gb: 1, cpu_profile: 'standard', local_storage_in_gb: 8 },
      capabilities: { scaling: { min: 1, max: 3 }, logs: true },
      tier: 'important',
      tags: ['a'],
      dimensions: { env: 'prod' },
    },
    status: {
      status: 'active',
      id: 12,
      slug: 'web',
      nrn: 'organization=1:account=2:namespace=3:application=7:scope=12',
      observedGeneration: 1,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Provisioned',
          message: '',
          lastTransitionTime: '2024-05-01T10:00:00Z',
          observedGeneration: 1,
        },
      ],
    },
  };

  it('Scope: a valid scope passes unchanged', () => {
    const outcome = scopes.validate(scope);
    expect(outcome).toEqual({ object: scope, unknownFields: [], issues: [] });
  });

  it('Scope: a 61-character name fails at spec.name', () => {
    const outcome = scopes.validate({ ...scope, spec: { ...scope.spec, name: 'n'.repeat(61) } });
    expect(outcome.issues).toEqual([
      { field: 'spec.name', reason: 'FieldValueTooLong', message: TOO_LONG },
    ]);
  });

  it('Scope: an unknown spec.foo is pruned and reported', () => {
    const outcome = scopes.validate({ ...scope, spec: { ...scope.spec, foo: 'bar' } });
    expect(outcome.unknownFields).toEqual(['spec.foo']);
    expect(outcome.object).toEqual(scope);
    expect(outcome.issues).toEqual([]);
  });

  it('Scope: everything wrong at once, in the order the server reports it', () => {
    const outcome = scopes.validate({
      ...scope,
      spec: { name: 'web', type: 'vm', application_id: -1, tags: ['a', 2] },
      status: {
        nrn: 'x',
        conditions: [
          scope.status.conditions[0],
          { ...scope.status.conditions[0], status: 'Maybe' },
        ],
      },
    });
    expect(outcome.issues).toEqual([
      {
        field: 'spec.type',
        reason: 'FieldValueNotSupported',
        message:
          'Unsupported value: "vm": supported values: "web_pool", "scheduled_tasks", "serverless"',
      },
      {
        field: 'spec.application_id',
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: -1: spec.application_id in body should be greater than or equal to 0',
      },
      {
        field: 'spec.tags[1]',
        reason: 'FieldValueTypeInvalid',
        message: 'Invalid value: "integer": spec.tags[1] in body must be of type string: "integer"',
      },
      { field: 'spec.requested_spec', reason: 'FieldValueRequired', message: 'Required value' },
      {
        field: 'status.nrn',
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: "x": status.nrn in body should match \'^organization=[0-9]+(:account=[0-9]+)?(:namespace=[0-9]+)?(:application=[0-9]+)?(:scope=[0-9]+)?$\'',
      },
      {
        field: 'status.conditions[1].status',
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "Maybe": supported values: "True", "False", "Unknown"',
      },
      {
        field: 'status.conditions[1]',
        reason: 'FieldValueDuplicate',
        message: 'Duplicate value: {"type":"Ready"}',
      },
    ]);
  });

  it('Application: a valid application passes; a bad NRN and slug fail', () => {
    const applications = crdSchema('applications.platform.nrn.dev.yaml');
    const app = {
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'Application',
      metadata: { name: 'shop' },
      spec: { id: 7, name: 'Shop', nrn: 'organization=1:account=2:namespace=3:application=7' },
    };
    expect(applications.validate(app).issues).toEqual([]);
    const bad = applications.validate({
      ...app,
      spec: { ...app.spec, nrn: 'organization=1', slug: 'Shop' },
    });
    expect(bad.issues.map((i) => i.field)).toEqual(['spec.nrn', 'spec.slug']);
  });

  it('Service: a valid service passes; a specification_id that is no UUID fails', () => {
    const services = crdSchema('services.platform.nrn.dev.yaml');
    const service = {
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'Service',
      metadata: { name: 'db' },
      spec: {
        name: 'db',
        type: 'dependency',
        specification_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
        entity_nrn: 'organization=1:account=*',
        attributes: { size: 'small', nested: { any: ['thing'] } },
        secret_attributes_ref: { name: 'db-secrets' },
      },
    };
    expect(services.validate(service)).toEqual({ object: service, unknownFields: [], issues: [] });
    const bad = services.validate({
      ...service,
      spec: { ...service.spec, specification_id: 'nope' },
    });
    expect(bad.issues).toEqual([
      {
        field: 'spec.specification_id',
        reason: 'FieldValueTypeInvalid',
        message:
          'Invalid value: "nope": spec.specification_id in body must be of type uuid: "nope"',
      },
    ]);
  });

  it('ServiceSpecification: the provisioner default fills in, and its deadline under a given one', () => {
    const specs = crdSchema('servicespecifications.platform.nrn.dev.yaml');
    const base = {
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'ServiceSpecification',
      metadata: { name: 'pg' },
      spec: {
        id: '0f8fad5b-d9cb-469f-a165-70867728950e',
        name: 'Postgres',
        type: 'dependency',
        attributes: { schema: {} },
      },
    };
    const defaulted = specs.validate(base).object as { spec: Json };
    expect(defaulted.spec.provisioner).toEqual({ type: 'none', deadline_seconds: 1800 });
    const webhook = specs.validate({
      ...base,
      spec: { ...base.spec, provisioner: { type: 'webhook', url: 'https://hooks.example.com/x' } },
    });
    expect(webhook.issues).toEqual([]);
    expect((webhook.object as { spec: Json }).spec.provisioner).toEqual({
      type: 'webhook',
      url: 'https://hooks.example.com/x',
      deadline_seconds: 1800,
    });
  });
});

describe('formatInvalid and invalidError: the 422 the server answers with', () => {
  const required: FieldIssue = {
    field: 'spec.name',
    reason: 'FieldValueRequired',
    message: 'Required value',
  };
  const tooLong: FieldIssue = {
    field: 'spec.slug',
    reason: 'FieldValueTooLong',
    message: TOO_LONG,
  };

  it('words one cause plainly and several in brackets, without repeats', () => {
    expect(formatInvalid('Scope', 'platform.nrn.dev', 'web', [required])).toBe(
      'Scope.platform.nrn.dev "web" is invalid: spec.name: Required value',
    );
    expect(formatInvalid('Scope', 'platform.nrn.dev', 'web', [required, tooLong, required])).toBe(
      `Scope.platform.nrn.dev "web" is invalid: [spec.name: Required value, spec.slug: ${TOO_LONG}]`,
    );
    expect(formatInvalid('Pod', '', 'p', [])).toBe('Pod "p" is invalid');
  });

  it('builds the Status with every cause', () => {
    expect(
      invalidError('Scope', 'platform.nrn.dev', 'web', [required, tooLong]).toStatus(),
    ).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Scope.platform.nrn.dev "web" is invalid: [spec.name: Required value, spec.slug: ${TOO_LONG}]`,
      reason: 'Invalid',
      details: {
        name: 'web',
        group: 'platform.nrn.dev',
        kind: 'Scope',
        causes: [
          { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.name' },
          { reason: 'FieldValueTooLong', message: TOO_LONG, field: 'spec.slug' },
        ],
      },
      code: 422,
    });
  });
});

describe('Go formatting of values in messages', () => {
  it.each([
    ['plain', 'abc', '"abc"'],
    ['quotes and controls', 'a"b\\c\n\t\u0001', '"a\\"b\\\\c\\n\\t\\x01"'],
    ['printable unicode', 'héllo 😀', '"héllo 😀"'],
    ['non-printable unicode', '\u00a0\u2028', '"\\u00a0\\u2028"'],
  ])('goQuote: %s', (_, input, expected) => {
    expect(goQuote(input)).toBe(expected);
  });

  it.each([
    [0.5, '0.5'],
    [123456, '123456'],
    [1e6, '1e+06'],
    [1234567.5, '1.2345675e+06'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [-2.5e21, '-2.5e+21'],
  ])('goFloat(%s) is %s', (input, expected) => {
    expect(goFloat(input)).toBe(expected);
  });

  it('goJSON sorts keys and escapes HTML as encoding/json does', () => {
    expect(goJSON({ b: 1, a: '<&>', c: [true, null, 1.5] })).toBe(
      '{"a":"\\u003c\\u0026\\u003e","b":1,"c":[true,null,1.5]}',
    );
  });
});
