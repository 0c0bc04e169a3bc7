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
import { applicationById, applicationSlug } from '../../domain/applications.js';
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
  RECONCILE_ANNOTATION,
  RETRY_ANNOTATION,
  SCOPE_ANNOTATION,
  SCOPE_ID_LABEL,
  SCOPE_NAME_LABEL,
  SCOPE_NAMESPACE_LABEL,
} from '../../domain/names.js';
import type { ClassCatalog, ScopeClassObject } from '../../domain/scope-classes/catalog.js';
import type { CompiledClass, Rendered } from '../../domain/scope-classes/children.js';
import {
  accept,
  acceptanceBegun,
  attachmentRefusal,
  type ClassRecord,
  describeSlugHolder,
  type IdAllocator,
  type Identity,
  identify,
  idOfLabel,
  NOT_GRANTED_REASON,
  recordedIdentity,
  SCOPE_APP_INDEX,
  scopeStatus,
  slugHolder,
  slugOf,
  writeScopeStatus,
} from '../../domain/scopes/index.js';
import {
  canonicallyEqual,
  condition,
  type HealthReport,
  writeStatus,
} from '../../domain/status.js';
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
import { CHILD_TAKEN } from '../provisioners/class/provisioner.js';
import type {
  MissingRight,
  Progress,
  Removal,
  ScopeProvisioner,
  ScopeTarget,
} from '../provisioners/scope-provisioner.js';
import type { RolloutLimiter } from './rollout.js';

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
  annotationChanged(RECONCILE_ANNOTATION),
  labelsChanged,
  finalizersChanged,
);

/** Failures a rerun cannot fix by itself: they wait for a spec change or a retry request. */
const STICKY_FAILURES = new Set([
  'NamespaceTaken',
  CHILD_TAKEN,
  'ProvisionRefused',
  'ProvisionFailed',
  'DeadlineExceeded',
]);
/**
 * Failures of the scope's own making, which a class change never lifts (they are evaluated
 * afresh on every pass anyway). Every other failure is its class's doing (what the class
 * renders, or how its provisioner fared with it): it stands only while the class, at the
 * generation status records, is the one that serves the scope (ADR 0032).
 */
const SCOPE_OWN_FAILURES: ReadonlySet<string> = new Set(['InvalidSpec', 'DuplicateSlug']);
/** Renders kept (see ScopeReconciler.renders): 1,024 cost ~20 MiB with a five-resource class. */
const MAX_KEPT_RENDERS = 128;
/** What a render reads: the same inputs render the same children. */
interface RenderInputs {
  readonly uid: string | undefined;
  readonly generation: number | undefined;
  readonly labels: Readonly<Record<string, string>>;
  readonly identity: Identity;
  readonly class: readonly [string | undefined, number | undefined];
  readonly app: readonly [string, string | undefined, string] | undefined;
  readonly assignedNamespace: string | undefined;
}
/** A right granted later brings no event: a scope refused one looks again this often. */
const FORBIDDEN_RETRY_MS = 30_000;

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
  /** The scope classes: which serves a scope, and what it renders. */
  readonly classes: ClassCatalog;
  /** By a class's provisioner type: `namespace`, `webhook` (`none` needs none). */
  readonly provisioners: Readonly<Record<string, ScopeProvisioner>>;
  /** Paces the scopes a changed class reaches (the scope's own changes are not paced). */
  readonly rollout: RolloutLimiter;
  /** Told when provisioning for a class (at a generation) met a right the operator lacks. */
  readonly onMissingRight?: (className: string, right: MissingRight, generation?: number) => void;
  /** Told when a scope of a class provisioned: a right it lacked is there now. */
  readonly onProvisioned?: (className: string, scope: string) => void;
  /** Told when a class (at a generation) cannot render for a scope. */
  readonly onRenderFailed?: (
    className: string,
    scope: string,
    problem: string,
    generation?: number,
  ) => void;
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
  /**
   * What the class rendered for the scopes seen last, and from what (see rendered()): a
   * bounded few, since a render costs tens of microseconds and every scope's would cost
   * kilobytes kept for as long as it lives.
   */
  private readonly renders = new Map<string, { fingerprint: RenderInputs; rendered: Rendered }>();

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
    if (scope === undefined) {
      // Gone (its finalizer released by another replica, or never ours): nothing kept for it.
      this.forget(key);
      return undefined;
    }
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
    // A fixed class frees the scopes it failed: no retry annotation needed.
    const classMoved = current.status === 'failed' && this.classMoved(scope, spec);
    const stands = failureStands(
      current,
      changed,
      STICKY_FAILURES,
      (reason) => classMoved && !SCOPE_OWN_FAILURES.has(reason),
    );
    if (stands !== undefined) throw new Stalled(stands.reason ?? '', stands.message ?? '');
    if (classMoved && failureStands(current, changed, STICKY_FAILURES) !== undefined) {
      log.info(
        {
          scope: key,
          reason: condition(current.conditions, 'Stalled')?.reason,
          scopeClass: current.scopeClass,
          scopeClassGeneration: current.scopeClassGeneration,
        },
        'scope failed under an earlier class generation tried again',
      );
    }

    if (spec.external_created === true) {
      await this.setStatus(scope, 'active', identity, EXTERNAL_REPORT);
      return undefined;
    }

    const plan = this.plan(key, scope, spec, identity);
    if (plan.state === 'no-class') {
      await this.setStatus(scope, current.status === 'active' ? 'active' : 'pending', identity, {
        health: 'reconciling',
        reason: 'WaitingForScopeClass',
        message: `no ScopeClass serves scopes of type ${spec.type}; the scope waits for one`,
      });
      return undefined;
    }
    const { scopeClass } = plan;
    const record = recordOf(scopeClass);
    if (plan.state === 'invalid') {
      if (plan.problem !== undefined) {
        this.options.onRenderFailed?.(
          scopeClass.metadata.name,
          key,
          plan.problem,
          scopeClass.metadata.generation,
        );
      }
      // A class change that does not compile leaves the scopes it serves as they are.
      if (current.status === 'active' && !changed) return undefined;
      // The class and generation it failed under are recorded: a later one lifts the failure.
      return this.fail(scope, plan.reason, plan.message, identity, record);
    }
    const leftovers = this.leftovers(scope, plan) !== undefined;
    // A `none` class has nothing to pause: a Paused condition left from an earlier class goes.
    if (plan.provisioner === 'none' && !leftovers) {
      await this.setStatus(scope, 'active', identity, EXTERNAL_REPORT, {
        ...record,
        paused: false,
      });
      return undefined;
    }
    const paused = scope.metadata.annotations?.[RECONCILE_ANNOTATION] === 'disabled';
    if (paused) {
      // Maintenance: nothing applied, repaired or pruned; the scope says so and keeps its phase.
      await this.setStatus(scope, current.status ?? 'pending', identity, currentReport(scope), {
        paused: true,
      });
      return undefined;
    }

    // A failed scope a class change frees is reached by that change as an active one is, and
    // paced alike: a fix that is wrong shows on the first scopes, not on all at once.
    const rollout =
      (current.status === 'active' || classMoved) &&
      !changed &&
      (current.scopeClass !== record.scopeClass ||
        current.scopeClassGeneration !== record.scopeClassGeneration);
    if (rollout) {
      const waitMs = this.options.rollout.take(key);
      if (waitMs > 0) return { requeueAfter: waitMs };
    }
    if (leftovers) {
      const cleared = await this.removeLeftovers(key, scope, spec, identity, plan, context.signal);
      if ('result' in cleared) return cleared.result;
      scope = cleared.scope;
    }
    if (plan.provisioner === 'none') {
      await this.setStatus(scope, 'active', identity, EXTERNAL_REPORT, {
        ...record,
        paused: false,
      });
      return undefined;
    }
    const phase: ScopePhase =
      current.status === 'updating' || (current.status === 'active' && (changed || rollout))
        ? 'updating'
        : current.status === 'active'
          ? 'active'
          : 'creating';
    const provisioner = plan.provisioner;
    // An active scope shows `updating` while its change is applied. A new one stays `pending`
    // (accepted, Reconciling) while the provisioner runs: `creating` is written only if
    // provisioning takes more than this pass, which spares two writes per scope.
    if (phase === 'updating') {
      scope = await this.setStatus(
        scope,
        phase,
        identity,
        {
          health: 'reconciling',
          reason: 'Updating',
          message: `${provisioner.type} provisioner running for class ${record.scopeClass}`,
        },
        { paused: false },
      );
    }

    const progress = await provisioner.ensure(plan.target, context.signal);
    const inventory = progress.inventory !== undefined ? { inventory: progress.inventory } : {};
    switch (progress.state) {
      case 'ready':
        await this.setStatus(scope, 'active', identity, provisionedReport(progress), {
          ...record,
          ...inventory,
          paused: false,
        });
        if (phase !== 'active') log.info({ scope: key, id: identity.id }, 'scope provisioned');
        this.options.onProvisioned?.(record.scopeClass ?? '', key);
        return undefined;
      case 'in_progress':
        await this.setStatus(
          scope,
          phase === 'active' ? 'updating' : phase,
          identity,
          { health: 'reconciling', reason: 'Provisioning', message: progress.message },
          // The class chosen is recorded from the first pass that uses it, whatever comes of it:
          // `kubectl get scopes` shows it, and `kubectl nrn why` names it (upToDate counts
          // active scopes only).
          { ...record, ...inventory, paused: false },
        );
        return { requeueAfter: progress.retryAfterMs ?? 1000 };
      case 'failed':
        log.warn({ scope: key, reason: progress.reason }, 'scope provisioning failed');
        return this.provisioningFailed(scope, identity, progress, {
          ...record,
          ...inventory,
          paused: false,
        });
    }
  }

  /**
   * The scope's class and, when it provisions, what it makes for the scope: read from the
   * caches and the compiled class (rendered once per scope version, see rendered()).
   */
  private plan(
    key: string,
    scope: KubeObject<unknown, ScopeStatus>,
    spec: ScopeSpec,
    identity: Identity,
  ): Plan {
    const labels = scope.metadata.labels ?? {};
    const scopeClass = this.options.classes.select({ spec, labels });
    if (scopeClass?.spec === undefined) return { state: 'no-class' };
    const classSpec = scopeClass.spec;
    const type = classSpec.provisioner.type;
    if (type === 'none') return { state: 'ready', scopeClass, provisioner: 'none' };
    const compiled = this.options.classes.compile(scopeClass);
    if ('problems' in compiled) {
      const first = compiled.problems[0];
      return {
        state: 'invalid',
        scopeClass,
        reason: 'ScopeClassInvalid',
        message: `ScopeClass ${scopeClass.metadata.name} does not compile: ${first?.path}: ${first?.message}`,
      };
    }
    const provisioner = this.options.provisioners[type];
    if (provisioner === undefined) {
      return {
        state: 'invalid',
        scopeClass,
        reason: 'ScopeClassInvalid',
        message: `ScopeClass ${scopeClass.metadata.name}: no ${type} provisioner runs here`,
      };
    }
    const rendered = this.rendered(key, scope, spec, identity, scopeClass, compiled);
    if (!rendered.ok) {
      return {
        state: 'invalid',
        scopeClass,
        problem: `${rendered.problem.path}: ${rendered.problem.message}`,
        reason: 'RenderFailed',
        message: `ScopeClass ${scopeClass.metadata.name} cannot render for this scope: ${rendered.problem.path}: ${rendered.problem.message}`,
      };
    }
    const target: ScopeTarget = {
      ...this.target(key, scope, spec, identity, scopeClass),
      children: type === 'namespace' ? rendered.children : [],
      envelopeNamespace: type === 'namespace' ? rendered.namespace : undefined,
    };
    return { state: 'ready', scopeClass, provisioner, target };
  }

  /**
   * What the class renders for the scope, computed again only when something it reads
   * changed: the scope's generation and labels, its class's version, its application.
   */
  private rendered(
    key: string,
    scope: KubeObject<unknown, ScopeStatus>,
    spec: ScopeSpec,
    identity: Identity,
    scopeClass: ScopeClassObject,
    compiled: CompiledClass,
  ): Rendered {
    const app = applicationById(this.options.applications, spec.application_id)?.spec;
    const labels = scope.metadata.labels ?? {};
    // Compared field by field, not as a canonical string: this runs on every reconcile.
    const fingerprint: RenderInputs = {
      uid: scope.metadata.uid,
      generation: scope.metadata.generation,
      labels,
      identity,
      class: [scopeClass.metadata.uid, scopeClass.metadata.generation],
      app: app !== undefined ? [app.name, app.slug, app.nrn] : undefined,
      assignedNamespace: assignedNamespace(scope.status),
    };
    const known = this.renders.get(key);
    if (known !== undefined && canonicallyEqual(known.fingerprint, fingerprint)) {
      // Most recently used last: the oldest goes first.
      this.renders.delete(key);
      this.renders.set(key, known);
      return known.rendered;
    }
    const rendered = compiled.render({
      key,
      namespace: scope.metadata.namespace ?? '',
      name: scope.metadata.name,
      uid: scope.metadata.uid ?? '',
      identity,
      spec,
      labels,
      assignedNamespace: fingerprint.assignedNamespace,
      application: {
        id: spec.application_id,
        name: app?.name ?? '',
        slug: app !== undefined ? applicationSlug(app) : '',
        nrn: app?.nrn ?? '',
      },
    });
    this.renders.delete(key);
    this.renders.set(key, { fingerprint, rendered });
    if (this.renders.size > MAX_KEPT_RENDERS) {
      const oldest = this.renders.keys().next();
      if (oldest.done !== true) this.renders.delete(oldest.value);
    }
    return rendered;
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
    let report: HealthReport = EXTERNAL_REPORT;
    let record: ClassRecord = {};
    if (spec.external_created !== true) {
      if (scope.metadata.annotations?.[RECONCILE_ANNOTATION] === 'disabled') return undefined;
      const plan = this.plan(key, scope, spec, identity);
      if (plan.state !== 'ready' || this.leftovers(scope, plan) !== undefined) return undefined;
      record = { ...recordOf(plan.scopeClass), paused: false };
      if (plan.provisioner !== 'none') {
        const progress = plan.provisioner.peek?.(plan.target);
        if (progress?.state !== 'ready') return undefined;
        report = provisionedReport(progress);
        record = {
          ...record,
          ...(progress.inventory !== undefined ? { inventory: progress.inventory } : {}),
          paused: false,
        };
      }
    }
    const next = this.statusFor(scope, 'active', identity, report, record);
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
    // Consent on the application's side: until it grants this namespace, nothing is given or
    // made for the scope; its Application's watch brings the scope back when the grant comes.
    const refusal = attachmentRefusal(app, scope.metadata.namespace ?? '');
    if (refusal !== undefined) {
      Object.assign(scope, await ensureFinalizer(this.client, scope, SCOPE_FINALIZER));
      await this.setStatus(scope, 'pending', undefined, {
        health: 'reconciling',
        reason: NOT_GRANTED_REASON,
        message: `${refusal}; the scope waits for it`,
      });
      return 'waiting';
    }
    if (status.id === undefined && (scope.metadata.namespace ?? '') !== app.metadata.namespace) {
      // A scope of a granted namespace takes its slug when it attaches, not when it was made:
      // one the application's scopes hold already stays theirs, however old the newcomer.
      const slug = slugOf({ spec, status });
      const holder = slugHolder(this.options.scopes, spec.application_id, slug, undefined, app);
      if (holder !== undefined && keyOf(holder.metadata) !== key) {
        return this.fail(
          scope,
          'DuplicateSlug',
          `slug ${slug} is already used by scope ${describeSlugHolder(holder)} of application ${spec.application_id}`,
          undefined,
        );
      }
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

  /**
   * The class that serves the scope now is not the one, at the generation, that its status
   * records: what a failure of the class's doing was decided under has moved on.
   */
  private classMoved(scope: KubeObject<unknown, ScopeStatus>, spec: ScopeSpec): boolean {
    const selected = this.options.classes.select({ spec, labels: scope.metadata.labels ?? {} });
    const status = scope.status ?? {};
    return (
      status.scopeClass !== selected?.metadata.name ||
      status.scopeClassGeneration !== selected?.metadata.generation
    );
  }

  /** An older scope of the same application with this slug, if any: `ns/name (id N)`. */
  private olderWithSlug(
    scope: KubeObject<unknown, ScopeStatus>,
    spec: ScopeSpec,
    slug: string,
  ): string | undefined {
    const older = slugHolder(
      this.options.scopes,
      spec.application_id,
      slug,
      scope as ScopeObject,
      applicationById(this.options.applications, spec.application_id),
    );
    return older === undefined ? undefined : describeSlugHolder(older);
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
    const scopeClass =
      status.scopeClass !== undefined ? this.options.classes.byName(status.scopeClass) : undefined;
    // The class's deletion policy; a class gone by now leaves the default, delete.
    const removal: Removal = scopeClass?.spec?.deletion_policy === 'orphan' ? 'orphan' : 'delete';
    const remover = external ? undefined : this.removerOf(scopeClass, status);
    // An agent has nothing to let go of: orphaning its scope is not calling it.
    const provisioner = removal === 'orphan' && remover?.type !== 'namespace' ? undefined : remover;
    if (identity !== undefined && provisioner !== undefined && parsed.success) {
      if (status.status !== 'deleting') {
        scope = await this.setStatus(scope, 'deleting', identity, {
          health: 'reconciling',
          reason: 'Deleting',
          message: `${provisioner.type} provisioner removing the scope's resources`,
        });
      }
      const progress = await provisioner.remove(
        this.target(key, scope, parsed.data, identity, scopeClass),
        signal,
        removal,
      );
      const inventory = progress.inventory !== undefined ? { inventory: progress.inventory } : {};
      if (progress.state === 'in_progress') {
        await this.setStatus(
          scope,
          'deleting',
          identity,
          { health: 'reconciling', reason: 'Deleting', message: progress.message },
          inventory,
        );
        return { requeueAfter: progress.retryAfterMs ?? 1000 };
      }
      if (progress.state === 'failed') {
        // Removal that cannot proceed keeps the finalizer: deleting the scope must not leak.
        await this.setStatus(
          scope,
          'deleting',
          identity,
          { health: 'stalled', reason: progress.reason, message: progress.message },
          inventory,
        );
        if (progress.reason === 'Forbidden') return { requeueAfter: FORBIDDEN_RETRY_MS };
        throw new Stalled(progress.reason, progress.message);
      }
    }
    this.forget(key);
    scope = await this.setStatus(scope, 'deleted', identity, {
      health: 'reconciling',
      reason: 'Deleted',
      message: 'the scope and its resources are deleted',
    });
    if (!(await removeFinalizer(this.client, scope, SCOPE_FINALIZER))) return undefined;
    log.info({ scope: key }, 'scope deleted');
    return undefined;
  }

  /**
   * What a provisioner is told of the scope, its children aside: what removal needs (the
   * inventory in status; the class may be gone by now) and a webhook class's endpoint.
   */
  private target(
    key: string,
    scope: KubeObject<unknown, ScopeStatus>,
    spec: ScopeSpec,
    identity: Identity,
    scopeClass: ScopeClassObject | undefined,
  ): ScopeTarget {
    const provisioner = scopeClass?.spec?.provisioner;
    const reconciling = condition(scope.status?.conditions, 'Reconciling');
    return {
      ...ownerOf(key, scope),
      ...identity,
      spec,
      generation: scope.metadata.generation,
      requestedSpec: spec.requested_spec,
      children: [],
      envelopeNamespace: undefined,
      inventory: scope.status?.inventory ?? [],
      ...(provisioner?.type === 'webhook' && provisioner.url !== undefined
        ? {
            webhook: {
              url: provisioner.url,
              scopeClass: scopeClass?.metadata.name ?? '',
              signingSecret: provisioner.signing_secret_ref?.name,
              deadlineSeconds: provisioner.deadline_seconds,
              // The deadline counts from when this provisioning began.
              startedAt:
                reconciling?.status === 'True'
                  ? new Date(reconciling.lastTransitionTime)
                  : this.now(),
            },
          }
        : {}),
    };
  }

  /**
   * Who removes what a scope's class made: its class's provisioner while the class is there;
   * the namespace provisioner, which needs only the inventory, once it is gone. None for a
   * class whose scopes are provisioned elsewhere.
   */
  private removerOf(
    scopeClass: ScopeClassObject | undefined,
    status: ScopeStatus,
  ): ScopeProvisioner | undefined {
    // Objects on record are removed whatever the class has become since.
    if ((status.inventory ?? []).length > 0) return this.options.provisioners.namespace;
    const type = scopeClass?.spec?.provisioner.type ?? 'namespace';
    return type === 'none' ? undefined : this.options.provisioners[type];
  }

  /**
   * The provisioner that made what the scope's inventory records, when its class now
   * provisions otherwise (a webhook, or none): those objects are an earlier class's, and
   * nothing else would ever remove them before the scope is deleted.
   */
  private leftovers(
    scope: KubeObject<unknown, ScopeStatus>,
    plan: Plan & { state: 'ready' },
  ): ScopeProvisioner | undefined {
    const maker = this.options.provisioners.namespace;
    if ((scope.status?.inventory ?? []).length === 0 || plan.provisioner === maker) {
      return undefined;
    }
    return maker;
  }

  /**
   * Removes what an earlier class made (see leftovers()) before the new provisioner runs: the
   * scope shows `updating` (or stays `creating`) meanwhile, and a refusal fails it as a
   * provisioning refusal would.
   */
  private async removeLeftovers(
    key: string,
    scope: KubeObject<unknown, ScopeStatus>,
    spec: ScopeSpec,
    identity: Identity,
    plan: Plan & { state: 'ready' },
    signal: AbortSignal | undefined,
  ): Promise<{ scope: KubeObject<unknown, ScopeStatus> } | { result: Result | undefined }> {
    const remover = this.leftovers(scope, plan);
    if (remover === undefined) return { scope };
    const record = recordOf(plan.scopeClass);
    const status = scope.status?.status;
    const phase: ScopePhase =
      status === 'active' || status === 'updating' ? 'updating' : 'creating';
    // A class change never deletes a namespace: it may hold what the operator did not make.
    const progress = await remover.remove(
      this.target(key, scope, spec, identity, plan.scopeClass),
      signal,
      'keep-namespaces',
    );
    const inventory = progress.inventory ?? scope.status?.inventory ?? [];
    switch (progress.state) {
      case 'ready':
        // The removal may have waited for a right the class was told it lacked: it is there.
        this.options.onProvisioned?.(record.scopeClass ?? '', key);
        return {
          scope: await this.setStatus(
            scope,
            phase,
            identity,
            {
              health: 'reconciling',
              reason: 'Pruning',
              message: `removed what an earlier class made; ScopeClass ${record.scopeClass} provisions the scope now`,
            },
            { ...record, inventory: [], paused: false },
          ),
        };
      case 'in_progress':
        await this.setStatus(
          scope,
          phase,
          identity,
          { health: 'reconciling', reason: 'Pruning', message: progress.message },
          { ...record, inventory, paused: false },
        );
        return { result: { requeueAfter: progress.retryAfterMs ?? 1000 } };
      case 'failed':
        return {
          result: await this.provisioningFailed(scope, identity, progress, {
            ...record,
            inventory,
            paused: false,
          }),
        };
    }
  }

  /**
   * A provisioner's refusal: `failed` written (a missing right told to the class), then a slow
   * look again for a missing right, which is granted without touching the scope; Stalled
   * thrown for anything else.
   */
  private async provisioningFailed(
    scope: KubeObject<unknown, ScopeStatus>,
    identity: Identity,
    progress: Progress & { state: 'failed' },
    record: ClassRecord,
  ): Promise<Result> {
    if (progress.missingRight !== undefined) {
      this.options.onMissingRight?.(
        record.scopeClass ?? '',
        progress.missingRight,
        record.scopeClassGeneration,
      );
    }
    await this.setStatus(
      scope,
      'failed',
      identity,
      { health: 'stalled', reason: progress.reason, message: progress.message },
      record,
    );
    if (progress.reason === 'Forbidden') return { requeueAfter: FORBIDDEN_RETRY_MS };
    throw new Stalled(progress.reason, progress.message);
  }

  /** What is kept for a scope that is gone. */
  private forget(key: string): void {
    this.renders.delete(key);
    this.options.rollout.forget(key);
  }

  /** `failed` (Stalled=True) written, then Stalled thrown: the key waits for a change. */
  private async fail(
    scope: KubeObject<unknown, ScopeStatus>,
    reason: string,
    message: string,
    identity: Identity | undefined,
    record: ClassRecord = {},
  ): Promise<never> {
    await this.setStatus(scope, 'failed', identity, { health: 'stalled', reason, message }, record);
    throw new Stalled(reason, message);
  }

  /** The whole status for `phase` (identity kept when not given), written and announced. */
  private async setStatus(
    scope: KubeObject<unknown, ScopeStatus>,
    phase: ScopePhase,
    identity: Identity | undefined,
    report: HealthReport,
    record: ClassRecord = {},
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
      { record },
    );
    return written ?? scope;
  }

  /** The whole status for `phase`, as setStatus would write it now. */
  private statusFor(
    scope: KubeObject<unknown, ScopeStatus>,
    phase: ScopePhase,
    identity: Identity | undefined,
    report: HealthReport,
    record: ClassRecord = {},
  ): ScopeStatus {
    return scopeStatus(scope, phase, identity, report, this.now(), record);
  }
}

/** What the scope's status records of its class. */
function recordOf(scopeClass: ScopeClassObject): ClassRecord {
  const generation = scopeClass.metadata.generation;
  return {
    scopeClass: scopeClass.metadata.name,
    ...(generation !== undefined ? { scopeClassGeneration: generation } : {}),
  };
}

/**
 * The namespace the scope was given: the first Namespace its inventory records (the envelope
 * is rendered, applied and recorded before any resource of the class).
 */
function assignedNamespace(status: ScopeStatus | undefined): string | undefined {
  // Recorded before refusals kept someone else's namespace out of the inventory: not its own.
  const stalled = condition(status?.conditions, 'Stalled');
  if (stalled?.status === 'True' && stalled.reason === 'NamespaceTaken') return undefined;
  return status?.inventory?.find((ref) => ref.apiVersion === 'v1' && ref.kind === 'Namespace')
    ?.name;
}

/** The report a status already carries: a paused scope keeps saying what it said. */
function currentReport(scope: KubeObject<unknown, ScopeStatus>): HealthReport {
  const ready = condition(scope.status?.conditions, 'Ready');
  const stalled = condition(scope.status?.conditions, 'Stalled');
  const reconciling = condition(scope.status?.conditions, 'Reconciling');
  if (ready?.status === 'True')
    return { health: 'ready', reason: ready.reason, message: ready.message };
  if (stalled?.status === 'True') {
    return { health: 'stalled', reason: stalled.reason, message: stalled.message };
  }
  return {
    health: 'reconciling',
    reason: reconciling?.reason ?? 'Paused',
    message: reconciling?.message ?? 'reconcile disabled by annotation',
  };
}

type Plan =
  | { readonly state: 'no-class' }
  | {
      readonly state: 'invalid';
      readonly scopeClass: ScopeClassObject;
      readonly reason: string;
      readonly message: string;
      /** A placeholder that failed for this scope only: the class reports it too. */
      readonly problem?: string;
    }
  | { readonly state: 'ready'; readonly scopeClass: ScopeClassObject; readonly provisioner: 'none' }
  | {
      readonly state: 'ready';
      readonly scopeClass: ScopeClassObject;
      readonly provisioner: ScopeProvisioner;
      readonly target: ScopeTarget;
    };

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
