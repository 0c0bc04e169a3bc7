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
  | {
      readonly list: 'map';
      readonly keys: readonly string[];
      /**
       * A key field's schema default, which stands in for it when an item omits it
       * (structured-merge-diff reads the OpenAPI `default`: ContainerPort.protocol is TCP).
       */
      readonly keyDefaults?: Readonly<Record<string, string>>;
    }
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
/** Ports: keyed by number and protocol, whose OpenAPI default (`+default="TCP"`) is TCP. */
export const byPortAndProtocol = (port: string) =>
  ({ list: 'map', keys: [port, 'protocol'], keyDefaults: { protocol: 'TCP' } }) as const;

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
        const raw = node['x-kubernetes-list-map-keys'];
        const keys = Array.isArray(raw)
          ? raw.filter((k): k is string => typeof k === 'string')
          : [];
        // A key field's default stands in for it where an item omits it (structured-merge-diff).
        const item =
          isObject(node.items) && isObject(node.items.properties) ? node.items.properties : {};
        const keyDefaults: Record<string, string> = {};
        for (const key of keys) {
          const field = item[key];
          const value = isObject(field) ? field.default : undefined;
          if (typeof value === 'string' || typeof value === 'number')
            keyDefaults[key] = String(value);
        }
        out[path] =
          Object.keys(keyDefaults).length > 0 ? { list: 'map', keys, keyDefaults } : byKey(...keys);
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
