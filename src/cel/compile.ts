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
export function compileCel(source: string, variables: readonly string[]): Compiled {
  let root: Expr;
  try {
    root = parse(source).expr;
  } catch (error) {
    return { ok: false, errors: [`syntax error: ${describe(error).replace(/^<input>:/, '')}`] };
  }
  const uses = new Set<string>();
  const errors = check(root, new Set(), new Set(variables), uses);
  if (errors.length > 0) return { ok: false, errors };
  try {
    const program = plan(ENV, root);
    return { ok: true, program: (bindings) => program(bindings as never) as CelValue, uses };
  } catch (error) {
    return { ok: false, errors: [describe(error)] };
  }
}

/** Unknown names and functions; wraps each comprehension's condition in the meter's tick. */
function check(
  expr: Expr | undefined,
  bound: ReadonlySet<string>,
  variables: ReadonlySet<string>,
  uses: Set<string>,
): string[] {
  if (expr === undefined) return [];
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'identExpr': {
      const name = kind.value.name;
      if (bound.has(name) || TYPE_NAMES.has(name)) return [];
      if (variables.has(name)) {
        uses.add(name);
        return [];
      }
      return [`unknown variable '${name}' (known: ${[...variables].join(', ') || 'none'})`];
    }
    case 'selectExpr':
      return check(kind.value.operand, bound, variables, uses);
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
        errors.push(...check(call.target, bound, variables, uses));
      }
      for (const arg of call.args) errors.push(...check(arg, bound, variables, uses));
      return errors;
    }
    case 'listExpr':
      return kind.value.elements.flatMap((element) => check(element, bound, variables, uses));
    case 'structExpr':
      return kind.value.entries.flatMap((entry) => [
        ...(entry.keyKind.case === 'mapKey'
          ? check(entry.keyKind.value, bound, variables, uses)
          : []),
        ...check(entry.value, bound, variables, uses),
      ]);
    case 'comprehensionExpr': {
      const loop = kind.value;
      const inner = new Set([...bound, loop.accuVar]);
      const iterated = new Set([...inner, loop.iterVar]);
      const errors = [
        ...check(loop.iterRange, bound, variables, uses),
        ...check(loop.accuInit, bound, variables, uses),
        ...check(loop.loopCondition, iterated, variables, uses),
        ...check(loop.loopStep, iterated, variables, uses),
        ...check(loop.result, inner, variables, uses),
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
