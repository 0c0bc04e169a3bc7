// The ServiceSpecification review: its attribute schema compiles, and its `secret: true`
// marks sit at fixed paths a Secret key can name. The rule is domain/services'
// compileAttributeSchema, the one the specification reconciler reports as InvalidSchema.
import { isDeepStrictEqual } from 'node:util';
import { ServiceSpecificationSpec } from '../api/index.js';
import type { SchemaCache } from '../domain/services/attributes.js';
import { compileAttributeSchema } from '../domain/services/specifications.js';
import { contentKey } from './content-key.js';
import { ADMIT, type AdmissionRequest, objectOf, refuse, type Verdict } from './review.js';

export function reviewSpecification(schemas: SchemaCache, request: AdmissionRequest): Verdict {
  const object = objectOf(request.object);
  if (object === undefined || object.metadata.deletionTimestamp !== undefined) return ADMIT;
  if (
    request.operation === 'UPDATE' &&
    isDeepStrictEqual(object.spec, objectOf(request.oldObject)?.spec)
  ) {
    return ADMIT;
  }
  const parsed = ServiceSpecificationSpec.safeParse(object.spec);
  if (!parsed.success) return ADMIT;
  const schema = parsed.data.attributes.schema;
  // Keyed by content, not uid and generation: a refused or dry-run write is never stored, so
  // its generation may come again with another schema.
  const checked = compileAttributeSchema(schemas, contentKey(schema), 0, schema);
  return 'problem' in checked ? refuse('InvalidSchema', checked.problem) : ADMIT;
}
