// The Service reconciler: the lifecycle of docs/design.md. Finalizer first; `pending_create` when
// accepted; `pending` while its specification (or its secret) is awaited; attributes, plain
// and secret, validated together against the specification's schema; then the provisioner
// (`creating`, or `updating` after a spec change or a change of the attribute Secret) until
// `active` or `failed`; on delete, `deleting` while the provider removes it, then the
// finalizer goes. A failed service tries again on a spec change, a change of its attribute
// Secret, or a new value of the retry annotation. What it decides is here; beside it, how
// often it may call the provider (pacing.ts), what its status holds (conditions.ts), where
// the provider's outputs go (outputs.ts) and how its attribute Secret is read
// (attribute-secret.ts).
import type { Logger } from 'pino';
import {
  GROUP,
  type MessageItem,
  type ServicePhase,
  type ServiceSpec,
  ServiceSpec as ServiceSpecSchema,
  type ServiceStatus,
} from '../../api/index.js';
import type { EventRecorder } from '../../domain/event-recorder.js';
import {
  ensureFinalizer,
  failureStands,
  hasFinalizer,
  observedRetry,
  ownerOf,
  readByKey,
  removeFinalizer,
  retryReport,
  retryRequested,
  specProblems,
} from '../../domain/lifecycle.js';
import {
  mergeAttributes,
  propertiesOf,
  resolveAttributes,
  type SchemaCache,
} from '../../domain/services/attributes.js';
import {
  type LabelledSecret,
  readSecret,
  SECRET_RECHECK_MS,
  type SecretDigester,
} from '../../domain/services/secrets.js';
import {
  commitStatus,
  type HealthReport,
  PHASE_TRANSITIONS,
  writeStatus,
} from '../../domain/status.js';
import { type BackoffOptions, type Kube, keyOf, type ResourceClient } from '../../kube/index.js';
import { Controller, type ReconcileContext, type Result, Stalled } from '../../runtime/index.js';
import type {
  ProviderEndpoint,
  ServiceAction,
  ServiceProgress,
  ServiceProvisioner,
  ServiceTarget,
} from '../provisioners/service-provisioner.js';
import {
  type SpecificationInformer,
  type SpecificationObject,
  specificationById,
  specificationUsable,
} from '../specification/index.js';
import { AttributeSecrets } from './attribute-secret.js';
import {
  providerContacted,
  provisionAction,
  provisioningRecorded,
  type StatusExtras,
  serviceStatus,
} from './conditions.js';
import { outputsSecretName, writeOutputs } from './outputs.js';
import { DEFAULT_PROVIDER_BACKOFF, ProviderPacing } from './pacing.js';
import {
  type AttributeSecretInformer,
  type RawService,
  RawServices,
  type ServiceInformer,
  servicesNamingSpecification,
  servicesReadingSecret,
} from './resources.js';

const SERVICE_FINALIZER = `${GROUP}/service-cleanup`;

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

/** Attributes as one pass resolved them, with the digest of the Secret they came from. */
interface Resolved {
  readonly result: ReturnType<typeof resolveAttributes>;
  readonly digest: string | undefined;
}

export class ServiceReconciler {
  private readonly client: ResourceClient<unknown, ServiceStatus>;
  private readonly now: () => Date;
  private readonly pacing: ProviderPacing;
  private readonly attributeSecrets: AttributeSecrets;

  constructor(private readonly options: ServiceReconcilerOptions) {
    this.client = options.kube.resource(RawServices) as ResourceClient<unknown, ServiceStatus>;
    this.now = options.now ?? (() => new Date());
    this.pacing = new ProviderPacing(options.backoff ?? DEFAULT_PROVIDER_BACKOFF, this.now);
    this.attributeSecrets = new AttributeSecrets(options.kube, options.digester, options.secrets);
  }

  /** The controller, watching services, the specifications and the Secrets they name. */
  controller(): Controller {
    const services = this.options.services;
    const controller = new Controller({
      name: 'services',
      log: this.options.log,
      workers: this.options.workers ?? 4,
      reconciler: this,
    })
      .watch(services)
      .watch(this.options.specifications, (s) =>
        s.spec ? servicesNamingSpecification(services, s.spec.id) : undefined,
      );
    if (this.options.secrets !== undefined) {
      controller.watch(this.options.secrets, (secret) =>
        servicesReadingSecret(services, keyOf(secret.metadata)),
      );
    }
    return controller;
  }

  async reconcile(
    key: string,
    context: Pick<ReconcileContext, 'log'> & Partial<Pick<ReconcileContext, 'signal'>>,
  ): Promise<Result | undefined> {
    const signal = context.signal;
    let service = await readByKey(this.client, key);
    if (service === undefined) {
      this.forget(key);
      return undefined;
    }
    const log = context.log;
    if (service.metadata.deletionTimestamp !== undefined) {
      return this.finalize(key, service, log, signal);
    }

    // A retry request on a failed service: back to `pending`, the value acted on recorded in
    // the same write (so it is acted on once); then attributes are validated again and the
    // provider called as after a spec change. A failure that still holds comes back as it was.
    const retry = retryRequested(service);
    if (retry !== undefined && service.status?.status === 'failed') {
      this.pacing.forget(key);
      service = await this.setStatus(service, undefined, 'pending', retryReport(retry, 'service'));
      log.info({ service: key, retry }, 'service retry requested');
    }

    const parsed = ServiceSpecSchema.safeParse(service.spec);
    if (!parsed.success) {
      return this.fail(service, undefined, 'InvalidSpec', specProblems(parsed.error));
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
    const stands = failureStands(first, changed, STICKY_FAILURES);
    const settled = first.status === 'active' || stands !== undefined;
    // The Secret as read when its content moved: validated below without a second read.
    let moved: LabelledSecret | undefined;
    if (!changed && settled) {
      moved = await this.secretMoved(key, service, spec, log);
      if (moved === undefined) {
        if (stands !== undefined) throw new Stalled(stands.reason ?? '', stands.message ?? '');
        // A retry request seen while not failed is recorded, never acted on later.
        await this.recordRetry(service);
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
      log.info({ service: key, reason: result.reason }, 'service attributes refused');
      return this.fail(service, spec, result.reason, result.message, digest);
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
    return this.provision(key, service, spec, found, result.attributes, digest, log, signal);
  }

  /**
   * The attribute Secret as just read, when its content differs from the one the service was
   * last validated with (the digest in status); undefined when it does not. A service
   * recorded before digests were (no digest in status) gets the current one, without a
   * provider call.
   */
  private async secretMoved(
    key: string,
    service: RawService,
    spec: ServiceSpec,
    log: Logger,
  ): Promise<LabelledSecret | undefined> {
    const ref = spec.secret_attributes_ref;
    if (ref === undefined) return undefined;
    const change = await this.attributeSecrets.change(
      key,
      service.metadata.namespace ?? '',
      ref.name,
      service.status?.secretAttributesHash,
    );
    if (change === undefined) return undefined;
    if ('unrecorded' in change) {
      await writeStatus(this.client, service, {
        ...service.status,
        ...observedRetry(service),
        secretAttributesHash: change.unrecorded,
      });
      return undefined;
    }
    log.info({ service: key, secret: ref.name }, 'service attribute secret changed');
    return change.moved;
  }

  /** An active service with a retry request has nothing to retry: the value is only recorded. */
  private async recordRetry(service: RawService): Promise<void> {
    if (retryRequested(service) === undefined) return;
    await writeStatus(this.client, service, { ...service.status, ...observedRetry(service) });
  }

  private forget(key: string): void {
    this.pacing.forget(key);
    this.attributeSecrets.forget(key);
  }

  private async provision(
    key: string,
    service: RawService,
    spec: ServiceSpec,
    found: Found,
    attributes: Record<string, unknown>,
    digest: Pick<StatusExtras, 'secretDigest'>,
    log: Logger,
    signal: AbortSignal | undefined,
  ): Promise<Result | undefined> {
    const action = provisionAction(service);
    const phase: ServicePhase = action === 'update' ? 'updating' : 'creating';
    const wait = this.pacing.early(key, service.metadata.generation, action);
    if (wait !== undefined) return { requeueAfter: wait };
    const started = this.pacing.startOf(service, action);
    if (!provisioningRecorded(service, phase, started)) {
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
    const progress = await this.options.provisioner.ensure(target, endpointOf(found), signal);
    switch (progress.state) {
      case 'ready': {
        this.pacing.forget(key);
        const outputs = await writeOutputs(this.options.kube, service, progress.outputs);
        if (outputs === 'taken') {
          return this.fail(
            service,
            spec,
            'OutputSecretTaken',
            `secret ${outputsSecretName(service)} exists and is not this service's; the provider's output attributes have nowhere to go`,
            { provisioning: { ended: 'OutputSecretTaken' }, provisioned: true, ...digest },
          );
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
        return this.callAgain(key, service, action, progress.retryAfterMs);
      case 'failed':
        this.pacing.forget(key);
        log.warn({ service: key, reason: progress.reason, action }, 'service provisioning failed');
        return this.fail(service, spec, progress.reason, joined(progress.messages), {
          provisioning: { ended: progress.reason },
          messages: progress.messages,
          ...digest,
        });
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
      this.pacing.forget(key);
      const message = `provider gave no usable answer within ${found.spec.provisioner.deadline_seconds}s: ${progress.message}`;
      log.warn({ service: key, action }, 'service provisioning deadline exceeded');
      return this.fail(service, spec, 'DeadlineExceeded', message, {
        provisioning: { ended: 'DeadlineExceeded' },
        ...digest,
      });
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
    return this.callAgain(key, service, action, progress.retryAfterMs, cap);
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
      const read = alreadyRead ?? (await this.attributeSecrets.read(namespace, ref.name));
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
      digest = await this.attributeSecrets.digest(secret);
    }
    const result = resolveAttributes(compiled, spec.attributes ?? {}, secret, ref?.name);
    return { result, digest };
  }

  private async finalize(
    key: string,
    service: RawService,
    log: Logger,
    signal: AbortSignal | undefined,
  ): Promise<Result | undefined> {
    if (!hasFinalizer(service, SERVICE_FINALIZER)) return undefined;
    const parsed = ServiceSpecSchema.safeParse(service.spec);
    const spec = parsed.success ? parsed.data : undefined;
    // Only a provider that was ever called can hold something of this service.
    const contacted = providerContacted(service);
    const imported = spec?.imported === true || spec?.selectors?.imported === true;
    if (spec !== undefined && contacted && !imported) {
      const result = await this.deprovision(key, service, spec, log, signal);
      if (result !== 'done') return result;
    }
    service = await this.setStatus(service, spec, 'deleted', {
      health: 'reconciling',
      reason: 'Deleted',
      message: 'the service is deleted',
    });
    if (!(await removeFinalizer(this.client, service, SERVICE_FINALIZER))) return undefined;
    this.pacing.forget(key);
    log.info({ service: key }, 'service deleted');
    return undefined;
  }

  /** The provider's delete; 'done' once it holds nothing, else what to do meanwhile. */
  private async deprovision(
    key: string,
    service: RawService,
    spec: ServiceSpec,
    log: Logger,
    signal: AbortSignal | undefined,
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
    const wait = this.pacing.early(key, service.metadata.generation, 'delete');
    if (wait !== undefined) return { requeueAfter: wait };
    const started = this.pacing.startOf(service, 'delete');
    if (!provisioningRecorded(service, 'deleting', started)) {
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
    const progress = await this.options.provisioner.remove(target, endpointOf(found), signal);
    switch (progress.state) {
      case 'ready':
        this.pacing.forget(key);
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
        return this.callAgain(key, service, 'delete', progress.retryAfterMs);
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
        return this.callAgain(key, service, 'delete', this.pacing.backoff.maxMs);
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
      ...ownerOf(key, service),
      generation: service.metadata.generation,
      spec,
      attributes,
      action,
    };
  }

  /** Another look when the provider may be called again: its Retry-After, else backoff. */
  private callAgain(
    key: string,
    service: RawService,
    action: ServiceAction,
    retryAfterMs: number | undefined,
    cap?: number,
  ): Result {
    const generation = service.metadata.generation;
    return { requeueAfter: this.pacing.later(key, generation, action, retryAfterMs, cap) };
  }

  /** `failed` (Stalled=True) written, then Stalled thrown: the key waits for a change. */
  private async fail(
    service: RawService,
    spec: ServiceSpec | undefined,
    reason: string,
    message: string,
    extras: StatusExtras = {},
  ): Promise<never> {
    await this.setStatus(service, spec, 'failed', { health: 'stalled', reason, message }, extras);
    throw new Stalled(reason, message);
  }

  /**
   * The whole status for `phase` (serviceStatus), written and announced as commitStatus does.
   * Returns the object as it now is.
   */
  private async setStatus(
    service: RawService,
    spec: ServiceSpec | undefined,
    phase: ServicePhase,
    report: HealthReport,
    extras: StatusExtras = {},
  ): Promise<RawService> {
    const next = serviceStatus(service, spec, phase, report, extras, this.now());
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

function joined(messages: readonly MessageItem[]): string {
  return messages.map((m) => m.message).join('; ');
}
