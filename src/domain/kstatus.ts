// kstatus: whether an object of any kind is Current, by the rules kubectl wait, Flux and
// kpt share (kubernetes-sigs/cli-utils, pkg/kstatus/status). A faithful port of status.go
// (Compute), generic.go (checkGenericProperties, checkGeneration) and core.go (the built-in
// kinds' rules); the messages are kstatus' own, so that what users read matches the tools.
// Pure: the object is given, nothing is fetched.

export type KStatus = 'InProgress' | 'Failed' | 'Current' | 'Terminating' | 'NotFound' | 'Unknown';

export interface KStatusResult {
  readonly status: KStatus;
  readonly message: string;
}

/** Any Kubernetes object as the API returns it (only the fields kstatus reads are named). */
export interface KStatusObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly generation?: unknown;
    readonly deletionTimestamp?: unknown;
    readonly creationTimestamp?: unknown;
    readonly [field: string]: unknown;
  };
  readonly spec?: unknown;
  readonly status?: unknown;
  readonly [field: string]: unknown;
}

export interface KStatusOptions {
  /** The time now, in ms since the epoch: the Pod scheduling window is measured from it. */
  readonly now?: number;
}

/**
 * How long a pod can be unscheduled before it is reported as unschedulable (core.go
 * ScheduleWindow).
 */
export const POD_SCHEDULE_WINDOW_MS = 15_000;

/** kstatus' Compute returned an error: the object is not the shape its kind says. */
class Malformed extends Error {}

/**
 * The kstatus status of an object; undefined (the object is gone) is NotFound, as the
 * cli-utils polling engine reports a 404 (polling/statusreaders: handleResourceStatusError,
 * "Resource not found"). Where kstatus' Compute fails (a field of the wrong type, an unknown
 * Pod phase) the same engine reports Unknown, and so does this, with the reason.
 */
export function computeKStatus(
  object: KStatusObject | undefined,
  options: KStatusOptions = {},
): KStatusResult {
  if (object === undefined) return { status: 'NotFound', message: 'Resource not found' };
  try {
    return compute(object, options.now ?? Date.now());
  } catch (error) {
    if (error instanceof Malformed) return { status: 'Unknown', message: error.message };
    throw error;
  }
}

/** status.go Compute: the generic rules decide first; then the kind's own; else Current. */
function compute(object: KStatusObject, now: number): KStatusResult {
  const generic = checkGenericProperties(object);
  if (generic !== undefined) return generic;
  const rule = LEGACY_TYPES.get(legacyKey(object));
  if (rule !== undefined) return rule(object, now);
  // Not in kstatus' generic rules nor core.go: see readyCondition.
  const ready = readyCondition(object);
  if (ready !== undefined) return ready;
  return current('Resource is current');
}

const current = (message: string): KStatusResult => ({ status: 'Current', message });
const inProgress = (message: string): KStatusResult => ({ status: 'InProgress', message });
const failed = (message: string): KStatusResult => ({ status: 'Failed', message });

// ---- generic.go ----------------------------------------------------------------------

function checkGenericProperties(object: KStatusObject): KStatusResult | undefined {
  const deletion = object.metadata.deletionTimestamp;
  if (deletion !== undefined && deletion !== null) {
    if (typeof deletion !== 'string')
      throw new Malformed('metadata.deletionTimestamp is not a string');
    if (deletion !== '')
      return { status: 'Terminating', message: 'Resource scheduled for deletion' };
  }
  const generation = checkGeneration(object);
  if (generation !== undefined) return generation;
  // The standard conditions ("abnormal-true"): when a controller sets them, they decide alone.
  for (const condition of conditionsOf(object)) {
    if (condition.type === 'Reconciling' && condition.status === 'True')
      return inProgress(condition.message);
    if (condition.type === 'Stalled' && condition.status === 'True')
      return failed(condition.message);
  }
  return undefined;
}

function checkGeneration(object: KStatusObject): KStatusResult | undefined {
  const generation = optionalInteger(object.metadata.generation, 'metadata.generation');
  if (generation === undefined) return undefined;
  const observed = optionalInteger(
    statusField(object, 'observedGeneration'),
    'status.observedGeneration',
  );
  // An object without status.observedGeneration cannot be checked this way (generic.go).
  if (observed !== undefined && observed !== generation) {
    return inProgress(
      `${object.kind ?? ''} generation is ${generation}, but latest observed generation is ${observed}`,
    );
  }
  return undefined;
}

/**
 * The `Ready` condition of a kind kstatus has no rule for: Ready=False is InProgress with the
 * condition's reason. This is cli-utils' own expectation in status_compute_test.go
 * (TestCRDGenericStatus: crdNotReady is InProgress with reason NotReadyYet, crdReady and
 * crdNoCondition are Current); the generic.go stored beside it has no such branch, so the
 * rule is kept to exactly what that test says: Ready=True and Ready=Unknown decide nothing.
 */
function readyCondition(object: KStatusObject): KStatusResult | undefined {
  for (const condition of conditionsOf(object)) {
    if (condition.type === 'Ready' && condition.status === 'False') {
      return inProgress(condition.message !== '' ? condition.message : condition.reason);
    }
  }
  return undefined;
}

// ---- core.go ---------------------------------------------------------------------------

type Rule = (object: KStatusObject, now: number) => KStatusResult;

/** The key of core.go's legacyTypes: "<group>/<Kind>", or "<Kind>" in the core group. */
function legacyKey(object: KStatusObject): string {
  const apiVersion = object.apiVersion ?? '';
  const slash = apiVersion.indexOf('/');
  const group = slash === -1 ? '' : apiVersion.slice(0, slash);
  const kind = object.kind ?? '';
  return group === '' ? kind : `${group}/${kind}`;
}

const alwaysReady: Rule = () => current('Resource is always ready');

function statefulSet(object: KStatusObject): KStatusResult {
  // StatefulSet defines .status.conditions but its controller sets none: replicas decide.
  if (stringField(object, ['spec', 'updateStrategy', 'type'], '') === 'OnDelete') {
    return current('StatefulSet is using the ondelete update strategy');
  }
  const specReplicas = intField(object, ['spec', 'replicas'], 1);
  const readyReplicas = intField(object, ['status', 'readyReplicas'], 0);
  const currentReplicas = intField(object, ['status', 'currentReplicas'], 0);
  const updatedReplicas = intField(object, ['status', 'updatedReplicas'], 0);
  const statusReplicas = intField(object, ['status', 'replicas'], 0);
  const partition = intField(object, ['spec', 'updateStrategy', 'rollingUpdate', 'partition'], -1);
  if (specReplicas > statusReplicas)
    return inProgress(`Replicas: ${statusReplicas}/${specReplicas}`);
  if (specReplicas > readyReplicas) return inProgress(`Ready: ${readyReplicas}/${specReplicas}`);
  if (statusReplicas > specReplicas)
    return inProgress(`Pending termination: ${statusReplicas - specReplicas}`);
  if (partition !== -1) {
    if (updatedReplicas < specReplicas - partition) {
      return inProgress(`updated: ${updatedReplicas}/${specReplicas - partition}`);
    }
    return current(`Partition rollout complete. updated: ${updatedReplicas}`);
  }
  if (specReplicas > currentReplicas)
    return inProgress(`current: ${currentReplicas}/${specReplicas}`);
  const currentRevision = stringField(object, ['status', 'currentRevision'], '');
  const updateRevision = stringField(object, ['status', 'updateRevision'], '');
  if (currentRevision !== updateRevision) {
    return inProgress('Waiting for updated revision to match current');
  }
  return current(`All replicas scheduled as expected. Replicas: ${statusReplicas}`);
}

/** core.go uses math.MaxInt32 as "progressDeadlineSeconds unset", as the controller does. */
const MAX_INT32 = 2_147_483_647;

function deployment(object: KStatusObject): KStatusResult {
  // Without progressDeadlineSeconds the controller never sets Progressing.
  let progressing = intField(object, ['spec', 'progressDeadlineSeconds'], MAX_INT32) === MAX_INT32;
  let available = false;
  for (const condition of conditionsOf(object)) {
    if (condition.type === 'Progressing') {
      if (condition.reason === 'ProgressDeadlineExceeded')
        return failed('Progress deadline exceeded');
      if (condition.status === 'True' && condition.reason === 'NewReplicaSetAvailable') {
        progressing = true;
      }
    } else if (condition.type === 'Available' && condition.status === 'True') {
      available = true;
    }
  }
  const specReplicas = intField(object, ['spec', 'replicas'], 1);
  const statusReplicas = intField(object, ['status', 'replicas'], 0);
  const updatedReplicas = intField(object, ['status', 'updatedReplicas'], 0);
  const readyReplicas = intField(object, ['status', 'readyReplicas'], 0);
  const availableReplicas = intField(object, ['status', 'availableReplicas'], 0);
  if (specReplicas > statusReplicas)
    return inProgress(`Replicas: ${statusReplicas}/${specReplicas}`);
  if (specReplicas > updatedReplicas)
    return inProgress(`Updated: ${updatedReplicas}/${specReplicas}`);
  if (statusReplicas > specReplicas)
    return inProgress(`Pending termination: ${statusReplicas - specReplicas}`);
  if (updatedReplicas > availableReplicas)
    return inProgress(`Available: ${availableReplicas}/${updatedReplicas}`);
  if (specReplicas > readyReplicas) return inProgress(`Ready: ${readyReplicas}/${specReplicas}`);
  if (!progressing) return inProgress('ReplicaSet not Available');
  if (!available) return inProgress('Deployment not Available');
  return current(`Deployment is available. Replicas: ${statusReplicas}`);
}

function replicaSet(object: KStatusObject): KStatusResult {
  for (const condition of conditionsOf(object)) {
    if (condition.type === 'ReplicaFailure' && condition.status === 'True') {
      return inProgress('Replica Failure condition. Check Pods');
    }
  }
  const specReplicas = intField(object, ['spec', 'replicas'], 1);
  const statusReplicas = intField(object, ['status', 'replicas'], 0);
  const readyReplicas = intField(object, ['status', 'readyReplicas'], 0);
  const availableReplicas = intField(object, ['status', 'availableReplicas'], 0);
  const labelled = intField(object, ['status', 'fullyLabeledReplicas'], 0);
  if (specReplicas > labelled) return inProgress(`Labelled: ${labelled}/${specReplicas}`);
  if (specReplicas > availableReplicas)
    return inProgress(`Available: ${availableReplicas}/${specReplicas}`);
  if (specReplicas > readyReplicas) return inProgress(`Ready: ${readyReplicas}/${specReplicas}`);
  if (statusReplicas > specReplicas)
    return inProgress(`Pending termination: ${statusReplicas - specReplicas}`);
  return current(`ReplicaSet is available. Replicas: ${statusReplicas}`);
}

function daemonSet(object: KStatusObject): KStatusResult {
  // The generic check skips unset generations; a DaemonSet its controller has seen has both.
  const unset = checkGenerationSet(object);
  if (unset !== undefined) return unset;
  const desired = intField(object, ['status', 'desiredNumberScheduled'], -1);
  const scheduled = intField(object, ['status', 'currentNumberScheduled'], 0);
  const updated = intField(object, ['status', 'updatedNumberScheduled'], 0);
  const available = intField(object, ['status', 'numberAvailable'], 0);
  const ready = intField(object, ['status', 'numberReady'], 0);
  if (desired === -1) return inProgress('Missing .status.desiredNumberScheduled');
  if (desired > scheduled) return inProgress(`Current: ${scheduled}/${desired}`);
  if (desired > updated) return inProgress(`Updated: ${updated}/${desired}`);
  if (desired > available) return inProgress(`Available: ${available}/${desired}`);
  if (desired > ready) return inProgress(`Ready: ${ready}/${desired}`);
  return current(`All replicas scheduled as expected. Replicas: ${desired}`);
}

function checkGenerationSet(object: KStatusObject): KStatusResult | undefined {
  const kind = object.kind ?? '';
  if (optionalInteger(object.metadata.generation, 'metadata.generation') === undefined) {
    return inProgress(`${kind} metadata.generation not found`);
  }
  const observed = statusField(object, 'observedGeneration');
  if (optionalInteger(observed, 'status.observedGeneration') === undefined) {
    return inProgress(`${kind} status.observedGeneration not found`);
  }
  return undefined;
}

function persistentVolumeClaim(object: KStatusObject): KStatusResult {
  const phase = stringField(object, ['status', 'phase'], 'unknown');
  if (phase !== 'Bound') return inProgress(`PVC is not Bound. phase: ${phase}`);
  return current('PVC is Bound');
}

function pod(object: KStatusObject, now: number): KStatusResult {
  const conditions = conditionsOf(object);
  const phase = stringField(object, ['status', 'phase'], '');
  switch (phase) {
    case 'Succeeded':
      return current('Pod has completed successfully');
    case 'Failed':
      return current('Pod has completed, but not successfully');
    case 'Running': {
      if (conditions.some((c) => c.type === 'Ready' && c.status === 'True')) {
        return current('Pod is Ready');
      }
      const crashLooping = crashLoopingContainers(object);
      if (crashLooping.length > 0) {
        return failed(`Containers in CrashLoop state: ${crashLooping.join(',')}`);
      }
      return inProgress('Pod is running but is not Ready');
    }
    case 'Pending': {
      const scheduled = conditions.find((c) => c.type === 'PodScheduled' && c.status === 'False');
      if (scheduled !== undefined && scheduled.reason === 'Unschedulable') {
        // A pod gets ScheduleWindow to be scheduled before it is reported unschedulable.
        const created = Date.parse(String(object.metadata.creationTimestamp ?? ''));
        if (Number.isFinite(created) && now - POD_SCHEDULE_WINDOW_MS < created) {
          return inProgress('Pod has not been scheduled');
        }
        return failed('Pod could not be scheduled');
      }
      return inProgress('Pod is in the Pending phase');
    }
    case '':
      // The kubelet has not reported the pod yet.
      return inProgress('Pod phase not available');
    default:
      throw new Malformed(`unknown phase ${phase}`);
  }
}

function crashLoopingContainers(object: KStatusObject): string[] {
  const statuses = statusField(object, 'containerStatuses');
  if (!Array.isArray(statuses)) return [];
  const names: string[] = [];
  for (const entry of statuses) {
    if (!isRecord(entry) || typeof entry.name !== 'string' || !isRecord(entry.state)) continue;
    const waiting = entry.state.waiting;
    if (isRecord(waiting) && waiting.reason === 'CrashLoopBackOff') names.push(entry.name);
  }
  return names;
}

/**
 * A PDB is Current once the disruption controller observed its generation, which the
 * generic check has established by the time this runs (core.go pdbConditions).
 */
const podDisruptionBudget: Rule = () => current('AllowedDisruptions has been computed.');

function job(object: KStatusObject): KStatusResult {
  const parallelism = intField(object, ['spec', 'parallelism'], 1);
  const completions = intField(object, ['spec', 'completions'], parallelism);
  const succeeded = intField(object, ['status', 'succeeded'], 0);
  const active = intField(object, ['status', 'active'], 0);
  const failedPods = intField(object, ['status', 'failed'], 0);
  const startTime = stringField(object, ['status', 'startTime'], '');
  for (const condition of conditionsOf(object)) {
    if (condition.status !== 'True') continue;
    if (condition.type === 'Complete') {
      return current(`Job Completed. succeeded: ${succeeded}/${completions}`);
    }
    if (condition.type === 'Failed')
      return failed(`Job Failed. failed: ${failedPods}/${completions}`);
    // A suspended job is not in progress.
    if (condition.type === 'Suspended') return current('Job is suspended');
  }
  if (startTime === '') return inProgress('Job not started');
  return current(`Job in progress. success:${succeeded}, active: ${active}, failed: ${failedPods}`);
}

function service(object: KStatusObject): KStatusResult {
  const type = stringField(object, ['spec', 'type'], 'ClusterIP');
  const clusterIP = stringField(object, ['spec', 'clusterIP'], '');
  if (type === 'LoadBalancer' && clusterIP === '') {
    return inProgress('ClusterIP not set. Service type: LoadBalancer');
  }
  return current('Service is ready');
}

function customResourceDefinition(object: KStatusObject): KStatusResult {
  for (const condition of conditionsOf(object)) {
    if (condition.type === 'NamesAccepted' && condition.status === 'False') {
      return failed(condition.message);
    }
    if (condition.type === 'Established') {
      if (condition.status === 'False' && condition.reason !== 'Installing') {
        return failed(condition.message);
      }
      if (condition.status === 'True') return current('CRD is established');
    }
  }
  return inProgress('Install in progress');
}

/** core.go legacyTypes. HorizontalPodAutoscaler is not among them: it is generic. */
const LEGACY_TYPES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ['Service', service],
  ['Pod', pod],
  ['Secret', alwaysReady],
  ['PersistentVolumeClaim', persistentVolumeClaim],
  ['apps/StatefulSet', statefulSet],
  ['apps/DaemonSet', daemonSet],
  ['extensions/DaemonSet', daemonSet],
  ['apps/Deployment', deployment],
  ['extensions/Deployment', deployment],
  ['apps/ReplicaSet', replicaSet],
  ['extensions/ReplicaSet', replicaSet],
  ['policy/PodDisruptionBudget', podDisruptionBudget],
  ['batch/CronJob', alwaysReady],
  ['ConfigMap', alwaysReady],
  ['batch/Job', job],
  ['apiextensions.k8s.io/CustomResourceDefinition', customResourceDefinition],
]);

// ---- util.go ---------------------------------------------------------------------------

interface BasicCondition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
}

/**
 * status.conditions as util.go's GetObjectWithConditions reads them: absent or null is none,
 * a value of the wrong type fails (the converter's error).
 */
function conditionsOf(object: KStatusObject): BasicCondition[] {
  const status = object.status;
  if (status === undefined || status === null) return [];
  if (!isRecord(status)) throw new Malformed('status is not an object');
  const list = status.conditions;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new Malformed('status.conditions is not a list');
  return list.map((entry, index) => {
    if (entry === null) return { type: '', status: '', reason: '', message: '' };
    if (!isRecord(entry)) throw new Malformed(`status.conditions[${index}] is not an object`);
    const field = (name: string): string => {
      const value = entry[name];
      if (value === undefined || value === null) return '';
      if (typeof value !== 'string') {
        throw new Malformed(`status.conditions[${index}].${name} is not a string`);
      }
      return value;
    };
    return {
      type: field('type'),
      status: field('status'),
      reason: field('reason'),
      message: field('message'),
    };
  });
}

function statusField(object: KStatusObject, name: string): unknown {
  return isRecord(object.status) ? object.status[name] : undefined;
}

/** An integer field that may be absent; present with another type, kstatus' Compute fails. */
function optionalInteger(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new Malformed(`${path} is not an integer`);
  }
  return value;
}

function nested(object: KStatusObject, path: readonly string[]): unknown {
  let value: unknown = object;
  for (const key of path) {
    if (!isRecord(value)) return undefined;
    value = value[key];
  }
  return value;
}

/** util.go GetIntField: the default when absent or not an integer. */
function intField(object: KStatusObject, path: readonly string[], fallback: number): number {
  const value = nested(object, path);
  return typeof value === 'number' && Number.isInteger(value) ? value : fallback;
}

/** util.go GetStringField: the default when absent or not a string. */
function stringField(object: KStatusObject, path: readonly string[], fallback: string): string {
  const value = nested(object, path);
  return typeof value === 'string' ? value : fallback;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
