// The Application reconciler: validates the spec (the NRN must end in the application's id),
// finds applications that claim one id across namespaces (the older one keeps it, the others
// are Stalled), derives the slug, and reports Ready when the application is usable.
import type { Logger } from 'pino';
import { ApplicationSpec, type ApplicationStatus } from '../../api/index.js';
import { APP_ID_INDEX, applicationSlug, RawApplications } from '../../domain/applications.js';
import { claimOwnerKey } from '../../domain/claims.js';
import type { EventRecorder } from '../../domain/event-recorder.js';
import { readByKey, specProblems } from '../../domain/lifecycle.js';
import {
  commitStatus,
  type HealthReport,
  healthStatus,
  READY_TRANSITIONS,
} from '../../domain/status.js';
import type { Informer, Kube, ResourceClient } from '../../kube/index.js';
import { Controller, type ReconcileContext } from '../../runtime/index.js';
import { watchClaimedIds } from '../claimed-ids.js';

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
    const controller = new Controller({
      name: 'applications',
      log: this.options.log,
      workers: 2,
      reconciler: this,
    });
    return watchClaimedIds(controller, informer, APP_ID_INDEX, (spec) => String(spec.id));
  }

  async reconcile(key: string, context: Pick<ReconcileContext, 'log'>): Promise<undefined> {
    const app = await readByKey(this.client, key);
    if (app === undefined || app.metadata.deletionTimestamp !== undefined) return;
    const previous = (app.status ?? {}) as ApplicationStatus;
    const parsed = ApplicationSpec.safeParse(app.spec);
    let report: HealthReport;
    let slug: string | undefined;
    if (!parsed.success) {
      report = { health: 'stalled', reason: 'InvalidSpec', message: specProblems(parsed.error) };
    } else {
      slug = applicationSlug(parsed.data);
      const owner = claimOwnerKey(
        this.options.applications,
        APP_ID_INDEX,
        String(parsed.data.id),
        app,
      );
      report =
        owner === key
          ? { health: 'ready', reason: 'Ready', message: `application ${parsed.data.id} is ready` }
          : {
              health: 'stalled',
              reason: 'DuplicateId',
              message: `application id ${parsed.data.id} is already used by application ${owner}`,
            };
    }
    const next: ApplicationStatus = {
      ...(slug !== undefined ? { slug } : {}),
      ...healthStatus(previous.conditions, report, app.metadata.generation, this.now()),
    };
    await commitStatus(this.client, this.options.events, app, next, report, READY_TRANSITIONS, {
      announce: () =>
        context.log.info({ application: key, reason: report.reason }, 'application status changed'),
    });
  }
}
