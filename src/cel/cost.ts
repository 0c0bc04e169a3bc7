// The cost meter every CEL evaluation of the repository runs under. @bufbuild/cel 0.6 has no cost
// tracking of its own (no cost or budget option in CelEnvOptions or plan()), so the environment
// (env.ts) wraps each function and each comprehension step to charge the meter in progress here.
// One unit per call and per loop iteration, plus one per 64 characters or elements a call reads or
// makes: the same order of magnitude as cel-go's runtime cost (1 per call, 0.1 per character of
// a string operation, 1 per element a list function traverses), so kube's limits mean about what
// they mean to kube-apiserver.

/**
 * Longest one evaluation may run, whatever its units: our units cost more time than cel-go's
 * (about 5 s for 10,000,000 of nested loops here), and an evaluation holds the event loop.
 */
export const MAX_EVALUATION_MS = 100;
/** Charges between two looks at the clock: the clock costs more than a charge. */
const CLOCK_EVERY = 256;

/** The meter of the evaluation in progress (evaluation is synchronous: one at a time). */
let meter:
  | { spent: number; limit: number; exceeded: boolean; deadline: number; ticks: number }
  | undefined;

/** Thrown by a charge beyond the limit; plan() turns it into the evaluation's error. */
export class CostLimitExceeded extends Error {
  constructor(
    readonly limit: number,
    readonly timedOut = false,
  ) {
    super(
      timedOut
        ? `evaluation time limit exceeded (${MAX_EVALUATION_MS} ms)`
        : `evaluation cost limit exceeded (${limit} units)`,
    );
  }
}

/** Charges the evaluation in progress, if any; throws once it is beyond its limit. */
export function charge(units: number): void {
  if (meter === undefined) return;
  meter.spent += units;
  if (meter.spent > meter.limit) {
    meter.exceeded = true;
    throw new CostLimitExceeded(meter.limit);
  }
  meter.ticks += 1;
  if (meter.ticks % CLOCK_EVERY === 0 && performance.now() > meter.deadline) {
    meter.exceeded = true;
    throw new CostLimitExceeded(meter.limit, true);
  }
}

export interface Metered<T> {
  readonly result: T;
  /** Units spent (beyond the limit by at most one charge when `exceeded`). */
  readonly cost: number;
  /** Whether the limit stopped the evaluation: its result is then an error, whatever it says. */
  readonly exceeded: boolean;
}

/** Runs `evaluate` with a fresh meter of `limit` units; meters nest (the outer one resumes after). */
export function metered<T>(limit: number, evaluate: () => T): Metered<T> {
  const previous = meter;
  const mine = {
    spent: 0,
    limit,
    exceeded: false,
    deadline: performance.now() + MAX_EVALUATION_MS,
    ticks: 0,
  };
  meter = mine;
  try {
    const result = evaluate();
    return { result, cost: mine.spent, exceeded: mine.exceeded };
  } finally {
    meter = previous;
  }
}
