// What the Manager runs, started and stopped in order: controllers, background writers.
/** Something the manager runs: a controller, or a background writer that must drain. */
export interface Runnable {
  readonly name: string;
  /**
   * Leader-only runnables (controllers: two processes must not reconcile one object) start
   * when elected and halt() when leadership goes; the others start with the manager.
   */
  readonly leaderOnly: boolean;
  start(): Promise<void>;
  /** Leadership lost: stop at once, as if never started; start() may follow. */
  halt?(): void;
  /** Graceful: resolves true when the work in flight ended within `timeoutMs`. */
  stop(timeoutMs: number): Promise<boolean>;
}
