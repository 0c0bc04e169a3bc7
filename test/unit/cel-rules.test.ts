// The x-kubernetes-validations evaluator of the local control plane (src/local/schema/cel-rules.ts)
// on its own: transition rules, messages, reasons, fieldPath, ratcheting, cost limits, and the
// Kubernetes CEL libraries src/cel offers.
import { describe, expect, it } from 'vitest';
import { compileRules, ruleCompileError } from '../../src/local/schema/cel-rules.js';

function rules(schema: Record<string, unknown>) {
  const compiled = compileRules(schema);
  if (compiled === undefined) throw new Error('no rules');
  return compiled;
}

const spec = (properties: Record<string, unknown>, validations?: unknown[]) => ({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties,
      ...(validations ? { 'x-kubernetes-validations': validations } : {}),
    },
  },
});

describe('x-kubernetes-validations', () => {
  it('reports a failed rule on a scalar with its value and message', () => {
    const r = rules(
      spec({
        replicas: {
          type: 'integer',
          'x-kubernetes-validations': [{ rule: 'self <= 5', message: 'at most 5' }],
        },
      }),
    );
    expect(r.validate({ spec: { replicas: 3 } }, undefined).issues).toEqual([]);
    expect(r.validate({ spec: { replicas: 7 } }, undefined).issues).toEqual([
      {
        field: 'spec.replicas',
        reason: 'FieldValueInvalid',
        message: 'Invalid value: 7: at most 5',
      },
    ]);
  });

  it('words a rule without message as failed rule, and omits an object value', () => {
    const r = rules(spec({ a: { type: 'string' } }, [{ rule: 'has(self.a)' }]));
    expect(r.validate({ spec: {} }, undefined).issues).toEqual([
      {
        field: 'spec',
        reason: 'FieldValueInvalid',
        message: 'Invalid value: failed rule: has(self.a)',
      },
    ]);
  });

  it('evaluates transition rules only on update, against the old value', () => {
    const r = rules(
      spec({
        id: {
          type: 'string',
          'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'id is immutable' }],
        },
      }),
    );
    expect(r.validate({ spec: { id: 'a' } }, undefined).issues).toEqual([]);
    expect(r.validate({ spec: { id: 'a' } }, { spec: { id: 'a' } }).issues).toEqual([]);
    expect(r.validate({ spec: { id: 'b' } }, { spec: { id: 'a' } }).issues).toEqual([
      {
        field: 'spec.id',
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "b": id is immutable',
      },
    ]);
    // No old value at that path: the transition rule is skipped.
    expect(r.validate({ spec: { id: 'b' } }, { spec: {} }).issues).toEqual([]);
  });

  it('uses messageExpression, reason and fieldPath', () => {
    const r = rules(
      spec({ min: { type: 'integer' }, max: { type: 'integer' } }, [
        {
          rule: 'self.min <= self.max',
          messageExpression: "'min ' + string(self.min) + ' exceeds max ' + string(self.max)",
          reason: 'FieldValueForbidden',
          fieldPath: '.min',
        },
        { rule: 'self.max < 100', reason: 'FieldValueRequired', message: 'max below 100' },
      ]),
    );
    expect(r.validate({ spec: { min: 300, max: 200 } }, undefined).issues).toEqual([
      {
        field: 'spec.min',
        reason: 'FieldValueForbidden',
        message: 'Forbidden: min 300 exceeds max 200',
      },
      { field: 'spec', reason: 'FieldValueRequired', message: 'Required value: max below 100' },
    ]);
  });

  it('checks lists and maps with macros and has()', () => {
    const r = rules(
      spec(
        {
          ports: { type: 'array', items: { type: 'integer' } },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
        },
        [
          { rule: 'self.ports.all(p, p > 0 && p < 65536)', message: 'bad port' },
          {
            rule: "!has(self.labels) || self.labels.all(k, k.startsWith('x-'))",
            message: 'bad label',
          },
          { rule: 'self.ports.isSorted() && self.ports.sum() < 100000', message: 'unsorted' },
        ],
      ),
    );
    expect(r.validate({ spec: { ports: [80, 443] } }, undefined).issues).toEqual([]);
    expect(
      r
        .validate({ spec: { ports: [443, 0], labels: { y: 'z' } } }, undefined)
        .issues.map((i) => i.message),
    ).toEqual(['Invalid value: bad port', 'Invalid value: bad label', 'Invalid value: unsorted']);
  });

  it('reaches escaped property names and the root metadata name', () => {
    const r = rules({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { 'dash-name': { type: 'string' }, namespace: { type: 'string' } },
        },
      },
      'x-kubernetes-validations': [
        { rule: 'self.spec.dash__dash__name == self.spec.__namespace__', message: 'differ' },
        { rule: "self.metadata.name.startsWith('ok')", message: 'name' },
      ],
    });
    expect(
      r.validate(
        { metadata: { name: 'ok-1' }, spec: { 'dash-name': 'a', namespace: 'a' } },
        undefined,
      ).issues,
    ).toEqual([]);
    expect(
      r
        .validate(
          { metadata: { name: 'no' }, spec: { 'dash-name': 'a', namespace: 'b' } },
          undefined,
        )
        .issues.map((i) => i.field),
    ).toEqual(['<nil>', '<nil>']);
  });

  it('ratchets errors of an unchanged value on update', () => {
    const r = rules(
      spec({
        n: {
          type: 'integer',
          'x-kubernetes-validations': [{ rule: 'self < 10', message: 'small' }],
        },
      }),
    );
    const outcome = r.validate({ spec: { n: 20 } }, { spec: { n: 20 } });
    expect(outcome.issues).toEqual([]);
    expect(outcome.warnings).toEqual(['spec.n: Invalid value: 20: small']);
    expect(r.validate({ spec: { n: 21 } }, { spec: { n: 20 } }).issues).toHaveLength(1);
  });

  it('reports an evaluation error as kube-apiserver words it', () => {
    const r = rules(
      spec({ m: { type: 'object', additionalProperties: { type: 'string' } } }, [
        { rule: "self.m['k'] == 'v'" },
      ]),
    );
    expect(r.validate({ spec: { m: {} } }, undefined).issues).toEqual([
      {
        field: 'spec',
        reason: 'FieldValueInvalid',
        message: `Invalid value: "object": no such key: k evaluating rule: self.m['k'] == 'v'`,
      },
    ]);
  });

  // A call is charged 1 per 64 characters it reads: 640,000 characters cost 10,000 units a call.
  const big = 'a'.repeat(640_000);
  const calls = (n: number) =>
    Array.from({ length: n }, () => "self.s.contains('zz')").join(' || ');

  it('stops a rule beyond the per-call cost limit', () => {
    const r = rules(spec({ s: { type: 'string' } }, [{ rule: calls(150), message: 'costly' }]));
    const issues = r.validate({ spec: { s: big } }, undefined).issues;
    expect(issues).toEqual([
      {
        field: 'spec',
        reason: 'FieldValueInvalid',
        message: `Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: costly`,
      },
    ]);
  });

  it('stops when the request budget runs out', () => {
    const rule = { rule: `!(${calls(90)})` };
    const r = rules(
      spec(
        { s: { type: 'string' } },
        Array.from({ length: 12 }, () => rule),
      ),
    );
    const issues = r.validate({ spec: { s: big } }, undefined).issues;
    expect(issues).toEqual([
      {
        field: 'spec',
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
      },
    ]);
  });

  it('refuses rules that do not compile, in cel-go words', () => {
    expect(ruleCompileError('self.')).toBe(
      'compilation failed: ERROR: <input>:1:5: found . but expecting end of input',
    );
    expect(ruleCompileError('other == 1')).toBe(
      "compilation failed: ERROR: <input>: undeclared reference to 'other' (in container '')",
    );
    expect(
      ruleCompileError('self.matches("a+") && self.find("b") == "b" && oldSelf.size() > 0'),
    ).toBeUndefined();
  });
});
