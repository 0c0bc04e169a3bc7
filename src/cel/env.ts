// The one CEL environment of the repository: what ScopeClass templates (ADR 0019) and the local
// control plane's CRD validation rules evaluate in, with every function metered (cost.ts). It is
// the environment Kubernetes offers to CRD rules as far as @bufbuild/cel can hold it
// (k8s.io/apiserver/pkg/cel/environment/base.go): the standard library, the strings extension
// (ext.Strings), Kubernetes' list library (library/lists.go: isSorted, sum, min, max, indexOf,
// lastIndexOf) and regex library (library/regex.go: find, findAll), with `matches` on RE2 as in
// cel-go (a pattern cannot backtrack for seconds on the event loop). Not offered: the url,
// quantity, ip/cidr, semver, format and authz libraries, sets, optional types, two-variable
// comprehensions.
import {
  type CelFunc,
  type CelList,
  CelScalar,
  type CelValue,
  celEnv,
  celFunc,
  celList,
  celMethod,
  isCelList,
  isCelMap,
  isCelUint,
  listType,
} from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { RE2JS } from 're2js';
import { charge } from './cost.js';

function sizeOf(value: unknown): number {
  if (typeof value === 'string' || value instanceof Uint8Array) return value.length;
  if (isCelList(value) || isCelMap(value)) return value.size;
  return 0;
}

/** A function charged for what it reads and makes (a function with a standard id replaces it: env.ts). */
function meteredFunc(func: CelFunc): CelFunc {
  return Object.create(func, {
    call: {
      value(id: number, target: CelValue | undefined, args: CelValue[]) {
        let read = sizeOf(target);
        for (const arg of args) read += sizeOf(arg);
        charge(1 + Math.ceil(read / 64));
        const result = func.call(id, target, args);
        const made = sizeOf(result);
        if (made > 0) charge(Math.ceil(made / 64));
        return result;
      },
    },
  }) as CelFunc;
}

/**
 * Called on every comprehension iteration (the macros' loops are the only loops CEL has): the
 * compiler (compile.ts) wraps each loop condition in it. It throws past the planner when the
 * meter runs out, instead of making a CelError that `||` or `&&` could absorb.
 */
export const TICK = '@nrn_tick';
const tick = celFunc(TICK, [CelScalar.DYN], CelScalar.DYN, (condition) => condition);

// ---------------------------------------------------------------------------------------------
// Kubernetes' list library (k8s.io/apiserver/pkg/cel/library/lists.go).

const LIST = listType(CelScalar.DYN);

type Comparable = bigint | number | string | boolean;

function comparable(value: unknown): value is Comparable {
  return (
    typeof value === 'bigint' ||
    typeof value === 'number' ||
    typeof value === 'string' ||
    typeof value === 'boolean'
  );
}

/** -1, 0, 1; ints and doubles compare by value as CEL's heterogeneous ordering does. */
function compare(a: unknown, b: unknown): number {
  const x = isCelUint(a) ? a.value : a;
  const y = isCelUint(b) ? b.value : b;
  if (!comparable(x) || !comparable(y)) throw new Error('no such overload');
  const numeric = (v: Comparable) => typeof v === 'bigint' || typeof v === 'number';
  if (numeric(x) !== numeric(y) || (!numeric(x) && typeof x !== typeof y))
    throw new Error('no such overload');
  return x < y ? -1 : x > y ? 1 : 0;
}

function items(list: CelList): CelValue[] {
  return [...list] as CelValue[];
}

function extreme(list: CelList, name: 'min' | 'max'): CelValue {
  const values = items(list);
  const first = values[0];
  if (first === undefined) throw new Error(`${name}(list) argument must not be empty`);
  let best = first;
  for (const value of values.slice(1)) {
    const order = compare(value, best);
    if (name === 'min' ? order < 0 : order > 0) best = value;
  }
  return best;
}

function equal(a: CelValue, b: CelValue): boolean {
  if (comparable(a) && comparable(b)) {
    try {
      return compare(a, b) === 0;
    } catch {
      return false;
    }
  }
  return (
    JSON.stringify(a, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)) ===
    JSON.stringify(b, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))
  );
}

const lists: CelFunc[] = [
  celMethod('isSorted', LIST, [], CelScalar.BOOL, function () {
    const values = items(this);
    for (let i = 1; i < values.length; i += 1)
      if (compare(values[i - 1], values[i]) > 0) return false;
    return true;
  }),
  celMethod('sum', LIST, [], CelScalar.DYN, function () {
    const values = items(this);
    if (values.every((v) => typeof v === 'bigint')) {
      let total = 0n;
      for (const v of values) total += v as bigint;
      if (total > 2n ** 63n - 1n || total < -(2n ** 63n)) throw new Error('integer overflow');
      return total;
    }
    if (values.every((v) => typeof v === 'number')) {
      return values.reduce((total: number, v) => total + (v as number), 0);
    }
    throw new Error('no such overload');
  }),
  celMethod('min', LIST, [], CelScalar.DYN, function () {
    return extreme(this, 'min');
  }),
  celMethod('max', LIST, [], CelScalar.DYN, function () {
    return extreme(this, 'max');
  }),
  celMethod('indexOf', LIST, [CelScalar.DYN], CelScalar.INT, function (wanted) {
    const values = items(this);
    return BigInt(values.findIndex((v) => equal(v, wanted)));
  }),
  celMethod('lastIndexOf', LIST, [CelScalar.DYN], CelScalar.INT, function (wanted) {
    const values = items(this);
    for (let i = values.length - 1; i >= 0; i -= 1)
      if (equal(values[i] as CelValue, wanted)) return BigInt(i);
    return -1n;
  }),
];

// ---------------------------------------------------------------------------------------------
// Regular expressions: RE2 syntax and linear-time matching, as cel-go (which uses Go's regexp).

const PATTERNS = new Map<string, RE2JS>();
const MAX_CACHED_PATTERNS = 256;

function regex(pattern: string): RE2JS {
  let compiled = PATTERNS.get(pattern);
  if (compiled === undefined) {
    try {
      compiled = RE2JS.compile(pattern);
    } catch (error) {
      throw new Error(
        `Invalid regular expression: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (PATTERNS.size >= MAX_CACHED_PATTERNS) PATTERNS.clear();
    PATTERNS.set(pattern, compiled);
  }
  return compiled;
}

function findAll(text: string, pattern: string, limit: number): string[] {
  const out: string[] = [];
  if (limit === 0) return out;
  const matcher = regex(pattern).matcher(text);
  while (matcher.find()) {
    out.push(matcher.group() ?? '');
    charge(1);
    if (limit > 0 && out.length >= limit) break;
  }
  return out;
}

const regexes: CelFunc[] = [
  celMethod('matches', CelScalar.STRING, [CelScalar.STRING], CelScalar.BOOL, function (pattern) {
    return regex(pattern).matcher(this).find();
  }),
  celFunc('matches', [CelScalar.STRING, CelScalar.STRING], CelScalar.BOOL, (text, pattern) =>
    regex(pattern).matcher(text).find(),
  ),
  celMethod('find', CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function (pattern) {
    const matcher = regex(pattern).matcher(this);
    return matcher.find() ? (matcher.group() ?? '') : '';
  }),
  celMethod(
    'findAll',
    CelScalar.STRING,
    [CelScalar.STRING],
    listType(CelScalar.STRING),
    function (pattern) {
      return celList(findAll(this, pattern, -1));
    },
  ),
  celMethod(
    'findAll',
    CelScalar.STRING,
    [CelScalar.STRING, CelScalar.INT],
    listType(CelScalar.STRING),
    function (pattern, limit) {
      return celList(findAll(this, pattern, Number(limit)));
    },
  ),
];

/** The environment, every function metered. */
export const ENV = (() => {
  const base = celEnv({ funcs: [...strings, ...lists, ...regexes] });
  return celEnv({ funcs: [...[...base.funcs].map(meteredFunc), meteredFunc(tick)] });
})();

/** CEL's own `string()` conversion (its formatting of doubles, durations, timestamps), unmetered. */
const STRING_CONVERSION = celEnv().funcs.find('string');

export function celString(value: CelValue): string | undefined {
  const result = STRING_CONVERSION?.call(0, undefined, [value]);
  return typeof result === 'string' ? result : undefined;
}
