// The Service's status as its reconciler writes it: a phase, the health conditions of a report,
// and the two conditions of provider calls. Provisioning is True while a provider call
// sequence runs; its lastTransitionTime is when it started (the deadline counts from there,
// across restarts), observedGeneration and reason (Create, Update, Delete) say which one.
// Provisioned is True once the provider has reported the service active: later calls are
// updates.
import type {
  Condition,
  MessageItem,
  ServicePhase,
  ServiceSpec,
  ServiceStatus,
} from '../../api/index.js';
import { observedRetry } from '../../domain/lifecycle.js';
import { slugify } from '../../domain/names.js';
import {
  condition,
  type HealthReport,
  healthConditions,
  messagesFor,
  observed,
  rfc3339,
  setCondition,
} from '../../domain/status.js';
import type { ServiceAction } from '../provisioners/service-provisioner.js';
import type { RawService } from './resources.js';

const PROVISIONING_CONDITION = 'Provisioning';
const PROVISIONED_CONDITION = 'Provisioned';

const ACTION_REASON: Record<ServiceAction, string> = {
  create: 'Create',
  update: 'Update',
  delete: 'Delete',
};

/** What a status write says beyond the phase and its report. */
export interface StatusExtras {
  readonly messages?: readonly MessageItem[];
  /** Provisioning started (with when), or ended (with the reason). */
  readonly provisioning?:
    | { readonly action: ServiceAction; readonly started: Date }
    | { readonly ended: string };
  readonly provisioned?: boolean;
  /** The digest of the attribute Secret this pass validated with; else the recorded one stays. */
  readonly secretDigest?: string;
}

/** Create until the provider has reported the service active, update from then on. */
export function provisionAction(service: RawService): 'create' | 'update' {
  const provisioned = condition(service.status?.conditions, PROVISIONED_CONDITION);
  return provisioned?.status === 'True' ? 'update' : 'create';
}

/** Whether a provider was ever called: only then can it hold something of this service. */
export function providerContacted(service: RawService): boolean {
  const conditions = service.status?.conditions;
  return (
    condition(conditions, PROVISIONING_CONDITION) !== undefined ||
    condition(conditions, PROVISIONED_CONDITION) !== undefined
  );
}

/** When the running call sequence of `action` for this generation started, as status says. */
export function provisioningSince(service: RawService, action: ServiceAction): Date | undefined {
  const running = condition(service.status?.conditions, PROVISIONING_CONDITION);
  if (
    running?.status === 'True' &&
    running.reason === ACTION_REASON[action] &&
    running.observedGeneration === service.metadata.generation
  ) {
    const at = Date.parse(running.lastTransitionTime);
    if (!Number.isNaN(at)) return new Date(at);
  }
  return undefined;
}

/** Whether status already shows `phase` with a call sequence running since `started`. */
export function provisioningRecorded(
  service: RawService,
  phase: ServicePhase,
  started: Date,
): boolean {
  const running = condition(service.status?.conditions, PROVISIONING_CONDITION);
  return (
    service.status?.status === phase &&
    running?.status === 'True' &&
    running.lastTransitionTime === rfc3339(started)
  );
}

/**
 * The whole status for `phase`, with the provisioning conditions `extras` asks for; slug,
 * updated_at (when the phase changes), the retry value acted on and the attribute Secret's
 * digest carried over or set.
 */
export function serviceStatus(
  service: RawService,
  spec: ServiceSpec | undefined,
  phase: ServicePhase,
  report: HealthReport,
  extras: StatusExtras,
  now: Date,
): ServiceStatus {
  const previous = service.status ?? {};
  const generation = service.metadata.generation;
  let conditions = healthConditions(previous.conditions, report, generation, now);
  const provisioning = extras.provisioning;
  if (provisioning !== undefined && 'started' in provisioning) {
    conditions = putCondition(conditions, {
      type: PROVISIONING_CONDITION,
      status: 'True',
      reason: ACTION_REASON[provisioning.action],
      message: `provider ${provisioning.action} started`,
      lastTransitionTime: rfc3339(provisioning.started),
      ...observed(generation),
    });
  } else if (provisioning !== undefined) {
    conditions = setCondition(
      conditions,
      {
        type: PROVISIONING_CONDITION,
        status: 'False',
        reason: provisioning.ended,
        message: '',
        ...observed(generation),
      },
      now,
    );
  }
  if (extras.provisioned !== undefined) {
    conditions = setCondition(
      conditions,
      {
        type: PROVISIONED_CONDITION,
        status: extras.provisioned ? 'True' : 'False',
        reason: extras.provisioned ? 'ProviderReportedActive' : 'NotProvisioned',
        message: '',
        ...observed(generation),
      },
      now,
    );
  }
  const slug = spec !== undefined ? slugify(spec.name) : previous.slug;
  const updatedAt = previous.status !== phase ? now.toISOString() : previous.updated_at;
  // A service without an attribute Secret has no digest to keep.
  const digest =
    spec !== undefined && spec.secret_attributes_ref === undefined
      ? undefined
      : (extras.secretDigest ?? previous.secretAttributesHash);
  return {
    status: phase,
    ...(slug !== undefined ? { slug } : {}),
    messages: extras.messages !== undefined ? [...extras.messages] : messagesFor(report),
    ...(updatedAt !== undefined ? { updated_at: updatedAt } : {}),
    ...observedRetry(service),
    ...(digest !== undefined ? { secretAttributesHash: digest } : {}),
    ...observed(generation),
    conditions,
  };
}

/** Sets a condition as given, lastTransitionTime included. */
function putCondition(conditions: readonly Condition[], next: Condition): Condition[] {
  const list = conditions.filter((c) => c.type !== next.type);
  const at = conditions.findIndex((c) => c.type === next.type);
  list.splice(at >= 0 ? at : list.length, 0, next);
  return list;
}
