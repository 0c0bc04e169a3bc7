// What a failed call to the Kubernetes API means for the facade's caller: the API server out
// of reach or busy is a 503 worth retrying, a refusal of the object is the caller's 400, and
// anything else is ours (500, with the detail in the log, not in the answer).
import { isTransient, KubeApiError, KubeSchemaError } from '../kube/index.js';
import { FacadeError } from './errors.js';

export function kubeFailure(error: unknown, doing: string): Error {
  if (error instanceof FacadeError) return error;
  if (isTransient(error)) {
    return new FacadeError(
      'API_SERVER_UNAVAILABLE',
      `the Kubernetes API server is unavailable (${doing}); try again`,
    );
  }
  if (error instanceof KubeApiError && (error.code === 422 || error.code === 400)) {
    return new FacadeError('VALIDATION_FAILED', error.message);
  }
  if (error instanceof KubeApiError || error instanceof KubeSchemaError) {
    // Kept for the log by the error handler; the caller sees only that it failed.
    return new UnexpectedKubeError(`${doing}: ${error.message}`, { cause: error });
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** A failure the caller cannot act on: logged in full, answered as INTERNAL_ERROR. */
export class UnexpectedKubeError extends Error {
  override readonly name = 'UnexpectedKubeError';
}
