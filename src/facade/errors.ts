// Every error the facade answers with: one list of stable codes, each with its HTTP status and
// short error type, and the spec's body shape {statusCode, code, error, message} built from it.
import type { ErrorBody } from '../api/index.js';

/** Stable: clients branch on these. Add new codes; never rename or reuse one. */
export const ERROR_CODES = {
  BAD_REQUEST: { statusCode: 400, error: 'Bad Request' },
  VALIDATION_FAILED: { statusCode: 400, error: 'Bad Request' },
  INVALID_JSON: { statusCode: 400, error: 'Bad Request' },
  BODY_TOO_DEEP: { statusCode: 400, error: 'Bad Request' },
  APPLICATION_NOT_FOUND: { statusCode: 400, error: 'Bad Request' },
  UNAUTHENTICATED: { statusCode: 401, error: 'Unauthorized' },
  FORBIDDEN: { statusCode: 403, error: 'Forbidden' },
  ROUTE_NOT_FOUND: { statusCode: 404, error: 'Not Found' },
  SCOPE_NOT_FOUND: { statusCode: 404, error: 'Not Found' },
  NOT_FOUND: { statusCode: 404, error: 'Not Found' },
  METHOD_NOT_ALLOWED: { statusCode: 405, error: 'Method Not Allowed' },
  REQUEST_TIMEOUT: { statusCode: 408, error: 'Request Timeout' },
  SCOPE_ALREADY_EXISTS: { statusCode: 409, error: 'Conflict' },
  BODY_TOO_LARGE: { statusCode: 413, error: 'Payload Too Large' },
  UNSUPPORTED_MEDIA_TYPE: { statusCode: 415, error: 'Unsupported Media Type' },
  TOO_MANY_STREAMS: { statusCode: 429, error: 'Too Many Requests' },
  HEADERS_TOO_LARGE: { statusCode: 431, error: 'Request Header Fields Too Large' },
  INTERNAL_ERROR: { statusCode: 500, error: 'Internal Server Error' },
  API_SERVER_UNAVAILABLE: { statusCode: 503, error: 'Service Unavailable' },
  NOT_READY: { statusCode: 503, error: 'Service Unavailable' },
} as const satisfies Record<string, { statusCode: number; error: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error meant for the caller: its message is safe to show (no secrets, no stack). */
export class FacadeError extends Error {
  override readonly name = 'FacadeError';
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }

  get statusCode(): number {
    return ERROR_CODES[this.code].statusCode;
  }

  body(): ErrorBody {
    return errorBody(this.code, this.message);
  }
}

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  const { statusCode, error } = ERROR_CODES[code];
  return { statusCode, code, error, message };
}
