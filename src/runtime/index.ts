// The public face of src/runtime: work queue, controller loop, leader election, the manager
// that runs them, and the shutdown on signals.
export { type Clock, FakeClock, sleep, systemClock } from './clock.js';
export {
  Controller,
  type ControllerMetrics,
  type ControllerOptions,
  type KeyMapper,
  ownerKeys,
  type Reconcile,
  type ReconcileOutcome,
  toError,
} from './controller.js';
export {
  DEFAULT_HEAP_GROWTH_PERCENT,
  MAX_HEAP_GROWTH_PERCENT,
  setHeapGrowth,
} from './heap.js';
export {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  type LeaderElectionOptions,
  LeaderElector,
  type LeaseSpec,
  leaseSpecOf,
  microTime,
  type StoppedReason,
} from './leader.js';
export {
  DEFAULT_DRAIN_TIMEOUT_MS,
  Manager,
  type ManagerOptions,
  type Startable,
} from './manager.js';
export {
  DEFAULT_QUEUE_BACKOFF,
  type WorkHandler,
  WorkQueue,
  type WorkQueueOptions,
} from './queue.js';
export {
  annotationChanged,
  anyOf,
  finalizersChanged,
  generationChanged,
  labelsChanged,
  type Predicate,
  type ReconcileContext,
  type Reconciler,
  type Result,
  Stalled,
} from './reconciler.js';
export type { Runnable } from './runnable.js';
export { type SignalOptions, stopOnSignal } from './signals.js';
