// The Scope reconciler: the lifecycle of docs/design.md. Identity (id from the counter, slug,
// domain, NRN) once its application exists, recorded in status (`pending`) before anything
// else; then the id label and the finalizer, in one patch; then the provisioner until `active`
// or `failed`: `creating` is written only while provisioning takes more than one pass (a scope
// provisioned in one goes from `pending` to `active`), `updating` after a spec change. On
// delete, `deleting` while the provisioner removes what it made, then the finalizer goes.
// A failed scope tries again on a spec change, or on a new value of the retry annotation.
// A scope the caches show settled (active, up to date, nothing to write) costs no request.
import type { Logger } from 'pino';
import {
  type ApplicationSpec,
  type ApplicationStatus,
  GROUP,
  type ScopePhase,
  type ScopeSpec,
  ScopeSpec as ScopeSpecSchema,
  type ScopeStatus,
} from '../../api/index.js';
import { applicationById } from '../../domain/applications.js';
import { DEFAULT_SCOPE_WORKERS } from '../../domain/concurrency.js';
import type { EventRecorder } from '../../domain/event-recorder.js';
import {
  ensureFinalizer,
  failureStands,
  hasFinalizer,
  ownerOf,
  readByKey,
  removeFinalizer,
  retryReport,
  retryRequested,
  specProblems,
} from '../../domain/lifecycle.js';
import {
  DEFAULT_BASE_DOMAIN,
  RETRY_ANNOTATION,
  SCOPE_ANNOTATION,
  SCOPE_ID_LABEL,
  SCOPE_NAME_LABEL,
  SCOPE_NAMESPACE_LABEL,
} from '../../domain/names.js';
import {
  accept,
  acceptanceBegun,
  type IdAllocator,
  type Identity,
  identify,
  idOfLabel,
  recordedIdentity,
  SCOPE_APP_INDEX,
  scopeStatus,
  slugHolder,
  writeScopeStatus,
} from '../../domain/scopes/index.js';
import { canonicallyEqual, type HealthReport, writeStatus } from '../../domain/status.js';
import {
  type Informer,
  type Kube,
  type KubeObject,
  keyOf,
  type ResourceClient,
  rawResource,
} from '../../kube/index.js';
import {
  annotationChanged,
  anyOf,
  Controller,
  finalizersChanged,
  generationChanged,
  labelsChanged,
  type ReconcileContext,
  type Result,
  Stalled,
} from '../../runtime/index.js';
import type { Progress, ScopeProvisioner, ScopeTarget } from '../provisioners/scope-provisioner.js';

export const SCOPE_FINALIZER = `${GROUP}/scope-cleanup`;
/** Scopes without schemas: an invalid spec must still be read, to be reported. */
export const RawScopes = rawResource('Scope');

type ScopeObject = KubeObject<ScopeSpec, ScopeStatus>;
type AppInformer = Informer<ApplicationSpec, ApplicationStatus>;
type ScopeInformer = Informer<ScopeSpec, ScopeStatus>;

/**
 * The updates of a scope worth a reconcile: its spec, deletion, the retry annotation, the id
 * label and the finalizer (which the reconciler puts back when someone removes them).
 */
const SCOPE_CHANGES = anyOf(
  generationChanged,
  annotationChanged(RETRY_ANNOTATION),
  labelsChanged,
  finalizersChanged,
);

/** Failures a rerun cannot fix by itself: they wait for a spec change or a retry request. */
const STICKY_FAILURES = new Set(['NamespaceTaken', 'ProvisionRefused']);

/** From an object the operator made for a scope to that scope's key. */
export function scopeKeyOfChild(object: KubeObject): string | undefined {
  const exact = object.metadata.annotations?.[SCOPE_ANNOTATION];
  if (exact !== undefined) return exact;
  // Made before the annotation: the labels, whose name is exact when it fitted in a label.
  const labels = object.metadata.labels ?? {};
  const namespace = labels[SCOPE_NAMESPACE_LABEL];
  const name = labels[SCOPE_NAME_LABEL];
  return namespace !== undefined && name !== undefined ? `${namespace}/${name}` : undefined;
}

export interface ScopeReconcilerOptions {
  readonly kube: Pick<Kube, 'resource'>;
  readonly log: Logger;
  readonly scopes: ScopeInformer;
  readonly applications: AppInformer;
  readonly events: EventRecorder;
  readonly ids: IdAllocator;
  readonly provisioner: ScopeProvisioner;
  readonly baseDomain?: string;
  readonly workers?: number;
  readonly now?: () => Date;
}

export class ScopeReconciler {
  private readonly client: ResourceClient<unknown, ScopeStatus>;
  private readonly now: () => Date;
  private readonly baseDomain: string;
  /**
   * Cached versions a reconcile started from: if the cache still holds one when the next
   * reconcile starts, that one's writes may not be in the cache yet. Weak, so a version the
   * cache has replaced is not held.
   */
  private readonly startedFrom = new WeakSet<ScopeObject>();

  constructor(private readonly options: ScopeReconcilerOptions) {
    this.client = options.kube.resource(RawScopes) as ResourceClient<unknown, ScopeStatus>;
    this.now = options.now ?? (() => new Date());
    this.baseDomain = options.baseDomain ?? DEFAULT_BASE_DOMAIN;
  }

  /** The controller, watching scopes and the applications they wait for; add child informers. */
  controller(): Controller {
    const scopes = this.options.scopes;
    return (
      new Controller({
        name: 'scopes',
        log: this.options.log,
        workers: this.options.workers ?? DEFAULT_SCOPE_WORKERS,
        reconciler: this,
      })
        // Our own status writes come back as updates: not worth a look. What they would have
        // missed (children, resyncs) comes through the other watches.
        .watch(scopes, undefined, SCOPE_CHANGES)
        .watch(this.options.applications, (app) =>
          app.spec
            ? scopes.byIndex(SCOPE_APP_INDEX, String(app.spec.id)).map((s) => keyOf(s.metadata))
            : undefined,
        )
    );
  }

  async reconcile(
    key: string,
    context: Pick<ReconcileContext, 'log'> & Partial<Pick<ReconcileContext, 'signal'>>,
  ): Promise<Result | undefined> {
    // The events our own writes cause come back here; once the caches show the scope as the
    // last write left it, there is nothing to read or write. Anything newer that the caches
    // have not seen yet brings its own event, and so another reconcile.
    const cached = this.options.scopes.cache.getByKey(key);
    const settled = cached !== undefined ? this.settled(key, cached) : undefined;
    if (settled === true) return undefined;
    if (cached !== undefined && settled !== undefined) {
      // Settled but for a retry request, which an active scope has no use for: it is only
      // recorded (guarded, since the cached version may be behind: a 409 is retried).
      await writeStatus(this.client, cached, settled, { guard: true });
      return undefined;
    }

    let scope = this.unwritten(key, cached) ?? (await readByKey(this.client, key));
    if (scope === undefined) return undefined;
    const log = context.log;
    if (scope.metadata.deletionTimestamp !== undefined) {
      return this.finalize(key, scope, log, context.signal);
    }

    // A retry request on a failed scope: back to work, the value acted on recorded in the same
    // write (so it is acted on once), then the usual path. A failure that still holds (an
    // invalid spec, a duplicate slug) comes back with its message.
    const retry = retryRequested(scope);
    if (retry !== undefined && scope.status?.status === 'failed') {
      const identified = recordedIdentity(scope.status) !== undefined;
      scope = await this.setStatus(
        scope,
        identified ? 'creating' : 'pending',
        undefined,
        retryReport(retry, 'scope'),
      );
      log.info({ scope: key, retry }, 'scope retry requested');
    }

    const parsed = ScopeSpecSchema.safeParse(scope.spec);
    if (!parsed.success) {
      return this.fail(scope, 'InvalidSpec', specProblems(parsed.error), undefined);
    }
    const spec = parsed.data;

    const identity = await this.identity(key, scope, spec);
    if (identity === 'waiting') return undefined;
    // The id is on record in status: now the label that mirrors it, and the finalizer that
    // holds a delete until what is provisioned next is removed.
    scope = await this.ensureMetadata(scope, identity.id);
    const duplicate = this.olderWithSlug(scope, spec, identity.slug);
    if (duplicate !== undefined) {
      return this.fail(
        scope,
        'DuplicateSlug',
        `slug ${identity.slug} is already used by scope ${duplicate} of application ${spec.application_id}`,
        identity,
      );
    }

    const generation = scope.metadata.generation;
    const current = scope.status ?? {};
    const changed = current.observedGeneration !== generation;
    const stands = failureStands(current, changed, STICKY_FAILURES);
    if (stands !== undefined) throw new Stalled(stands.reason ?? '', stands.message ?? '');

    if (spec.external_created === true) {
      await this.setStatus(scope, 'active', identity, EXTERNAL_REPORT);
      return undefined;
    }

    const phase: ScopePhase =
      current.status === 'updating' || (current.status === 'active' && changed)
        ? 'updating'
        : current.status === 'active'
          ? 'active'
          : 'creating';
    // An active scope shows `updating` while its change is applied. A new one stays `pending`
    // (accepted, Reconciling) while the provisioner runs: `creating` is written only if
    // provisioning takes more than this pass, which spares two writes per scope.
    if (phase === 'updating') {
      scope = await this.setStatus(scope, phase, identity, {
        health: 'reconciling',
        reason: 'Updating',
        message: `${this.options.provisioner.type} provisioner running`,
      });
    }

    const target = this.target(key, scope, spec, identity);
    const progress = await this.options.provisioner.ensure(target, context.signal);
    switch (progress.state) {
      case 'ready':
        await this.setStatus(scope, 'active', identity, provisionedReport(progress));
        if (phase !== 'active') log.info({ scope: key, id: identity.id }, 'scope provisioned');
        return undefined;
      case 'in_progress':
        await this.setStatus(scope, phase === 'active' ? 'updating' : phase, identity, {
          health: 'reconciling',
          reason: 'Provisioning',
          message: progress.message,
        });
        return { requeueAfter: progress.retryAfterMs ?? 1000 };
      case 'failed':
        log.warn({ scope: key, reason: progress.reason }, 'scope provisioning failed');
        return this.fail(scope, progress.reason, progress.message, identity);
    }
  }

  /**
   * A copy of the cached scope when it is one nobody has written status or the id label for
   * (just applied) and no reconcile has started from: then there is nothing newer of ours to
   * miss, and the first write its reconcile makes (the id, the finalizer) is guarded by
   * resourceVersion, so a version someone wrote meanwhile costs a 409 and a retry, never a
   * wrong write. A GET fewer for every new scope. Anything else is read from the API, such as
   * a scope the facade created: its label says that its status (the id) is on the way.
   */
  private unwritten(key: string, cached: ScopeObject | undefined): ScopeObject | undefined {
    if (
      cached === undefined ||
      acceptanceBegun(cached) ||
      this.startedFrom.has(cached) ||
      this.options.scopes.isRefused(key)
    ) {
      return undefined;
    }
    this.startedFrom.add(cached);
    return { ...cached };
  }

  /**
   * True when a full reconcile of this cached scope would neither write nor provision:
   * active at its generation, labelled, finalized, unique, its children as desired in the
   * caches, its status exactly what it would be written as. The status to write when it is
   * all that but for a retry value not yet recorded; else undefined. Reads only caches.
   */
  private settled(key: string, scope: ScopeObject): true | ScopeStatus | undefined {
    const status = scope.status;
    const spec = scope.spec;
    if (
      spec === undefined ||
      status === undefined ||
      status.status !== 'active' ||
      status.observedGeneration !== scope.metadata.generation ||
      scope.metadata.deletionTimestamp !== undefined ||
      // The cached version is older than one the schema refused: that one needs reporting.
      this.options.scopes.isRefused(key)
    ) {
      return undefined;
    }
    const identity = recordedIdentity(status);
    if (
      identity === undefined ||
      idOfLabel(scope) !== identity.id ||
      !hasFinalizer(scope, SCOPE_FINALIZER) ||
      this.olderWithSlug(scope, spec, identity.slug) !== undefined
    ) {
      return undefined;
    }
    let report: HealthReport;
    if (spec.external_created === true) {
      report = EXTERNAL_REPORT;
    } else {
      const progress = this.options.provisioner.peek?.(this.target(key, scope, spec, identity));
      if (progress?.state !== 'ready') return undefined;
      report = provisionedReport(progress);
    }
    const next = this.statusFor(scope, 'active', identity, report);
    if (canonicallyEqual(next, status)) return true;
    const { observedRetry: _retry, ...rest } = next;
    const { observedRetry: _recorded, ...current } = status;
    return canonicallyEqual(rest, current) ? next : undefined;
  }

  /**
   * id, slug, domain and NRN. Once in status they stay (an application renamed later must not
   * move a scope's domain); until then they need the application, and 'waiting' means it is
   * not there yet (the scope is left pending, saying so). A status that already carries them
   * (the facade accepts the scopes it creates itself) is taken as it is.
   */
  private async identity(
    key: string,
    scope: KubeObject<unknown, ScopeStatus>,
    spec: ScopeSpec,
  ): Promise<Identity | 'waiting'> {
    const status = scope.status ?? {};
    const recorded = recordedIdentity(status);
    if (recorded !== undefined) return recorded;
    const app = applicationById(this.options.applications, spec.application_id);
    if (app?.spec === undefined) {
      Object.assign(scope, await ensureFinalizer(this.client, scope, SCOPE_FINALIZER));
      await this.setStatus(scope, 'pending', undefined, {
        health: 'reconciling',
        reason: 'WaitingForApplication',
        message: `application ${spec.application_id} does not exist; the scope waits for it`,
      });
      return 'waiting';
    }
    let id = status.id;
    let assigning = false;
    if (id === undefined) {
      id = await this.options.ids.allocate();
      assigning = true;
      this.options.log.info({ scope: key, id }, 'scope id allocated');
    }
    const identity = identify(app.spec, spec.name, id, this.baseDomain);
    if (assigning) {
      const written = await accept(this.client, this.options.events, scope, identity, this.now());
      Object.assign(scope, written ?? scope);
    }
    return identity;
  }

  /**
   * The label mirroring status.id (so `kubectl get scopes -l platform.nrn.dev/scope-id=N`
   * works) and the finalizer, in one patch when either is missing. Guarded by resourceVersion
   * when it adds the finalizer, so it never overwrites a finalizer list changed meanwhile.
   * Returns the object as it now is.
   */
  private async ensureMetadata(
    scope: KubeObject<unknown, ScopeStatus>,
    id: number,
  ): Promise<KubeObject<unknown, ScopeStatus>> {
    const finalizers = scope.metadata.finalizers ?? [];
    const addFinalizer = !finalizers.includes(SCOPE_FINALIZER);
    const relabel = idOfLabel(scope) !== id;
    if (!addFinalizer && !relabel) return scope;
    return this.client.patch(
      { namespace: scope.metadata.namespace ?? '', name: scope.metadata.name },
      {
        metadata: {
          ...(addFinalizer
            ? {
                resourceVersion: scope.metadata.resourceVersion,
                finalizers: [...finalizers, SCOPE_FINALIZER],
              }
            : {}),
          ...(relabel ? { labels: { [SCOPE_ID_LABEL]: String(id) } } : {}),
        },
      },
    );
  }

  /** Key of an older scope of the same application with this slug, if any. */
  private olderWithSlug(
    scope: KubeObject<unknown, ScopeStatus>,
    spec: ScopeSpec,
    slug: string,
  ): string | undefined {
    const older = slugHolder(this.options.scopes, spec.application_id, slug, scope as ScopeObject);
    return older === undefined ? undefined : keyOf(older.metadata);
  }

  private async finalize(
    key: string,
    scope: KubeObject<unknown, ScopeStatus>,
    log: Logger,
    signal: AbortSignal | undefined,
  ): Promise<Result | undefined> {
    if (!hasFinalizer(scope, SCOPE_FINALIZER)) return undefined;
    const status = scope.status ?? {};
    const identity = recordedIdentity(status);
    const parsed = ScopeSpecSchema.safeParse(scope.spec);
    const external = parsed.success && parsed.data.external_created === true;
    if (identity !== undefined && !external && parsed.success) {
      if (status.status !== 'deleting') {
        scope = await this.setStatus(scope, 'deleting', identity, {
          health: 'reconciling',
          reason: 'Deleting',
          message: `${this.options.provisioner.type} provisioner removing the scope's resources`,
        });
      }
      const progress = await this.options.provisioner.remove(
        this.target(key, scope, parsed.data, identity),
        signal,
      );
      if (progress.state === 'in_progress') return { requeueAfter: progress.retryAfterMs ?? 1000 };
      if (progress.state === 'failed') {
        // Removal that cannot proceed keeps the finalizer: deleting the scope must not leak.
        await this.setStatus(scope, 'deleting', identity, {
          health: 'stalled',
          reason: progress.reason,
          message: progress.message,
        });
        throw new Stalled(progress.reason, progress.message);
      }
    }
    scope = await this.setStatus(scope, 'deleted', identity, {
      health: 'reconciling',
      reason: 'Deleted',
      message: 'the scope and its resources are deleted',
    });
    if (!(await removeFinalizer(this.client, scope, SCOPE_FINALIZER))) return undefined;
    log.info({ scope: key }, 'scope deleted');
    return undefined;
  }

  private target(
    key: string,
    scope: KubeObject<unknown, ScopeStatus>,
    spec: ScopeSpec,
    identity: Identity,
  ): ScopeTarget {
    return { ...ownerOf(key, scope), ...identity, requestedSpec: spec.requested_spec };
  }

  /** `failed` (Stalled=True) written, then Stalled thrown: the key waits for a change. */
  private async fail(
    scope: KubeObject<unknown, ScopeStatus>,
    reason: string,
    message: string,
    identity: Identity | undefined,
  ): Promise<never> {
    await this.setStatus(scope, 'failed', identity, { health: 'stalled', reason, message });
    throw new Stalled(reason, message);
  }

  /** The whole status for `phase` (identity kept when not given), written and announced. */
  private async setStatus(
    scope: KubeObject<unknown, ScopeStatus>,
    phase: ScopePhase,
    identity: Identity | undefined,
    report: HealthReport,
  ): Promise<KubeObject<unknown, ScopeStatus>> {
    const events = this.options.events;
    const written = await writeScopeStatus(
      this.client,
      events,
      scope,
      phase,
      identity,
      report,
      this.now(),
    );
    return written ?? scope;
  }

  /** The whole status for `phase`, as setStatus would write it now. */
  private statusFor(
    scope: KubeObject<unknown, ScopeStatus>,
    phase: ScopePhase,
    identity: Identity | undefined,
    report: HealthReport,
  ): ScopeStatus {
    return scopeStatus(scope, phase, identity, report, this.now());
  }
}

const EXTERNAL_REPORT: HealthReport = {
  health: 'ready',
  reason: 'ExternallyProvisioned',
  message: 'scope is provisioned externally',
};

function provisionedReport(progress: Extract<Progress, { state: 'ready' }>): HealthReport {
  const namespace = progress.outputs?.namespace;
  return {
    health: 'ready',
    reason: 'Provisioned',
    message: `scope is active${namespace ? ` in namespace ${namespace}` : ''}`,
  };
}
