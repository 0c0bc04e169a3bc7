// The errors src/kube throws: API answers (a Status), transport failures, and objects that do
// not match our schemas, kept apart so callers can tell transient from permanent.

/** The `details` of a Kubernetes Status. */
export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly { reason?: string; message?: string; field?: string }[];
  readonly retryAfterSeconds?: number;
}

/** The server answered with an error Status (HTTP >= 400, or an ERROR watch event). */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details: StatusDetails | undefined = undefined,
  ) {
    super(message);
  }

  /** Worth retrying as is: the server was busy or briefly unable, not refusing the request. */
  get transient(): boolean {
    return this.code === 429 || this.code >= 500;
  }

  /** Builds the error from whatever the server sent; a body that is not a Status still yields one. */
  static fromStatus(httpCode: number, body: unknown, fallback: string): KubeApiError {
    const status = isRecord(body) ? body : {};
    const code = typeof status.code === 'number' ? status.code : httpCode;
    const reason = typeof status.reason === 'string' ? status.reason : reasonOfCode(code);
    const message = typeof status.message === 'string' ? status.message : fallback;
    const details = isRecord(status.details) ? (status.details as StatusDetails) : undefined;
    return new KubeApiError(code, reason, message, details);
  }
}

/** No answer: connection refused or reset, TLS failure, a timeout. Always worth retrying. */
export class KubeTransportError extends Error {
  override readonly name = 'KubeTransportError';
  readonly transient = true;
  constructor(
    message: string,
    /** The system error code (ECONNREFUSED, ECONNRESET ...) or TIMEOUT / IDLE_TIMEOUT. */
    readonly errorCode: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An object came back that our zod schema refuses: a bug or a version skew, not a retry. */
export class KubeSchemaError extends Error {
  override readonly name = 'KubeSchemaError';
  constructor(
    readonly kind: string,
    readonly objectKey: string,
    /** One entry per problem, e.g. `spec.requested_spec.cpu_profile: Invalid option ...`. */
    readonly problems: readonly string[],
  ) {
    super(`${kind} ${objectKey} does not match its schema: ${problems.join('; ')}`);
  }
}

/** True when retrying the same call later may succeed. */
export function isTransient(error: unknown): boolean {
  return error instanceof KubeTransportError || (error instanceof KubeApiError && error.transient);
}

export const isNotFound = (error: unknown): boolean =>
  error instanceof KubeApiError && error.code === 404;
export const isConflict = (error: unknown): boolean =>
  error instanceof KubeApiError && error.code === 409;
export const isAlreadyExists = (error: unknown): boolean =>
  error instanceof KubeApiError && error.code === 409 && error.reason === 'AlreadyExists';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function reasonOfCode(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 504:
      return 'Timeout';
    default:
      return code >= 500 ? 'InternalError' : 'Unknown';
  }
}
