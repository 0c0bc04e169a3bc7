// The object model the local control plane works with: Kubernetes objects as plain JSON,
// and the API errors it answers with (always a `Status`).

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** One cause of an error, as `Status.details.causes[]` carries it. */
export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'TooManyRequests'
  | 'Expired'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout'
  /** StatusReasonUnknown: what an error that is no Status becomes (responsewriters). */
  | '';

/** An error the API answers with: it carries the `Status` body the client receives. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): Record<string, unknown> {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      // metav1.Status.Reason is omitempty: StatusReasonUnknown ("") is left out.
      ...(this.reason !== '' ? { reason: this.reason } : {}),
      ...(this.details ? { details: omitEmpty(this.details) } : {}),
      code: this.code,
    };
  }
}

/** StatusDetails' fields are all `omitempty`: an empty group (the core group) is left out. */
function omitEmpty(details: StatusDetails): StatusDetails {
  const { name, group, kind, causes, retryAfterSeconds, ...rest } = details;
  return {
    ...(name ? { name } : {}),
    ...(group ? { group } : {}),
    ...(kind ? { kind } : {}),
    ...rest,
    ...(causes !== undefined && causes.length > 0 ? { causes } : {}),
    ...(retryAfterSeconds ? { retryAfterSeconds } : {}),
  };
}

export const badRequest = (message: string) => new ApiError(400, 'BadRequest', message);
