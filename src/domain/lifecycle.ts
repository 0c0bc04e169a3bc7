// The steps every reconciler takes the same way: reading its object by key, the finalizer
// that holds a deletion until cleanup is done, reporting an invalid spec, deciding whether a
// failure stands (waits for a spec change) or is worth another run, and the retry
// annotation that asks a failed object to try again.
import type { z } from 'zod';
import { type Condition, MAX_OBSERVED_RETRY } from '../api/index.js';
import { isNotFound, type KubeObject, type ResourceClient } from '../kube/index.js';
import { RETRY_ANNOTATION, shortHash } from './names.js';
import { condition, type HealthReport } from './status.js';

/** Who a provisioner works for: the object's key, namespace, name and uid. */
export function ownerOf(
  key: string,
  object: KubeObject<unknown, unknown>,
): { key: string; namespace: string; name: string; uid: string } {
  const { namespace, name, uid } = object.metadata;
  return { key, namespace: namespace ?? '', name, uid: uid ?? '' };
}

/** The object behind a work-queue key, or undefined when it is gone (nothing left to do). */
export async function readByKey<Spec, Status>(
  client: ResourceClient<Spec, Status>,
  key: string,
): Promise<KubeObject<Spec, Status> | undefined> {
  const [namespace = '', name = ''] = key.split('/');
  try {
    return await client.get({ namespace, name });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export function hasFinalizer(object: KubeObject<unknown, unknown>, finalizer: string): boolean {
  return (object.metadata.finalizers ?? []).includes(finalizer);
}

/**
 * Adds `finalizer` unless present; returns the object as it now is. Guarded by
 * resourceVersion, so it never overwrites a finalizer list someone changed meanwhile.
 */
export async function ensureFinalizer<Spec, Status>(
  client: ResourceClient<Spec, Status>,
  object: KubeObject<Spec, Status>,
  finalizer: string,
): Promise<KubeObject<Spec, Status>> {
  const finalizers = object.metadata.finalizers ?? [];
  if (finalizers.includes(finalizer)) return object;
  return client.patch(
    { namespace: object.metadata.namespace ?? '', name: object.metadata.name },
    {
      metadata: {
        resourceVersion: object.metadata.resourceVersion,
        finalizers: [...finalizers, finalizer],
      },
    },
  );
}

/** Removes `finalizer`, guarded as ensureFinalizer is; false when the object is already gone. */
export async function removeFinalizer<Spec, Status>(
  client: ResourceClient<Spec, Status>,
  object: KubeObject<Spec, Status>,
  finalizer: string,
): Promise<boolean> {
  try {
    await client.patch(
      { namespace: object.metadata.namespace ?? '', name: object.metadata.name },
      {
        metadata: {
          resourceVersion: object.metadata.resourceVersion,
          finalizers: (object.metadata.finalizers ?? []).filter((f) => f !== finalizer),
        },
      },
    );
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
  return true;
}

/** The InvalidSpec message: every zod issue, with the path from the object's root. */
export function specProblems(error: z.ZodError): string {
  return error.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`).join('; ');
}

/**
 * The Stalled condition of a failure that stands: the object is `failed` for a reason in
 * `sticky` (one a rerun cannot fix), its spec has not changed since, and neither has what
 * else caused it (`causeMoved`: true for a reason whose cause, such as the generation of the
 * scope's class, is no longer the one it failed under). Undefined when the object is to be
 * worked on (other failures are evaluated afresh).
 */
export function failureStands(
  status: { readonly status?: string; readonly conditions?: readonly Condition[] },
  specChanged: boolean,
  sticky: ReadonlySet<string>,
  causeMoved: (reason: string) => boolean = () => false,
): Condition | undefined {
  const stalled = condition(status.conditions, 'Stalled');
  if (status.status !== 'failed' || specChanged || stalled === undefined) return undefined;
  const reason = stalled.reason ?? '';
  return sticky.has(reason) && !causeMoved(reason) ? stalled : undefined;
}

/**
 * The retry annotation's value as status records it: as it is, or (longer than status takes)
 * `sha256:<hex>` of it. Undefined without the annotation.
 */
export function retryValue(object: KubeObject<unknown, unknown>): string | undefined {
  const value = object.metadata.annotations?.[RETRY_ANNOTATION];
  if (value === undefined) return undefined;
  return value.length <= MAX_OBSERVED_RETRY ? value : `sha256:${shortHash(value, 64)}`;
}

/** The retry annotation's value when it is not the one last acted on (status.observedRetry). */
export function retryRequested(object: KubeObject<unknown, unknown>): string | undefined {
  const value = retryValue(object);
  return value !== undefined && value !== recordedRetry(object) ? value : undefined;
}

/**
 * status.observedRetry as the next status write carries it: the annotation's value, whatever
 * the phase (a value seen while not failed is recorded, never acted on later), or the one
 * recorded before (a removed annotation changes nothing).
 */
export function observedRetry(object: KubeObject<unknown, unknown>): { observedRetry?: string } {
  const value = retryValue(object) ?? recordedRetry(object);
  return value !== undefined ? { observedRetry: value } : {};
}

/** What a failed object going back to work on a retry request reports. */
export function retryReport(value: string, kind: string): HealthReport {
  return {
    health: 'reconciling',
    reason: 'Retrying',
    message: `retry requested (${RETRY_ANNOTATION}: ${value}); the ${kind} is tried again`,
  };
}

function recordedRetry(object: KubeObject<unknown, unknown>): string | undefined {
  const status = object.status as { observedRetry?: unknown } | undefined;
  return typeof status?.observedRetry === 'string' ? status.observedRetry : undefined;
}
