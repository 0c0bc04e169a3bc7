// The Application reconciler: validates the spec (the NRN must end in the application's id),
// finds applications that claim one id across namespaces (the older one keeps it, the others
// are Stalled), derives the slug, and reports Ready when the application is usable.
import type { Logger } from 'pino';
import { ApplicationSpec, type ApplicationStatus, GROUP, VERSION } from '../api/index.js';
import {
  defineResource,
  type Informer,
  isNotFound,
  type Kube,
  type KubeObject,
  keyOf,
  type ResourceClient,
} from '../kube/index.js';
import { Controller, type ReconcileContext } from '../runtime/index.js';
import { olderFirst, slugify } from './names.js';
import {
  type EventRecorder,
  type HealthReport,
  healthConditions,
  messagesFor,
  writeStatus,
} from './status.js';

/** Index of the Application informer: spec.id as a string. */
export const APP_ID_INDEX = 'application-id';

/** Applications without schemas: an invalid spec must still be read, to be reported. */
export const RawApplications = defineResource({
  group: GROUP,
  version: VERSION,
  kind: 'Application',
  plural: 'applications',
  namespaced: true,
});

export type ApplicationObject = KubeObject<ApplicationSpec, ApplicationStatus>;

export function indexApplications(informer: Informer<ApplicationSpec, ApplicationStatus>): void {
  informer.addIndex(APP_ID_INDEX, (app) => (app.spec ? [String(app.spec.id)] : []));
}

/**
 * The application that owns id `id`: the oldest valid one claiming it (the informer's cache
 * holds only objects its schema accepts). Undefined when none does.
 */
export function applicationById(
  informer: Informer<ApplicationSpec, ApplicationStatus>,
  id: number,
): ApplicationObject | undefined {
  return informer.byIndex(APP_ID_INDEX, String(id)).sort(olderFirst)[0];
}

/** The slug an application has: its own, or derived from its name. */
export function applicationSlug(spec: ApplicationSpec): string {
  return spec.slug ?? slugify(spec.name);
}

export interface ApplicationControllerOptions {
  readonly kube: Pick<Kube, 'resource'>;
  readonly log: Logger;
  readonly applications: Informer<ApplicationSpec, ApplicationStatus>;
  readonly events: EventRecorder;
  readonly now?: () => Date;
}

export class ApplicationReconciler {
  private readonly client: ResourceClient;
  private readonly now: () => Date;

  constructor(private readonly options: ApplicationControllerOptions) {
    this.client = options.kube.resource(RawApplications);
    this.now = options.now ?? (() => new Date());
  }

  controller(): Controller {
    const informer = this.options.applications;
    return (
      new Controller({
        name: 'applications',
        log: this.options.log,
        workers: 2,
        reconcile: (key, context) => this.reconcile(key, context),
      })
        .watch(informer)
        // Applications sharing its id: who owns the id may change with this one.
        .watch(informer, (app) =>
          app.spec
            ? informer.byIndex(APP_ID_INDEX, String(app.spec.id)).map((o) => keyOf(o.metadata))
            : undefined,
        )
    );
  }

  async reconcile(key: string, context: Pick<ReconcileContext, 'log'>): Promise<void> {
    const [namespace = '', name = ''] = key.split('/');
    let app: KubeObject;
    try {
      app = await this.client.get({ namespace, name });
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    if (app.metadata.deletionTimestamp !== undefined) return;
    const previous = (app.status ?? {}) as ApplicationStatus;
    const parsed = ApplicationSpec.safeParse(app.spec);
    let report: HealthReport;
    let slug: string | undefined;
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`);
      report = { health: 'stalled', reason: 'InvalidSpec', message: problems.join('; ') };
    } else {
      slug = applicationSlug(parsed.data);
      const owner = this.owner(app, parsed.data.id);
      report =
        owner === key
          ? { health: 'ready', reason: 'Ready', message: `application ${parsed.data.id} is ready` }
          : {
              health: 'stalled',
              reason: 'DuplicateId',
              message: `application id ${parsed.data.id} is already used by application ${owner}`,
            };
    }
    const generation = app.metadata.generation;
    const next: ApplicationStatus = {
      ...(slug !== undefined ? { slug } : {}),
      messages: messagesFor(report),
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      conditions: healthConditions(previous.conditions, report, generation, this.now()),
    };
    const written = await writeStatus(this.client, app, next);
    if (written === undefined) return;
    const before = previous.conditions?.find((c) => c.type === 'Ready');
    if (
      before?.status !== (report.health === 'ready' ? 'True' : 'False') ||
      before?.reason !== report.reason
    ) {
      context.log.info({ application: key, reason: report.reason }, 'application status changed');
      await this.options.events.record(
        app,
        report.health === 'ready' ? 'Normal' : 'Warning',
        report.reason,
        report.message,
      );
    }
  }

  /** Key of the application that owns `id`: the oldest of those claiming it, this one included. */
  private owner(app: KubeObject, id: number): string {
    const claimants = [
      app as ApplicationObject,
      ...this.options.applications
        .byIndex(APP_ID_INDEX, String(id))
        .filter((o) => keyOf(o.metadata) !== keyOf(app.metadata)),
    ].sort(olderFirst);
    return keyOf((claimants[0] ?? app).metadata);
  }
}
