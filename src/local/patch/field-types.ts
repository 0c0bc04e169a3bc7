// How each list and object of a kind merges, in one table keyed by path: the `patchStrategy`/
// `patchMergeKey` tags of the built-in API types (which strategic merge patch follows) and
// their `listType`/`listMapKey` markers (which server-side apply follows, and which the API
// server derives from the same tags), plus the reading of a CRD schema's x-kubernetes-*
// extensions into the same shape.
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

const ATOMIC = { list: 'atomic' } as const;
const MAP = { object: 'map' } as const;
const STRUCT = { object: 'struct', alwaysPresent: true } as const;
const byKey = (...keys: string[]) => ({ list: 'map', keys }) as const;

/** ObjectMeta, on every kind (custom resources too: the server's own schema for metadata). */
const OBJECT_META: ListTypeInfo = {
  'metadata.labels': MAP,
  'metadata.annotations': MAP,
  // patchStrategy:"merge" / listType=set
  'metadata.finalizers': { list: 'set' },
  // patchStrategy:"merge" patchMergeKey:"uid" / listType=map listMapKey=uid
  'metadata.ownerReferences': byKey('uid'),
  'metadata.managedFields': ATOMIC,
};

/** The built-in kinds the local control plane serves, by `apiVersion/kind`. */
export const BUILTIN_FIELD_TYPES: Readonly<Record<string, ListTypeInfo>> = {
  'v1/Namespace': {
    spec: STRUCT,
    // listType=atomic, no patch strategy
    'spec.finalizers': ATOMIC,
    status: STRUCT,
    // patchStrategy:"merge" patchMergeKey:"type" / listType=map listMapKey=type
    'status.conditions': byKey('type'),
  },
  'v1/ServiceAccount': {
    // patchStrategy:"merge" patchMergeKey:"name"
    secrets: byKey('name'),
    // No patch strategy on ServiceAccount (only PodSpec's imagePullSecrets merges by name).
    imagePullSecrets: ATOMIC,
  },
  'v1/Secret': { data: MAP, stringData: MAP },
  'v1/ConfigMap': { data: MAP, binaryData: MAP },
  'v1/ResourceQuota': {
    spec: STRUCT,
    'spec.hard': MAP,
    'spec.scopes': ATOMIC,
    'spec.scopeSelector.matchExpressions': ATOMIC,
    status: STRUCT,
    'status.hard': MAP,
    'status.used': MAP,
  },
  'v1/LimitRange': {
    spec: STRUCT,
    // `Limits []LimitRangeItem json:"limits"`: no patch strategy, so replaced whole.
    'spec.limits': ATOMIC,
  },
  'coordination.k8s.io/v1/Lease': { spec: STRUCT },
  'v1/Event': { involvedObject: STRUCT, source: STRUCT },
  'events.k8s.io/v1/Event': { regarding: STRUCT, deprecatedSource: STRUCT },
};

/** The field types of a kind: ObjectMeta's, the built-in table's, then the caller's. */
export function fieldTypesOf(
  apiVersion: unknown,
  kind: unknown,
  extra?: ListTypeInfo,
): ListTypeInfo {
  const builtin = BUILTIN_FIELD_TYPES[`${String(apiVersion)}/${String(kind)}`] ?? {};
  return { ...OBJECT_META, ...builtin, ...extra };
}

export type ObjectKind = 'struct' | 'map' | 'atomic' | 'deduced';
export type ListKind = 'atomic' | 'set' | { readonly keys: readonly string[] };

/** A position in a kind's schema while walking an object; made and kept by its Schema. */
export interface SchemaPos {
  readonly path: string;
  readonly deduced: boolean;
}

/** A position with its field type looked up once, and the positions below it kept. */
interface Pos extends SchemaPos {
  readonly type: FieldType | undefined;
  fields?: Map<string, Pos>;
  star?: Pos;
  item?: Pos;
}

/**
 * Positions a schema keeps at most: a kind with no table marks no maps, so objects of made-up
 * (and nested) field names must not grow it without bound. Past it, positions are made afresh.
 */
const MAX_KEPT_POSITIONS = 4096;

export class Schema {
  /** Where every walk starts. */
  readonly root: SchemaPos;
  private kept = 0;

  constructor(private readonly types: ListTypeInfo) {
    this.root = this.pos('', false);
  }

  // Every write asks for its kind's schema; building one merges tables, so keep them.
  private static readonly plain = new Map<string, Schema>();
  private static readonly withExtra = new WeakMap<ListTypeInfo, Map<string, Schema>>();

  static of(apiVersion: unknown, kind: unknown, extra?: ListTypeInfo): Schema {
    const key = `${String(apiVersion)}/${String(kind)}`;
    let cache = Schema.plain;
    if (extra !== undefined) {
      cache = Schema.withExtra.get(extra) ?? new Map<string, Schema>();
      Schema.withExtra.set(extra, cache);
    }
    let schema = cache.get(key);
    if (schema === undefined) {
      schema = new Schema(fieldTypesOf(apiVersion, kind, extra));
      cache.set(key, schema);
    }
    return schema;
  }

  private pos(path: string, deduced: boolean): Pos {
    const type = deduced || !Object.hasOwn(this.types, path) ? undefined : this.types[path];
    return { path, deduced, type };
  }

  objectKind(pos: SchemaPos): ObjectKind {
    if (pos.deduced) return 'deduced';
    const t = (pos as Pos).type;
    return t !== undefined && 'object' in t ? t.object : 'struct';
  }

  alwaysPresent(pos: SchemaPos): boolean {
    const t = (pos as Pos).type;
    return t !== undefined && 'object' in t && t.object === 'struct' && t.alwaysPresent === true;
  }

  listKind(pos: SchemaPos): ListKind {
    const t = (pos as Pos).type;
    if (t === undefined || !('list' in t) || t.list === 'atomic') return 'atomic';
    return t.list === 'set' ? 'set' : { keys: t.keys };
  }

  field(pos: SchemaPos, name: string): SchemaPos {
    const at = pos as Pos;
    const kind = this.objectKind(at);
    if (kind === 'map' || kind === 'deduced') {
      if (at.star !== undefined) return at.star;
      const star = this.pos(join(at.path, '*'), kind === 'deduced');
      if (this.keep()) at.star = star;
      return star;
    }
    let child = at.fields?.get(name);
    if (child === undefined) {
      child = this.pos(join(at.path, name), false);
      if (this.keep()) {
        at.fields ??= new Map();
        at.fields.set(name, child);
      }
    }
    return child;
  }

  item(pos: SchemaPos): SchemaPos {
    const at = pos as Pos;
    if (at.item !== undefined) return at.item;
    const item = this.pos(`${at.path}[]`, at.deduced);
    if (this.keep()) at.item = item;
    return item;
  }

  /** Whether one more position may be kept (and counts it). */
  private keep(): boolean {
    if (this.kept >= MAX_KEPT_POSITIONS) return false;
    this.kept++;
    return true;
  }
}

const join = (path: string, name: string) => (path === '' ? name : `${path}.${name}`);

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
        out[path] = { list: 'set' };
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
      walk(node.additionalProperties, join(path, '*'));
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
      walk(child, join(path, name));
    }
  };
  walk(openAPIV3Schema, '');
  return out;
}
