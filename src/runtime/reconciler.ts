// The reconcile contract (controller-runtime's Reconciler): a reconciler is given a key and a
// context — a signal aborted when the controller halts or its shutdown bound passes, a logger
// that carries the key, the failures since the last success — and answers with a Result. A
// thrown Stalled says "retrying cannot fix this; wait for the object to change"; anything else
// thrown is retried with backoff.
import type { Logger } from 'pino';

/** What a reconcile asks for: nothing (done until the next change), or another look later. */
export interface Result {
  readonly requeueAfter?: number;
}

export interface ReconcileContext {
  /**
   * Aborted when the controller halts (leadership lost) or its shutdown bound passes: pass it
   * to every request and wait, so that a process that no longer leads stops acting.
   */
  readonly signal: AbortSignal;
  /** Carries the key. */
  readonly log: Logger;
  /** Failures of this key since its last success. */
  readonly retries: number;
}

export interface Reconciler {
  /** Re-reads state by key (the event that queued it is gone); resolves undefined when done. */
  reconcile(key: string, context: ReconcileContext): Promise<Result | undefined>;
}

/**
 * The object cannot progress until it changes (a spec change, a retry request): the reconciler
 * has said so on the object (status `failed`, Stalled=True), and the key is not retried. Its
 * reason is the Stalled condition's.
 */
export class Stalled extends Error {
  override readonly name = 'Stalled';

  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Which update events of a watch are worth a reconcile, given the object and the version
 * before it (controller-runtime's predicates); adds, deletes and resyncs always are.
 */
export type Predicate<O> = (object: O, old: O) => boolean;

interface Meta {
  readonly metadata: {
    readonly generation?: number;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly labels?: Readonly<Record<string, string>>;
    readonly deletionTimestamp?: string;
    readonly finalizers?: readonly string[];
  };
}

/** The spec changed (metadata.generation moved), or deletion began. */
export const generationChanged: Predicate<Meta> = (object, old) =>
  object.metadata.generation !== old.metadata.generation ||
  object.metadata.deletionTimestamp !== old.metadata.deletionTimestamp;

/** Annotation `name` was set, changed or removed. */
export function annotationChanged(name: string): Predicate<Meta> {
  return (object, old) => object.metadata.annotations?.[name] !== old.metadata.annotations?.[name];
}

/** A label was set, changed or removed. */
export const labelsChanged: Predicate<Meta> = (object, old) =>
  !sameEntries(object.metadata.labels, old.metadata.labels);

/** The finalizers changed. */
export const finalizersChanged: Predicate<Meta> = (object, old) => {
  const a = object.metadata.finalizers ?? [];
  const b = old.metadata.finalizers ?? [];
  return a.length !== b.length || a.some((f, i) => f !== b[i]);
};

/** Any of `predicates` holds. */
export function anyOf<O>(...predicates: readonly Predicate<O>[]): Predicate<O> {
  return (object, old) => predicates.some((p) => p(object, old));
}

function sameEntries(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  if (a === b) return true;
  const keys = Object.keys(a ?? {});
  if (keys.length !== Object.keys(b ?? {}).length) return false;
  return keys.every((key) => a?.[key] === b?.[key]);
}
