// Accepting a scope: the whole status of a scope in a phase, and the guarded write that puts
// it `pending` with its identity — the one write that gives a scope its id, whether the facade
// (POST /scope) or the reconciler (kubectl apply) makes it.
import type { ChildReference, Condition, ScopePhase, ScopeStatus } from '../../api/index.js';
import type { KubeObject, ResourceClient } from '../../kube/index.js';
import { observedRetry } from '../lifecycle.js';
import {
  commitStatus,
  condition,
  type EventSink,
  type HealthReport,
  healthStatus,
  observed,
  PHASE_TRANSITIONS,
  rfc3339,
} from '../status.js';
import type { Identity } from './identity.js';

type ScopeObject = KubeObject<unknown, ScopeStatus>;

/** What a scope's class gave it: kept from the previous status when not given. */
export interface ClassRecord {
  readonly scopeClass?: string;
  readonly scopeClassGeneration?: number;
  readonly inventory?: readonly ChildReference[];
  /** The pause annotation is in force: said by a `Paused` condition. */
  readonly paused?: boolean;
}

export const PAUSED_CONDITION = 'Paused';

/**
 * The whole status of a scope in `phase`: the identity given, or the one status already holds
 * (kept even while it cannot be recomputed, e.g. the application is missing), and the health
 * of `report`.
 */
export function scopeStatus(
  scope: ScopeObject,
  phase: ScopePhase,
  identity: Identity | undefined,
  report: HealthReport,
  now: Date,
  record: ClassRecord = {},
): ScopeStatus {
  const previous = scope.status ?? {};
  const kept = identity ?? {
    ...(previous.id !== undefined ? { id: previous.id } : {}),
    ...(previous.slug !== undefined ? { slug: previous.slug } : {}),
    ...(previous.domain !== undefined ? { domain: previous.domain } : {}),
    ...(previous.nrn !== undefined ? { nrn: previous.nrn } : {}),
  };
  const scopeClass = record.scopeClass ?? previous.scopeClass;
  const classGeneration = record.scopeClassGeneration ?? previous.scopeClassGeneration;
  const inventory = record.inventory ?? previous.inventory;
  // While paused nothing of a changed spec is applied, so the generation observed stays the one
  // last applied: kstatus (cli-utils pkg/kstatus/status/generic.go, checkGeneration) then says
  // InProgress instead of Current for a change that is not there. Resumed,
  // the reconciler sees the change and applies it.
  const generation =
    record.paused === true && previous.observedGeneration !== undefined
      ? previous.observedGeneration
      : scope.metadata.generation;
  const health = healthStatus(previous.conditions, report, generation, now);
  return {
    status: phase,
    ...kept,
    ...observedRetry(scope),
    ...(scopeClass !== undefined ? { scopeClass } : {}),
    ...(classGeneration !== undefined ? { scopeClassGeneration: classGeneration } : {}),
    ...(inventory !== undefined && inventory.length > 0 ? { inventory: [...inventory] } : {}),
    ...health,
    conditions: pausedCondition(
      health.conditions,
      previous.conditions,
      record.paused,
      scope.metadata.generation,
      now,
    ),
  };
}

/**
 * `Paused=True` while the annotation holds (reconciling children is left to people), gone
 * otherwise: kstatus and most tools ignore a condition type they do not know.
 */
function pausedCondition(
  conditions: Condition[],
  previous: readonly Condition[] | undefined,
  paused: boolean | undefined,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const without = conditions.filter((c) => c.type !== PAUSED_CONDITION);
  const was = condition(previous, PAUSED_CONDITION);
  const on = paused ?? was !== undefined;
  if (!on) return without;
  return [
    ...without,
    {
      type: PAUSED_CONDITION,
      status: 'True',
      reason: 'ReconcileDisabled',
      message:
        'the platform.nrn.dev/reconcile annotation is disabled: children are not applied or repaired',
      // Of the object as it is: the annotation is metadata, which moves no generation.
      ...observed(generation),
      lastTransitionTime: was?.lastTransitionTime ?? rfc3339(now),
    },
  ];
}

/**
 * The whole status for `phase`, written and announced as commitStatus does. Returns the object
 * as written, or undefined when there was nothing to write.
 */
export function writeScopeStatus<Spec>(
  client: ResourceClient<Spec, ScopeStatus>,
  events: EventSink,
  scope: ScopeObject,
  phase: ScopePhase,
  identity: Identity | undefined,
  report: HealthReport,
  now: Date,
  options: { guard?: boolean; record?: ClassRecord } = {},
): Promise<KubeObject<Spec, ScopeStatus> | undefined> {
  const next = scopeStatus(scope, phase, identity, report, now, options.record);
  return commitStatus(client, events, scope, next, report, PHASE_TRANSITIONS, options);
}

/**
 * `pending` with `identity`, guarded by resourceVersion: status.id is the record (a label
 * anyone may set, status only the operator may), so a racing writer makes this fail (409) and
 * the id is never used — gaps, never duplicates. Written before anything is provisioned for
 * the scope, so no id is ever lost.
 */
export function accept<Spec>(
  client: ResourceClient<Spec, ScopeStatus>,
  events: EventSink,
  scope: ScopeObject,
  identity: Identity,
  now: Date,
): Promise<KubeObject<Spec, ScopeStatus> | undefined> {
  const report = acceptedReport(identity.id);
  return writeScopeStatus(client, events, scope, 'pending', identity, report, now, {
    guard: true,
  });
}

/** What `pending` with a freshly assigned id says, whoever assigned it. */
export function acceptedReport(id: number): HealthReport {
  return { health: 'reconciling', reason: 'Accepted', message: `scope accepted with id ${id}` };
}
