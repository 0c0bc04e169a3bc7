// Compiling one CEL expression for the environment of env.ts: parse, check the names it uses
// (@bufbuild/cel 0.6's checker handles only constants and identifiers, so this walk is our
// check), put the cost meter's tick in every loop, plan. Callers word the problems for their
// users (a template's path, a CRD rule's field).
import { type CelValue, parse, plan } from '@bufbuild/cel';
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { ExprSchema } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { create } from '@bufbuild/protobuf';
import { ENV, TICK } from './env.js';

/** Evaluates the expression with these variables bound (CEL values: see values.ts). */
export type CelProgram = (bindings: Record<string, unknown>) => CelValue;

export type Compiled =
  | { readonly ok: true; readonly program: CelProgram; readonly uses: ReadonlySet<string> }
  | { readonly ok: false; readonly errors: readonly string[] };

/** The type denotations of the standard environment (langdef.md, "Types"), as in `type(x) == int`. */
const TYPE_NAMES = new Set([
  'int',
  'uint',
  'double',
  'bool',
  'string',
  'bytes',
  'list',
  'map',
  'null_type',
  'type',
  'dyn',
]);

/** Function names the planner evaluates itself (planner.ts planCall), not through the resolver. */
const PLANNER_OPERATORS = new Set([
  '_[_]',
  '_[?_]',
  '_?._',
  '_?_:_',
  '_&&_',
  '_||_',
  '@not_strictly_false',
  '__not_strictly_false__',
]);

/**
 * CEL's reserved words cannot name a variable (cel-spec langdef.md, "Syntax": `false in null true`
 * and, "to allow easier embedding of CEL into a host language", `as break const continue else for
 * function if import let loop package namespace return var void while`). They stay usable as
 * field names: `scope.namespace` parses.
 */
const RESERVED = new Set(
  'false in null true as break const continue else for function if import let loop package namespace return var void while'.split(
    ' ',
  ),
);

/** Why `name` cannot be a variable, or undefined. */
export function variableNameProblem(name: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    return `variable name '${name}' is not a CEL identifier`;
  if (RESERVED.has(name))
    return `variable name '${name}' is a reserved word in CEL; choose another`;
  return undefined;
}

/**
 * Compiles `source`, which may name `variables`. Problems: a syntax error (the parser's message
 * without its `<input>:` prefix, prefixed `syntax error: `), an unknown variable or function.
 * `uses` is the set of declared variables the expression names (a CRD rule naming `oldSelf` is
 * a transition rule).
 */
export function compileCel(
  source: string,
  variables: readonly string[],
  shapes: Readonly<Record<string, Shape>> = {},
): Compiled {
  let root: Expr;
  try {
    root = parse(source).expr;
  } catch (error) {
    return { ok: false, errors: [`syntax error: ${describe(error).replace(/^<input>:/, '')}`] };
  }
  const uses = new Set<string>();
  const errors = check(root, new Set(), { variables: new Set(variables), uses, shapes });
  if (errors.length > 0) return { ok: false, errors };
  try {
    const program = plan(ENV, root);
    return { ok: true, program: (bindings) => program(bindings as never) as CelValue, uses };
  } catch (error) {
    return { ok: false, errors: [describe(error)] };
  }
}

/** What check() reads and records across one expression. */
interface CheckContext {
  readonly variables: ReadonlySet<string>;
  readonly uses: Set<string>;
  readonly shapes: Readonly<Record<string, Shape>>;
}

/**
 * Unknown names, functions and fields (see Shape); wraps each comprehension's condition in the
 * meter's tick.
 */
function check(expr: Expr | undefined, bound: ReadonlySet<string>, ctx: CheckContext): string[] {
  if (expr === undefined) return [];
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'identExpr': {
      const name = kind.value.name;
      if (bound.has(name) || TYPE_NAMES.has(name)) return [];
      if (ctx.variables.has(name)) {
        ctx.uses.add(name);
        return [];
      }
      return [`unknown variable '${name}' (known: ${[...ctx.variables].join(', ') || 'none'})`];
    }
    case 'selectExpr': {
      const errors = check(kind.value.operand, bound, ctx);
      if (errors.length > 0) return errors;
      const problem = fieldProblem(expr, bound, ctx.shapes);
      return problem !== undefined ? [problem] : [];
    }
    case 'callExpr': {
      const call = kind.value;
      const errors: string[] = [];
      const qualified = call.target === undefined ? undefined : qualifiedName(call.target);
      if (
        qualified !== undefined &&
        ENV.funcs.find(`${qualified}.${call.function}`) !== undefined
      ) {
        // A namespaced function such as strings.quote: its "target" is its name, not a value.
      } else {
        if (!PLANNER_OPERATORS.has(call.function) && ENV.funcs.find(call.function) === undefined)
          errors.push(`unknown function '${call.function}'`);
        errors.push(...check(call.target, bound, ctx));
      }
      for (const arg of call.args) errors.push(...check(arg, bound, ctx));
      return errors;
    }
    case 'listExpr':
      return kind.value.elements.flatMap((element) => check(element, bound, ctx));
    case 'structExpr':
      return kind.value.entries.flatMap((entry) => [
        ...(entry.keyKind.case === 'mapKey' ? check(entry.keyKind.value, bound, ctx) : []),
        ...check(entry.value, bound, ctx),
      ]);
    case 'comprehensionExpr': {
      const loop = kind.value;
      const inner = new Set([...bound, loop.accuVar]);
      const iterated = new Set([...inner, loop.iterVar]);
      const errors = [
        ...check(loop.iterRange, bound, ctx),
        ...check(loop.accuInit, bound, ctx),
        ...check(loop.loopCondition, iterated, ctx),
        ...check(loop.loopStep, iterated, ctx),
        ...check(loop.result, inner, ctx),
      ];
      if (loop.loopCondition !== undefined) {
        loop.loopCondition = create(ExprSchema, {
          id: loop.loopCondition.id,
          exprKind: { case: 'callExpr', value: { function: TICK, args: [loop.loopCondition] } },
        });
      }
      return errors;
    }
    case 'constExpr':
      return [];
    default:
      return [`unsupported expression (${kind.case ?? 'empty'})`];
  }
}

/**
 * What an expression may select below a variable: the fields it has (each with its own shape),
 * or 'open' for a map, or a value whose fields are not known. Selecting a field a shape lacks
 * is a problem at compile time, as cel-go's checker reports one for a declared object type,
 * rather than a `no such key` for every value it is later evaluated on.
 */
export type Shape = 'open' | { readonly fields: Readonly<Record<string, Shape>> };

/** A select (`a.b.c`, or `has(a.b.c)`) of a field the shape of its variable lacks. */
function fieldProblem(
  expr: Expr,
  bound: ReadonlySet<string>,
  shapes: Readonly<Record<string, Shape>>,
): string | undefined {
  const path: string[] = [];
  let at: Expr | undefined = expr;
  while (at?.exprKind.case === 'selectExpr') {
    path.unshift(at.exprKind.value.field);
    at = at.exprKind.value.operand;
  }
  if (at?.exprKind.case !== 'identExpr') return undefined;
  const root = at.exprKind.value.name;
  // A comprehension's own variable may hide a declared one of the same name.
  if (bound.has(root)) return undefined;
  let shape: Shape | undefined = shapes[root];
  let where = root;
  for (const field of path) {
    if (shape === undefined || shape === 'open') return undefined;
    const next: Shape | undefined = Object.hasOwn(shape.fields, field)
      ? shape.fields[field]
      : undefined;
    if (next === undefined) {
      const known = Object.keys(shape.fields);
      return known.length === 0
        ? `${where} has no fields: '${field}' cannot be selected`
        : `unknown field '${field}' of ${where} (known: ${known.join(', ')})`;
    }
    shape = next;
    where = `${where}.${field}`;
  }
  return undefined;
}

function qualifiedName(expr: Expr): string | undefined {
  const kind = expr.exprKind;
  if (kind.case === 'identExpr') return kind.value.name;
  if (kind.case === 'selectExpr' && !kind.value.testOnly && kind.value.operand !== undefined) {
    const operand = qualifiedName(kind.value.operand);
    return operand === undefined ? undefined : `${operand}.${kind.value.field}`;
  }
  return undefined;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
