// Every check apiextensions-apiserver makes of one CRD validation schema (`spec.validation` or
// a version's `schema`), in its order (apis/apiextensions/validation/validation.go,
// validateCustomResourceDefinitionValidation): what the root may hold when the status
// subresource is on, a nullable root, the structural rules (then the defaults, when those
// pass), then the rules of every node; NewStructural's refusal last, only if nothing else
// was found.
import { celCostIssues } from './cel-cost.js';
import { defaultIssues } from './defaults.js';
import { childPath, type FieldIssue, forbidden, GoText, invalid } from './field-errors.js';
import { ALL_RULES, openAPISchemaIssues, type SchemaRuleOptions } from './openapi-rules.js';
import { flag, GO_FIELDS, isProps, isZero, type Props, sharpSchema, str } from './props.js';
import { newStructuralError, validateStructural } from './structural.js';

export interface CrdSchemaOptions extends SchemaRuleOptions {
  /** Whether the status subresource is on for the version(s) this schema serves. */
  statusEnabled: boolean;
  requireStructuralSchema: boolean;
  requirePrunedDefaults: boolean;
  /** An update that leaves this schema as it was: its rules' costs are not estimated again. */
  suppressCelCost?: boolean;
}

export const STRICTEST: Omit<CrdSchemaOptions, 'statusEnabled'> = {
  ...ALL_RULES,
  requireStructuralSchema: true,
  requirePrunedDefaults: true,
};

/** The fields the root may hold when status is a subresource (allowedFieldsAtRootSchema). */
const ALLOWED_AT_ROOT = [
  'Description',
  'Type',
  'Format',
  'Title',
  'Maximum',
  'ExclusiveMaximum',
  'Minimum',
  'ExclusiveMinimum',
  'MaxLength',
  'MinLength',
  'Pattern',
  'MaxItems',
  'MinItems',
  'UniqueItems',
  'MultipleOf',
  'Required',
  'Items',
  'Properties',
  'ExternalDocs',
  'Example',
  'XPreserveUnknownFields',
  'XValidations',
];

/** With status split off, the root must keep its validation when cut to properties[status]. */
function rootWithStatus(schema: Props, path: string): FieldIssue | undefined {
  for (const [go, json, kind] of GO_FIELDS) {
    if (isZero(schema, json, kind)) continue;
    if (go === 'Type') {
      const type = str(schema, 'type');
      if (type === 'object') continue;
      return invalid(
        childPath(childPath(path, 'openAPIV3Schema'), 'type'),
        type,
        'only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
      );
    }
    if (!ALLOWED_AT_ROOT.includes(go)) {
      return invalid(
        childPath(path, 'openAPIV3Schema'),
        new GoText(sharpSchema(schema)),
        `only [${ALLOWED_AT_ROOT.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`,
      );
    }
  }
  return undefined;
}

/**
 * validateCustomResourceDefinitionValidation for `validation`, the object at `path` holding
 * `openAPIV3Schema` (`spec.validation` or `spec.versions[i].schema`).
 */
export function crdSchemaIssues(
  validation: unknown,
  path: string,
  options: CrdSchemaOptions,
): FieldIssue[] {
  if (!isProps(validation) || !isProps(validation.openAPIV3Schema)) return [];
  const schema = validation.openAPIV3Schema;
  const at = childPath(path, 'openAPIV3Schema');
  const out: FieldIssue[] = [];
  if (options.statusEnabled) {
    const root = rootWithStatus(schema, path);
    if (root !== undefined) out.push(root);
  }
  if (flag(schema, 'nullable'))
    out.push(forbidden(childPath(at, 'nullable'), 'nullable cannot be true at the root'));
  let initError: string | undefined;
  if (options.requireStructuralSchema) {
    initError = newStructuralError(schema);
    if (initError === undefined) {
      const structural = validateStructural(schema, at);
      out.push(
        ...(structural.length > 0
          ? structural
          : defaultIssues(schema, at, options.requirePrunedDefaults)),
      );
    }
  }
  out.push(...openAPISchemaIssues(schema, at, options));
  // Rule costs are estimated only over a schema that is otherwise valid (kube skips CEL where a
  // schema error is found and builds no CEL context for a non-structural schema); a rule that
  // does not compile does not stop the others' estimate.
  if (
    options.suppressCelCost !== true &&
    initError === undefined &&
    out.every((i) => i.field.includes('.x-kubernetes-validations['))
  ) {
    out.push(...celCostIssues(schema, at));
  }
  // NewStructural's errors repeat what the node rules say, so they only show alone.
  if (out.length === 0 && initError !== undefined) out.push(invalid(at, '', initError));
  return out;
}

/** Whether this schema would be refused as non-structural (ValidateStructural or NewStructural). */
export function isNonStructural(schema: unknown): boolean {
  if (!isProps(schema)) return false;
  return newStructuralError(schema) !== undefined || validateStructural(schema, '').length > 0;
}
