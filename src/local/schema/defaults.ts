// The defaults of a CRD schema as apiextensions-apiserver checks them when the CRD is written
// (pkg/apiserver/schema/defaulting/validation.go, ValidateDefaults): each default must
// already be pruned and must pass the schema of its own node, embedded resources' TypeMeta
// included. The root counts as an embedded resource; defaults under a resource's metadata,
// apiVersion or kind are checked against the schema only.
import { childPath, type FieldIssue, invalid, keyPath } from './field-errors.js';
import { flag, hasDefault, items, type Props, schemaMap } from './props.js';
import { compileSchemaNodes, type SchemaNodes } from './validate.js';

const META_FIELDS = new Set(['metadata', 'apiVersion', 'kind']);

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => sameJson(v, b[i]));
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && sameJson((a as Props)[k], (b as Props)[k]));
}

function walk(
  nodes: SchemaNodes,
  s: Props,
  path: string,
  isResource: boolean,
  insideMeta: boolean,
  requirePruned: boolean,
  out: FieldIssue[],
): void {
  const resource = isResource || flag(s, 'x-kubernetes-embedded-resource');
  const inMeta = resource ? false : insideMeta;
  if (hasDefault(s)) {
    const value = s.default;
    const at = childPath(path, 'default');
    if (!inMeta && requirePruned && !sameJson(nodes.prune(s, value, resource), value))
      out.push(invalid(at, value, 'must not have unknown fields'));
    out.push(...nodes.issues(s, value, at, resource && !inMeta));
  }
  // additionalProperties is not followed: defaults are forbidden there.
  const item = items(s)?.schema;
  if (item !== undefined)
    walk(nodes, item, childPath(path, 'items'), false, inMeta, requirePruned, out);
  for (const [name, child] of schemaMap(s, 'properties')) {
    walk(
      nodes,
      child,
      keyPath(childPath(path, 'properties'), name),
      false,
      inMeta || (resource && META_FIELDS.has(name)),
      requirePruned,
      out,
    );
  }
}

/** ValidateDefaults(path, schema, isResourceRoot: true, requirePrunedDefaults). */
export function defaultIssues(root: Props, path: string, requirePruned = true): FieldIssue[] {
  const out: FieldIssue[] = [];
  walk(compileSchemaNodes(root), root, path, true, false, requirePruned, out);
  return out;
}
