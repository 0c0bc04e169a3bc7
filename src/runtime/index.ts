// The public face of src/runtime: work queue, controller loop, leader election, shutdown.
export { type Clock, FakeClock, sleep, systemClock } from './clock.js';
export {
  Controller,
  type ControllerMetrics,
  type ControllerOptions,
  type KeyMapper,
  ownerKeys,
  type Reconcile,
  type ReconcileContext,
  type ReconcileOutcome,
  type Result,
  TerminalError,
  toError,
} from './controller.js';
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
  DEFAULT_QUEUE_BACKOFF,
  type WorkHandler,
  WorkQueue,
  type WorkQueueOptions,
} from './queue.js';
export {
  DEFAULT_DRAIN_TIMEOUT_MS,
  Manager,
  type ManagerOptions,
  type SignalOptions,
  type Startable,
  stopOnSignal,
} from './shutdown.js';
