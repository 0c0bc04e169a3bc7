// What every kind's setup function takes and gives: the operator (src/operator.ts) hands each
// the same context and runs what they return under one Manager, so adding a kind is a folder
// with a reconciler and a setup function, and one line in the operator's list.
import type { Logger } from 'pino';
import type { EventRecorder } from '../domain/event-recorder.js';
import type { KindAllowlist } from '../domain/scope-classes/kinds.js';
import type { InformerOptions, Kube, KubeObject } from '../kube/index.js';
import type { Controller, Startable } from '../runtime/index.js';
import type { WebhookCallObserver } from './provisioners/webhook/http.js';

export interface SetupContext {
  readonly kube: Kube;
  readonly log: Logger;
  readonly events: EventRecorder;
  /** The operator's namespace: its Lease, the scope id counter, the digest key. */
  readonly namespace: string;
  readonly baseDomain: string;
  /** Scopes a second a changed ScopeClass reaches (the rollout's pace). */
  readonly scopeClassRolloutRate?: number;
  /** The kinds a ScopeClass's resources may be (ADR 0029); the default setting where left out. */
  readonly scopeClassKinds?: KindAllowlist;
  /**
   * What every informer of the operator's kinds is asked with (the cache's transform, the
   * resync period): the same options, so the informers of one kind are shared (ADR 0011).
   */
  readonly informerOptions: Pick<InformerOptions, 'transform' | 'resyncMs'>;
  /** Told of every call a webhook provisioner (scope or service) makes to an agent: metrics. */
  readonly webhookCalls?: WebhookCallObserver;
}

export interface KindSetup {
  /** Started before any controller, stopped first. */
  readonly informers: readonly Startable[];
  readonly controllers: readonly Controller[];
  /** The caches of the kind's own objects, counted for metrics. */
  readonly caches: readonly { list(): readonly KubeObject[] }[];
}
