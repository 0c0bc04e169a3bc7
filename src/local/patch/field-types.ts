// How each list and object of a kind merges, in one table keyed by path: the `patchStrategy`/
// `patchMergeKey` tags of the built-in API types (which strategic merge patch follows) and
// their `listType`/`listMapKey` markers (which server-side apply follows, and which the API
// server derives from the same tags), plus the reading of a CRD schema's x-kubernetes-*
// extensions into the same shape. The vocabulary only: each built-in kind's table is in its
// strategy (kinds/), and kind-schema.ts merges and walks them.
import { isObject } from './util.js';

/**
 * The merge semantics of one field. Lists are atomic unless marked; objects are structs
 * (their fields are named, not tracked as items) unless marked.
 */
export type FieldType =
  /** Replaced whole by strategic merge patch; owned whole by apply. */
  | { readonly list: 'atomic' }
  /** Scalars merged by value (`patchStrategy:"merge"` without a key; `v:"x"` ownership). */
  | { readonly list: 'set' }
  /** Items merged by key (`patchMergeKey`, `x-kubernetes-list-map-keys`; `k:{...}` ownership). */
  | { readonly list: 'map'; readonly keys: readonly string[] }
  /**
   * A struct. `alwaysPresent` marks a non-pointer Go struct field of a built-in kind: it
   * exists even when empty, so creating it is not a change of its own.
   */
  | { readonly object: 'struct'; readonly alwaysPresent?: boolean }
  /** additionalProperties: keys are items, owned one by one. */
  | { readonly object: 'map' }
  /** x-kubernetes-map-type: atomic. */
  | { readonly object: 'atomic' }
  /** x-kubernetes-preserve-unknown-fields without properties: nested objects are maps, lists atomic. */
  | { readonly object: 'deduced' };

/**
 * Field types keyed by path: field names joined by `.`, `[]` for the items of a list, `*`
 * for the values of a map (`spec.endpoints[].ports`, `spec.attributes.*.tags`).
 */
export type ListTypeInfo = Readonly<Record<string, FieldType>>;

/** `listType=atomic`, or no patch strategy: a list replaced and owned whole. */
export const ATOMIC = { list: 'atomic' } as const;
/** `patchStrategy:"merge"` without a key / `listType=set`. */
export const SET = { list: 'set' } as const;
/** A Go map (`additionalProperties`): keys are items. */
export const MAP = { object: 'map' } as const;
/** A non-pointer struct field of a built-in kind (see FieldType's `alwaysPresent`). */
export const STRUCT = { object: 'struct', alwaysPresent: true } as const;
/** `patchMergeKey` / `listType=map` with these `listMapKey`s. */
export const byKey = (...keys: string[]) => ({ list: 'map', keys }) as const;

/** The path of field `name` below `path`, as the tables key it. */
export const joinPath = (path: string, name: string) => (path === '' ? name : `${path}.${name}`);

/**
 * The field types a CRD's openAPIV3Schema declares: `x-kubernetes-list-type` (`map` with
 * `x-kubernetes-list-map-keys`, `set`, `atomic`), `x-kubernetes-map-type`,
 * `additionalProperties` and `x-kubernetes-preserve-unknown-fields`.
 */
export function fieldTypesFromSchema(openAPIV3Schema: unknown): ListTypeInfo {
  const out: Record<string, FieldType> = {};
  const walk = (node: unknown, path: string) => {
    if (!isObject(node)) return;
    const listType = node['x-kubernetes-list-type'];
    if (node.type === 'array' || node.items !== undefined) {
      if (listType === 'map') {
        const keys = node['x-kubernetes-list-map-keys'];
        out[path] = byKey(
          ...(Array.isArray(keys) ? keys.filter((k): k is string => typeof k === 'string') : []),
        );
      } else if (listType === 'set') {
        out[path] = SET;
      } else if (path !== '') {
        out[path] = ATOMIC;
      }
      walk(node.items, `${path}[]`);
      return;
    }
    const properties = isObject(node.properties) ? node.properties : undefined;
    if (node['x-kubernetes-map-type'] === 'atomic') {
      out[path] = { object: 'atomic' };
      return;
    }
    if (isObject(node.additionalProperties)) {
      out[path] = MAP;
      walk(node.additionalProperties, joinPath(path, '*'));
      return;
    }
    if (
      node['x-kubernetes-preserve-unknown-fields'] === true &&
      properties === undefined &&
      path !== ''
    ) {
      out[path] = { object: 'deduced' };
      return;
    }
    for (const [name, child] of Object.entries(properties ?? {})) {
      // The server's own ObjectMeta schema governs metadata, whatever the CRD says.
      if (path === '' && name === 'metadata') continue;
      walk(child, joinPath(path, name));
    }
  };
  walk(openAPIV3Schema, '');
  return out;
}
