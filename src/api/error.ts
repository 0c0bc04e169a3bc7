// The spec's error body, shared by every 4XX and 5XX answer of the facade.
import { z } from 'zod';

export const ErrorBody = z
  .object({
    statusCode: z.number().int().min(400).max(599).describe('HTTP status code of the error.'),
    code: z.string().min(1).optional().describe('Stable error code.'),
    error: z.string().min(1).describe('Short, human-readable error type.'),
    message: z.string().min(1).describe('Detailed message giving context.'),
  })
  .strict();
export type ErrorBody = z.infer<typeof ErrorBody>;
