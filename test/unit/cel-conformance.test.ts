// The cel-spec conformance cases of the CEL function families ScopeClass templates rely on (ADR
// 0019: strings and the strings extension, arithmetic, conversions, macros, lists, maps, logic),
// run through the repository's one CEL environment (src/cel: standard library, `strings`,
// Kubernetes' list and regex libraries, all metered), so an upgrade that breaks one of them fails here. The data is the suite @bufbuild/cel-spec ships
// (testdata/tests.js, cases extracted from google/cel-spec's conformance textprotos).
import {
  type CelInput,
  type CelValue,
  celUint,
  isCelError,
  isCelList,
  isCelMap,
  isCelType,
  isCelUint,
  parse,
  plan,
} from '@bufbuild/cel';
import type { Value } from '@bufbuild/cel-spec/cel/expr/value_pb.js';
import {
  getConformanceSuite,
  type IncrementalTestSuite,
} from '@bufbuild/cel-spec/testdata/tests.js';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../src/cel/index.js';

/** Suites (and sub-suites) we rely on; a name alone takes all its sub-suites. */
const FAMILIES: readonly (readonly [string, ...string[]])[] = [
  ['string'],
  [
    'string_ext',
    'char_at',
    'index_of',
    'last_index_of',
    'ascii_casing',
    'replace',
    'split',
    'substring',
    'trim',
    'join',
    'quote',
    'format',
    'format_errors',
  ],
  ['integer_math'],
  ['fp_math'],
  ['conversions', 'bool', 'bytes', 'double', 'dyn', 'int', 'string', 'uint', 'identity'],
  ['macros'],
  ['lists'],
  ['logic'],
  ['fields', 'map_fields', 'map_has', 'in'],
  [
    'comparisons',
    'eq_literal',
    'ne_literal',
    'lt_literal',
    'gt_literal',
    'in_list_literal',
    'in_map_literal',
  ],
];

/**
 * Cases @bufbuild/cel 0.6.1 does not pass (each a library gap, none in what templates need);
 * if an upgrade fixes one, remove it here. Keyed `suite/sub-suite/test`.
 */
const KNOWN_FAILURES = new Set<string>([]);

type Plain = null | boolean | string | { readonly [key: string]: unknown } | readonly Plain[];

/** A comparable form of a conformance Value: ints, uints and doubles kept apart, NaN equal to NaN. */
function fromValue(value: Value): Plain | undefined {
  const kind = value.kind;
  switch (kind.case) {
    case 'nullValue':
      return null;
    case 'boolValue':
    case 'stringValue':
      return kind.value;
    case 'int64Value':
      return { int: kind.value.toString() };
    case 'uint64Value':
      return { uint: kind.value.toString() };
    case 'doubleValue':
      return { double: Number.isNaN(kind.value) ? 'NaN' : String(kind.value) };
    case 'bytesValue':
      return { bytes: Buffer.from(kind.value).toString('hex') };
    case 'typeValue':
      return { type: kind.value };
    case 'listValue': {
      const items = kind.value.values.map(fromValue);
      return items.some((item) => item === undefined) ? undefined : (items as Plain[]);
    }
    case 'mapValue': {
      const entries: [string, Plain][] = [];
      for (const entry of kind.value.entries) {
        if (entry.key === undefined || entry.value === undefined) return undefined;
        const key = fromValue(entry.key);
        const item = fromValue(entry.value);
        if (key === undefined || item === undefined) return undefined;
        entries.push([JSON.stringify(key), item]);
      }
      return { map: entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) };
    }
    default:
      return undefined; // messages, enums: outside what templates use
  }
}

function fromCel(value: CelValue): Plain | undefined {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'bigint') return { int: value.toString() };
  if (isCelUint(value)) return { uint: value.value.toString() };
  if (typeof value === 'number') return { double: Number.isNaN(value) ? 'NaN' : String(value) };
  if (value instanceof Uint8Array) return { bytes: Buffer.from(value).toString('hex') };
  if (isCelType(value)) return { type: value.name };
  if (isCelList(value)) {
    const items = [...value].map(fromCel);
    return items.some((item) => item === undefined) ? undefined : (items as Plain[]);
  }
  if (isCelMap(value)) {
    const entries: [string, Plain][] = [];
    for (const [key, item] of value.entries()) {
      const k = fromCel(key as CelValue);
      const v = fromCel(item);
      if (k === undefined || v === undefined) return undefined;
      entries.push([JSON.stringify(k), v]);
    }
    return { map: entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) };
  }
  return undefined;
}

/** A binding as @bufbuild/cel takes it. */
function toInput(value: Value): CelInput | undefined {
  const kind = value.kind;
  switch (kind.case) {
    case 'nullValue':
      return null;
    case 'boolValue':
    case 'stringValue':
    case 'int64Value':
    case 'doubleValue':
    case 'bytesValue':
      return kind.value;
    case 'uint64Value':
      return celUint(kind.value);
    case 'listValue': {
      const items = kind.value.values.map(toInput);
      return items.some((item) => item === undefined) ? undefined : (items as CelInput[]);
    }
    case 'mapValue': {
      const map = new Map<unknown, CelInput>();
      for (const entry of kind.value.entries) {
        if (entry.key === undefined || entry.value === undefined) return undefined;
        const key = toInput(entry.key);
        const item = toInput(entry.value);
        if (key === undefined || item === undefined) return undefined;
        map.set(key, item);
      }
      return map as CelInput;
    }
    default:
      return undefined;
  }
}

type Outcome = 'pass' | 'skip' | string;

function runCase(test: IncrementalTestSuite['tests'][number]): Outcome {
  const original = test.original;
  if (original.disableMacros || original.checkOnly || original.container !== '') return 'skip';
  const bindings: Record<string, CelInput> = {};
  for (const [name, bound] of Object.entries(original.bindings)) {
    if (bound.kind.case !== 'value') return 'skip';
    const input = toInput(bound.kind.value);
    if (input === undefined) return 'skip';
    bindings[name] = input;
  }
  let result: CelValue | ReturnType<typeof Error> | undefined;
  try {
    result = plan(ENV, parse(original.expr))(bindings as never);
  } catch (error) {
    result = error as Error;
  }
  const matcher = original.resultMatcher;
  const failed = isCelError(result) || result instanceof Error;
  if (matcher.case === 'evalError')
    return failed ? 'pass' : `expected an error, got ${String(result)}`;
  // An unset matcher expects `true` (cel-spec simple.proto, SimpleTest.result_matcher).
  if (matcher.case !== 'value' && matcher.case !== undefined) return 'skip';
  const expected = matcher.case === undefined ? true : fromValue(matcher.value);
  if (expected === undefined) return 'skip';
  if (failed) return `error: ${(result as Error).message}`;
  const actual = fromCel(result as CelValue);
  return JSON.stringify(actual) === JSON.stringify(expected)
    ? 'pass'
    : `got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`;
}

const suite = getConformanceSuite();

describe('cel-spec conformance through @bufbuild/cel', () => {
  for (const [family, ...only] of FAMILIES) {
    it(`passes ${family}${only.length > 0 ? ` (${only.join(', ')})` : ''}`, () => {
      const top = suite.suites.find((s) => s.name === family);
      expect(top, `suite ${family}`).toBeDefined();
      const subs = (top?.suites ?? []).filter((s) => only.length === 0 || only.includes(s.name));
      expect(subs.length).toBe(only.length === 0 ? (top?.suites.length ?? 0) : only.length);
      const failures: string[] = [];
      let passed = 0;
      for (const sub of subs) {
        for (const test of sub.tests) {
          const key = `${family}/${sub.name}/${test.name}`;
          const outcome = runCase(test);
          if (outcome === 'pass') passed += 1;
          else if (outcome !== 'skip' && !KNOWN_FAILURES.has(key))
            failures.push(`${key}: ${test.original.expr} -> ${outcome}`);
        }
      }
      expect(failures).toEqual([]);
      expect(passed).toBeGreaterThan(0);
    });
  }
});
