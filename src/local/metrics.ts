// The local API server's Prometheus metrics (served on /metrics), named and labelled as
// kube-apiserver 1.32 names its own, in a registry of their own.
import { Counter, Gauge, Registry } from 'prom-client';
import type { WatchBudget } from './watch.js';

/**
 * Not prom-client's global registry: the operator, in the same process under `nrn-operator
 * local`, keeps its metrics in its own, and two planes in one test process must not collide.
 */
export class ApiServerMetrics {
  readonly registry = new Registry();
  /** By GroupResource as kube-apiserver 1.32 prints it: `configmaps`, `scopes.platform.nrn.dev`. */
  readonly terminatedWatchers: Counter<'resource'>;

  constructor(budget: WatchBudget, invalidStoredObjects = 0) {
    const registers = [this.registry];
    // Ours, not kube-apiserver's: records found at start that the API would refuse (ADR 0003).
    new Gauge({
      name: 'nrn_local_invalid_stored_objects',
      help: 'Stored objects found invalid at start: left out of the indexes, each reported in a Warning Event InvalidStoredObject.',
      registers,
    }).set(invalidStoredObjects);
    // cacher/cache_watcher.go increments this when it gives up on a watcher that does not read.
    this.terminatedWatchers = new Counter({
      name: 'apiserver_terminated_watchers_total',
      help: 'Counter of watchers closed due to unresponsiveness broken by resource type.',
      labelNames: ['resource'],
      registers,
    });
    new Gauge({
      name: 'apiserver_registered_watchers',
      help: 'Number of currently registered watchers for a given resources',
      labelNames: ['resource'],
      registers,
      collect() {
        // Rebuilt each scrape, so that a resource nobody watches any more drops out.
        this.reset();
        for (const stream of budget.streams) this.inc({ resource: stream.resource });
      },
    });
    new Gauge({
      name: 'apiserver_watch_buffered_bytes',
      help: 'Bytes written to watch streams that their clients have not taken yet; bounded by the watch budget, past which the slowest watchers are closed.',
      registers,
      collect() {
        this.set(budget.bufferedBytes);
      },
    });
    new Gauge({
      name: 'apiserver_watch_buffered_bytes_limit',
      help: 'The watch budget: bytes all watch streams together may hold before the slowest are closed.',
      registers,
      collect() {
        this.set(budget.limits.totalBytes);
      },
    });
  }
}
