// Strategic merge patch (application/strategic-merge-patch+json) for the built-in kinds, as
// k8s.io/apimachinery/pkg/util/strategicpatch applies it on the server: maps merge, lists
// merge by their patchMergeKey (or as sets) or are replaced, with the `$patch`,
// `$retainKeys`, `$setElementOrder/` and `$deleteFromPrimitiveList/` directives. A value put
// where nothing was is stored without its nulls and directives, which the server's typed
// decoding would drop. The library's errors the server does not classify (a list whose
// items differ in type, an item without its merge key...) are a 500 there; here they are the
// caller's 400, with the library's message (ADR 0003).
import { ApiError, badRequest } from '../types.js';
import type { ListTypeInfo } from './field-types.js';
import { Schema, type SchemaPos } from './kind-schema.js';
import { clone, goJsonKind, goValue, isObject, type Json, type JsonObject, put } from './util.js';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER = '$setElementOrder';

/** The server's mapping of strategicpatch errors (interpretStrategicMergePatchError). */
const badFormat = (what: string) => badRequest(`invalid patch format of ${what}`);
const noListOfLists = () =>
  new ApiError(
    422,
    'Invalid',
    'the server rejected our request due to an error in our request',
    {},
  );
/**
 * Errors kube-apiserver does not classify, and answers as a 500 with the library's message:
 * each comes from what the patch holds, so here it is the caller's 400.
 */
const internal = (message: string) => badRequest(message);

/** reflect.TypeOf(v) as the library's messages print it. */
function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  if (isObject(v)) return 'map[string]interface {}';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return goJsonKind(v);
}

const badArgType = (expected: string, actual: unknown) =>
  internal(`expected a ${expected}, but received a ${goTypeName(actual)}`);
const noMergeKey = (m: unknown, key: string) =>
  internal(`map: ${goValue(m)} does not contain declared merge key: ${key}`);
const badPatchType = (t: unknown, m: unknown) =>
  internal(`unknown patch type: ${goValue(t)} in map: ${goValue(m)}`);

/**
 * Applies a strategic merge patch to a built-in object. The field types default to the
 * kind's entry in the built-in table (plus ObjectMeta's); `fieldTypes` adds to them.
 */
export function applyStrategicMergePatch(
  live: object,
  patch: unknown,
  fieldTypes?: ListTypeInfo,
): object {
  if (patch === null) return clone(live);
  if (!isObject(patch)) {
    throw badRequest(
      `json: cannot unmarshal ${goJsonKind(patch)} into Go value of type map[string]interface {}`,
    );
  }
  const original = clone(live) as JsonObject;
  const schema = Schema.of(original.apiVersion, original.kind, fieldTypes);
  return new Merger(schema).mergeMap(original, clone(patch), schema.root);
}

type Kind = 'map' | 'scalar';

class Merger {
  constructor(private readonly schema: Schema) {}

  mergeMap(original: JsonObject, patch: JsonObject, pos: SchemaPos): JsonObject {
    if (Object.hasOwn(patch, DIRECTIVE)) {
      const directive = patch[DIRECTIVE];
      if (directive === 'replace') {
        delete patch[DIRECTIVE];
        return stored(patch) as JsonObject;
      }
      if (directive === 'delete') return {};
      throw badPatchType(directive, patch);
    }
    this.retainKeys(original, patch);
    this.setElementOrder(original, patch, pos);
    for (const [patchKey, patchV] of Object.entries(patch)) {
      let key = patchKey;
      let isDeleteList = false;
      if (patchKey.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
        key = extractKey(patchKey, DELETE_FROM_PRIMITIVE_LIST);
        isDeleteList = true;
      }
      if (patchV === null) {
        delete original[key];
        continue;
      }
      const originalV = Object.hasOwn(original, key) ? original[key] : undefined;
      if (originalV === undefined || sameType(originalV, patchV) === false) {
        // Nothing to merge with: the patch's value as sent, without its nulls.
        if (!isDeleteList) put(original, key, stored(patchV));
        continue;
      }
      const childPos = this.schema.field(pos, key);
      if (isObject(originalV) && isObject(patchV)) {
        const atomic = this.schema.objectKind(childPos) === 'atomic';
        put(original, key, atomic ? stored(patchV) : this.mergeMap(originalV, patchV, childPos));
      } else if (Array.isArray(originalV) && Array.isArray(patchV)) {
        put(original, key, this.mergeSliceHandler(originalV, patchV, childPos, isDeleteList));
      } else {
        put(original, key, patchV);
      }
    }
    return original;
  }

  private retainKeys(original: JsonObject, patch: JsonObject): void {
    if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
    const list = patch[RETAIN_KEYS];
    delete patch[RETAIN_KEYS];
    if (!Array.isArray(list)) throw badFormat('retainKeys');
    const keep = new Set<Json>(list);
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER))
        continue;
      if (!keep.has(k)) throw badFormat('retainKeys');
    }
    for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
  }

  /** `$setElementOrder/<list>`: merges that list now and orders it as the directive says. */
  private setElementOrder(original: JsonObject, patch: JsonObject, pos: SchemaPos): void {
    for (const key of Object.keys(patch)) {
      if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
      const order = patch[key];
      delete patch[key];
      if (!Array.isArray(order)) throw badArgType('[]interface {}', order);
      const listKey = extractKey(key, SET_ELEMENT_ORDER);
      const originalList = Object.hasOwn(original, listKey) ? original[listKey] : undefined;
      const patchList = Object.hasOwn(patch, listKey) ? patch[listKey] : undefined;
      if (originalList !== undefined && !Array.isArray(originalList))
        throw badArgType('[]interface {}', originalList);
      if (patchList !== undefined && !Array.isArray(patchList))
        throw badArgType('[]interface {}', patchList);
      const childPos = this.schema.field(pos, listKey);
      const mergeKey = this.mergeKeyOf(childPos);
      validateOrder(patchList ?? [], order, mergeKey ?? '');
      let merged: Json[];
      if (originalList !== undefined && patchList !== undefined) {
        merged = this.mergeSliceHandler(originalList, patchList, childPos, false);
      } else if (patchList !== undefined) {
        merged = stored(patchList) as Json[];
      } else if (originalList !== undefined) {
        merged = originalList;
      } else {
        continue;
      }
      if ((originalList ?? []).length + (patchList ?? []).length > 0) {
        const kind = elementKind(originalList ?? [], patchList ?? []);
        const [inOrder, serverOnly] = partition(merged, order, mergeKey ?? '', kind);
        merged = normalizeElementOrder(
          inOrder,
          serverOnly,
          order,
          originalList ?? [],
          mergeKey ?? '',
          kind,
        );
      }
      put(original, listKey, merged);
      delete patch[listKey];
    }
  }

  /** undefined: replaced whole; '': a set of scalars; otherwise the merge key. */
  private mergeKeyOf(pos: SchemaPos): string | undefined {
    const kind = this.schema.listKind(pos);
    if (kind === 'atomic') return undefined;
    return kind === 'set' ? '' : (kind.keys[0] ?? '');
  }

  private mergeSliceHandler(
    original: Json[],
    patch: Json[],
    pos: SchemaPos,
    isDeleteList: boolean,
  ): Json[] {
    const mergeKey = this.mergeKeyOf(pos);
    if (mergeKey === undefined) return stored(patch) as Json[];
    return this.mergeSlice(original, patch, pos, mergeKey, isDeleteList);
  }

  private mergeSlice(
    original0: Json[],
    patch0: Json[],
    pos: SchemaPos,
    mergeKey: string,
    isDeleteList: boolean,
  ): Json[] {
    if (original0.length === 0 && patch0.length === 0) return original0;
    const kind = elementKind(original0, patch0);
    let original = original0;
    let patch = patch0;
    let merged: Json[];
    if (kind === 'scalar') {
      if (isDeleteList) return original.filter((v) => !patch.includes(v));
      merged = deduplicateScalars([...original, ...patch]);
    } else {
      if (mergeKey === '') throw internal(`cannot merge lists without merge key for ${pos.path}`);
      [original, patch] = withoutSpecialElements(original, patch, mergeKey);
      merged = [...original];
      for (const item of patch) {
        const typed = item as JsonObject;
        if (!Object.hasOwn(typed, mergeKey)) throw noMergeKey(typed, mergeKey);
        const at = findByKey(merged, mergeKey, typed[mergeKey] as Json);
        if (at >= 0)
          merged[at] = this.mergeMap(clone(merged[at] as JsonObject), typed, this.schema.item(pos));
        else merged.push(stored(typed));
      }
    }
    const [inPatch, serverOnly] = partition(merged, patch, mergeKey, kind);
    return normalizeElementOrder(inPatch, serverOnly, patch, original, mergeKey, kind);
  }
}

function sameType(a: Json, b: Json): boolean {
  const t = (v: Json) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  return t(a) === t(b);
}

function extractKey(key: string, prefix: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw badFormat(prefix === SET_ELEMENT_ORDER ? 'setElementOrder list' : 'primitive list');
  }
  return key.slice(slash + 1);
}

/** The common kind of the lists' elements; lists of lists are refused. */
function elementKind(...lists: readonly (readonly Json[])[]): Kind {
  let first: string | undefined;
  for (const v of lists.flat()) {
    const t = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
    if (first === undefined) {
      first = t;
      if (t === 'array') throw noListOfLists();
    } else if (t !== first) {
      throw internal(`list element types are not identical: ${goValue(lists)}`);
    }
  }
  return first === 'object' ? 'map' : 'scalar';
}

/** `$patch: delete` items remove their match; `$patch: replace` makes the rest the list. */
function withoutSpecialElements(
  original: Json[],
  patch: Json[],
  mergeKey: string,
): [Json[], Json[]] {
  const rest: Json[] = [];
  let kept = original;
  let replace = false;
  for (const v of patch) {
    const item = v as JsonObject;
    if (!Object.hasOwn(item, DIRECTIVE)) {
      rest.push(v);
      continue;
    }
    switch (item[DIRECTIVE]) {
      case 'delete': {
        if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
        const key = item[mergeKey];
        kept = kept.filter((o, i) => {
          if (!isObject(o)) throw internal(`value for key ${i} is not a map`);
          return !(Object.hasOwn(o, mergeKey) && o[mergeKey] === key);
        });
        break;
      }
      case 'replace':
        replace = true;
        break;
      case 'merge':
        throw internal('merging lists cannot yet be specified in the patch');
      default:
        throw badPatchType(item[DIRECTIVE], item);
    }
  }
  return replace ? [rest.map(stored), []] : [kept, rest];
}

function findByKey(list: readonly Json[], mergeKey: string, value: Json): number {
  return list.findIndex((o, i) => {
    if (!isObject(o)) throw internal(`value for key ${i} is not a map`);
    return Object.hasOwn(o, mergeKey) && o[mergeKey] === value;
  });
}

/** Go's in-place de-duplication, which moves the last element into each duplicate's place. */
function deduplicateScalars(s0: Json[]): Json[] {
  const s = [...s0];
  let length = s.length - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (s[i] === s[j]) {
        s[j] = s[length] as Json;
        s.length = length;
        length--;
        j--;
      }
    }
  }
  return s;
}

const keyValue = (item: Json, mergeKey: string, kind: Kind): Json | undefined =>
  kind === 'map'
    ? isObject(item) && Object.hasOwn(item, mergeKey)
      ? item[mergeKey]
      : undefined
    : item;

function indexIn(list: readonly Json[], item: Json, mergeKey: string, kind: Kind): number {
  const v = keyValue(item, mergeKey, kind);
  return list.findIndex((x) => keyValue(x, mergeKey, kind) === v);
}

/** Splits items into those the list `by` has and those only the server has. */
function partition(
  items: readonly Json[],
  by: readonly Json[],
  mergeKey: string,
  kind: Kind,
): [Json[], Json[]] {
  const inBy: Json[] = [];
  const only: Json[] = [];
  for (const item of items) {
    if (kind === 'map') {
      if (!isObject(item)) throw badArgType('map[string]interface {}', item);
      if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
      findByKey(by, mergeKey, item[mergeKey] as Json) >= 0 ? inBy.push(item) : only.push(item);
    } else {
      by.includes(item) ? inBy.push(item) : only.push(item);
    }
  }
  return [inBy, only];
}

function validateOrder(patchList: readonly Json[], order: readonly Json[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  let items = patchList;
  if (mergeKey !== '') {
    items = patchList.filter((v) => {
      if (!isObject(v)) throw badArgType('map[string]interface {}', v);
      return v[DIRECTIVE] !== 'delete';
    });
  }
  const same = (l: Json, r: Json) => {
    if (mergeKey === '') return l === r;
    if (!isObject(l)) throw badArgType('map[string]interface {}', l);
    if (!isObject(r)) throw badArgType('map[string]interface {}', r);
    if (!Object.hasOwn(l, mergeKey)) throw noMergeKey(l, mergeKey);
    if (!Object.hasOwn(r, mergeKey)) throw noMergeKey(r, mergeKey);
    return l[mergeKey] === r[mergeKey];
  };
  let p = 0;
  let o = 0;
  while (p < items.length && o < order.length) {
    const item = items[p] as Json;
    if (isObject(item) && Object.hasOwn(item, DIRECTIVE)) {
      p++;
      continue;
    }
    if (same(item, order[o] as Json)) p++;
    o++;
  }
  if (p < items.length && o >= order.length) {
    throw internal(
      `The order in patch list:\n${goValue(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goValue(order)}\n`,
    );
  }
}

function normalizeSliceOrder(
  toSort: readonly Json[],
  order: readonly Json[],
  mergeKey: string,
  kind: Kind,
): Json[] {
  let items = [...toSort];
  let toDelete: Json[] = [];
  if (kind === 'map') {
    for (const item of [...toSort, ...order]) {
      if (!isObject(item)) throw badArgType('map[string]interface {}', item);
      if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
    }
    toDelete = items.filter((v) => isObject(v) && v[DIRECTIVE] === 'delete');
    items = items.filter((v) => !(isObject(v) && v[DIRECTIVE] === 'delete'));
  }
  const ranked = items.map((item, i) => ({ item, i, at: indexIn(order, item, mergeKey, kind) }));
  ranked.sort((a, b) => (a.at >= 0 && b.at >= 0 ? a.at - b.at : 0) || a.i - b.i);
  return [...ranked.map((r) => r.item), ...toDelete];
}

/**
 * Patch items in the patch's order, server-only items in the live order, interleaved by
 * where the live list had them (normalizeElementOrder and mergeSortedSlice).
 */
function normalizeElementOrder(
  patch: readonly Json[],
  serverOnly: readonly Json[],
  patchOrder: readonly Json[],
  serverOrder: readonly Json[],
  mergeKey: string,
  kind: Kind,
): Json[] {
  const right = normalizeSliceOrder(patch, patchOrder, mergeKey, kind);
  const left = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    const l = left[i];
    const r = right[j];
    if (l === undefined) {
      out.push(r as Json);
      j++;
    } else if (r === undefined) {
      out.push(l);
      i++;
    } else {
      const li = indexIn(serverOrder, l, mergeKey, kind);
      const ri = indexIn(serverOrder, r, mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) {
        out.push(l);
        i++;
      } else {
        out.push(r);
        j++;
      }
    }
  }
  return out;
}

/**
 * A patch value stored where there is nothing to merge it with: without null members and
 * without directives (the typed decoding the server does next drops both).
 */
function stored(v: Json): Json {
  if (Array.isArray(v)) {
    // A deleted item is not there, and a bare `{"$patch": "replace"}` is only a marker.
    const marker = (x: Json) =>
      isObject(x) &&
      (x[DIRECTIVE] === 'delete' || (x[DIRECTIVE] === 'replace' && Object.keys(x).length === 1));
    return v.filter((x) => !marker(x)).map(stored);
  }
  if (isObject(v)) {
    if (v[DIRECTIVE] === 'delete') return {};
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === null || isDirectiveKey(k)) continue;
      put(out, k, stored(x));
    }
    return out;
  }
  return v;
}

const isDirectiveKey = (k: string) =>
  k === DIRECTIVE ||
  k === RETAIN_KEYS ||
  k.startsWith(`${SET_ELEMENT_ORDER}/`) ||
  k.startsWith(`${DELETE_FROM_PRIMITIVE_LIST}/`);
