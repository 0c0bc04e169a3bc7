// The ScopeClass reconciler: says whether a class can serve scopes — its spec valid, every
// placeholder compiled, its kinds served and among those the operator's setting lets a class
// make, the operator holding the rights its kinds need (Stalled naming what is wrong, with the
// path or the verb and resource) — and counts the scopes it serves and those
// provisioned from its current generation (the rollout's progress, shown by `kubectl get`).
import type { Logger } from 'pino';
import {
  ScopeClassSpec,
  type ScopeClassStatus,
  type ScopeSpec,
  type ScopeStatus,
} from '../../api/index.js';
import type { EventRecorder } from '../../domain/event-recorder.js';
import { specProblems } from '../../domain/lifecycle.js';
import type { ClassCatalog } from '../../domain/scope-classes/catalog.js';
import {
  KIND_NOT_ALLOWED,
  type KindAllowlist,
  kindAllowlist,
} from '../../domain/scope-classes/kinds.js';
import {
  commitStatus,
  type HealthReport,
  healthStatus,
  READY_TRANSITIONS,
} from '../../domain/status.js';
import { type Informer, type Kube, type ResourceClient, rawResource } from '../../kube/index.js';
import {
  Controller,
  generationChanged,
  type ReconcileContext,
  type Result,
} from '../../runtime/index.js';
import type { MissingRight } from '../provisioners/scope-provisioner.js';
import { firstKindNotAllowed } from './allowed-kinds.js';
import { firstUnservedKind, KIND_MISSING_RECHECK_MS, KIND_RECHECK_MS } from './served-kinds.js';

const DEFAULT_KINDS = kindAllowlist();

/** status.scopeClass of a scope: the scopes a class serves. */
export const SCOPE_CLASS_INDEX = 'scope-class';
/** Problems listed in a class's message; the rest are counted. */
const MAX_LISTED_PROBLEMS = 5;
/**
 * Least time between two status writes of one class: a burst of scopes changes its counts
 * with every scope, and the counts need not follow each one.
 */
const MIN_WRITE_INTERVAL_MS = 1000;

export interface ScopeClassReconcilerOptions {
  readonly kube: Pick<Kube, 'resource' | 'mapper'>;
  readonly log: Logger;
  readonly classes: Informer<ScopeClassSpec, ScopeClassStatus>;
  readonly scopes: Informer<ScopeSpec, ScopeStatus>;
  readonly catalog: ClassCatalog;
  readonly events: EventRecorder;
  readonly now?: () => Date;
  /** The kinds a class's resources may be (ADR 0029); the default setting where left out. */
  readonly kinds?: KindAllowlist;
}

/** What a scope found of a class, under the class generation it rendered. */
interface Found<T> {
  readonly found: T;
  readonly generation: number | undefined;
}

/**
 * What was found of class `name` under its current generation. Found under an earlier one, it
 * is dropped: no message outlives the generation that caused it; the class's scopes, woken by
 * its change, find it again if it still holds.
 */
function current<T>(
  map: Map<string, Found<T>>,
  name: string,
  generation: number | undefined,
): T | undefined {
  const entry = map.get(name);
  if (entry === undefined) return undefined;
  if (entry.generation !== generation) {
    map.delete(name);
    return undefined;
  }
  return entry.found;
}

export class ScopeClassReconciler {
  private readonly client: ResourceClient;
  private readonly now: () => Date;
  /**
   * Rights provisioning found missing, by class, with the class generation it was found
   * under: cleared when one of its scopes provisions, ignored once the class has moved on.
   */
  private readonly missing = new Map<string, Found<MissingRight>>();
  /**
   * A scope the class could not render for, by class: the class says which and where, while
   * the generation that failed is the class's current one.
   */
  private readonly unrenderable = new Map<
    string,
    Found<{ readonly scope: string; readonly problem: string }>
  >();
  /** When each class's status was last written (ms). */
  private readonly written = new Map<string, number>();

  constructor(private readonly options: ScopeClassReconcilerOptions) {
    this.client = options.kube.resource(rawResource('ScopeClass'));
    this.now = options.now ?? (() => new Date());
    options.scopes.addIndex(SCOPE_CLASS_INDEX, (scope) =>
      scope.status?.scopeClass !== undefined ? [scope.status.scopeClass] : [],
    );
  }

  controller(): Controller {
    return new Controller({
      name: 'scopeclasses',
      log: this.options.log,
      workers: 1,
      reconciler: this,
    })
      .watch(this.options.classes, undefined, generationChanged)
      .watch(this.options.scopes, (scope) => scope.status?.scopeClass);
  }

  /** Provisioning for `className` (at `generation`) was refused a right: the class says which. */
  missingRight(className: string, right: MissingRight, generation?: number): void {
    this.missing.set(className, { found: right, generation });
  }

  /** The class (at `generation`) could not render for `scope` (a placeholder failed for it). */
  renderFailed(className: string, scope: string, problem: string, generation?: number): void {
    this.unrenderable.set(className, { found: { scope, problem }, generation });
  }

  /**
   * A scope of `className` provisioned: a right it lacked is there now, and it renders for
   * that scope. True when the class's report changes.
   */
  provisioned(className: string, scope: string): boolean {
    const missing = this.missing.delete(className);
    const failed = this.unrenderable.get(className)?.found.scope === scope;
    if (failed) this.unrenderable.delete(className);
    return missing || failed;
  }

  async reconcile(
    key: string,
    context: Pick<ReconcileContext, 'log'>,
  ): Promise<Result | undefined> {
    const object = this.options.classes.cache.getByKey(key);
    if (object === undefined || object.metadata.deletionTimestamp !== undefined) {
      this.missing.delete(key);
      this.unrenderable.delete(key);
      this.written.delete(key);
      return undefined;
    }
    const since = this.now().getTime() - (this.written.get(key) ?? 0);
    const changed = object.status?.observedGeneration !== object.metadata.generation;
    if (!changed && since < MIN_WRITE_INTERVAL_MS) {
      return { requeueAfter: MIN_WRITE_INTERVAL_MS - since };
    }
    const name = object.metadata.name;
    const generation = object.metadata.generation;
    const served = this.options.scopes.byIndex(SCOPE_CLASS_INDEX, name);
    const upToDate = served.filter(
      (s) => s.status?.status === 'active' && s.status.scopeClassGeneration === generation,
    ).length;
    let report = this.report(object.spec, object, served.length, upToDate);
    // The kinds it names are still served (ADR 0031): a CRD may have gone since admission.
    const spec = ScopeClassSpec.safeParse(object.spec);
    const names = spec.success && (spec.data.resources?.length ?? 0) > 0;
    const unserved = names
      ? await firstUnservedKind(this.options.kube.mapper, spec.data)
      : undefined;
    if (
      unserved !== undefined &&
      report.reason !== 'InvalidSpec' &&
      report.reason !== 'TemplateInvalid'
    ) {
      report = { health: 'stalled', reason: 'KindNotServed', message: unserved.message };
    }
    // And the operator's setting lets a class make them (ADR 0029).
    const notAllowed =
      names && spec.success && report.health !== 'stalled'
        ? await firstKindNotAllowed(
            this.options.kube.mapper,
            this.options.kinds ?? DEFAULT_KINDS,
            spec.data,
          )
        : undefined;
    if (notAllowed !== undefined) {
      report = { health: 'stalled', reason: KIND_NOT_ALLOWED, message: notAllowed };
    }
    const previous = object.status ?? {};
    const next: ScopeClassStatus = {
      scopes: served.length,
      upToDate,
      ...healthStatus(previous.conditions, report, generation, this.now()),
    };
    const written = await commitStatus(
      this.client,
      this.options.events,
      object,
      next,
      report,
      READY_TRANSITIONS,
      {
        announce: () =>
          context.log.info(
            { scopeClass: name, reason: report.reason },
            'scope class status changed',
          ),
      },
    );
    if (written !== undefined) this.written.set(key, this.now().getTime());
    if (!names) return undefined;
    // Nothing wakes a class when a kind goes or comes back: it asks again on a period.
    return { requeueAfter: unserved !== undefined ? KIND_MISSING_RECHECK_MS : KIND_RECHECK_MS };
  }

  private report(
    spec: unknown,
    object: Parameters<ClassCatalog['compile']>[0],
    scopes: number,
    upToDate: number,
  ): HealthReport {
    const parsed = ScopeClassSpec.safeParse(spec);
    if (!parsed.success) {
      return { health: 'stalled', reason: 'InvalidSpec', message: specProblems(parsed.error) };
    }
    const compiled = this.options.catalog.compile(object);
    if ('problems' in compiled) {
      const listed = compiled.problems
        .slice(0, MAX_LISTED_PROBLEMS)
        .map((p) => `${p.path}: ${p.message}`);
      const more = compiled.problems.length - listed.length;
      return {
        health: 'stalled',
        reason: 'TemplateInvalid',
        message: `${listed.join('; ')}${more > 0 ? `; and ${more} more` : ''}`,
      };
    }
    const name = object.metadata.name;
    let unrenderable = current(this.unrenderable, name, object.metadata.generation);
    // The scope it failed for is gone: nothing to report.
    if (
      unrenderable !== undefined &&
      this.options.scopes.cache.getByKey(unrenderable.scope) === undefined
    ) {
      this.unrenderable.delete(name);
      unrenderable = undefined;
    }
    if (unrenderable !== undefined) {
      return {
        health: 'stalled',
        reason: 'RenderFailed',
        message: `cannot render for scope ${unrenderable.scope}: ${unrenderable.problem}`,
      };
    }
    const right = current(this.missing, name, object.metadata.generation);
    if (right !== undefined) {
      return {
        health: 'stalled',
        reason: 'Forbidden',
        message: `the operator may not ${right.verb} ${right.resource}: grant it in a ClusterRole labelled platform.nrn.dev/aggregate-to-operator: "true" (docs/adr/0020-scope-classes.md)`,
      };
    }
    return {
      health: 'ready',
      reason: 'Ready',
      message: `serves ${scopes} scope${scopes === 1 ? '' : 's'}, ${upToDate} up to date`,
    };
  }
}
