// Status writing shared by the reconcilers: kstatus conditions (Ready, Reconciling, Stalled)
// that keep their lastTransitionTime across no-change writes, the spec's message items, status
// patches that are skipped when nothing changed, and when a write is a transition worth an Event.
import type { Condition, MessageItem } from '../api/index.js';
import type { KubeObject, ResourceClient } from '../kube/index.js';

/** Where a resource stands, in kstatus terms. */
export type Health =
  /** Usable: Ready=True, Reconciling=False, Stalled=False. */
  | 'ready'
  /** Work in progress (or waiting on something that will come): Reconciling=True. */
  | 'reconciling'
  /** Cannot progress without a change from someone: Stalled=True. */
  | 'stalled';

export interface HealthReport {
  readonly health: Health;
  /** CamelCase, as metav1.Condition wants it. */
  readonly reason: string;
  readonly message: string;
}

/**
 * Sets one condition, keeping lastTransitionTime when its status does not change (the
 * metav1.Condition contract; a fresh timestamp on every write would also make every write a
 * change).
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: Omit<Condition, 'lastTransitionTime'>,
  now: Date,
): Condition[] {
  const list = [...(conditions ?? [])];
  const at = list.findIndex((c) => c.type === next.type);
  const old = at >= 0 ? list[at] : undefined;
  const lastTransitionTime =
    old !== undefined && old.status === next.status ? old.lastTransitionTime : rfc3339(now);
  const condition: Condition = { ...next, lastTransitionTime };
  if (at >= 0) list[at] = condition;
  else list.push(condition);
  return list;
}

/** The three kstatus conditions for `report`, at `generation`. */
export function healthConditions(
  conditions: readonly Condition[] | undefined,
  report: HealthReport,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const flag = (on: boolean): 'True' | 'False' => (on ? 'True' : 'False');
  const idle = report.health === 'ready' ? 'Succeeded' : report.reason;
  const list = setCondition(
    conditions,
    {
      type: 'Ready',
      status: flag(report.health === 'ready'),
      reason: report.reason,
      message: report.message,
      ...observed(generation),
    },
    now,
  );
  // Reconciling and Stalled are "abnormal-true": they carry the report only while it is theirs.
  const abnormal = (from: Condition[], type: string, health: Health): Condition[] =>
    setCondition(
      from,
      {
        type,
        status: flag(report.health === health),
        reason: report.health === health ? report.reason : idle,
        message: report.health === health ? report.message : '',
        ...observed(generation),
      },
      now,
    );
  return abnormal(abnormal(list, 'Reconciling', 'reconciling'), 'Stalled', 'stalled');
}

/** observedGeneration, when the object has a generation to observe. */
export function observed(generation: number | undefined): { observedGeneration?: number } {
  return generation !== undefined ? { observedGeneration: generation } : {};
}

/** The condition of `type`, if there is one. */
export function condition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** The part of a status every kind derives from its report alone. */
export function healthStatus(
  previous: readonly Condition[] | undefined,
  report: HealthReport,
  generation: number | undefined,
  now: Date,
): { messages: MessageItem[]; observedGeneration?: number; conditions: Condition[] } {
  return {
    messages: messagesFor(report),
    ...observed(generation),
    conditions: healthConditions(previous, report, generation, now),
  };
}

/** The spec's message list: one item, at a level matching the health. */
export function messagesFor(report: HealthReport): MessageItem[] {
  const level = report.health === 'stalled' ? 'error' : 'info';
  return [{ level, message: report.message }];
}

/** metav1.Time: RFC 3339 in whole seconds, as the API server writes it. */
export function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** JSON with sorted keys: two statuses are the same when their canonical forms are. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  );
}

/**
 * canonical(a) === canonical(b), without building either string: every settled check and
 * every status write asks it. Plain objects and arrays are walked; anything else (a Date, a
 * NaN) is left to canonical itself.
 */
export function canonicallyEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    // JSON writes a missing item as null.
    for (let i = 0; i < a.length; i++)
      if (!canonicallyEqual(a[i] ?? null, b[i] ?? null)) return false;
    return true;
  }
  if (isPlain(a) && isPlain(b)) {
    const keys = present(a);
    if (keys.length !== present(b).length) return false;
    return keys.every((key) => Object.hasOwn(b, key) && canonicallyEqual(a[key], b[key]));
  }
  return canonical(a) === canonical(b);
}

const isPlain = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/** The keys JSON writes: those whose value it does not leave out. */
const present = (o: Record<string, unknown>) =>
  Object.keys(o).filter((key) => {
    const v = o[key];
    return v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
  });

/**
 * Replaces the whole status through a merge patch of /status, or does nothing when `next`
 * equals `current`: a no-op write would still bump resourceVersion and wake every watcher.
 * Fields of `current` that `next` lacks are sent as null so the merge removes them.
 */
export async function writeStatus<Spec, Status>(
  client: ResourceClient<Spec, Status>,
  object: KubeObject<unknown, unknown>,
  next: object,
  options: { guard?: boolean } = {},
): Promise<KubeObject<Spec, Status> | undefined> {
  const current = (object.status ?? {}) as Record<string, unknown>;
  if (canonicallyEqual(current, next)) return undefined;
  const patch: Record<string, unknown> = { ...(next as Record<string, unknown>) };
  for (const field of Object.keys(current)) if (!(field in next)) patch[field] = null;
  // guard: the write fails with 409 unless the object is still the version that was read.
  const metadata = options.guard
    ? { metadata: { resourceVersion: object.metadata.resourceVersion } }
    : {};
  return client.patchStatus(
    { name: object.metadata.name, namespace: object.metadata.namespace ?? '' },
    { ...metadata, status: patch },
  );
}

export type EventType = 'Normal' | 'Warning';

/** Where commitStatus announces a transition: the EventRecorder, in the operator. */
export interface EventSink {
  record(
    object: KubeObject<unknown, unknown>,
    type: EventType,
    reason: string,
    message: string,
  ): void;
}

/** What commitStatus needs to see of a status, before and after. */
export interface StatusLike {
  readonly status?: string;
  readonly conditions?: readonly Condition[];
}

/**
 * When a status write is worth an Event, and of which type. Two policies, because the kinds
 * with a lifecycle phase announce phase changes and the kstatus-only kinds cannot.
 */
export interface TransitionPolicy {
  due(previous: StatusLike, next: StatusLike, report: HealthReport): boolean;
  type(report: HealthReport): EventType;
}

/** Application, ServiceSpecification: Ready flipped or changed reason; anything unready warns. */
export const READY_TRANSITIONS: TransitionPolicy = {
  due: (previous, _next, report) => {
    const before = condition(previous.conditions, 'Ready');
    return (
      before?.status !== (report.health === 'ready' ? 'True' : 'False') ||
      before?.reason !== report.reason
    );
  },
  type: (report) => (report.health === 'ready' ? 'Normal' : 'Warning'),
};

/** Scope, Service: the lifecycle phase or Ready's reason changed; only Stalled warns. */
export const PHASE_TRANSITIONS: TransitionPolicy = {
  due: (previous, next, report) =>
    previous.status !== next.status ||
    condition(previous.conditions, 'Ready')?.reason !== report.reason,
  type: (report) => (report.health === 'stalled' ? 'Warning' : 'Normal'),
};

/**
 * writeStatus, then an Event (queued, see EventRecorder) when `policy` calls the write a
 * transition (`announce` runs first, for the caller's log line). No write, no Event. Returns
 * what writeStatus returns.
 */
export async function commitStatus<Spec, Status>(
  client: ResourceClient<Spec, Status>,
  events: EventSink,
  object: KubeObject<unknown, unknown>,
  next: StatusLike,
  report: HealthReport,
  policy: TransitionPolicy,
  options: { guard?: boolean; announce?: () => void } = {},
): Promise<KubeObject<Spec, Status> | undefined> {
  const previous = (object.status ?? {}) as StatusLike;
  const written = await writeStatus(client, object, next, options);
  if (written === undefined) return undefined;
  if (policy.due(previous, next, report)) {
    options.announce?.();
    events.record(object, policy.type(report), report.reason, report.message);
  }
  return written;
}
