// The `matchConditions` of an admission webhook: CEL expressions over `object`, `oldObject`
// and `request`, compiled once per configuration and evaluated per request, as
// staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions/matcher.go does:
// every condition true → the webhook is called; one false → it is skipped; an error → the
// webhook's failurePolicy decides. `authorizer` is not offered (its checks are not cheap here):
// an expression naming it fails to evaluate. Evaluation is bounded by a cost meter over the
// standard functions, as src/domain/scope-classes/template.ts meters its own (src/local may not
// import it).
import {
  type CelFunc,
  type CelValue,
  celEnv,
  celList,
  celMap,
  isCelError,
  isCelList,
  isCelMap,
  parse,
  plan,
} from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

/** kube's per-expression limits for matchConditions (validation.go: 64 conditions, MaxCost). */
export const MAX_CONDITIONS = 64;
const MAX_EXPRESSION_LENGTH = 10 * 1024;
/** Cost units one evaluation of all of a webhook's conditions may spend. */
const MAX_COST = 1_000_000;
const MAX_DEPTH = 100;

export interface MatchCondition {
  readonly name: string;
  readonly expression: string;
}

/** What evaluating a webhook's conditions decides. */
export type ConditionResult =
  | { matches: true }
  | { matches: false; condition: string }
  | { error: string };

export type CompiledConditions = (variables: {
  object: unknown;
  oldObject: unknown;
  request: unknown;
}) => ConditionResult;

let meter: { spent: number } | undefined;

function sizeOf(value: unknown): number {
  if (typeof value === 'string' || value instanceof Uint8Array) return value.length;
  if (isCelList(value) || isCelMap(value)) return value.size;
  return 0;
}

function charge(units: number): void {
  if (meter === undefined) return;
  meter.spent += units;
  if (meter.spent > MAX_COST) throw new Error('operation cancelled: actual cost limit exceeded');
}

function metered(func: CelFunc): CelFunc {
  return Object.create(func, {
    call: {
      value(id: number, target: CelValue | undefined, args: CelValue[]) {
        let read = sizeOf(target);
        for (const arg of args) read += sizeOf(arg);
        charge(1 + Math.ceil(read / 64));
        return func.call(id, target, args);
      },
    },
  }) as CelFunc;
}

const ENV = (() => {
  const base = celEnv({ funcs: strings });
  return celEnv({ funcs: [...base.funcs].map(metered) });
})();

/** Compiles every condition; a condition that does not compile is an error at each request. */
export function compileConditions(conditions: readonly MatchCondition[]): CompiledConditions {
  if (conditions.length === 0) return () => ({ matches: true });
  const programs = conditions.slice(0, MAX_CONDITIONS).map((c) => {
    try {
      if (c.expression.length > MAX_EXPRESSION_LENGTH) throw new Error('expression too long');
      const program = plan(ENV, parse(c.expression).expr);
      return { name: c.name, program };
    } catch (error) {
      return { name: c.name, error: error instanceof Error ? error.message : String(error) };
    }
  });
  return (variables) => {
    const bindings: Record<string, unknown> = {};
    const budget = { nodes: 200_000 };
    for (const [key, value] of Object.entries(variables)) bindings[key] = toCel(value, 0, budget);
    const previous = meter;
    meter = { spent: 0 };
    try {
      // matcher.go: a false condition skips the webhook even when another one errs.
      let firstError: string | undefined;
      for (const p of programs) {
        if ('error' in p) {
          firstError ??= `compilation failed for "${p.name}": ${p.error}`;
          continue;
        }
        let result: unknown;
        try {
          result = p.program(bindings as never);
        } catch (error) {
          firstError ??= `${p.name}: ${error instanceof Error ? error.message : String(error)}`;
          continue;
        }
        if (isCelError(result)) {
          firstError ??= `${p.name}: ${result.message}`;
        } else if (result === false) {
          return { matches: false, condition: p.name };
        } else if (result !== true) {
          firstError ??= `${p.name}: expected a boolean result`;
        }
      }
      return firstError === undefined ? { matches: true } : { error: firstError };
    } finally {
      meter = previous;
    }
  };
}

/** A CEL value from JSON: whole numbers as ints, objects as maps (bounded in depth and size). */
function toCel(value: unknown, depth: number, budget: { nodes: number }): unknown {
  budget.nodes -= 1;
  if (budget.nodes < 0 || depth > MAX_DEPTH) return null;
  if (value === undefined || value === null) return null;
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (typeof value !== 'object') return value;
  if (Array.isArray(value)) return celList(value.map((v) => toCel(v, depth + 1, budget)) as never);
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(value)) {
    if (v !== undefined) out.set(k, toCel(v, depth + 1, budget));
  }
  return celMap(out as never);
}
