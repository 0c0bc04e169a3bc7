import { describe, expect, it } from 'vitest';
import {
  compileJsonPath,
  compileJsonPathTemplate,
  formatGoFloat,
  printJsonPathValue,
} from '../../../src/local/jsonpath.js';

const scope = {
  apiVersion: 'platform.nrn.dev/v1alpha1',
  kind: 'Scope',
  metadata: {
    name: 'web-1',
    labels: { 'app.kubernetes.io/name': 'nrn-operator', plain: 'yes' },
    annotations: { 'a.b': 'dotted' },
  },
  spec: {
    type: 'web_pool',
    application_id: 7,
    items: [
      { name: 'a', size: 1, ready: true },
      { name: 'b', size: 2, ready: false },
      { name: 'c', size: 3 },
    ],
    list: [10, 20, 30, 40],
    empty: [],
    nothing: null,
  },
  status: {
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Provisioned' },
      { type: 'Progressing', status: 'False' },
    ],
  },
};

describe('compileJsonPath', () => {
  it.each<[string, unknown[]]>([
    ['.metadata.name', ['web-1']],
    ['$.metadata.name', ['web-1']],
    ['{.metadata.name}', ['web-1']],
    ['{$.metadata.name}', ['web-1']],
    ['.spec.type', ['web_pool']],
    ['.spec.application_id', [7]],
    ['.status.conditions[?(@.type=="Ready")].status', ['True']],
    ["{.status.conditions[?(@.type=='Ready')].reason}", ['Provisioned']],
    ['.status.conditions[?(@.type!="Ready")].type', ['Progressing']],
    ['.status.conditions[?(@.type=="Missing")].status', []],
    ['.spec.items[0].name', ['a']],
    ['.spec.items[*].name', ['a', 'b', 'c']],
    ['.spec.items[?(@.size>1)].name', ['b', 'c']],
    ['.spec.items[?(@.size<2)].name', ['a']],
    ['.spec.items[?(@.size>=2)].name', ['b', 'c']],
    ['.spec.items[?(@.size<=2)].name', ['a', 'b']],
    ['.spec.items[?(@.name<"b")].name', ['a']],
    ['.spec.items[?(@.ready)].name', ['a', 'b']],
    ['.spec.items[?(@.ready==true)].name', ['a']],
    ['.spec.list[-1]', [40]],
    ['.spec.list[-2]', [30]],
    ['.spec.list[1:3]', [20, 30]],
    ['.spec.list[2:]', [30, 40]],
    ['.spec.list[:2]', [10, 20]],
    ['.spec.list[0:4:2]', [10, 30]],
    ['.spec.list[0,2]', [10, 30]],
    ['.spec.list[*]', [10, 20, 30, 40]],
    ['.spec.empty[*]', []],
    ['.spec.empty[0:0]', []],
    ['.metadata.labels.app\\.kubernetes\\.io/name', ['nrn-operator']],
    ["['metadata']['name']", ['web-1']],
    [".metadata.labels['plain']", ['yes']],
    [".metadata['name','namespace']", ['web-1']],
    ['.metadata.labels.*', ['nrn-operator', 'yes']],
    ['..reason', ['Provisioned']],
    // Containers in order: the root, then each key's value by sorted key, depth first.
    ['..name', ['web-1', 'a', 'b', 'c']],
    // A missing key is no result, not an error, as for printer columns.
    ['.status.missing', []],
    ['.status.missing.deeper[0]', []],
    ['.spec.nothing', [null]],
    ['.spec.nothing.below', []],
    ['.spec.nothing[0]', []],
  ])('%s → %j', (path, expected) => {
    expect(compileJsonPath(path)(scope)).toEqual(expected);
  });

  it("reads ['a.b'] as .a.b, like the real parser (escape the dots to reach such a key)", () => {
    expect(compileJsonPath(".metadata.annotations['a.b']")(scope)).toEqual([]);
    expect(compileJsonPath('.metadata.annotations.a\\.b')(scope)).toEqual(['dotted']);
    expect(compileJsonPath(".metadata.annotations['a\\.b']")(scope)).toEqual(['dotted']);
  });

  it('compares literals by kind, as Go does: an int is not a float', () => {
    const data = { xs: [{ v: 1 }, { v: 1.5 }] };
    expect(compileJsonPath('.xs[?(@.v==1.5)].v')({ xs: [{ v: 1.5 }] })).toEqual([1.5]);
    expect(() => compileJsonPath('.xs[?(@.v==1)].v')(data)).toThrow(
      'incompatible types for comparison',
    );
    expect(() => compileJsonPath('.xs[?(@.v=="1")].v')(data)).toThrow(
      'incompatible types for comparison',
    );
    expect(() => compileJsonPath('.xs[?(@.v)].v[0]')(data)).toThrow('is not array or slice');
  });

  it.each<[string, string]>([
    ['.spec.list[9]', 'array index out of bounds: index 9, length 4'],
    ['.spec.empty[0]', 'array index out of bounds: index 0, length 0'],
    ['.spec.list[3:1]', 'starting index 3 is greater than ending index 1'],
    ['.spec.list[0:2:0]', 'step must be > 0'],
    ['.spec.type[0]', 'string is not array or slice'],
    ['.metadata[?(@.x)]', 'map[string]interface {} is not array or slice and cannot be filtered'],
    ['.spec.items[?(@.size=1)]', 'unrecognized filter operator ='],
    ['range', 'unrecognized identifier range'],
  ])('fails to evaluate %s: %s', (path, message) => {
    expect(() => compileJsonPath(path)(scope)).toThrow(message);
  });

  it.each<[string, string]>([
    ['.a[', 'unterminated array'],
    ['{.a', 'unclosed action'],
    ['.a[?(@.x=="y"]', 'unterminated filter'],
    ['.a[?(@.x=="y")', 'unclosed array expect ]'],
    ['.a[x]', 'invalid array index x'],
    ['.a[1:2:3:4]', 'invalid array index 1:2:3:4'],
    ['.a[-]', 'array index - is not a number'],
    ['.a\t', 'unrecognized character in action: U+0009'],
    ['.a ]', "unrecognized character in action: U+005D ']'"],
    ['{{.a}}', "unrecognized character in action: U+007B '{'"],
    ['"abc', 'unterminated quoted string'],
    ['"\\q"', 'unquote string "\\q" error invalid syntax'],
    ['1.2.3', 'cannot parse number 1.2.3'],
    ['....a', 'invalid multiple recursive descent'],
  ])('refuses %j at compile time: %s', (path, message) => {
    expect(() => compileJsonPath(path)).toThrow(message);
  });
});

describe('compileJsonPathTemplate', () => {
  it('returns one result list per part, text included', () => {
    expect(compileJsonPathTemplate('name={.metadata.name} type={.spec.type}')(scope)).toEqual([
      ['name='],
      ['web-1'],
      [' type='],
      ['web_pool'],
    ]);
  });

  it('unquotes string literals like Go', () => {
    expect(compileJsonPathTemplate('{"a\\tb"}{\'c\\\'d\'}{"\\u00e9\\x41"}')(scope)).toEqual([
      ['a\tb'],
      ["c'd"],
      ['éA'],
    ]);
  });
});

describe('printJsonPathValue', () => {
  it.each<[unknown, string]>([
    ['text', 'text'],
    [true, 'true'],
    [42, '42'],
    [-7, '-7'],
    [1000000, '1000000'],
    [1.5, '1.5'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1234567.5, '1.2345675e+06'],
    [null, '<no value>'],
    [{ b: 1, a: '<x>' }, '{"a":"\\u003cx\\u003e","b":1}'],
    [[1, 'two', { c: null }], '[1,"two",{"c":null}]'],
  ])('%j → %s', (value, text) => {
    expect(printJsonPathValue(value)).toBe(text);
  });

  it.each<[number, string]>([
    [0, '0'],
    [100000.5, '100000.5'],
    [999999, '999999'],
    [1e6, '1e+06'],
    [1e21, '1e+21'],
    [1.5e-7, '1.5e-07'],
    [-2.5e100, '-2.5e+100'],
    [Number.POSITIVE_INFINITY, '+Inf'],
  ])('formats the float %d as Go %%v: %s', (value, text) => {
    expect(formatGoFloat(value)).toBe(text);
  });
});
