// Admission webhooks in the local control plane's writes, in kube's order: mutating webhooks on
// the decoded, defaulted object (mutating/dispatcher.go, with one reinvocation round for
// `reinvocationPolicy: IfNeeded`), then the object's own validation (objects.ts), then the
// validating webhooks, in parallel (validating/dispatcher.go). Objects writes synchronously, so
// a write that reaches a webhook is suspended (AdmissionPending), the webhooks are awaited, and
// the write is run again from its start; the answers are kept by the exact object they were
// about, so the rerun goes on past them, or asks again when the object changed meanwhile
// (what kube's GuaranteedUpdate retry does on a conflict). Configurations are compiled once
// per change of them (a write listener), not per request.
import { randomUUID } from 'node:crypto';
import type { UserInfo } from '../auth/attributes.js';
import { NAMESPACE_TYPE } from '../kinds/namespace.js';
import {
  mutatingWebhookConfigurationStrategy,
  validatingWebhookConfigurationStrategy,
} from '../kinds/webhookconfiguration.js';
import type { AdmissionHooks, Objects } from '../objects.js';
import { applyJsonPatch } from '../patch/index.js';
import { clone, sameJson } from '../patch/util.js';
import { type ResourceType, storageKeyOf } from '../resource-type.js';
import { ApiError, badRequest, type KubeObject, type StatusReason } from '../types.js';
import { type AdmissionResponse, CallError, callWebhook } from './call.js';
import {
  compileWebhooks,
  type Operation,
  type RequestAttributes,
  type Webhook,
} from './webhooks.js';

/** Thrown by a hook to suspend a write until `work` settles; the caller then runs it again. */
export class AdmissionPending extends Error {
  override name = 'AdmissionPending';
  constructor(readonly work: Promise<void>) {
    super('admission webhooks pending');
  }
}

/** Webhooks one request may call, over all its passes (a bound: kube sets none). */
export const MAX_WEBHOOK_CALLS = 128;
/** The whole admission of one request: kube-apiserver's default --request-timeout. */
export const ADMISSION_DEADLINE_MS = 60_000;
/** Runs of a write: a create or update with both kinds of webhooks takes 3. */
const MAX_PASSES = 8;

const MUTATING = storageKeyOf(mutatingWebhookConfigurationStrategy.type);
const VALIDATING = storageKeyOf(validatingWebhookConfigurationStrategy.type);

/** What the request says that the AdmissionReview carries besides the objects. */
export interface RequestContext {
  readonly user: UserInfo;
  readonly dryRun: boolean;
  readonly fieldManager?: string;
  /** The resource as the URL names it (its version may differ from the stored one). */
  readonly type: ResourceType;
  readonly subresource: string;
}

/** The webhooks of the stored configurations, recompiled when one of them is written. */
export class Admission {
  private mutating: Webhook[] | undefined;
  private validating: Webhook[] | undefined;

  constructor(private readonly objects: Objects) {
    objects.listen({
      committed: (event) => {
        if (event.resource === MUTATING) this.mutating = undefined;
        if (event.resource === VALIDATING) this.validating = undefined;
      },
    });
  }

  private webhooks(mutating: boolean): Webhook[] {
    if (mutating) {
      this.mutating ??= compileWebhooks(
        this.objects.list(mutatingWebhookConfigurationStrategy.type, undefined).items,
        true,
      );
      return this.mutating;
    }
    this.validating ??= compileWebhooks(
      this.objects.list(validatingWebhookConfigurationStrategy.type, undefined).items,
      false,
    );
    return this.validating;
  }

  /**
   * Runs a write through the webhooks: `write` is called with the hooks (and again after each
   * suspension: it must start from the request, not from a previous run's state). Without any
   * webhook configured it runs once with no hooks.
   */
  async admit<T>(
    context: RequestContext,
    write: (hooks?: AdmissionHooks) => T,
  ): Promise<{ result: T; warnings: string[] }> {
    if (this.webhooks(true).length === 0 && this.webhooks(false).length === 0) {
      return { result: write(undefined), warnings: [] };
    }
    const session = new Session(this, context);
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      try {
        return { result: write(session), warnings: session.warnings };
      } catch (error) {
        if (!(error instanceof AdmissionPending)) throw error;
        await error.work;
      }
    }
    throw new ApiError(
      409,
      'Conflict',
      'the object kept changing while admission webhooks were called; please try again',
    );
  }

  /** The webhooks of one kind that a request goes to, before matchConditions. */
  matching(mutating: boolean, a: RequestAttributes): Webhook[] {
    const labelsOf = (ns: string) => this.objects.find(NAMESPACE_TYPE, '', ns)?.metadata.labels;
    return this.webhooks(mutating).filter(
      (w) => w.matchesRules(a) && w.matchesNamespace(a, labelsOf) && w.matchesObject(a),
    );
  }
}

/** One request's admission: what the webhooks answered, by the object they were asked about. */
class Session implements AdmissionHooks {
  readonly warnings: string[] = [];
  private readonly mutated = new Map<string, KubeObject | ApiError>();
  private readonly validated = new Map<string, KubeObject | ApiError | undefined>();
  private readonly deadline = Date.now() + ADMISSION_DEADLINE_MS;
  private calls = 0;

  constructor(
    private readonly admission: Admission,
    private readonly context: RequestContext,
  ) {}

  mutate(
    type: ResourceType,
    object: KubeObject,
    old: KubeObject | undefined,
    subresource?: string,
  ): KubeObject {
    const a = this.attributes(type, object, old, subresource);
    const key = fingerprint(object, old);
    const known = this.mutated.get(key);
    if (known instanceof ApiError) throw known;
    if (known !== undefined) return clone(known);
    if (this.admission.matching(true, a).length === 0) return object;
    const snapshot = clone(object);
    throw new AdmissionPending(
      this.runMutating({ ...a, object: snapshot }).then(
        (result) => void this.mutated.set(key, result),
        (error: unknown) => void this.mutated.set(key, asApiError(error)),
      ),
    );
  }

  validate(
    type: ResourceType,
    object: KubeObject | undefined,
    old: KubeObject | undefined,
    subresource?: string,
  ): KubeObject | undefined {
    const a = this.attributes(type, object, old, subresource);
    const key = fingerprint(object, old);
    if (this.validated.has(key)) {
      const known = this.validated.get(key);
      if (known instanceof ApiError) throw known;
      return known === undefined ? undefined : clone(known);
    }
    // A DELETE has no mutation hook of its own: its mutating webhooks are called here first.
    const deleting = object === undefined;
    if (
      (!deleting || this.admission.matching(true, a).length === 0) &&
      this.admission.matching(false, a).length === 0
    ) {
      return object;
    }
    const snapshot = object === undefined ? undefined : clone(object);
    const work = async () => {
      if (deleting) await this.runMutating(a);
      await this.runValidating({ ...a, object: snapshot });
      return snapshot;
    };
    throw new AdmissionPending(
      work().then(
        (result) => void this.validated.set(key, result),
        (error: unknown) => void this.validated.set(key, asApiError(error)),
      ),
    );
  }

  private attributes(
    type: ResourceType,
    object: KubeObject | undefined,
    old: KubeObject | undefined,
    subresource: string | undefined,
  ): RequestAttributes {
    const operation: Operation =
      object === undefined ? 'DELETE' : old === undefined ? 'CREATE' : 'UPDATE';
    const meta = (object ?? old)?.metadata;
    return {
      group: type.group,
      version: type.version,
      resource: type.resource,
      subresource: subresource ?? this.context.subresource,
      namespace: type.namespaced ? (meta?.namespace ?? '') : '',
      namespaced: type.namespaced,
      operation,
      object,
      oldObject: old,
    };
  }

  /** mutating/dispatcher.go: in order, each on the object the previous ones made. */
  private async runMutating(a: RequestAttributes): Promise<KubeObject> {
    let object = a.object;
    const called: Webhook[] = [];
    const reinvoke = new Set<Webhook>();
    const run = async (w: Webhook) => {
      const response = await this.call(w, { ...a, object });
      if (response === undefined) return;
      called.push(w);
      if (response.patch === undefined || object === undefined) return;
      const next = applyPatch(w, object, response.patch);
      checkIdentity(w, object, next);
      if (!sameJson(next, object)) {
        // reinvocationcontext.go: a change asks again every IfNeeded webhook already called.
        for (const c of called) if (c !== w && c.reinvocationPolicy === 'IfNeeded') reinvoke.add(c);
        object = next;
      }
    };
    const hooks = this.admission.matching(true, a);
    for (const w of hooks) await run(w);
    // One reinvocation round, as kube's: the webhooks asked again see the final object.
    const again = hooks.filter((w) => reinvoke.has(w));
    for (const w of again) await run(w);
    return object as KubeObject;
  }

  /** validating/dispatcher.go: all at once; the first refusal (in their order) is the answer. */
  private async runValidating(a: RequestAttributes): Promise<void> {
    const hooks = this.admission.matching(false, a);
    const outcomes = await Promise.allSettled(hooks.map((w) => this.call(w, a)));
    for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
  }

  /**
   * One webhook, if its matchConditions take the request: its response when allowed (undefined
   * when skipped or failing open); a refusal, a dry-run refusal or a failing-closed call throws.
   */
  private async call(w: Webhook, a: RequestAttributes): Promise<AdmissionResponse | undefined> {
    const request = this.request(a);
    const condition = w.conditions({
      object: a.object ?? null,
      oldObject: a.oldObject ?? null,
      request,
    });
    if ('error' in condition) {
      if (w.failurePolicy === 'Ignore') return undefined;
      // generic/webhook.go ShouldCallHook: failing closed is apierrors.NewForbidden.
      throw forbidden(this.context.type, a.object ?? a.oldObject, condition.error);
    }
    if (!condition.matches) return undefined;
    if (this.context.dryRun && w.sideEffects !== 'None' && w.sideEffects !== 'NoneOnDryRun') {
      // errors/statuserror.go NewDryRunUnsupportedErr.
      throw badRequest(`admission webhook "${w.name}" does not support dry run`);
    }
    let response: AdmissionResponse;
    try {
      if (!w.admissionReviewVersions.includes('v1')) {
        throw new CallError(
          `webhook does not accept known AdmissionReview versions: ${JSON.stringify(w.admissionReviewVersions)}`,
        );
      }
      this.calls += 1;
      if (this.calls > MAX_WEBHOOK_CALLS) {
        throw new CallError(`more than ${MAX_WEBHOOK_CALLS} webhook calls for one request`);
      }
      if (Date.now() >= this.deadline)
        throw new CallError('request did not complete within the deadline');
      response = await callWebhook(
        w,
        { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request },
        this.deadline,
      );
      if (!w.mutating && response.patch !== undefined) {
        throw new CallError(
          'received invalid webhook response: validating webhooks may not return patches',
        );
      }
    } catch (error) {
      if (!(error instanceof CallError)) throw error;
      // validating/dispatcher.go: ErrCallingWebhook fails open on Ignore, else an internal error.
      if (w.failurePolicy === 'Ignore') return undefined;
      throw internal(`failed calling webhook "${w.name}": ${error.message}`);
    }
    // The Warning header carries each as kube's audit/warning recorder does.
    for (const warning of response.warnings ?? []) this.warnings.push(warning);
    if (!response.allowed) throw denied(w.name, response.status);
    return response;
  }

  /** admission/v1 AdmissionRequest, as request.go CreateV1AdmissionReview fills it. */
  private request(a: RequestAttributes): Record<string, unknown> {
    const type = this.context.type;
    const kind = { group: type.group, version: type.version, kind: type.kind };
    const resource = { group: type.group, version: type.version, resource: type.resource };
    const meta = (a.object ?? a.oldObject)?.metadata;
    const user = this.context.user;
    const options =
      a.operation === 'DELETE'
        ? {
            kind: 'DeleteOptions',
            apiVersion: 'meta.k8s.io/v1',
            ...(this.context.dryRun ? { dryRun: ['All'] } : {}),
          }
        : {
            kind: a.operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions',
            apiVersion: 'meta.k8s.io/v1',
            ...(this.context.dryRun ? { dryRun: ['All'] } : {}),
            ...(this.context.fieldManager ? { fieldManager: this.context.fieldManager } : {}),
          };
    return {
      uid: randomUUID(),
      kind,
      resource,
      ...(a.subresource !== '' ? { subResource: a.subresource } : {}),
      requestKind: kind,
      requestResource: resource,
      ...(a.subresource !== '' ? { requestSubResource: a.subresource } : {}),
      ...(meta?.name ? { name: meta.name } : {}),
      ...(a.namespace !== ''
        ? { namespace: a.namespace }
        : a.resource === 'namespaces' && meta?.name
          ? { namespace: meta.name }
          : {}),
      operation: a.operation,
      userInfo: {
        username: user.username,
        ...(user.uid ? { uid: user.uid } : {}),
        groups: [...user.groups],
        ...(user.extra ? { extra: user.extra } : {}),
      },
      object: a.object ?? null,
      oldObject: a.oldObject ?? null,
      dryRun: this.context.dryRun,
      options,
    };
  }
}

/** The exact object a webhook was asked about, and the revision of what it replaced. */
function fingerprint(object: KubeObject | undefined, old: KubeObject | undefined): string {
  if (object === undefined) return `delete:${old?.metadata.uid}:${old?.metadata.resourceVersion}`;
  // What a rerun makes anew each time (a create's uid, time and generated name; the times of
  // managedFields) is left out, so a rerun finds the answer; the answer's own are then kept.
  const { uid: _u, creationTimestamp: _c, managedFields: _m, ...meta } = object.metadata;
  if (meta.generateName !== undefined && old === undefined) delete meta.name;
  return JSON.stringify([{ ...object, metadata: meta }, old?.metadata.resourceVersion ?? '']);
}

function applyPatch(w: Webhook, object: KubeObject, patch: string): KubeObject {
  try {
    const operations: unknown = JSON.parse(Buffer.from(patch, 'base64').toString('utf8'));
    return applyJsonPatch(object, operations) as KubeObject;
  } catch (error) {
    // mutating/dispatcher.go: a patch that does not apply is an internal error, whatever the policy.
    throw internal(
      `admission webhook "${w.name}" returned a patch that cannot be applied: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** A mutation may not turn the object into another one (kube decodes it into the same type). */
function checkIdentity(w: Webhook, before: KubeObject, after: KubeObject): void {
  if (after.kind !== before.kind || after.apiVersion !== before.apiVersion) {
    throw internal(`admission webhook "${w.name}" changed the kind or apiVersion of the object`);
  }
  if (after.metadata?.namespace !== before.metadata.namespace) {
    throw badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  if (before.metadata.name !== undefined && after.metadata.name !== before.metadata.name) {
    throw badRequest(
      `the name of the object (${after.metadata.name ?? ''}) does not match the name on the URL (${before.metadata.name})`,
    );
  }
}

/** apierrors.NewForbidden of the request's resource and name. */
function forbidden(type: ResourceType, object: KubeObject | undefined, why: string): ApiError {
  const resource = type.group === '' ? type.resource : `${type.resource}.${type.group}`;
  const name = object?.metadata.name ?? '';
  return new ApiError(
    403,
    'Forbidden',
    name === '' ? `${resource} is forbidden: ${why}` : `${resource} "${name}" is forbidden: ${why}`,
    { ...(name !== '' ? { name } : {}), group: type.group, kind: type.resource },
  );
}

/** apierrors.NewInternalError. */
function internal(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, {
    causes: [{ reason: '', message }],
  });
}

/** errors/statuserror.go ToStatusErr (kube 1.32): the webhook's status, its message prefixed. */
function denied(name: string, status: Record<string, unknown> | undefined): ApiError {
  const s = status ?? {};
  const code = typeof s.code === 'number' && s.code >= 400 ? s.code : 400;
  const by = `admission webhook "${name}" denied the request`;
  const message =
    typeof s.message === 'string' && s.message !== ''
      ? `${by}: ${s.message}`
      : typeof s.reason === 'string' && s.reason !== ''
        ? `${by}: ${s.reason}`
        : `${by} without explanation`;
  const reason = (typeof s.reason === 'string' ? s.reason : '') as StatusReason;
  const details =
    typeof s.details === 'object' && s.details !== null ? (s.details as object) : undefined;
  return new ApiError(code, reason, message, details);
}

function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return internal(error instanceof Error ? error.message : String(error));
}
