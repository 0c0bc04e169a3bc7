// The Service reconciler: the lifecycle of DESIGN.md. Finalizer first; `pending_create` when
// accepted; `pending` while its specification (or its secret) is awaited; attributes, plain
// and secret, validated together against the specification's schema; then the provisioner
// (`creating`, or `updating` after a spec change or a change of the attribute Secret) until
// `active` or `failed`; on delete, `deleting` while the provider removes it, then the
// finalizer goes. A failed service tries again on a spec change, a change of its attribute
// Secret, or a new value of the retry annotation.
import type { Logger } from 'pino';
import {
  API_VERSION,
  type Condition,
  GROUP,
  type MessageItem,
  type ServicePhase,
  type ServiceSpec,
  ServiceSpec as ServiceSpecSchema,
  type ServiceStatus,
  ServiceStatus as ServiceStatusSchema,
} from '../api/index.js';
import type { EventRecorder } from '../domain/event-recorder.js';
import {
  ensureFinalizer,
  failureStands,
  hasFinalizer,
  observedRetry,
  rawKind,
  readByKey,
  removeFinalizer,
  retryReport,
  retryRequested,
  specProblems,
} from '../domain/lifecycle.js';
import { ATTRIBUTES_SECRET_LABEL, MANAGED_BY, MANAGED_BY_LABEL, slugify } from '../domain/names.js';
import {
  mergeAttributes,
  propertiesOf,
  resolveAttributes,
  SchemaCache,
} from '../domain/services/attributes.js';
import {
  type LabelledSecret,
  readLabelledSecret,
  readSecret,
  SecretDigester,
  secretVersion,
} from '../domain/services/secrets.js';
import {
  commitStatus,
  condition,
  type HealthReport,
  healthConditions,
  messagesFor,
  observed,
  PHASE_TRANSITIONS,
  rfc3339,
  setCondition,
  writeStatus,
} from '../domain/status.js';
import {
  type BackoffOptions,
  backoffDelay,
  defineResource,
  type Informer,
  type InformerOptions,
  isNotFound,
  type Kube,
  type KubeObject,
  keyOf,
  metadataOnly,
  type ResourceClient,
  Secrets,
  ServiceSpecifications,
  Services,
} from '../kube/index.js';
import {
  Controller,
  type ReconcileContext,
  type Result,
  type Startable,
} from '../runtime/index.js';
import type {
  ProviderEndpoint,
  ServiceAction,
  ServiceProgress,
  ServiceProvisioner,
  ServiceTarget,
} from './provisioners/service-types.js';
import { WebhookProvisioner } from './provisioners/webhook/index.js';
import {
  indexSpecifications,
  type SpecificationInformer,
  type SpecificationObject,
  SpecificationReconciler,
  specificationById,
  specificationUsable,
} from './specification/index.js';

export const SERVICE_FINALIZER = `${GROUP}/service-cleanup`;
/** Index of the Service informer: spec.specification_id. */
export const SERVICE_SPEC_INDEX = 'service-specification-id';
/** Index of the Service informer: `<namespace>/<name>` of the Secret of secret attributes. */
export const SERVICE_SECRET_INDEX = 'service-attributes-secret';
/**
 * True while a provider call sequence runs; lastTransitionTime is when it started (the
 * deadline counts from there, across restarts), observedGeneration and reason (Create, Update,
 * Delete) say which one.
 */
export const PROVISIONING_CONDITION = 'Provisioning';
/** True once the provider has reported the service active: later calls are updates. */
export const PROVISIONED_CONDITION = 'Provisioned';
export const OUTPUTS_SUFFIX = '-outputs';

/**
 * Failures a rerun cannot fix by itself: they wait for a spec change, a change of the
 * attribute Secret, or a retry request.
 */
const STICKY_FAILURES = new Set([
  'ProvisionRefused',
  'ProvisionFailed',
  'DeadlineExceeded',
  'OutputSecretTaken',
]);
/**
 * Only Secrets the operator has labelled are watched (watching all would cache every Secret
 * of the cluster); one that does not exist yet has no label, so it is looked at again.
 */
const SECRET_RECHECK_MS = 5000;
export const DEFAULT_PROVIDER_BACKOFF: BackoffOptions = {
  initialMs: 500,
  maxMs: 30_000,
  jitter: 0.5,
};

/** Services without schemas: an invalid spec must still be read, to be reported. */
export const RawServices = rawKind('Service', 'services');

/**
 * Services as the operator's informer caches them. The reconciler reads each service from the
 * API, so the cache only wakes it, maps a specification to the services that name it, and
 * counts services by status for metrics: the rest of a service (attributes, conditions,
 * messages: about 1 KiB each, which 100,000 services make 100 MiB) is validated, then not
 * kept. An invalid service is still refused, and so still reported.
 */
export const CachedServices = defineResource({
  ...Services,
  spec: ServiceSpecSchema.transform(({ specification_id, secret_attributes_ref }) => ({
    specification_id,
    ...(secret_attributes_ref !== undefined ? { secret_attributes_ref } : {}),
  })),
  status: ServiceStatusSchema.transform(({ status }) => (status !== undefined ? { status } : {})),
});

type RawService = KubeObject<unknown, ServiceStatus>;
export type ServiceInformer = Informer<
  Pick<ServiceSpec, 'specification_id' | 'secret_attributes_ref'>,
  Pick<ServiceStatus, 'status'>
>;
/** Attribute Secrets, metadata only (never their values), selected by ATTRIBUTES_SECRET_LABEL. */
export type AttributeSecretInformer = Informer;

interface Pace {
  readonly generation: number | undefined;
  readonly action: ServiceAction;
  /** Calls in a row that were not final: the backoff's exponent. */
  readonly attempt: number;
  /** Epoch ms before which no call is made. */
  readonly at: number;
}

const ACTION_REASON: Record<ServiceAction, string> = {
  create: 'Create',
  update: 'Update',
  delete: 'Delete',
};

export function indexServices(informer: ServiceInformer): void {
  informer.addIndex(SERVICE_SPEC_INDEX, (s) => (s.spec ? [s.spec.specification_id] : []));
  informer.addIndex(SERVICE_SECRET_INDEX, (s) => {
    const ref = s.spec?.secret_attributes_ref;
    return ref !== undefined ? [keyOf({ namespace: s.metadata.namespace, name: ref.name })] : [];
  });
}

export interface ServiceReconcilerOptions {
  readonly kube: Pick<Kube, 'resource'>;
  readonly log: Logger;
  readonly services: ServiceInformer;
  readonly specifications: SpecificationInformer;
  readonly schemas: SchemaCache;
  readonly events: EventRecorder;
  readonly provisioner: ServiceProvisioner;
  /** Digests of attribute Secrets, as status records them. */
  readonly digester: SecretDigester;
  /** Labelled attribute Secrets (metadata only): they wake the services naming them. */
  readonly secrets?: AttributeSecretInformer;
  /** Between polls of a provider that gave no Retry-After, and between failed calls. */
  readonly backoff?: BackoffOptions;
  readonly workers?: number;
  readonly now?: () => Date;
}

interface StatusExtras {
  readonly messages?: readonly MessageItem[];
  /** Provisioning started (with when), or ended (with the reason). */
  readonly provisioning?:
    | { readonly action: ServiceAction; readonly started: Date }
    | { readonly ended: string };
  readonly provisioned?: boolean;
  /** The digest of the attribute Secret this pass validated with; else the recorded one stays. */
  readonly secretDigest?: string;
}

/** Attributes as one pass resolved them, with the digest of the Secret they came from. */
interface Resolved {
  readonly result: ReturnType<typeof resolveAttributes>;
  readonly digest: string | undefined;
}

export class ServiceReconciler {
  private readonly client: ResourceClient<unknown, ServiceStatus>;
  private readonly now: () => Date;
  private readonly backoff: BackoffOptions;
  /**
   * When each key may call its provider again, and how many calls in a row were not final.
   * Our own status writes wake the key through the informer; this keeps Retry-After and the
   * backoff in force anyway. In memory: a restart only makes the next call come sooner.
   */
  private readonly pace = new Map<string, Pace>();
  /**
   * Per key, the attribute Secret version (uid/resourceVersion) last found to match the
   * recorded digest, with that digest: while the watched Secret still has this version, a
   * reconcile need not read it again. Versions and digests only, never values.
   */
  private readonly secretChecked = new Map<string, string>();

  constructor(private readonly options: ServiceReconcilerOptions) {
    this.client = options.kube.resource(RawServices) as ResourceClient<unknown, ServiceStatus>;
    this.now = options.now ?? (() => new Date());
    this.backoff = options.backoff ?? DEFAULT_PROVIDER_BACKOFF;
  }

  /** The controller, watching services, the specifications and the Secrets they name. */
  controller(): Controller {
    const services = this.options.services;
    const controller = new Controller({
      name: 'services',
      log: this.options.log,
      workers: this.options.workers ?? 4,
      reconcile: (key, context) => this.reconcile(key, context),
    })
      .watch(services)
      .watch(this.options.specifications, (s) =>
        s.spec
          ? services.byIndex(SERVICE_SPEC_INDEX, s.spec.id).map((o) => keyOf(o.metadata))
          : undefined,
      );
    if (this.options.secrets !== undefined) {
      controller.watch(this.options.secrets, (secret) =>
        services
          .byIndex(SERVICE_SECRET_INDEX, keyOf(secret.metadata))
          .map((o) => keyOf(o.metadata)),
      );
    }
    return controller;
  }

  async reconcile(
    key: string,
    context: Pick<ReconcileContext, 'log'>,
  ): Promise<Result | undefined> {
    let service = await readByKey(this.client, key);
    if (service === undefined) {
      this.forget(key);
      return undefined;
    }
    const log = context.log;
    if (service.metadata.deletionTimestamp !== undefined) return this.finalize(key, service, log);

    // A retry request on a failed service: back to `pending`, the value acted on recorded in
    // the same write (so it is acted on once); then attributes are validated again and the
    // provider called as after a spec change. A failure that still holds comes back as it was.
    const retry = retryRequested(service);
    if (retry !== undefined && service.status?.status === 'failed') {
      this.pace.delete(key);
      service = await this.setStatus(service, undefined, 'pending', retryReport(retry, 'service'));
      log.info({ service: key, retry }, 'service retry requested');
    }

    const parsed = ServiceSpecSchema.safeParse(service.spec);
    if (!parsed.success) {
      await this.fail(service, undefined, 'InvalidSpec', specProblems(parsed.error));
      return undefined;
    }
    const spec = parsed.data;
    service = await ensureFinalizer(this.client, service, SERVICE_FINALIZER);

    const generation = service.metadata.generation;
    const first = service.status ?? {};
    const changed = first.observedGeneration !== generation;
    if (first.status === undefined) {
      service = await this.setStatus(service, spec, 'pending_create', {
        health: 'reconciling',
        reason: 'Accepted',
        message: 'service accepted',
      });
    }
    // Level-triggered, but a provider call is not free: an active service is left alone until
    // its spec or its attribute Secret changes, and a provider's refusal stands until then too.
    const settled = first.status === 'active' || failureStands(first, changed, STICKY_FAILURES);
    // The Secret as read when its content moved: validated below without a second read.
    let moved: LabelledSecret | undefined;
    if (!changed && settled) {
      moved = await this.secretMoved(key, service, spec, log);
      if (moved === undefined) {
        // A retry request seen while not failed is recorded, never acted on later.
        if (first.status === 'active') await this.recordRetry(service);
        return undefined;
      }
    }

    const found = specificationById(this.options.specifications, spec.specification_id);
    const usable = found === undefined ? 'does not exist' : specificationUsable(found);
    if (found === undefined || !hasSpec(found) || usable !== true) {
      await this.setStatus(service, spec, 'pending', {
        health: 'reconciling',
        reason: 'WaitingForSpecification',
        message: `specification ${spec.specification_id} ${usable}; the service waits for it`,
      });
      return undefined;
    }
    const resolved = await this.attributes(service, spec, found, log, moved);
    if (resolved === 'waiting') return { requeueAfter: SECRET_RECHECK_MS };
    // Every write from here on records the digest of the Secret content just validated.
    const digest: Pick<StatusExtras, 'secretDigest'> =
      resolved.digest !== undefined ? { secretDigest: resolved.digest } : {};
    const result = resolved.result;
    if (!result.ok) {
      await this.fail(service, spec, result.reason, result.message, digest);
      log.info({ service: key, reason: result.reason }, 'service attributes refused');
      return undefined;
    }

    if (spec.imported === true || spec.selectors?.imported === true) {
      await this.setStatus(
        service,
        spec,
        'active',
        {
          health: 'ready',
          reason: 'Imported',
          message: 'service is provisioned elsewhere (imported)',
        },
        digest,
      );
      return undefined;
    }
    if (service.status?.status === 'pending_create') {
      service = await this.setStatus(
        service,
        spec,
        'pending',
        {
          health: 'reconciling',
          reason: 'Validated',
          message: `attributes match specification ${spec.specification_id}`,
        },
        digest,
      );
    }
    const provisioner = found.spec.provisioner;
    if (provisioner.type === 'none' || provisioner.url === undefined) {
      await this.setStatus(
        service,
        spec,
        'active',
        {
          health: 'ready',
          reason: 'Provisioned',
          message: 'service is active (its specification has no provisioner)',
        },
        digest,
      );
      return undefined;
    }
    return this.provision(key, service, spec, found, result.attributes, digest, log);
  }

  /**
   * The attribute Secret as just read, when its content differs from the one the service was
   * last validated with (the digest in status); undefined when it does not. A Secret that is
   * gone changes nothing: what the provider holds stays as it is, and the service with it. A
   * service recorded before digests were (no digest in status) gets the current one, without
   * a provider call.
   */
  private async secretMoved(
    key: string,
    service: RawService,
    spec: ServiceSpec,
    log: Logger,
  ): Promise<LabelledSecret | undefined> {
    const ref = spec.secret_attributes_ref;
    if (ref === undefined) return undefined;
    const namespace = service.metadata.namespace ?? '';
    const recorded = service.status?.secretAttributesHash;
    const cached = this.options.secrets?.cache.get(namespace, ref.name);
    if (
      cached !== undefined &&
      this.secretChecked.get(key) === `${secretVersion(cached)} ${recorded}`
    ) {
      return undefined;
    }
    const read = await readLabelledSecret(
      this.options.kube,
      namespace,
      ref.name,
      ATTRIBUTES_SECRET_LABEL,
    );
    if (read === undefined) return undefined;
    const digest = await this.options.digester.digest(read.values);
    if (recorded === undefined) {
      await writeStatus(this.client, service, {
        ...service.status,
        ...observedRetry(service),
        secretAttributesHash: digest,
      });
      return undefined;
    }
    if (digest === recorded) {
      this.secretChecked.set(key, `${read.version} ${recorded}`);
      return undefined;
    }
    log.info({ service: key, secret: ref.name }, 'service attribute secret changed');
    return read;
  }

  /** An active service with a retry request has nothing to retry: the value is only recorded. */
  private async recordRetry(service: RawService): Promise<void> {
    if (retryRequested(service) === undefined) return;
    await writeStatus(this.client, service, { ...service.status, ...observedRetry(service) });
  }

  private forget(key: string): void {
    this.pace.delete(key);
    this.secretChecked.delete(key);
  }

  private async provision(
    key: string,
    service: RawService,
    spec: ServiceSpec,
    found: Found,
    attributes: Record<string, unknown>,
    digest: Pick<StatusExtras, 'secretDigest'>,
    log: Logger,
  ): Promise<Result | undefined> {
    const provisioned = condition(service.status?.conditions, PROVISIONED_CONDITION);
    const action: ServiceAction = provisioned?.status === 'True' ? 'update' : 'create';
    const phase: ServicePhase = action === 'update' ? 'updating' : 'creating';
    const wait = this.early(key, service, action);
    if (wait !== undefined) return { requeueAfter: wait };
    const started = this.startOf(service, action);
    const running = condition(service.status?.conditions, PROVISIONING_CONDITION);
    if (
      service.status?.status !== phase ||
      running?.status !== 'True' ||
      running.lastTransitionTime !== rfc3339(started)
    ) {
      service = await this.setStatus(
        service,
        spec,
        phase,
        {
          health: 'reconciling',
          reason: action === 'update' ? 'Updating' : 'Provisioning',
          message: `${this.options.provisioner.type} provisioner ${action === 'update' ? 'updating' : 'creating'} the service`,
        },
        { provisioning: { action, started }, ...digest },
      );
    }
    const target = this.target(key, service, spec, attributes, action);
    const progress = await this.options.provisioner.ensure(target, endpointOf(found));
    switch (progress.state) {
      case 'ready': {
        this.pace.delete(key);
        const outputs = await this.writeOutputs(service, progress.outputs);
        if (outputs === 'taken') {
          await this.fail(
            service,
            spec,
            'OutputSecretTaken',
            `secret ${service.metadata.name}${OUTPUTS_SUFFIX} exists and is not this service's; the provider's output attributes have nowhere to go`,
            { provisioning: { ended: 'OutputSecretTaken' }, provisioned: true, ...digest },
          );
          return undefined;
        }
        const message = `service is active${outputs !== undefined ? `; output attributes in secret ${outputs}` : ''}`;
        await this.setStatus(
          service,
          spec,
          'active',
          { health: 'ready', reason: 'Provisioned', message },
          {
            provisioning: { ended: 'Succeeded' },
            provisioned: true,
            messages: [{ level: 'info', message }, ...(progress.messages ?? [])],
            ...digest,
          },
        );
        log.info({ service: key, action }, 'service provisioned');
        return undefined;
      }
      case 'in_progress':
        await this.setStatus(
          service,
          spec,
          phase,
          { health: 'reconciling', reason: 'Provisioning', message: progress.message },
          { provisioning: { action, started }, ...digest },
        );
        return { requeueAfter: this.later(key, service, action, progress.retryAfterMs) };
      case 'failed':
        this.pace.delete(key);
        await this.fail(service, spec, progress.reason, joined(progress.messages), {
          provisioning: { ended: progress.reason },
          messages: progress.messages,
          ...digest,
        });
        log.warn({ service: key, reason: progress.reason, action }, 'service provisioning failed');
        return undefined;
      case 'unavailable':
        return this.unavailable(
          key,
          service,
          spec,
          found,
          phase,
          action,
          started,
          progress,
          log,
          digest,
        );
    }
  }

  /** A provider without a usable answer: retried with backoff until the deadline, then failed. */
  private async unavailable(
    key: string,
    service: RawService,
    spec: ServiceSpec,
    found: Found,
    phase: ServicePhase,
    action: ServiceAction,
    started: Date,
    progress: Extract<ServiceProgress, { state: 'unavailable' }>,
    log: Logger,
    digest: Pick<StatusExtras, 'secretDigest'> = {},
  ): Promise<Result | undefined> {
    const deadlineMs = found.spec.provisioner.deadline_seconds * 1000;
    const deadline = new Date(started.getTime() + deadlineMs);
    const remaining = deadline.getTime() - this.now().getTime();
    if (remaining <= 0 && phase !== 'deleting') {
      this.pace.delete(key);
      const message = `provider gave no usable answer within ${found.spec.provisioner.deadline_seconds}s: ${progress.message}`;
      await this.fail(service, spec, 'DeadlineExceeded', message, {
        provisioning: { ended: 'DeadlineExceeded' },
        ...digest,
      });
      log.warn({ service: key, action }, 'service provisioning deadline exceeded');
      return undefined;
    }
    // Deleting never gives up (that would leak what the provider holds): past the deadline it
    // is Stalled, so people see it, and still retried.
    const late = remaining <= 0;
    await this.setStatus(
      service,
      spec,
      phase,
      {
        health: late ? 'stalled' : 'reconciling',
        reason: late ? 'DeadlineExceeded' : 'ProviderUnavailable',
        message: late
          ? `${progress.message}; still retrying the delete past its deadline`
          : `${progress.message}; retrying until ${deadline.toISOString()}`,
      },
      { provisioning: { action, started }, ...digest },
    );
    log.info({ service: key, action }, 'service provider unavailable; retrying');
    const cap = late ? undefined : Math.max(1, remaining);
    return { requeueAfter: this.later(key, service, action, progress.retryAfterMs, cap) };
  }

  /**
   * Plain and secret attributes validated together, with the digest of the Secret's content;
   * 'waiting' when the Secret is not there yet (the service says so in `pending` and looks
   * again). The Secret gets the label that has it watched from now on.
   */
  private async attributes(
    service: RawService,
    spec: ServiceSpec,
    found: Found,
    log: Logger,
    alreadyRead?: LabelledSecret,
  ): Promise<Resolved | 'waiting'> {
    const compiled = this.options.schemas.get(
      found.metadata.uid ?? keyOf(found.metadata),
      found.metadata.generation,
      found.spec.attributes.schema,
    );
    const ref = spec.secret_attributes_ref;
    let secret: Record<string, string> = {};
    let digest: string | undefined;
    if (ref !== undefined) {
      const namespace = service.metadata.namespace ?? '';
      const read =
        alreadyRead ??
        (await readLabelledSecret(this.options.kube, namespace, ref.name, ATTRIBUTES_SECRET_LABEL));
      if (read === undefined) {
        await this.setStatus(service, spec, 'pending', {
          health: 'reconciling',
          reason: 'WaitingForSecret',
          message: `secret ${ref.name} (spec.secret_attributes_ref) does not exist; the service waits for it`,
        });
        return 'waiting';
      }
      if (!read.labelled) {
        log.warn(
          { service: keyOf(service.metadata), secret: ref.name },
          'attribute secret not labelled; its changes are not seen until the next resync',
        );
      }
      secret = read.values;
      digest = await this.options.digester.digest(secret);
    }
    const result = resolveAttributes(compiled, spec.attributes ?? {}, secret, ref?.name);
    return { result, digest };
  }

  /** When the current provider call sequence started: kept in status, so restarts keep it. */
  private startOf(service: RawService, action: ServiceAction): Date {
    const running = condition(service.status?.conditions, PROVISIONING_CONDITION);
    if (
      running?.status === 'True' &&
      running.reason === ACTION_REASON[action] &&
      running.observedGeneration === service.metadata.generation
    ) {
      const at = Date.parse(running.lastTransitionTime);
      if (!Number.isNaN(at)) return new Date(at);
    }
    // Whole seconds, as lastTransitionTime holds it, so the instant survives the write;
    // rounded up, so a deadline is never cut short.
    return new Date(Math.ceil(this.now().getTime() / 1000) * 1000);
  }

  /** How long until the key may call its provider again for this generation and action. */
  private early(key: string, service: RawService, action: ServiceAction): number | undefined {
    const pace = this.pace.get(key);
    if (pace === undefined) return undefined;
    if (pace.generation !== service.metadata.generation || pace.action !== action) {
      return undefined;
    }
    const left = pace.at - this.now().getTime();
    return left > 0 ? left : undefined;
  }

  /** The next call's delay (the provider's Retry-After, else backoff), recorded. */
  private later(
    key: string,
    service: RawService,
    action: ServiceAction,
    retryAfterMs: number | undefined,
    cap?: number,
  ): number {
    const previous = this.pace.get(key);
    const attempt =
      previous !== undefined &&
      previous.generation === service.metadata.generation &&
      previous.action === action
        ? previous.attempt
        : 0;
    let delay = retryAfterMs ?? backoffDelay(attempt, this.backoff);
    if (cap !== undefined) delay = Math.min(delay, cap);
    this.pace.set(key, {
      generation: service.metadata.generation,
      action,
      attempt: attempt + 1,
      at: this.now().getTime() + delay,
    });
    return delay;
  }

  /**
   * The provider's output attributes go to a Secret owned by the service (they are often
   * credentials; status is readable by anyone who can read the Service). Returns its name, or
   * undefined when there were none, or 'taken' when a Secret of that name is someone else's.
   */
  private async writeOutputs(
    service: RawService,
    outputs: Readonly<Record<string, unknown>> | undefined,
  ): Promise<string | 'taken' | undefined> {
    if (outputs === undefined || Object.keys(outputs).length === 0) return undefined;
    const name = `${service.metadata.name}${OUTPUTS_SUFFIX}`;
    const namespace = service.metadata.namespace ?? '';
    const secrets = this.options.kube.resource(Secrets);
    try {
      const existing = await secrets.get({ namespace, name });
      const ours = (existing.metadata.ownerReferences ?? []).some(
        (o) => o.uid === service.metadata.uid,
      );
      if (!ours) return 'taken';
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    const data: Record<string, string> = {};
    for (const [field, value] of Object.entries(outputs)) {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      data[field] = Buffer.from(text, 'utf8').toString('base64');
    }
    await secrets.apply(
      {
        metadata: {
          name,
          namespace,
          labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
          ownerReferences: [
            {
              apiVersion: API_VERSION,
              kind: 'Service',
              name: service.metadata.name,
              uid: service.metadata.uid ?? '',
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        type: 'Opaque',
        data,
      },
      { fieldManager: MANAGED_BY, force: true },
    );
    return name;
  }

  private async finalize(
    key: string,
    service: RawService,
    log: Logger,
  ): Promise<Result | undefined> {
    if (!hasFinalizer(service, SERVICE_FINALIZER)) return undefined;
    const parsed = ServiceSpecSchema.safeParse(service.spec);
    const spec = parsed.success ? parsed.data : undefined;
    const conditions = service.status?.conditions;
    // Only a provider that was ever called can hold something of this service.
    const contacted =
      condition(conditions, PROVISIONING_CONDITION) !== undefined ||
      condition(conditions, PROVISIONED_CONDITION) !== undefined;
    const imported = spec?.imported === true || spec?.selectors?.imported === true;
    if (spec !== undefined && contacted && !imported) {
      const result = await this.deprovision(key, service, spec, log);
      if (result !== 'done') return result;
    }
    service = await this.setStatus(service, spec, 'deleted', {
      health: 'reconciling',
      reason: 'Deleted',
      message: 'the service is deleted',
    });
    if (!(await removeFinalizer(this.client, service, SERVICE_FINALIZER))) return undefined;
    this.pace.delete(key);
    log.info({ service: key }, 'service deleted');
    return undefined;
  }

  /** The provider's delete; 'done' once it holds nothing, else what to do meanwhile. */
  private async deprovision(
    key: string,
    service: RawService,
    spec: ServiceSpec,
    log: Logger,
  ): Promise<Result | undefined | 'done'> {
    const found = specificationById(this.options.specifications, spec.specification_id);
    if (found === undefined || !hasSpec(found)) {
      // Removing the finalizer would leave whatever the provider made behind, unnoticed.
      await this.setStatus(service, spec, 'deleting', {
        health: 'stalled',
        reason: 'WaitingForSpecification',
        message: `specification ${spec.specification_id} does not exist, so its provider cannot be asked to delete the service; restore it, or remove the finalizer ${SERVICE_FINALIZER} to abandon what the provider holds`,
      });
      return undefined;
    }
    if (found.spec.provisioner.type !== 'webhook' || found.spec.provisioner.url === undefined) {
      return 'done';
    }
    const wait = this.early(key, service, 'delete');
    if (wait !== undefined) return { requeueAfter: wait };
    const started = this.startOf(service, 'delete');
    const running = condition(service.status?.conditions, PROVISIONING_CONDITION);
    if (
      service.status?.status !== 'deleting' ||
      running?.status !== 'True' ||
      running.lastTransitionTime !== rfc3339(started)
    ) {
      service = await this.setStatus(
        service,
        spec,
        'deleting',
        {
          health: 'reconciling',
          reason: 'Deleting',
          message: `${this.options.provisioner.type} provisioner deleting the service`,
        },
        { provisioning: { action: 'delete', started } },
      );
    }
    // The provider may need the attributes to find what it made; they need not be valid now.
    let secret: Record<string, string> = {};
    const ref = spec.secret_attributes_ref;
    if (ref !== undefined) {
      secret =
        (await readSecret(this.options.kube, service.metadata.namespace ?? '', ref.name)) ?? {};
    }
    // Dotted Secret keys go to their nested places, as for create and update.
    const { attributes } = mergeAttributes(
      propertiesOf(found.spec.attributes.schema),
      spec.attributes ?? {},
      secret,
    );
    const target = this.target(key, service, spec, attributes, 'delete');
    const progress = await this.options.provisioner.remove(target, endpointOf(found));
    switch (progress.state) {
      case 'ready':
        this.pace.delete(key);
        log.info({ service: key }, 'service deprovisioned');
        return 'done';
      case 'in_progress':
        await this.setStatus(
          service,
          spec,
          'deleting',
          { health: 'reconciling', reason: 'Deleting', message: progress.message },
          { provisioning: { action: 'delete', started } },
        );
        return { requeueAfter: this.later(key, service, 'delete', progress.retryAfterMs) };
      case 'failed':
        // A refused delete keeps the finalizer: deleting the service must not leak.
        await this.setStatus(
          service,
          spec,
          'deleting',
          { health: 'stalled', reason: progress.reason, message: joined(progress.messages) },
          { provisioning: { action: 'delete', started }, messages: progress.messages },
        );
        log.warn({ service: key, reason: progress.reason }, 'service deprovisioning refused');
        return { requeueAfter: this.later(key, service, 'delete', this.backoff.maxMs) };
      case 'unavailable':
        return this.unavailable(
          key,
          service,
          spec,
          found,
          'deleting',
          'delete',
          started,
          progress,
          log,
        );
    }
  }

  private target(
    key: string,
    service: RawService,
    spec: ServiceSpec,
    attributes: Record<string, unknown>,
    action: ServiceAction,
  ): ServiceTarget {
    return {
      key,
      namespace: service.metadata.namespace ?? '',
      name: service.metadata.name,
      uid: service.metadata.uid ?? '',
      generation: service.metadata.generation,
      spec,
      attributes,
      action,
    };
  }

  private fail(
    service: RawService,
    spec: ServiceSpec | undefined,
    reason: string,
    message: string,
    extras: StatusExtras = {},
  ): Promise<RawService> {
    return this.setStatus(service, spec, 'failed', { health: 'stalled', reason, message }, extras);
  }

  /**
   * The whole status for `phase`, with the provisioning conditions `extras` asks for, written
   * and announced as commitStatus does. Returns the object as it now is.
   */
  private async setStatus(
    service: RawService,
    spec: ServiceSpec | undefined,
    phase: ServicePhase,
    report: HealthReport,
    extras: StatusExtras = {},
  ): Promise<RawService> {
    const previous = service.status ?? {};
    const generation = service.metadata.generation;
    const now = this.now();
    let conditions = healthConditions(previous.conditions, report, generation, now);
    const provisioning = extras.provisioning;
    if (provisioning !== undefined && 'started' in provisioning) {
      conditions = putCondition(conditions, {
        type: PROVISIONING_CONDITION,
        status: 'True',
        reason: ACTION_REASON[provisioning.action],
        message: `provider ${provisioning.action} started`,
        lastTransitionTime: rfc3339(provisioning.started),
        ...observed(generation),
      });
    } else if (provisioning !== undefined) {
      conditions = setCondition(
        conditions,
        {
          type: PROVISIONING_CONDITION,
          status: 'False',
          reason: provisioning.ended,
          message: '',
          ...observed(generation),
        },
        now,
      );
    }
    if (extras.provisioned !== undefined) {
      conditions = setCondition(
        conditions,
        {
          type: PROVISIONED_CONDITION,
          status: extras.provisioned ? 'True' : 'False',
          reason: extras.provisioned ? 'ProviderReportedActive' : 'NotProvisioned',
          message: '',
          ...observed(generation),
        },
        now,
      );
    }
    const slug = spec !== undefined ? slugify(spec.name) : previous.slug;
    const updatedAt = previous.status !== phase ? now.toISOString() : previous.updated_at;
    // A service without an attribute Secret has no digest to keep.
    const digest =
      spec !== undefined && spec.secret_attributes_ref === undefined
        ? undefined
        : (extras.secretDigest ?? previous.secretAttributesHash);
    const next: ServiceStatus = {
      status: phase,
      ...(slug !== undefined ? { slug } : {}),
      messages: extras.messages !== undefined ? [...extras.messages] : messagesFor(report),
      ...(updatedAt !== undefined ? { updated_at: updatedAt } : {}),
      ...observedRetry(service),
      ...(digest !== undefined ? { secretAttributesHash: digest } : {}),
      ...observed(generation),
      conditions,
    };
    const written = await commitStatus(
      this.client,
      this.options.events,
      service,
      next,
      report,
      PHASE_TRANSITIONS,
    );
    return written ?? service;
  }
}

/** A specification with its spec (the typed informer only holds such ones). */
type Found = SpecificationObject & { spec: NonNullable<SpecificationObject['spec']> };

function hasSpec(object: SpecificationObject): object is Found {
  return object.spec !== undefined;
}

function endpointOf(found: Found): ProviderEndpoint {
  return {
    url: found.spec.provisioner.url ?? '',
    specification: keyOf(found.metadata),
    namespace: found.metadata.namespace ?? '',
    signingSecret: found.spec.provisioner.signing_secret_ref?.name,
  };
}

/** Sets a condition as given, lastTransitionTime included. */
function putCondition(conditions: readonly Condition[], next: Condition): Condition[] {
  const list = conditions.filter((c) => c.type !== next.type);
  const at = conditions.findIndex((c) => c.type === next.type);
  list.splice(at >= 0 ? at : list.length, 0, next);
  return list;
}

function joined(messages: readonly MessageItem[]): string {
  return messages.map((m) => m.message).join('; ');
}

export interface ServiceControllersOptions {
  readonly kube: Kube;
  readonly log: Logger;
  readonly events: EventRecorder;
  /** The operator's namespace: where the key of attribute Secret digests is kept. */
  readonly namespace: string;
  readonly resyncMs?: number;
  /** Applied to what the informers cache (see kube's leanObject). */
  readonly transform?: InformerOptions['transform'];
  readonly backoff?: BackoffOptions;
}

/**
 * The informers and controllers of services and their specifications, for the operator, and
 * the caches of those two kinds (not of the attribute Secrets) for metrics.
 */
export function serviceControllers(options: ServiceControllersOptions): {
  informers: Startable[];
  controllers: Controller[];
  caches: { list(): readonly KubeObject[] }[];
} {
  const { kube, log, events } = options;
  const informerOptions = {
    ...(options.resyncMs !== undefined ? { resyncMs: options.resyncMs } : {}),
    ...(options.transform !== undefined ? { transform: options.transform } : {}),
  };
  const specifications = kube.informer(ServiceSpecifications, informerOptions);
  const services = kube.informer(CachedServices, informerOptions);
  // Only the Secrets services name (the reconciler labels them), and only their metadata: a
  // cluster's Secrets (Helm releases, tokens) are many and large, and their values are not
  // the operator's to hold. A change wakes the services naming the Secret.
  const secrets = kube.informer(Secrets, {
    ...informerOptions,
    labelSelector: `${ATTRIBUTES_SECRET_LABEL}=true`,
    transform: metadataOnly,
  });
  indexSpecifications(specifications);
  indexServices(services);
  const schemas = new SchemaCache();
  const specificationController = new SpecificationReconciler({
    kube,
    log,
    specifications,
    schemas,
    events,
  }).controller();
  const serviceController = new ServiceReconciler({
    kube,
    log,
    services,
    specifications,
    schemas,
    events,
    provisioner: new WebhookProvisioner(kube),
    digester: new SecretDigester(kube, options.namespace),
    secrets,
    ...(options.backoff !== undefined ? { backoff: options.backoff } : {}),
  }).controller();
  return {
    informers: [specifications, services, secrets],
    controllers: [specificationController, serviceController],
    caches: [specifications.cache, services.cache],
  };
}
