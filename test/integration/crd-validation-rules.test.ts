// x-kubernetes-validations through kubectl against the local control plane, as a user meets them:
// a bad object is refused at `kubectl apply` with kube-apiserver's message and nothing is stored,
// `--dry-run=server` refuses too, an update that breaks an oldSelf rule is refused, rules under
// status apply to status writes, and a CRD whose rule does not compile is refused.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type CmdSuite, startCmdSuite } from '../support/kubectl-cmd.js';

let suite: CmdSuite;

const crd = (rule: string) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.rules.example.test' },
  spec: {
    group: 'rules.example.test',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                'x-kubernetes-validations': [
                  { rule, message: 'min must not exceed max', fieldPath: '.min' },
                ],
                properties: {
                  application_id: {
                    type: 'integer',
                    'x-kubernetes-validations': [
                      { rule: 'self == oldSelf', message: 'application_id is immutable' },
                    ],
                  },
                  min: { type: 'integer' },
                  max: { type: 'integer' },
                },
              },
              status: {
                type: 'object',
                properties: {
                  phase: {
                    type: 'string',
                    'x-kubernetes-validations': [
                      {
                        rule: "self in ['Pending', 'Ready']",
                        messageExpression: "'unknown phase ' + self",
                      },
                    ],
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
});

const gadget = (name: string, spec: Record<string, unknown>) =>
  stringify({ apiVersion: 'rules.example.test/v1', kind: 'Gadget', metadata: { name }, spec });

beforeAll(async () => {
  suite = await startCmdSuite();
  await suite.ok(['apply', '-f', '-'], stringify(crd('self.min <= self.max')));
  await suite.ok([
    'wait',
    '--for=condition=established',
    '--timeout=60s',
    'crd/gadgets.rules.example.test',
  ]);
});
afterAll(async () => {
  await suite?.close();
});

describe('x-kubernetes-validations at kubectl apply', () => {
  // A failed rule on an object or array shows no value (validation.go: field.OmitValueType{}), on
  // a scalar the value itself.
  it('refuses a bad object with the rule message and stores nothing', async () => {
    const output = await suite.fails(
      ['apply', '-f', '-'],
      gadget('bad', { application_id: 1, min: 5, max: 2 }),
    );
    expect(output).toContain(
      'The Gadget "bad" is invalid: spec.min: Invalid value: min must not exceed max',
    );
    const listed = await suite.run(['get', 'gadget', 'bad']);
    expect(listed.code).not.toBe(0);
    expect(listed.stderr).toContain('"bad" not found');
  });

  it('refuses with --dry-run=server as well', async () => {
    const output = await suite.fails(
      ['apply', '--dry-run=server', '-f', '-'],
      gadget('dry', { application_id: 1, min: 9, max: 1 }),
    );
    expect(output).toContain('spec.min: Invalid value: min must not exceed max');
  });

  it('refuses an update that breaks an oldSelf rule, and accepts one that keeps it', async () => {
    await suite.ok(['apply', '-f', '-'], gadget('web', { application_id: 1, min: 1, max: 2 }));
    const output = await suite.fails(
      ['apply', '-f', '-'],
      gadget('web', { application_id: 2, min: 1, max: 2 }),
    );
    expect(output).toContain(
      'The Gadget "web" is invalid: spec.application_id: Invalid value: 2: application_id is immutable',
    );
    await suite.ok(['apply', '-f', '-'], gadget('web', { application_id: 1, min: 1, max: 3 }));
    expect(await suite.get(['gadget', 'web'], '{{.spec.max}}')).toBe('3');
  });

  it('applies the rules under status to status writes', async () => {
    await suite.ok(['apply', '-f', '-'], gadget('st', { application_id: 1, min: 1, max: 2 }));
    const output = await suite.fails([
      'patch',
      'gadget',
      'st',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Exploded"}}',
    ]);
    expect(output).toContain(
      'The Gadget "st" is invalid: status.phase: Invalid value: "Exploded": unknown phase Exploded',
    );
    await suite.ok([
      'patch',
      'gadget',
      'st',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Ready"}}',
    ]);
    expect(await suite.get(['gadget', 'st'], '{{.status.phase}}')).toBe('Ready');
  });

  it('refuses a CRD whose rule does not compile', async () => {
    const output = await suite.fails(['apply', '-f', '-'], stringify(crd('self.min <=')));
    expect(output).toContain(
      'x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.min <=", Message:"min must not exceed max"',
    );
    expect(output).toContain('compilation failed: ERROR: <input>:');
  });
});

describe('a CRD whose rules cost too much', () => {
  const RULE = 'self.items.all(x, self.items.all(y, x == y))';
  const costly = (bounds: Record<string, unknown>) =>
    stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'sets.rules.example.test' },
      spec: {
        group: 'rules.example.test',
        scope: 'Namespaced',
        names: { plural: 'sets', singular: 'set', kind: 'Set', listKind: 'SetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    'x-kubernetes-validations': [{ rule: RULE, message: 'all items are equal' }],
                    properties: { items: { type: 'array', items: { type: 'integer' }, ...bounds } },
                  },
                },
              },
            },
          },
        ],
      },
    });
  // One version's schema is reported where kube's internal type holds it: spec.validation.
  const PATH = 'spec.validation.openAPIV3Schema';
  const ADVICE =
    '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';

  it('refuses at create a quadratic rule over an unbounded list, naming the rule, and stores nothing', async () => {
    const output = await suite.fails(['apply', '-f', '-'], costly({}));
    expect(output).toContain('The CustomResourceDefinition "sets.rules.example.test" is invalid');
    expect(output).toContain(
      `${PATH}.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${ADVICE}`,
    );
    expect(output).toContain(
      `${PATH}.properties[spec].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
    );
    expect(output).toContain(
      `${PATH}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${ADVICE}`,
    );
    const listed = await suite.run(['get', 'crd', 'sets.rules.example.test']);
    expect(listed.code).not.toBe(0);
  });

  it('accepts it with maxItems: 10, and refuses an update that takes the bound away', async () => {
    await suite.ok(['apply', '-f', '-'], costly({ maxItems: 10 }));
    await suite.ok([
      'wait',
      '--for=condition=established',
      '--timeout=60s',
      'crd/sets.rules.example.test',
    ]);
    const output = await suite.fails(['apply', '-f', '-'], costly({}));
    expect(output).toContain('estimated rule cost exceeds budget by factor of more than 100x');
    expect(
      await suite.get(
        ['crd', 'sets.rules.example.test'],
        '{{(index .spec.versions 0).schema.openAPIV3Schema.properties.spec.properties.items.maxItems}}',
      ),
    ).toBe('10');
  });
});
