// The ServiceSpecification reconciler: validates the spec (zod), compiles its attribute schema,
// checks that a webhook's signing Secret exists and holds a key, settles which of several
// specifications claiming one id owns it (the oldest), and reports Ready when usable.
import type { Logger } from 'pino';
import { ServiceSpecificationSpec as SpecificationSchema } from '../../api/index.js';
import { claimOwnerKey } from '../../domain/claims.js';
import type { EventRecorder } from '../../domain/event-recorder.js';
import { readByKey, specProblems } from '../../domain/lifecycle.js';
import type { SchemaCache } from '../../domain/services/attributes.js';
import { readSecret, SECRET_RECHECK_MS } from '../../domain/services/secrets.js';
import { compileAttributeSchema } from '../../domain/services/specifications.js';
import {
  commitStatus,
  type HealthReport,
  healthStatus,
  READY_TRANSITIONS,
} from '../../domain/status.js';
import type { Kube, KubeObject, ResourceClient } from '../../kube/index.js';
import { Controller, type ReconcileContext, type Result } from '../../runtime/index.js';
import { watchClaimedIds } from '../claimed-ids.js';
import { SIGNING_KEY } from '../provisioners/webhook/index.js';
import {
  RawSpecifications,
  SPEC_ID_INDEX,
  type SpecificationInformer,
  type SpecificationStatusBlock,
} from './resources.js';

export interface SpecificationReconcilerOptions {
  readonly kube: Pick<Kube, 'resource'>;
  readonly log: Logger;
  readonly specifications: SpecificationInformer;
  readonly schemas: SchemaCache;
  readonly events: EventRecorder;
  readonly now?: () => Date;
}

export class SpecificationReconciler {
  private readonly client: ResourceClient;
  private readonly now: () => Date;

  constructor(private readonly options: SpecificationReconcilerOptions) {
    this.client = options.kube.resource(RawSpecifications);
    this.now = options.now ?? (() => new Date());
  }

  controller(): Controller {
    const informer = this.options.specifications;
    const controller = new Controller({
      name: 'servicespecifications',
      log: this.options.log,
      workers: 2,
      reconciler: this,
    });
    // What a report reads besides the specification (its signing Secret) is looked at again
    // by requeue, not by a watch.
    return watchClaimedIds(controller, informer, SPEC_ID_INDEX, (spec) => spec.id);
  }

  async reconcile(
    key: string,
    context: Pick<ReconcileContext, 'log'>,
  ): Promise<Result | undefined> {
    const object = await readByKey(this.client, key);
    if (object === undefined || object.metadata.deletionTimestamp !== undefined) return undefined;
    const { report, recheck } = await this.check(key, object);
    const previous = (object.status ?? {}) as SpecificationStatusBlock;
    const next: SpecificationStatusBlock = healthStatus(
      previous.conditions,
      report,
      object.metadata.generation,
      this.now(),
    );
    await commitStatus(this.client, this.options.events, object, next, report, READY_TRANSITIONS, {
      announce: () =>
        context.log.info(
          { specification: key, reason: report.reason },
          'service specification status changed',
        ),
    });
    return recheck ? { requeueAfter: SECRET_RECHECK_MS } : undefined;
  }

  private async check(
    key: string,
    object: KubeObject,
  ): Promise<{ report: HealthReport; recheck: boolean }> {
    const parsed = SpecificationSchema.safeParse(object.spec);
    if (!parsed.success) {
      return {
        report: { health: 'stalled', reason: 'InvalidSpec', message: specProblems(parsed.error) },
        recheck: false,
      };
    }
    const spec = parsed.data;
    const schema = compileAttributeSchema(
      this.options.schemas,
      object.metadata.uid ?? key,
      object.metadata.generation,
      spec.attributes.schema,
    );
    if ('problem' in schema) {
      return {
        report: { health: 'stalled', reason: 'InvalidSchema', message: schema.problem },
        recheck: false,
      };
    }
    const owner = claimOwnerKey(this.options.specifications, SPEC_ID_INDEX, spec.id, object);
    if (owner !== key) {
      return {
        report: {
          health: 'stalled',
          reason: 'DuplicateId',
          message: `specification id ${spec.id} is already used by specification ${owner}`,
        },
        recheck: false,
      };
    }
    const ref = spec.provisioner.signing_secret_ref;
    if (spec.provisioner.type === 'webhook' && ref !== undefined) {
      const namespace = object.metadata.namespace ?? '';
      const secret = await readSecret(this.options.kube, namespace, ref.name);
      if (secret === undefined) {
        return {
          report: {
            health: 'reconciling',
            reason: 'WaitingForSigningSecret',
            message: `signing secret ${ref.name} does not exist; the specification waits for it`,
          },
          recheck: true,
        };
      }
      if ((secret[SIGNING_KEY] ?? '') === '') {
        return {
          report: {
            health: 'stalled',
            reason: 'InvalidSigningSecret',
            message: `signing secret ${ref.name} has no key "${SIGNING_KEY}"`,
          },
          recheck: true,
        };
      }
    }
    const how =
      spec.provisioner.type === 'webhook'
        ? `provisioned by webhook${ref === undefined ? ' (unsigned calls)' : ''}`
        : 'no provisioner';
    return {
      report: {
        health: 'ready',
        reason: 'Ready',
        message: `specification ${spec.id} is ready (${how})`,
      },
      recheck: false,
    };
  }
}
