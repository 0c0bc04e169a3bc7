// The estimated cost of a CRD version's x-kubernetes-validations, refused at create and update
// as apiextensions-apiserver refuses it (validation.go: getExpressionCost, getCostErrorMessage,
// CELSchemaContext and TotalCost): each rule's static estimate (src/cel/estimate.ts, with the
// sizes SchemaDeclType gives each node: maxItems, maxProperties, maxLength, else what fits in a
// 3 MiB request) times how many times the rule can run (the product of maxItems/maxProperties
// above it, else what fits in a request), against StaticEstimatedCostLimit per rule and
// StaticEstimatedCRDCostLimit for the whole schema.
import { estimateCost, MAX_ESTIMATE, type SizedType } from '../../cel/index.js';
import { ruleCompileError } from './cel-rules.js';
import { escapeProperty } from './cel-values.js';
import { childPath, type FieldIssue, forbidden, indexPath, keyPath } from './field-errors.js';
import { additionalProperties, isProps, items, type Props, schemaMap, str } from './props.js';

/** The largest static cost one expression may have (StaticEstimatedCostLimit). */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** The largest total of a schema's rules (StaticEstimatedCRDCostLimit). */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
/** celconfig.MaxRequestSizeBytes: what sizes are estimated from when the schema bounds nothing. */
const MAX_REQUEST_BYTES = 3 * 1024 * 1024;
/** How long a duration, date or date-time string can be in JSON (MaxDurationSizeJSON and kin). */
const MAX_TIME_STRING = 32;

/** A schema node as CEL's sizes see it (apiserver's DeclType): its size and its children. */
interface Decl extends SizedType {
  /** MinSerializedSize: the fewest bytes its JSON can take. */
  readonly minSize: number;
}

const scalar = (minSize: number): Decl => ({
  kind: 'scalar',
  maxElements: 0,
  minSize,
  field: () => undefined,
  elem: undefined,
  key: undefined,
});

/** A map's key: DeclType StringType, which carries no bound of its own. */
const MAP_KEY: Decl = { ...scalar(2), kind: 'string' };

/** SchemaDeclType: the CEL type of a structural schema node, with its sizes. */
export function declType(s: Props): Decl | undefined {
  if (s['x-kubernetes-int-or-string'] === true) {
    return { ...scalar(1), kind: 'dyn', maxElements: MAX_REQUEST_BYTES - 2 };
  }
  const type = str(s, 'type');
  switch (type) {
    case 'array': {
      const item = items(s)?.schema;
      const elem = item === undefined ? undefined : declType(item);
      if (elem === undefined) return undefined;
      const maxItems =
        bound(s.maxItems) ?? Math.floor((MAX_REQUEST_BYTES - 2) / (elem.minSize + 1));
      return {
        kind: 'list',
        maxElements: maxItems,
        minSize: 2,
        field: () => undefined,
        elem,
        key: undefined,
      };
    }
    case 'object': {
      const additional = additionalProperties(s)?.schema;
      if (additional !== undefined) {
        const elem = declType(additional);
        if (elem === undefined) return undefined;
        const maxProperties =
          bound(s.maxProperties) ?? Math.floor((MAX_REQUEST_BYTES - 2) / (elem.minSize + 6));
        return {
          kind: 'map',
          maxElements: maxProperties,
          minSize: 2,
          field: () => undefined,
          elem,
          key: MAP_KEY,
        };
      }
      const fields = new Map<string, Decl>();
      for (const [name, child] of schemaMap(s, 'properties')) {
        const escaped = escapeProperty(name);
        const decl = declType(child);
        if (escaped !== undefined && decl !== undefined) fields.set(escaped, decl);
      }
      if (fields.size === 0 && s['x-kubernetes-preserve-unknown-fields'] === true) {
        // Unknown content: a dyn whose size nothing bounds.
        return { ...scalar(2), kind: 'dyn', maxElements: MAX_REQUEST_BYTES - 2 };
      }
      return {
        kind: 'object',
        maxElements: 0,
        minSize: 2,
        field: (name) => fields.get(name),
        elem: undefined,
        key: undefined,
      };
    }
    case 'string': {
      const format = str(s, 'format');
      if (format === 'byte') {
        return {
          ...scalar(2),
          kind: 'bytes',
          maxElements: bound(s.maxLength) ?? MAX_REQUEST_BYTES - 2,
        };
      }
      if (format === 'duration' || format === 'date' || format === 'date-time') {
        return { ...scalar(2), maxElements: MAX_TIME_STRING };
      }
      // maxLength counts code points, up to 4 bytes each.
      const maxLength = bound(s.maxLength);
      const enumLength = Array.isArray(s.enum)
        ? Math.max(0, ...s.enum.map((v) => (typeof v === 'string' ? Buffer.byteLength(v) : 0)))
        : undefined;
      return {
        ...scalar(2),
        kind: 'string',
        maxElements:
          maxLength !== undefined ? maxLength * 4 : (enumLength ?? MAX_REQUEST_BYTES - 2),
      };
    }
    case 'boolean':
      return scalar(4);
    case 'integer':
    case 'number':
      return scalar(1);
    default:
      if (s['x-kubernetes-preserve-unknown-fields'] === true) {
        return { ...scalar(1), kind: 'dyn', maxElements: MAX_REQUEST_BYTES - 2 };
      }
      return undefined;
  }
}

function bound(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.floor(v)) : undefined;
}

/** The static estimate of one rule and of its messageExpression at a node. */
interface Observed {
  readonly path: string;
  readonly cost: number;
}

/**
 * The cost refusals of one version's openAPIV3Schema at `path`: each rule whose estimate times
 * its cardinality exceeds the per-expression limit, then, when the schema's total exceeds the
 * CRD limit, the (up to four) rules that contribute most and the schema itself.
 */
export function celCostIssues(root: Props, path: string): FieldIssue[] {
  const out: FieldIssue[] = [];
  const observed: Observed[] = [];
  visit(root, path, 1, out, observed);
  let total = 0;
  for (const o of observed) total = Math.min(MAX_ESTIMATE, total + o.cost);
  if (total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    const expensive = observed
      .filter((o) => o.cost >= STATIC_ESTIMATED_CRD_COST_LIMIT / 100)
      .sort((a, b) => b.cost - a.cost)
      .slice(0, 4);
    for (const o of expensive) {
      out.push(
        forbidden(
          o.path,
          'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema',
        ),
      );
    }
    out.push(
      forbidden(
        path,
        costMessage(
          'x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema',
          total,
          STATIC_ESTIMATED_CRD_COST_LIMIT,
        ),
      ),
    );
  }
  return out;
}

/** `cardinality`: how many times a value at this node can occur (undefined: unbounded). */
function visit(
  s: Props,
  path: string,
  cardinality: number | undefined,
  out: FieldIssue[],
  observed: Observed[],
): void {
  const rules = Array.isArray(s['x-kubernetes-validations']) ? s['x-kubernetes-validations'] : [];
  if (rules.length > 0) {
    const decl = declType(s);
    const variables = { self: decl, oldSelf: decl };
    rules.forEach((raw, i) => {
      const rule = isProps(raw) ? raw : {};
      const at = indexPath(childPath(path, 'x-kubernetes-validations'), i);
      const text = str(rule, 'rule');
      // A rule that does not compile costs nothing (its error is reported already).
      if (text.trim() !== '' && ruleCompileError(text) === undefined) {
        const maxCost = estimateCost(text, variables) ?? 0;
        // Unbounded above: as many as the smallest value of this node fits in a request.
        const times = cardinality ?? Math.floor(MAX_REQUEST_BYTES / ((decl?.minSize ?? 1) + 1));
        const cost = maxCost === 0 ? 0 : Math.min(MAX_ESTIMATE, maxCost * times);
        const rulePath = childPath(at, 'rule');
        if (cost > STATIC_ESTIMATED_COST_LIMIT) {
          out.push(
            forbidden(
              rulePath,
              costMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT),
            ),
          );
        }
        observed.push({ path: rulePath, cost });
      }
      const messageExpression = str(rule, 'messageExpression');
      if (messageExpression.trim() !== '' && ruleCompileError(messageExpression) === undefined) {
        const cost = estimateCost(messageExpression, variables) ?? 0;
        const messagePath = childPath(at, 'messageExpression');
        if (cost > STATIC_ESTIMATED_COST_LIMIT) {
          out.push(
            forbidden(
              messagePath,
              costMessage('estimated messageExpression cost', cost, STATIC_ESTIMATED_COST_LIMIT),
            ),
          );
        }
        observed.push({ path: messagePath, cost });
      }
    });
  }
  // extractMaxElements: how many children each value of this node has room for.
  const times = (n: number | undefined) =>
    cardinality === undefined || n === undefined
      ? undefined
      : Math.min(MAX_ESTIMATE, cardinality * n);
  const additional = additionalProperties(s);
  if (additional?.schema !== undefined) {
    visit(
      additional.schema,
      childPath(path, 'additionalProperties'),
      times(bound(s.maxProperties)),
      out,
      observed,
    );
  }
  for (const [name, child] of schemaMap(s, 'properties')) {
    const perValue = additional !== undefined ? bound(s.maxProperties) : 1;
    visit(child, keyPath(childPath(path, 'properties'), name), times(perValue), out, observed);
  }
  const list = items(s);
  if (list?.schema !== undefined) {
    visit(list.schema, childPath(path, 'items'), times(bound(s.maxItems)), out, observed);
  }
}

/** getCostErrorMessage: by how much a cost exceeds its limit, with kube's advice. */
export function costMessage(name: string, cost: number, limit: number): string {
  const exceed = cost / limit;
  const factor =
    exceed > 100
      ? 'more than 100x'
      : exceed < 1.5
        ? `${exceed.toFixed(6)}x`
        : `${exceed.toFixed(1)}x`;
  return `${name} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
