// JSON merge patch (RFC 7386, application/merge-patch+json) as the API server applies it
// (evanphx/json-patch v4 MergePatch): null deletes, objects merge, everything else replaces.
import { badRequest } from '../types.js';
import { clone, isObject, type Json, type JsonObject, notAnObject, put } from './util.js';

export function applyMergePatch(live: object, patch: unknown): object {
  // The server hands the library JSON bytes; `null`, a string or a number is "Invalid JSON Patch".
  // An array is merged into nothing and comes back an array, which no object decodes from.
  if (Array.isArray(patch)) throw notAnObject(pruneNulls(clone(patch)));
  if (!isObject(patch)) throw badRequest('Invalid JSON Patch');
  const doc = clone(live) as JsonObject;
  mergeDocs(doc, clone(patch));
  return doc;
}

function mergeDocs(doc: JsonObject, patch: JsonObject): void {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete doc[key];
      continue;
    }
    const current = Object.hasOwn(doc, key) ? doc[key] : null;
    if (isObject(current)) {
      // An object merges with an object; anything else replaces it as sent.
      if (isObject(value)) mergeDocs(current, value);
      else put(doc, key, value);
    } else {
      put(doc, key, pruneNulls(value));
    }
  }
}

/** A value that lands where nothing was keeps no null members (arrays keep null items). */
function pruneNulls(value: Json): Json {
  if (Array.isArray(value)) return value.map((v) => (v === null ? v : pruneNulls(v)));
  if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (v === null) delete value[k];
      else put(value, k, pruneNulls(v));
    }
  }
  return value;
}
