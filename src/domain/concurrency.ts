// How much the controllers do at once: the scope workers, and the Event writers sized by them
// (in one module: the Scope reconciler and the Event recorder both read them).

/**
 * Scopes reconciled in parallel: the work is waiting on the API server (controller-runtime's
 * knob). A burst goes faster the more writes the API server can commit together (ADR 0004).
 * The request pool of src/kube/transport.ts is sized above this plus EVENT_WRITERS.
 */
export const DEFAULT_SCOPE_WORKERS = 64;

/**
 * Event writes in flight at once: half the scope workers, as each new scope records two
 * Events; fewer drop Events in a burst (ADR 0010).
 */
export const EVENT_WRITERS = DEFAULT_SCOPE_WORKERS / 2;

/**
 * Event writes in flight at once while reconciles wait for a worker: Events give the API
 * server's time to the status writes they report, and catch up once the backlog is worked
 * off (ADR 0010, "Under load").
 */
export const EVENT_WRITERS_UNDER_LOAD = 4;
