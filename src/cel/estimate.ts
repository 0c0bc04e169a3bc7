// The static cost estimate of one CEL expression, before it ever runs: cel-go's checker/cost.go
// (coster) over @bufbuild/cel's parsed tree, its maximum only. Each identifier and field select
// costs 1, a call 1 plus its arguments (string comparisons and traversals 0.1 per byte, `in` 1
// per element, `matches` the string times a quarter of the pattern), a list literal 10, a map 30,
// a message 40, and a comprehension its range, its init and result plus, per element of the
// range, its condition and step. Sizes of lists, maps and strings come from the caller (a CRD's
// maxItems, maxProperties, maxLength), through `SizeOracle`. What cel-go knows from the types the
// checker inferred is guessed here from the tree: see docs/adr/0003 for what is approximated.
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

/** Functions whose cost is a traversal of their target (or first argument) at 0.1 per byte. */
const STRING_TRAVERSALS = new Set([
  'startsWith',
  'endsWith',
  'lowerAscii',
  'upperAscii',
  'trim',
  'substring',
  'charAt',
  'indexOf',
  'lastIndexOf',
  'split',
  'replace',
  'reverse',
  'quote',
  'format',
  'url',
  'isURL',
  'ip',
  'isIP',
  'cidr',
  'isCIDR',
  'quantity',
  'isQuantity',
  'semver',
  'isSemver',
]);
/** Functions of Kubernetes' list library: one unit per element of their target. */
const LIST_TRAVERSALS = new Set(['isSorted', 'sum', 'max', 'min', 'join']);
/** Functions returning a value as long as their target (a string transformed). */
const SAME_SIZE = new Set(['lowerAscii', 'upperAscii', 'trim', 'substring', 'replace', 'reverse']);
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
        if (constant.case === 'stringValue')
          return { cost: 0, size: Buffer.byteLength(constant.value), type: LITERAL_STRING };
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
    const subject = target ?? lhs;
    if (LIST_TRAVERSALS.has(fn)) return plain(sizeOf(subject));
    if (STRING_TRAVERSALS.has(fn)) {
      const measured = fn === 'startsWith' || fn === 'endsWith' ? args[args.length - 1] : subject;
      const cost = add(factor(sizeOf(measured), STRING_TRAVERSAL), argSum);
      if (SAME_SIZE.has(fn)) return { cost, size: subject?.size, type: subject?.type };
      // split: at most one part per byte, and a part no longer than the whole.
      if (fn === 'split') return { cost, size: subject?.size, type: undefined };
      return { cost, size: undefined, type: undefined };
    }
    if (fn === '_[_]' || fn === '_[?_]') {
      const container = lhs?.type;
      const type =
        container?.kind === 'list' || container?.kind === 'map' ? container.elem : undefined;
      return { cost: add(1, argSum), ...sized(type) };
    }
    return plain(1);
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
