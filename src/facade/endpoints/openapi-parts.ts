// The pieces an endpoint's OpenAPI operation is written with: a reference to a component, a
// JSON body, and the error responses of the codes it can answer with, grouped by status.
import { ERROR_CODES, type ErrorCode } from '../errors.js';
import { COMPONENTS_PREFIX, type ComponentName, type Json } from '../openapi-schemas.js';

export const ref = (name: ComponentName): Json => ({ $ref: COMPONENTS_PREFIX + name });

export const json = (schema: Json): Json => ({ 'application/json': { schema } });

/** One response per status, naming the codes an operation can answer with at that status. */
export function errorResponses(codes: readonly ErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const { statusCode } = ERROR_CODES[code];
    byStatus.set(statusCode, [...(byStatus.get(statusCode) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => [
        String(status),
        {
          description: `${ERROR_CODES[list[0] as ErrorCode].error}: ${list.join(', ')}.`,
          content: json({
            ...ref('Error'),
            properties: { statusCode: { const: status }, code: { enum: list } },
          }),
        },
      ]),
  );
}

// Every operation can meet these: no or a bad token, RBAC refusing, the API server or the
// facade's caches not ready, an unexpected fault.
export const COMMON_ERRORS = [
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'INTERNAL_ERROR',
  'API_SERVER_UNAVAILABLE',
  'NOT_READY',
] as const satisfies readonly ErrorCode[];
