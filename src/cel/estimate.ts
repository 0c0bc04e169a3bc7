// The static cost estimate of one CEL expression, before it ever runs: cel-go's checker/cost.go
// (coster) over @bufbuild/cel's parsed tree, its maximum only. Each identifier and field select
// costs 1, a call 1 plus its arguments (string comparisons and traversals 0.1 per byte, `in` 1
// per element, `matches` the string times a quarter of the pattern), a list literal 10, a map 30,
// a message 40, and a comprehension its range, its init and result plus, per element of the
// range, its condition and step. Sizes of lists, maps and strings come from the caller (a CRD's
// maxItems, maxProperties, maxLength), through `SizeOracle`; the Kubernetes library's functions
// cost what its library/cost.go says. What cel-go knows from the types its checker inferred is
// guessed here from the tree: see docs/adr/0003-local-control-plane-api.md for what is approximated.
import { parse } from '@bufbuild/cel';
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';

/** cel-go's math.MaxUint64: an estimate that saturates there means "unbounded". */
export const MAX_ESTIMATE = 2 ** 64 - 1;

/** What an expression's value is, as far as its size goes: a schema node, or nothing known. */
export interface SizedType {
  readonly kind: 'list' | 'map' | 'object' | 'string' | 'bytes' | 'scalar' | 'dyn';
  /** The most elements (list, map) or bytes (string) it holds: DeclType.MaxElements. */
  readonly maxElements: number;
  /** Its fields by CEL name (an object). */
  field(name: string): SizedType | undefined;
  /** A list's items, a map's values. */
  readonly elem: SizedType | undefined;
  /** A map's keys. */
  readonly key: SizedType | undefined;
}

/** The type of each variable the expression may name (`self`, `oldSelf`). */
export type SizeOracle = Readonly<Record<string, SizedType | undefined>>;

const STRING_TRAVERSAL = 0.1;
const REGEX_LENGTH = 0.25;
const LIST_CREATE = 10;
const MAP_CREATE = 30;
const STRUCT_CREATE = 40;

const COMPARISONS = new Set(['_<_', '_<=_', '_>_', '_>=_']);

const add = (a: number, b: number) => Math.min(MAX_ESTIMATE, a + b);
const multiply = (a: number, b: number) => (a === 0 || b === 0 ? 0 : Math.min(MAX_ESTIMATE, a * b));
const factor = (size: number, perUnit: number) => Math.min(MAX_ESTIMATE, Math.ceil(size * perUnit));

/** What the estimate of a sub-expression carries up: its cost, its size, its type if known. */
interface Estimate {
  readonly cost: number;
  /** Its size (bytes of a string, elements of a list or map); undefined: a scalar. */
  readonly size: number | undefined;
  readonly type: SizedType | undefined;
  /** An integer literal's value (split's limit). */
  readonly literalInt?: number;
}

/**
 * The maximum estimated cost of `source` (cel-go's CostEstimate.Max), or undefined when it does
 * not parse (the compile error is reported elsewhere).
 */
export function estimateCost(source: string, variables: SizeOracle): number | undefined {
  let root: Expr;
  try {
    root = parse(source).expr;
  } catch {
    return undefined;
  }
  return new Coster(variables).cost(root, new Map()).cost;
}

class Coster {
  constructor(private readonly variables: SizeOracle) {}

  cost(expr: Expr | undefined, bound: ReadonlyMap<string, SizedType | undefined>): Estimate {
    if (expr === undefined) return { cost: 0, size: undefined, type: undefined };
    const kind = expr.exprKind;
    switch (kind.case) {
      case 'constExpr': {
        const constant = kind.value.constantKind;
        // A string literal's size is its code points, as cel-go counts it.
        if (constant.case === 'stringValue')
          return { cost: 0, size: [...constant.value].length, type: LITERAL_STRING };
        if (constant.case === 'int64Value')
          return { cost: 0, size: undefined, type: undefined, literalInt: Number(constant.value) };
        if (constant.case === 'bytesValue')
          return { cost: 0, size: constant.value.length, type: LITERAL_BYTES };
        return { cost: 0, size: undefined, type: undefined };
      }
      case 'identExpr': {
        const name = kind.value.name;
        const type = bound.has(name) ? bound.get(name) : this.variables[name];
        return { cost: 1, ...sized(type) };
      }
      case 'selectExpr': {
        const operand = this.cost(kind.value.operand, bound);
        const type = operand.type?.field(kind.value.field);
        return { cost: add(operand.cost, 1), ...sized(type) };
      }
      case 'listExpr': {
        let cost = LIST_CREATE;
        for (const element of kind.value.elements) cost = add(cost, this.cost(element, bound).cost);
        return { cost, size: kind.value.elements.length, type: LITERAL_LIST };
      }
      case 'structExpr': {
        let cost = kind.value.messageName === '' ? MAP_CREATE : STRUCT_CREATE;
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey')
            cost = add(cost, this.cost(entry.keyKind.value, bound).cost);
          cost = add(cost, this.cost(entry.value, bound).cost);
        }
        return { cost, size: kind.value.entries.length, type: undefined };
      }
      case 'comprehensionExpr': {
        const loop = kind.value;
        const range = this.cost(loop.iterRange, bound);
        const init = this.cost(loop.accuInit, bound);
        const inner = new Map(bound);
        inner.set(loop.accuVar, undefined);
        const iterated = new Map(inner);
        // A list's loop variable is an item, a map's a key.
        iterated.set(
          loop.iterVar,
          range.type?.kind === 'map'
            ? range.type.key
            : range.type?.kind === 'list'
              ? range.type.elem
              : undefined,
        );
        const condition = this.cost(loop.loopCondition, iterated);
        const step = this.cost(loop.loopStep, iterated);
        const result = this.cost(loop.result, inner);
        const count = range.size ?? MAX_ESTIMATE;
        const cost = add(
          add(add(range.cost, init.cost), result.cost),
          multiply(count, add(step.cost, condition.cost)),
        );
        // cel-go records the range's size as the comprehension's (map and filter keep it).
        return { cost, size: count, type: undefined };
      }
      case 'callExpr':
        return this.call(kind.value.function, kind.value.target, kind.value.args, bound);
      default:
        return { cost: 0, size: undefined, type: undefined };
    }
  }

  private call(
    fn: string,
    targetExpr: Expr | undefined,
    argExprs: readonly Expr[],
    bound: ReadonlyMap<string, SizedType | undefined>,
  ): Estimate {
    const target = targetExpr === undefined ? undefined : this.cost(targetExpr, bound);
    const args = argExprs.map((a) => this.cost(a, bound));
    let argSum = target?.cost ?? 0;
    for (const a of args) argSum = add(argSum, a.cost);
    const sizeOf = (e: Estimate | undefined) => e?.size ?? 1;
    const plain = (extra: number): Estimate => ({
      cost: add(extra, argSum),
      size: undefined,
      type: undefined,
    });
    const [lhs, rhs] = args;
    switch (fn) {
      case '_&&_':
      case '_||_':
        return { cost: argSum, size: undefined, type: undefined };
      case '_?_:_': {
        const [condition, yes, no] = args;
        const cost = add(condition?.cost ?? 0, Math.max(yes?.cost ?? 0, no?.cost ?? 0));
        const size = Math.max(yes?.size ?? 1, no?.size ?? 1);
        return { cost, size, type: yes?.type ?? no?.type };
      }
      case '_==_':
      case '_!=_':
        return plain(factor(Math.min(sizeOf(lhs), sizeOf(rhs)), STRING_TRAVERSAL));
      case '_+_': {
        const size = add(sizeOf(lhs), sizeOf(rhs));
        if (isList(lhs) || isList(rhs)) return { cost: add(1, argSum), size, type: lhs?.type };
        if (isText(lhs) || isText(rhs))
          return { cost: add(factor(size, STRING_TRAVERSAL), argSum), size, type: lhs?.type };
        return plain(1);
      }
      case '@in':
        return plain(sizeOf(rhs));
      case 'matches':
      case 'find':
      case 'findAll': {
        const text = targetExpr !== undefined ? target : lhs;
        const pattern = targetExpr !== undefined ? lhs : rhs;
        const strCost = factor(add(sizeOf(text), 1), STRING_TRAVERSAL);
        const regexCost = factor(sizeOf(pattern), REGEX_LENGTH);
        return plain(multiply(strCost, regexCost));
      }
      case 'contains': {
        const text = targetExpr !== undefined ? target : lhs;
        const part = targetExpr !== undefined ? lhs : rhs;
        return plain(
          multiply(factor(sizeOf(text), STRING_TRAVERSAL), factor(sizeOf(part), STRING_TRAVERSAL)),
        );
      }
    }
    if (COMPARISONS.has(fn) && (isText(lhs) || isText(rhs)))
      return plain(factor(Math.min(sizeOf(lhs), sizeOf(rhs)), STRING_TRAVERSAL));
    const library = this.library(fn, target, args);
    if (library !== undefined)
      return { cost: add(library.cost, argSum), size: library.size, type: library.type };
    if (fn === '_[_]' || fn === '_[?_]') {
      const container = lhs?.type;
      const type =
        container?.kind === 'list' || container?.kind === 'map' ? container.elem : undefined;
      return { cost: add(1, argSum), ...sized(type) };
    }
    return plain(1);
  }

  /**
   * The Kubernetes CEL library's own estimates (apiserver's library/cost.go, EstimateCallCost)
   * and cel-go's for the string extensions it names, without their operands' cost; undefined
   * for a function either leaves at the default of 1.
   */
  private library(
    fn: string,
    target: Estimate | undefined,
    args: readonly Estimate[],
  ): Estimate | undefined {
    const sizeOf = (e: Estimate | undefined) => e?.size ?? 1;
    const first = args[0];
    switch (fn) {
      case 'startsWith':
      case 'endsWith':
        return {
          cost: factor(sizeOf(args[args.length - 1]), STRING_TRAVERSAL),
          size: undefined,
          type: undefined,
        };
      case 'lowerAscii':
      case 'upperAscii':
      case 'substring':
      case 'trim':
        if (target === undefined) return undefined;
        return {
          cost: factor(sizeOf(target), STRING_TRAVERSAL),
          size: target.size,
          type: target.type,
        };
      case 'format':
        if (target === undefined) return undefined;
        return { cost: factor(sizeOf(target), STRING_TRAVERSAL), size: undefined, type: undefined };
      case 'url':
        if (target !== undefined || first === undefined) return undefined;
        return {
          cost: factor(sizeOf(first), STRING_TRAVERSAL),
          size: first.size,
          type: first.type,
        };
      case 'isSorted':
      case 'sum':
      case 'max':
      case 'min':
      case 'indexOf':
      case 'lastIndexOf': {
        if (target === undefined) return undefined;
        if (target.type?.kind !== 'list') {
          return {
            cost: factor(sizeOf(target), STRING_TRAVERSAL),
            size: undefined,
            type: undefined,
          };
        }
        // One per element, plus a traversal of each when they are strings.
        const elem = target.type.elem;
        const perElement =
          elem?.kind === 'string' || elem?.kind === 'bytes'
            ? add(1, factor(elem.maxElements, STRING_TRAVERSAL))
            : 1;
        return { cost: multiply(sizeOf(target), perElement), size: undefined, type: undefined };
      }
      case 'replace': {
        if (target === undefined || args.length < 2) return undefined;
        const size = sizeOf(target);
        const [from, to] = args;
        // The longest result: the shortest match replaced by the longest replacement, each time.
        const fromMin = from?.type === LITERAL_STRING ? sizeOf(from) : 0;
        const toMax = sizeOf(to);
        const result =
          fromMin === 0
            ? add(multiply(add(size, 1), toMax), size)
            : toMax <= fromMin
              ? size
              : multiply(Math.ceil(size / fromMin), toMax);
        return { cost: factor(size, 2 * STRING_TRAVERSAL), size: result, type: target.type };
      }
      case 'split': {
        if (target === undefined) return undefined;
        // At most one part per byte (an empty separator), or the limit given as a literal.
        const limit = args[1]?.literalInt;
        return {
          cost: factor(sizeOf(target), 2 * STRING_TRAVERSAL),
          size: limit ?? target.size,
          type: LITERAL_LIST,
        };
      }
      case 'join': {
        if (target === undefined) return undefined;
        const count = sizeOf(target);
        const elem = target.type?.kind === 'list' ? target.type.elem : undefined;
        let size = elem === undefined ? 0 : multiply(count, elem.maxElements);
        if (first !== undefined) size = add(size, multiply(sizeOf(first), Math.max(0, count - 1)));
        return { cost: factor(size, STRING_TRAVERSAL), size, type: LITERAL_STRING };
      }
      case 'find':
      case 'findAll': {
        if (target === undefined || first === undefined) return undefined;
        const strCost = factor(add(sizeOf(target), 1), STRING_TRAVERSAL);
        return {
          cost: multiply(strCost, factor(sizeOf(first), REGEX_LENGTH)),
          size: target.size,
          type: undefined,
        };
      }
      case 'cidr':
      case 'isIP':
      case 'isCIDR':
      case 'quantity':
      case 'isQuantity':
      case 'semver':
      case 'isSemver':
      case 'ip':
        // Costed by their argument only as members; as the global functions they are, 1.
        if (target === undefined || first === undefined) return undefined;
        return { cost: factor(sizeOf(first), STRING_TRAVERSAL), size: undefined, type: undefined };
      default:
        return undefined;
    }
  }
}

function sized(type: SizedType | undefined): {
  size: number | undefined;
  type: SizedType | undefined;
} {
  if (type === undefined) return { size: undefined, type };
  // cel-go asks the estimator for every node it can place in the schema: a scalar's is its
  // MaxElements, 0 (an int compares at no cost beyond its operands').
  return { size: type.maxElements, type };
}

const isList = (e: Estimate | undefined) => e?.type?.kind === 'list';
const isText = (e: Estimate | undefined) => e?.type?.kind === 'string' || e?.type?.kind === 'bytes';

/** The type of a literal: its size is the literal's own, nothing below it is known. */
function literal(kind: SizedType['kind']): SizedType {
  return { kind, maxElements: 0, field: () => undefined, elem: undefined, key: undefined };
}
const LITERAL_STRING = literal('string');
const LITERAL_BYTES = literal('bytes');
const LITERAL_LIST = literal('list');
