// The static cost estimate of CRD rules, as apiextensions-apiserver computes it before it accepts
// a CRD: cel-go's coster over the sizes a schema gives (maxItems, maxProperties, maxLength, else
// what fits in a 3 MiB request), times how often a rule runs, against the per-rule and per-schema
// limits; the numbers are worked by hand from cel-go's checker/cost.go.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { estimateCost, MAX_ESTIMATE } from '../../../src/cel/estimate.js';
import {
  celCostIssues,
  costMessage,
  declType,
  STATIC_ESTIMATED_COST_LIMIT,
} from '../../../src/local/schema/cel-cost.js';

type Schema = Record<string, unknown>;

const object = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({
  type: 'object',
  properties,
  ...extra,
});

/** The estimate of `rule` with `self` typed by `schema`. */
function cost(rule: string, schema: Schema): number | undefined {
  const decl = declType(schema);
  return estimateCost(rule, { self: decl, oldSelf: decl });
}

const ints = (extra: Schema = {}) =>
  object({ items: { type: 'array', items: { type: 'integer' }, ...extra } });

describe('estimating one rule (cel-go coster)', () => {
  it('charges 1 per identifier and field select, 1 per call', () => {
    expect(cost('self.a', object({ a: { type: 'integer' } }))).toBe(2);
    expect(cost('self.a > 1', object({ a: { type: 'integer' } }))).toBe(3);
    expect(cost('size(self.s) > 0', object({ s: { type: 'string' } }))).toBe(4);
  });

  it('charges a comprehension its range, init and result, and its condition and step per element', () => {
    // 2 (self.items) + 0 (true) + 1 (@result) + 10 × (step 2 + condition 2).
    expect(cost('self.items.all(x, x == 1)', ints({ maxItems: 10 }))).toBe(43);
    // The inner all costs 3 + 10 × 5 = 53; the outer 3 + 10 × (53 + 3).
    expect(cost('self.items.all(x, self.items.all(y, x == y))', ints({ maxItems: 10 }))).toBe(563);
  });

  it('bounds an unbounded list by what fits in a request: 1,572,863 integers', () => {
    const n = Math.floor((3 * 1024 * 1024 - 2) / 2);
    expect(cost('self.items.all(x, x == 1)', ints())).toBe(3 + n * 4);
    expect(cost('self.items.all(x, self.items.all(y, x == y))', ints())).toBeGreaterThan(1e12);
  });

  it('charges string comparisons and traversals 0.1 per byte, maxLength counting 4 bytes a character', () => {
    const s = (extra: Schema = {}) => object({ s: { type: 'string', ...extra } });
    // min(40, 3) bytes × 0.1, rounded up, plus self.s (2) and the literal (0).
    expect(cost("self.s == 'abc'", s({ maxLength: 10 }))).toBe(3);
    // Unbounded: 3 MiB - 2 bytes; contains multiplies both sides' traversals.
    expect(cost("self.s.contains('x')", s())).toBe(Math.ceil((3 * 1024 * 1024 - 2) * 0.1) + 2);
    // matches: (40 + 1) × 0.1 → 5, times the pattern's 8 bytes × 0.25 → 2.
    expect(cost("self.s.matches('^[a-z]+$')", s({ maxLength: 10 }))).toBe(12);
    expect(cost("self.s.startsWith('ab')", s({ maxLength: 10 }))).toBe(3);
    // An enum bounds a string by its longest value.
    expect(cost("self.s == 'Ready'", s({ enum: ['Pending', 'Ready'] }))).toBe(3);
  });

  it('bounds a map by maxProperties and iterates its keys', () => {
    const m = (extra: Schema = {}) =>
      object({ m: { type: 'object', additionalProperties: { type: 'string' }, ...extra } });
    // 2 + 0 + 1 + 5 × (step: 1 + (startsWith: ceil(0.2) + 1 + 0) + condition 2).
    expect(cost("self.m.all(k, k.startsWith('ab'))", m({ maxProperties: 5 }))).toBe(28);
    expect(cost("self.m.all(k, k.startsWith('ab'))", m())).toBeGreaterThan(1_000_000);
  });

  it('charges list and map literals their creation, `in` one per element', () => {
    expect(cost('[1, 2, 3]', object({}))).toBe(10);
    expect(cost("{'a': 1}", object({}))).toBe(30);
    expect(cost("self.s in ['a', 'b']", object({ s: { type: 'string' } }))).toBe(2 + 10 + 2);
  });

  it("costs the Kubernetes library's functions as its cost.go does", () => {
    const s = object({
      s: { type: 'string', maxLength: 10 },
      names: { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 10 } },
    });
    // lowerAscii traverses its 40 bytes (4) and keeps their size for the comparison (1).
    expect(cost("self.s.lowerAscii() == 'a'", s)).toBe(7);
    // isSorted: 5 elements, each 1 plus a traversal of its 40 bytes.
    expect(cost('self.names.isSorted()', s)).toBe(27);
    // split traverses twice (8) and may make one part per byte: 40 iterations of 4.
    expect(cost("self.s.split(',').all(p, p != '')", s)).toBe(171);
  });

  it('saturates at the largest uint64 instead of overflowing', () => {
    const deep =
      'self.items.all(a, self.items.all(b, self.items.all(c, self.items.all(d, a == d))))';
    expect(cost(deep, ints())).toBe(MAX_ESTIMATE);
  });

  it('gives no estimate of what does not parse', () => {
    expect(cost('self.a <=', object({}))).toBeUndefined();
  });
});

describe('the limits of a CRD schema', () => {
  const at = 'spec.validation.openAPIV3Schema';
  const rule = (r: string) => ({ 'x-kubernetes-validations': [{ rule: r }] });

  it('refuses a rule over the per-rule limit with the path of the rule', () => {
    const schema = {
      ...ints(),
      ...rule('self.items.all(x, self.items.all(y, x == y))'),
    };
    const issues = celCostIssues(schema, at);
    expect(issues.map((i) => i.field)).toEqual([
      `${at}.x-kubernetes-validations[0].rule`,
      `${at}.x-kubernetes-validations[0].rule`,
      at,
    ]);
    expect(issues[0]?.message).toBe(
      'Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    );
    expect(
      celCostIssues(
        { ...ints({ maxItems: 10 }), ...rule('self.items.all(x, self.items.all(y, x == y))') },
        at,
      ),
    ).toEqual([]);
  });

  it('multiplies a rule by how many times it can run: maxItems above it, else what fits', () => {
    const item = (extra: Schema) => ({
      type: 'object',
      properties: {
        names: {
          type: 'array',
          ...extra,
          items: { type: 'string', ...rule("self.matches('^a+$')") },
        },
      },
    });
    // Each name: ceil(3145727 × 0.1) × 1 + 1 = 314,574; at most 1,048,576 names in a request.
    const unbounded = celCostIssues(item({}), at);
    expect(unbounded[0]?.field).toBe(
      `${at}.properties[names].items.x-kubernetes-validations[0].rule`,
    );
    // 10 names: 3,145,740, under the limit.
    expect(celCostIssues(item({ maxItems: 10 }), at)).toEqual([]);
    // 40 names: 12,582,960, 1.26 times the limit.
    const forty = celCostIssues(item({ maxItems: 40 }), at);
    expect(forty.map((i) => i.message)).toEqual([
      expect.stringContaining('estimated rule cost exceeds budget by factor of 1.258296x'),
    ]);
  });

  it('refuses a schema whose rules together exceed the CRD limit, naming the four costliest', () => {
    // Each: ceil(30000 × 0.1)² + 4 = 9,000,004, under the per-rule limit; twelve: 108,000,048.
    const pair = {
      type: 'object',
      properties: {
        s: { type: 'string', maxLength: 7500 },
        t: { type: 'string', maxLength: 7500 },
      },
      ...rule('self.s.contains(self.t)'),
    };
    const properties = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`p${i}`, pair]));
    const issues = celCostIssues({ type: 'object', properties }, at);
    expect(issues).toHaveLength(5);
    expect(issues.slice(0, 4).map((i) => i.message)).toEqual(
      Array(4).fill(
        'Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema',
      ),
    );
    expect(issues[4]).toEqual({
      field: at,
      reason: 'FieldValueForbidden',
      message:
        'Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.080000x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    });
  });

  it('words the factor as getCostErrorMessage does', () => {
    const limit = STATIC_ESTIMATED_COST_LIMIT;
    expect(costMessage('x', limit * 1.2, limit)).toContain('by factor of 1.200000x');
    expect(costMessage('x', limit * 2.5, limit)).toContain('by factor of 2.5x');
    expect(costMessage('x', limit * 101, limit)).toContain('by factor of more than 100x');
  });
});

describe("the repository's own CRDs", () => {
  const dir = join(import.meta.dirname, '../../../crds');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    it(`${file}: every version's rules are within kube's cost limits`, () => {
      const crd = parse(readFileSync(join(dir, file), 'utf8')) as {
        spec: { versions: { schema: { openAPIV3Schema: Schema } }[] };
      };
      for (const [i, version] of crd.spec.versions.entries()) {
        const at = `spec.versions[${i}].schema.openAPIV3Schema`;
        expect(celCostIssues(version.schema.openAPIV3Schema, at)).toEqual([]);
      }
    });
  }
});
