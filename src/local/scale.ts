// The `scale` subresource (autoscaling/v1 Scale) of the kinds whose strategy declares one
// (Deployment, ReplicaSet, StatefulSet, ReplicationController), served as kube's ScaleREST serves
// it (pkg/registry/apps/deployment/storage/storage.go and its siblings): GET reads spec.replicas,
// status.replicas and the selector off the object; PUT and PATCH (kubectl scale sends a merge
// patch) turn the Scale back into the object, spec.replicas and resourceVersion moved over, and
// update it as any update of the object is made (defaults, validation, generation).
import type { IncomingMessage } from 'node:http';
import { wantsTable } from './http.js';
import { strategyOf } from './kinds/index.js';
import { SCALE_TABLE } from './kinds/printers.js';
import { invalid } from './meta.js';
import type { Objects, WriteOptions } from './objects.js';
import { applyPatch, patchTypeOf } from './patch/index.js';
import { qualifiedResource, type ResourceType } from './resource-type.js';
import { parseIncludeObject, toTable } from './table.js';
import { ApiError, badRequest, type KubeObject } from './types.js';

type Json = Record<string, unknown>;

const isJson = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether `type` has a scale subresource. */
export const hasScale = (type: ResourceType): boolean => strategyOf(type)?.scale !== undefined;

/** scaleFromDeployment and its siblings: the Scale of an object. */
export function scaleOf(type: ResourceType, object: KubeObject): KubeObject {
  const spec = isJson(object.spec) ? object.spec : {};
  const status = isJson(object.status) ? object.status : {};
  const { name, namespace, uid, resourceVersion, creationTimestamp } = object.metadata;
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 0;
  const selector = strategyOf(type)?.scale?.selector(object) ?? '';
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name,
      ...(namespace !== undefined ? { namespace } : {}),
      uid,
      resourceVersion,
      // ObjectMeta's creationTimestamp has no omitempty: a Scale always has one.
      creationTimestamp: creationTimestamp ?? null,
    } as KubeObject['metadata'],
    // ScaleSpec.replicas is `omitempty`, ScaleStatus.replicas is not, selector is.
    spec: replicas !== 0 ? { replicas } : {},
    status: {
      replicas: typeof status.replicas === 'number' ? status.replicas : 0,
      ...(selector !== '' ? { selector } : {}),
    },
  };
}

/** What the server lends the subresource: its store and how it reads a request's options. */
export interface ScaleContext {
  objects: Objects;
  writeOptions(): WriteOptions;
  durable(): Promise<void>;
  body(): Promise<unknown>;
  sendJson(code: number, body: unknown, headers?: Record<string, string>): void;
  warningHeader(messages: string[]): string;
}

/** GET, PUT or PATCH of `<kind>/<name>/scale` (the server answers 405 to other methods). */
export async function serveScale(
  context: ScaleContext,
  req: IncomingMessage,
  type: ResourceType,
  namespace: string,
  name: string,
  q: URLSearchParams,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (method === 'GET') {
    await context.durable();
    const scale = scaleOf(type, context.objects.get(type, namespace, name));
    // kubectl get --subresource=scale asks for a Table: printScale's (ScaleREST.ConvertToTable).
    context.sendJson(
      200,
      wantsTable(req.headers.accept)
        ? toTable([scale], SCALE_TABLE, {
            includeObject: parseIncludeObject(q.get('includeObject') ?? undefined),
            resourceVersion: scale.metadata.resourceVersion ?? '',
          })
        : scale,
    );
    return;
  }
  const patchType = method === 'PATCH' ? patchTypeOf(req.headers['content-type']) : undefined;
  const body = await context.body();
  const options = context.writeOptions();
  if (patchType === 'apply' && !q.get('fieldManager')) {
    throw invalid({ kind: 'PatchOptions', group: 'meta.k8s.io' }, '', [
      {
        reason: 'FieldValueRequired',
        message: 'Required value: is required for apply patch',
        field: 'fieldManager',
      },
    ]);
  }
  const current = context.objects.get(type, namespace, name);
  let incoming: unknown;
  if (patchType === undefined) {
    incoming = body;
  } else {
    const base = scaleOf(type, current);
    // An applied Scale sets what it names; a Scale has no lists, so a merge says the same.
    incoming = applyPatch(patchType === 'apply' ? 'merge' : patchType, base, body);
  }
  const scale = readScale(name, incoming);
  // scaleUpdatedObjectInfo.UpdatedObject: the uid precondition here, the resourceVersion's in
  // the store's update.
  if (scale.uid !== undefined && scale.uid !== current.metadata.uid) {
    throw new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource({ ...type, resource: `${type.resource}/scale` })} "${name}": Precondition failed: UID in precondition: ${scale.uid}, UID in object meta: ${current.metadata.uid}`,
      { name, group: type.group, kind: `${type.resource}/scale` },
    );
  }
  const next = structuredClone(current);
  next.spec = { ...(isJson(next.spec) ? next.spec : {}), replicas: scale.replicas };
  if (scale.resourceVersion === undefined) delete next.metadata.resourceVersion;
  else next.metadata.resourceVersion = scale.resourceVersion;
  // Recorded in managedFields as a write of the `scale` subresource, as kube's ScaleHandler
  // records it.
  const written = context.objects.update(type, namespace, name, next, options, 'scale');
  await written.durable;
  const headers: Record<string, string> =
    options.warnings.length > 0 ? { Warning: context.warningHeader(options.warnings) } : {};
  context.sendJson(200, scaleOf(type, written.object), headers);
}

interface ScaleRequest {
  replicas: number;
  resourceVersion?: string;
  uid?: string;
}

/**
 * The parts of a Scale body an update uses, checked as the decoder and ValidateScale check them
 * (pkg/apis/autoscaling/validation: spec.replicas not negative).
 */
function readScale(name: string, body: unknown): ScaleRequest {
  if (!isJson(body)) throw badRequest('the request body is not a Scale object');
  const metadata = isJson(body.metadata) ? body.metadata : {};
  if (metadata.name !== undefined && metadata.name !== '' && metadata.name !== name) {
    throw badRequest(
      `the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`,
    );
  }
  const spec = isJson(body.spec) ? body.spec : {};
  const replicas = spec.replicas ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || Math.abs(replicas) > 2 ** 31) {
    throw badRequest(
      `Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal ${typeof replicas === 'string' ? 'string' : 'number'} into Go struct field ScaleSpec.spec.replicas of type int32`,
    );
  }
  if (replicas < 0) {
    throw invalid({ kind: 'Scale', group: 'autoscaling' }, name, [
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${replicas}: must be greater than or equal to 0`,
        field: 'spec.replicas',
      },
    ]);
  }
  const resourceVersion =
    typeof metadata.resourceVersion === 'string' && metadata.resourceVersion !== ''
      ? metadata.resourceVersion
      : undefined;
  const uid = typeof metadata.uid === 'string' && metadata.uid !== '' ? metadata.uid : undefined;
  return {
    replicas,
    ...(resourceVersion !== undefined ? { resourceVersion } : {}),
    ...(uid !== undefined ? { uid } : {}),
  };
}
