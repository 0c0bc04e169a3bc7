// JSON patch (RFC 6902, application/json-patch+json) with the API server's semantics: the
// checks and quirks of evanphx/json-patch v4 in front, fast-json-patch doing the edits.
import jsonpatch, { type Operation } from 'fast-json-patch';
import { ApiError, badRequest } from '../types.js';
import {
  clone,
  deepEqual,
  goJsonKind,
  isObject,
  type Json,
  type JsonObject,
  notAnObject,
} from './util.js';

const MAX_OPERATIONS = 10_000;

/** Any failed operation: the server keeps the library's reason to itself and says this. */
const rejected = () =>
  new ApiError(
    422,
    'Invalid',
    'the server rejected our request due to an error in our request',
    {},
  );

class Failed extends Error {}

export function applyJsonPatch(live: object, operations: unknown): object {
  // Decoding `null` into a patch yields an empty patch, as in Go.
  if (operations === null) return clone(live);
  if (!Array.isArray(operations)) {
    throw badRequest(
      `json: cannot unmarshal ${goJsonKind(operations)} into Go value of type jsonpatch.Patch`,
    );
  }
  for (const op of operations) {
    if (op !== null && !isObject(op)) {
      throw badRequest(
        `json: cannot unmarshal ${goJsonKind(op)} into Go value of type jsonpatch.Operation`,
      );
    }
  }
  if (operations.length > MAX_OPERATIONS) {
    throw new ApiError(
      413,
      'RequestEntityTooLarge',
      `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_OPERATIONS}, got ${operations.length}`,
    );
  }
  let doc = clone(live) as Json;
  try {
    for (const op of operations as (JsonObject | null)[]) doc = applyOne(doc, op ?? {});
  } catch (err) {
    // fast-json-patch's prototype-pollution guard throws a TypeError: a failed operation too.
    if (err instanceof Failed || err instanceof TypeError) throw rejected();
    throw err;
  }
  if (!isObject(doc)) throw notAnObject(doc);
  return doc;
}

interface Located {
  readonly parent: Json[] | JsonObject;
  /** The reference tokens of the parent, unescaped, with array indexes made absolute. */
  readonly trail: readonly string[];
  readonly key: string;
}

function applyOne(doc: Json, op: JsonObject): Json {
  const kind = typeof op.op === 'string' ? op.op : 'unknown';
  switch (kind) {
    case 'add': {
      const at = locate(doc, pathOf(op, 'path'));
      return edit(doc, { op: 'add', path: pointer(at, insertIndex(at)), value: operandOf(op) });
    }
    case 'remove': {
      const at = locate(doc, pathOf(op, 'path'));
      return edit(doc, { op: 'remove', path: pointer(at, existingKey(at)) });
    }
    case 'replace': {
      const path = pathOf(op, 'path');
      if (path === '') {
        const value = operandOf(op);
        if (!isObject(value) && !Array.isArray(value)) throw new Failed();
        return edit(doc, { op: 'replace', path: '', value });
      }
      const at = locate(doc, path);
      // v4 replaces a missing member of an object as if it were there (the RFC says fail).
      if (!Array.isArray(at.parent))
        return edit(doc, { op: 'add', path: pointer(at, at.key), value: operandOf(op) });
      return edit(doc, { op: 'replace', path: pointer(at, existingKey(at)), value: operandOf(op) });
    }
    case 'move': {
      const from = locate(doc, pathOf(op, 'from'));
      const fromKey = existingKey(from);
      const value = read(from, fromKey) ?? null;
      const moved = edit(doc, { op: 'remove', path: pointer(from, fromKey) });
      const to = locate(moved, pathOf(op, 'path'));
      return edit(moved, { op: 'add', path: pointer(to, insertIndex(to)), value });
    }
    case 'copy': {
      const from = locate(doc, pathOf(op, 'from'));
      // Copying a missing member of an object copies null, as v4 does.
      const value = read(from, readableKey(from)) ?? null;
      const to = locate(doc, pathOf(op, 'path'));
      return edit(doc, { op: 'add', path: pointer(to, insertIndex(to)), value: clone(value) });
    }
    case 'test': {
      const path = pathOf(op, 'path');
      const hasValue = Object.hasOwn(op, 'value');
      if (path === '') {
        if (!hasValue || !deepEqual(doc, op.value)) throw new Failed();
        return doc;
      }
      const at = locate(doc, path);
      const actual = read(at, readableKey(at)) ?? null;
      // A missing member equals null; a test without a value never passes.
      if (!hasValue || !deepEqual(actual, op.value)) throw new Failed();
      return doc;
    }
    default:
      throw new Failed();
  }
}

function pathOf(op: JsonObject, field: 'path' | 'from'): string {
  const path = Object.hasOwn(op, field) ? op[field] : undefined;
  if (typeof path !== 'string') throw new Failed();
  return path;
}

/** An operation without a value adds or replaces with null, as v4 does. */
const operandOf = (op: JsonObject): Json =>
  clone(Object.hasOwn(op, 'value') ? (op.value ?? null) : null);

const decodeToken = (t: string) => t.replaceAll('~1', '/').replaceAll('~0', '~');
const encodeToken = (t: string) => t.replaceAll('~', '~0').replaceAll('/', '~1');
const INTEGER = /^[+-]?\d+$/;

/** The container a path points into: every token but the last must exist. */
function locate(doc: Json, path: string): Located {
  const tokens = path.split('/');
  // Like v4, the first token is dropped unread: a path must have at least one '/'.
  if (tokens.length < 2) throw new Failed();
  let node: Json = doc;
  const trail: string[] = [];
  for (const raw of tokens.slice(1, -1)) {
    const token = decodeToken(raw);
    let next: Json | undefined;
    if (Array.isArray(node)) {
      const index = arrayIndex(node.length, token);
      next = node[index];
      trail.push(String(index));
    } else if (isObject(node)) {
      next = Object.hasOwn(node, token) ? node[token] : undefined;
      trail.push(token);
    }
    if (!isObject(next) && !Array.isArray(next)) throw new Failed();
    node = next;
  }
  if (!isObject(node) && !Array.isArray(node)) throw new Failed();
  return { parent: node, trail, key: decodeToken(tokens.at(-1) ?? '') };
}

/** An index into an existing element; negative ones count from the end. */
function arrayIndex(length: number, token: string): number {
  if (!INTEGER.test(token)) throw new Failed();
  let index = Number(token);
  if (index < 0) index += length;
  if (index < 0 || index >= length) throw new Failed();
  return index;
}

function insertIndex(at: Located): string {
  if (!Array.isArray(at.parent)) return at.key;
  if (at.key === '-') return '-';
  if (!INTEGER.test(at.key)) throw new Failed();
  const size = at.parent.length + 1;
  let index = Number(at.key);
  if (index < 0) index += size;
  if (index < 0 || index >= size) throw new Failed();
  return String(index);
}

function existingKey(at: Located): string {
  if (Array.isArray(at.parent)) return String(arrayIndex(at.parent.length, at.key));
  if (!Object.hasOwn(at.parent, at.key)) throw new Failed();
  return at.key;
}

/** A key to read: arrays must hold the index, objects may lack the member. */
const readableKey = (at: Located): string =>
  Array.isArray(at.parent) ? String(arrayIndex(at.parent.length, at.key)) : at.key;

function read(at: Located, key: string): Json | undefined {
  if (Array.isArray(at.parent)) return at.parent[Number(key)];
  return Object.hasOwn(at.parent, key) ? at.parent[key] : undefined;
}

const pointer = (at: Located, key: string) => `/${[...at.trail, key].map(encodeToken).join('/')}`;

function edit(doc: Json, op: Operation): Json {
  // The document is our own copy, so fast-json-patch may edit it in place; the guard against
  // `__proto__` and `constructor/prototype` stays on.
  return jsonpatch.applyOperation(doc, op, false, true, true).newDocument;
}
