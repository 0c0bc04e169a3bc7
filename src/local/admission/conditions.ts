// The `matchConditions` of an admission webhook: CEL expressions over `object`, `oldObject` and
// `request`, compiled once per configuration (src/cel, the repository's CEL) and evaluated per
// request, as staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions/
// matcher.go does: every condition true → the webhook is called; one false → it is skipped (even
// when another errs); an error → the webhook's failurePolicy decides. `authorizer` is not offered
// (its checks are not cheap here): an expression naming it does not compile, which is an error at
// each request. Each expression is held to kube's per-call cost limit.
import { isCelError } from '@bufbuild/cel';
import { compileCel, metered, PER_CALL_LIMIT, toCel, ValueProblem } from '../../cel/index.js';

/** validation.go: at most 64 conditions per webhook, each expression at most 10 KiB. */
export const MAX_CONDITIONS = 64;
const MAX_EXPRESSION_LENGTH = 10 * 1024;
const VARIABLES = ['object', 'oldObject', 'request'] as const;
/** Values converted for one evaluation, and how deep: a request's objects are bounded already. */
const MAX_NODES = 1_000_000;
const MAX_DEPTH = 100;

export interface MatchCondition {
  readonly name: string;
  readonly expression: string;
}

/** What evaluating a webhook's conditions decides. */
export type ConditionResult = { matches: true } | { matches: false } | { error: string };

export type CompiledConditions = (
  variables: Record<(typeof VARIABLES)[number], unknown>,
) => ConditionResult;

/** Compiles every condition; one that does not compile is an error at each request. */
export function compileConditions(conditions: readonly MatchCondition[]): CompiledConditions {
  if (conditions.length === 0) return () => ({ matches: true });
  const compiled = conditions.slice(0, MAX_CONDITIONS).map((c) => {
    if (c.expression.length > MAX_EXPRESSION_LENGTH) {
      return {
        name: c.name,
        error: `expression is longer than ${MAX_EXPRESSION_LENGTH} characters`,
      };
    }
    const result = compileCel(c.expression, VARIABLES);
    return result.ok
      ? { name: c.name, program: result.program }
      : { name: c.name, error: `compilation failed: ${result.errors.join('; ')}` };
  });
  return (variables) => {
    const bindings: Record<string, unknown> = {};
    const budget = { nodes: MAX_NODES };
    for (const name of VARIABLES) {
      const value = toCel(variables[name] ?? null, MAX_DEPTH, budget);
      if (value instanceof ValueProblem) return { error: `${name}: ${value.message}` };
      bindings[name] = value;
    }
    let firstError: string | undefined;
    for (const c of compiled) {
      if (c.program === undefined) {
        firstError ??= `${c.name}: ${c.error}`;
        continue;
      }
      const program = c.program;
      const outcome = metered(PER_CALL_LIMIT, () => program(bindings));
      const result = outcome.result;
      if (outcome.exceeded)
        firstError ??= `${c.name}: operation cancelled: actual cost limit exceeded`;
      else if (isCelError(result)) firstError ??= `${c.name}: ${result.message}`;
      else if (result === false) return { matches: false };
      else if (result !== true) firstError ??= `${c.name}: must evaluate to bool`;
    }
    return firstError === undefined ? { matches: true } : { error: firstError };
  };
}
