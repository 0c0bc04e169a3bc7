// structured-merge-diff's walks over an object with its field types: the set of fields a
// value sets (ToFieldSet), what changed between two values (Compare), the merge of an
// applied configuration into the live object (Merge) and the removal of owned fields.

import {
  type FieldPath,
  FieldSet,
  FieldTree,
  fieldElement,
  keyElement,
  type PathElement,
  renderPath,
  valueElement,
} from './fields.js';
import type { Schema, SchemaPos } from './kind-schema.js';
import { deepEqual, isObject, type Json, type JsonObject, put } from './util.js';

/** A value that does not fit its field types (an associative list item without its key). */
export class TypedError extends Error {}

const isEmptyObject = (v: Json | undefined) => isObject(v) && Object.keys(v).length === 0;
const isEmptyList = (v: Json | undefined) => Array.isArray(v) && v.length === 0;

/** The path element of a list item: `v:` for sets, `k:` for maps keyed by fields. */
export function itemElement(
  schema: Schema,
  pos: SchemaPos,
  list: FieldPath,
  index: number,
  item: Json,
): PathElement {
  const kind = schema.listKind(pos);
  if (kind === 'set') return valueElement(item);
  if (kind === 'atomic') throw new TypedError('atomic lists have no items');
  if (!isObject(item)) {
    throw new TypedError(
      `${renderPath(list)}: element ${index}: expected map, got ${JSON.stringify(item)}`,
    );
  }
  const fields = kind.keys.map((key) => {
    const value = Object.hasOwn(item, key) ? item[key] : kind.keyDefaults?.[key];
    if (value === undefined) {
      throw new TypedError(
        `${renderPath(list)}: element ${index}: associative list with keys has an element that omits key field "${key}" (and doesn't have default value)`,
      );
    }
    return [key, value] as const;
  });
  return keyElement(fields);
}

/** The items of a list by path element; a repeated element keeps its first occurrence. */
function indexItems(schema: Schema, pos: SchemaPos, path: FieldPath, list: readonly Json[]) {
  const order: PathElement[] = [];
  const items = new Map<PathElement, Json>();
  list.forEach((item, i) => {
    const pe = itemElement(schema, pos, path, i, item);
    if (items.has(pe)) return;
    items.set(pe, item);
    order.push(pe);
  });
  return { order, items };
}

/** Every leaf field and item a value mentions (typed.TypedValue.ToFieldSet). */
export function toFieldSet(schema: Schema, value: JsonObject): FieldSet {
  const out: FieldPath[] = [];
  const walk = (pos: SchemaPos, path: FieldPath, v: Json) => {
    if (isObject(v)) {
      const kind = schema.objectKind(pos);
      if (kind === 'atomic') {
        out.push(path);
        return;
      }
      for (const [key, child] of Object.entries(v)) {
        const childPath = [...path, fieldElement(key)];
        walk(schema.field(pos, key), childPath, child);
        // A null or an empty object is a field set to that; a map's keys are items.
        if (child === null || isEmptyObject(child) || kind === 'map' || kind === 'deduced')
          out.push(childPath);
      }
    } else if (Array.isArray(v)) {
      if (schema.listKind(pos) === 'atomic') {
        out.push(path);
        return;
      }
      const itemPos = schema.item(pos);
      v.forEach((item, i) => {
        const itemPath = [...path, itemElement(schema, pos, path, i, item)];
        walk(itemPos, itemPath, item);
        out.push(itemPath);
      });
    } else {
      out.push(path);
    }
  };
  walk(schema.root, [], value);
  return FieldSet.of(out);
}

export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

/**
 * What changed from `lhs` to `rhs` (typed.TypedValue.Compare): leaves added, modified or
 * removed, plus every map, list or item that appeared or disappeared as a whole.
 */
export function compare(schema: Schema, lhs: JsonObject, rhs: JsonObject): Comparison {
  const added: FieldPath[] = [];
  const modified: FieldPath[] = [];
  const removed: FieldPath[] = [];
  const leaf = (path: FieldPath, l: Json | undefined, r: Json | undefined) => {
    if (l === undefined) added.push(path);
    else if (r === undefined) removed.push(path);
    else if (!deepEqual(l, r)) modified.push(path);
  };
  const container = (path: FieldPath, l: Json | undefined, r: Json | undefined) => {
    if (path.length === 0) return;
    if (l === undefined) added.push(path);
    else if (r === undefined) removed.push(path);
  };
  const walk = (pos: SchemaPos, path: FieldPath, l0: Json | undefined, r0: Json | undefined) => {
    let l = l0;
    let r = r0;
    if (schema.alwaysPresent(pos)) {
      l ??= {};
      r ??= {};
    }
    if (l === undefined && r === undefined) return;
    if ((l === undefined || isObject(l)) && (r === undefined || isObject(r))) {
      const bothEmpty =
        (l === undefined || isEmptyObject(l)) && (r === undefined || isEmptyObject(r));
      if (schema.objectKind(pos) === 'atomic' || bothEmpty) return leaf(path, l, r);
      const field = (key: string, lv: Json | undefined, rv: Json | undefined) => {
        // An unchanged scalar reports nothing: skip building its path (most fields are these).
        if (lv === rv && (typeof lv !== 'object' || lv === null)) return;
        walk(schema.field(pos, key), [...path, fieldElement(key)], lv, rv);
      };
      if (l !== undefined) {
        for (const key of Object.keys(l)) {
          field(key, l[key], r !== undefined && Object.hasOwn(r, key) ? r[key] : undefined);
        }
      }
      if (r !== undefined) {
        for (const key of Object.keys(r)) {
          if (l === undefined || !Object.hasOwn(l, key)) field(key, undefined, r[key]);
        }
      }
      return container(path, l, r);
    }
    if ((l === undefined || Array.isArray(l)) && (r === undefined || Array.isArray(r))) {
      const bothEmpty = (l === undefined || isEmptyList(l)) && (r === undefined || isEmptyList(r));
      if (schema.listKind(pos) === 'atomic' || bothEmpty) return leaf(path, l, r);
      const left = indexItems(schema, pos, path, l ?? []);
      const right = indexItems(schema, pos, path, r ?? []);
      const itemPos = schema.item(pos);
      const order = [...left.order, ...right.order.filter((pe) => !left.items.has(pe))];
      for (const pe of order) walk(itemPos, [...path, pe], left.items.get(pe), right.items.get(pe));
      return container(path, l, r);
    }
    leaf(path, l, r);
  };
  walk(schema.root, [], lhs, rhs);
  return {
    added: FieldSet.of(added),
    modified: FieldSet.of(modified),
    removed: FieldSet.of(removed),
  };
}

/**
 * What compare({}, value) reports added or modified, as a tree: the fields a create sets.
 * The same walk as compare's with nothing on the left, for the one write that needs no
 * removed set and no set algebra; throws TypedError where compare would.
 */
export function createdFields(schema: Schema, value: JsonObject): FieldTree {
  const root = new FieldTree();
  // `had` says the left side is {} rather than missing: at the root (compare starts from {})
  // and where a struct is always present, as compare's walk puts it.
  const walk = (pos: SchemaPos, path: FieldPath, node: FieldTree, r0: Json | undefined) => {
    const had = path.length === 0 || schema.alwaysPresent(pos);
    const r = had ? (r0 ?? {}) : r0;
    if (r === undefined) return;
    if (isObject(r)) {
      const empty = isEmptyObject(r);
      if (schema.objectKind(pos) === 'atomic' || empty) {
        // A leaf: added when missing before, modified when it differs from {}.
        if (!had || !empty) node.member = true;
        return;
      }
      for (const key of Object.keys(r)) {
        const pe = fieldElement(key);
        walk(schema.field(pos, key), [...path, pe], node.child(pe), r[key]);
      }
      if (!had) node.member = true;
      return;
    }
    if (Array.isArray(r) && !had) {
      if (schema.listKind(pos) !== 'atomic' && r.length > 0) {
        const { order, items } = indexItems(schema, pos, path, r);
        const itemPos = schema.item(pos);
        for (const pe of order) walk(itemPos, [...path, pe], node.child(pe), items.get(pe));
      }
      node.member = true;
      return;
    }
    // A scalar, or a value where {} stood: added or modified either way.
    node.member = true;
  };
  walk(schema.root, [], root, value);
  // The root is never a member of a set (FieldSet.of drops the empty path).
  root.member = false;
  return root;
}

/**
 * The applied configuration merged into the live object (typed.TypedValue.Merge): the
 * configuration's values win, objects and granular lists merge, atomic ones are replaced.
 */
export function merge(schema: Schema, live: JsonObject, config: JsonObject): JsonObject {
  const walk = (
    pos: SchemaPos,
    path: FieldPath,
    l: Json | undefined,
    r: Json | undefined,
  ): Json | undefined => {
    if (r === undefined) return l;
    // An applied null unsets the field, as decoding the merged object drops it.
    if (r === null) return undefined;
    if (l === undefined) return dropNulls(r);
    if (isObject(l) && isObject(r)) {
      if (schema.objectKind(pos) === 'atomic' || (isEmptyObject(l) && isEmptyObject(r))) {
        return dropNulls(r);
      }
      const out: JsonObject = {};
      for (const key of Object.keys(l)) {
        const value = Object.hasOwn(r, key)
          ? walk(schema.field(pos, key), [...path, fieldElement(key)], l[key], r[key])
          : l[key];
        if (value !== undefined) put(out, key, value);
      }
      for (const key of Object.keys(r)) {
        const value = r[key] as Json;
        if (!Object.hasOwn(l, key) && value !== null) put(out, key, dropNulls(value));
      }
      return out;
    }
    if (Array.isArray(l) && Array.isArray(r)) {
      if (schema.listKind(pos) === 'atomic' || (l.length === 0 && r.length === 0)) {
        return dropNulls(r);
      }
      const itemPos = schema.item(pos);
      return mergeOrder(
        indexItems(schema, pos, path, l),
        indexItems(schema, pos, path, r),
        (pe, li, ri) => walk(itemPos, [...path, pe], li, ri),
      );
    }
    return dropNulls(r);
  };
  return (walk(schema.root, [], live, config) ?? {}) as JsonObject;
}

type Indexed = ReturnType<typeof indexItems>;

/**
 * The order of a merged list, as structured-merge-diff's merging walker builds it: live
 * items keep their places, applied items come in the applied order, shared items where
 * the applied list puts them relative to each other.
 */
function mergeOrder(
  lhs: Indexed,
  rhs: Indexed,
  mergeItem: (pe: PathElement, l: Json | undefined, r: Json | undefined) => Json | undefined,
): Json[] {
  const out: Json[] = [];
  const emit = (pe: PathElement, l: Json | undefined, r: Json | undefined) => {
    const v = mergeItem(pe, l, r);
    if (v !== undefined) out.push(v);
  };
  const shared = rhs.order.filter((pe) => lhs.items.has(pe));
  let nextShared = shared.shift();
  let li = 0;
  let ri = 0;
  while (li < lhs.order.length || ri < rhs.order.length) {
    const lpe = lhs.order[li];
    const rpe = rhs.order[ri];
    if (lpe !== undefined && rpe !== undefined) {
      if (lpe === rpe) {
        emit(lpe, lhs.items.get(lpe), rhs.items.get(rpe));
        li++;
        ri++;
        nextShared = shared.shift();
        continue;
      }
      if (rhs.items.has(lpe) && nextShared !== undefined && nextShared !== lpe) {
        li++;
        continue;
      }
    }
    if (lpe !== undefined && !rhs.items.has(lpe)) {
      emit(lpe, lhs.items.get(lpe), undefined);
      li++;
      continue;
    }
    if (rpe !== undefined) {
      emit(rpe, lhs.items.get(rpe), rhs.items.get(rpe));
      ri++;
      if (nextShared === rpe) nextShared = shared.shift();
    } else {
      // Only shared live items are left, and each was already emitted from the applied side.
      li++;
    }
  }
  return out;
}

/**
 * The value without the given fields and items (typed.TypedValue.RemoveItems). A map or
 * list the removal empties goes too, as the server drops the null it leaves behind.
 */
export function removeFields(schema: Schema, value: JsonObject, fields: FieldSet): JsonObject {
  const walk = (
    pos: SchemaPos,
    path: FieldPath,
    v: Json,
    set: readonly FieldPath[],
  ): Json | undefined => {
    if (isObject(v)) {
      if (schema.objectKind(pos) === 'atomic') return v;
      const out: JsonObject = {};
      for (const [key, child] of Object.entries(v)) {
        const pe = fieldElement(key);
        const under = set.filter((p) => p[path.length] === pe);
        if (under.some((p) => p.length === path.length + 1)) continue;
        if (under.length === 0) {
          put(out, key, child);
          continue;
        }
        const kept = walk(schema.field(pos, key), [...path, pe], child, under);
        if (kept !== undefined) put(out, key, kept);
      }
      return Object.keys(out).length === 0 ? undefined : out;
    }
    if (Array.isArray(v)) {
      if (schema.listKind(pos) === 'atomic') return v;
      const itemPos = schema.item(pos);
      const out: Json[] = [];
      v.forEach((item, i) => {
        const pe = itemElement(schema, pos, path, i, item);
        const under = set.filter((p) => p[path.length] === pe);
        if (under.some((p) => p.length === path.length + 1)) return;
        if (under.length === 0) {
          out.push(item);
          return;
        }
        const kept = walk(itemPos, [...path, pe], item, under);
        if (kept !== undefined) out.push(kept);
      });
      return out.length === 0 ? undefined : out;
    }
    return v;
  };
  if (fields.isEmpty()) return value;
  return (walk(schema.root, [], value, fields.paths()) ?? {}) as JsonObject;
}

/** Drops object members that are null, as decoding into a kind does. */
export function dropNulls(v: Json): Json {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (isObject(v)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) if (x !== null) put(out, k, dropNulls(x));
    return out;
  }
  return v;
}
