// The official schemas of the built-in kinds stored as plain objects (Pod, Service,
// Deployment...): schemas.json, generated from the Kubernetes OpenAPI spec by
// scripts/generate-builtin-schemas.ts (which says where from, and why into the repo). Each
// kind's strategy marks its lists here with its field types (kinds/stored-kind.ts), so that the
// tree the object store prunes, type-checks and strict-decodes by (as it does a custom resource
// by its CRD's schema) and the definitions the OpenAPI documents publish say what the patch
// engines do.
import type { FieldType } from '../patch/field-types.js';
import generated from './schemas.json' with { type: 'json' };

type Schema = Record<string, unknown>;

const { kinds, definitions } = generated as unknown as {
  kinds: Record<string, string>;
  definitions: Record<string, Schema>;
};

const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** The definition name of a kind (`apps/v1` + `Deployment` → `io.k8s.api.apps.v1.Deployment`). */
export function builtinDefinitionName(apiVersion: string, kind: string): string | undefined {
  const key = `${apiVersion}/${kind}`;
  return Object.hasOwn(kinds, key) ? kinds[key] : undefined;
}

const deref = (node: Schema | undefined): Schema | undefined => {
  const ref = node?.$ref;
  return typeof ref === 'string' ? definitions[ref] : node;
};

/**
 * Marks the list at `path` of a kind's definitions (`spec.template.spec.containers`, `[]` for
 * items, `*` for map values) as its Go type's tags mark it: `x-kubernetes-list-type` and
 * `-list-map-keys` (server-side apply), `-patch-strategy` and `-patch-merge-key` (strategic
 * merge patch, kubectl's client-side apply). Definitions are shared between kinds (PodSpec);
 * every kind marks them alike, as the Go type is one.
 */
export function markBuiltinField(
  apiVersion: string,
  kind: string,
  path: string,
  fieldType: FieldType,
): void {
  const root = builtinDefinitionName(apiVersion, kind);
  let node: Schema | undefined = root === undefined ? undefined : definitions[root];
  for (const segment of path.split('.')) {
    const [name, ...items] = segment.split('[]');
    const at: Schema | undefined = deref(node);
    node =
      name === '*'
        ? (at?.additionalProperties as Schema | undefined)
        : (at?.properties as Record<string, Schema> | undefined)?.[name ?? ''];
    for (let i = 0; i < items.length; i++) node = deref(node)?.items as Schema | undefined;
  }
  if (node === undefined) throw new Error(`builtin-schemas: no ${path} in ${kind}`);
  if (!('list' in fieldType)) return;
  if (fieldType.list === 'map') {
    Object.assign(node, {
      'x-kubernetes-list-map-keys': fieldType.keys,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': fieldType.keys[0],
      'x-kubernetes-patch-strategy': 'merge',
    });
  } else if (fieldType.list === 'set') {
    Object.assign(node, {
      'x-kubernetes-list-type': 'set',
      'x-kubernetes-patch-strategy': 'merge',
    });
  } else {
    node['x-kubernetes-list-type'] = 'atomic';
  }
}

/**
 * A kind's schema with every reference replaced by its definition, as the schema compiler
 * (schema/validate.ts) takes a CRD's: one tree per kind. Their definitions hold no cycle
 * (none of these kinds nests itself); one would be a generator's bug, and throws.
 */
export function builtinSchema(apiVersion: string, kind: string): Schema | undefined {
  const name = builtinDefinitionName(apiVersion, kind);
  return name === undefined ? undefined : (inline({ $ref: name }, new Set()) as Schema);
}

function inline(node: unknown, within: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((n) => inline(n, within));
  if (node === null || typeof node !== 'object') return node;
  const ref = (node as Schema).$ref;
  if (typeof ref === 'string') {
    const target = definitions[ref];
    if (target === undefined || within.has(ref))
      throw new Error(`builtin-schemas: ${ref} is missing or nests itself`);
    within.add(ref);
    const out = inline(target, within);
    within.delete(ref);
    return out;
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inline(v, within)]));
}

/**
 * A kind's definition and every one it references, for an OpenAPI document: references written
 * by `refTo`, int-or-string fields referencing IntOrString as kube-openapi's do, and Quantity a
 * string in Swagger 2.0 (which has no oneOf), string or number in 3.0, as the spec says.
 */
export function builtinOpenApiDefinitions(
  apiVersion: string,
  kind: string,
  v2: boolean,
  refTo: (name: string) => string,
): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node === null || typeof node !== 'object') return node;
    const n = node as Schema;
    if (n['x-kubernetes-int-or-string'] === true) {
      out[INT_OR_STRING] = { type: 'string', format: 'int-or-string' };
      return { $ref: refTo(INT_OR_STRING) };
    }
    if (typeof n.$ref === 'string') {
      add(n.$ref);
      return { $ref: refTo(n.$ref) };
    }
    return Object.fromEntries(Object.entries(n).map(([k, v]) => [k, rewrite(v)]));
  };
  const add = (name: string) => {
    if (out[name] !== undefined) return;
    if (name === QUANTITY && v2) {
      out[name] = { type: 'string' };
      return;
    }
    out[name] = {};
    out[name] = rewrite(definitions[name]) as Schema;
  };
  const root = builtinDefinitionName(apiVersion, kind);
  if (root !== undefined) add(root);
  return out;
}
