// Turns zod issues into one readable sentence that names each offending field, for the
// facade's error messages and the operator's status messages alike.
import type { z } from 'zod';

export function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('');
}

/** `name: must be at most 60 characters; requested_spec.cpu_profile: …` */
export function describeIssues(error: z.ZodError, prefix = ''): string {
  return error.issues
    .map((issue) => {
      const path = fieldPath([...(prefix ? [prefix] : []), ...issue.path]);
      if (issue.code === 'unrecognized_keys') {
        const where = path ? ` in ${path}` : '';
        return `unknown field${issue.keys.length > 1 ? 's' : ''}${where}: ${issue.keys.join(', ')}`;
      }
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}
