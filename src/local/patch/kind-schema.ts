// The merge schema of one kind as the patch engines walk it: ObjectMeta's field types, then the
// built-in kind's (from its strategy in kinds/), then a CRD schema's, looked up once per
// position and kept.
import { BUILTIN_STRATEGIES } from '../kinds/index.js';
import { apiVersionOf } from '../resource-type.js';
import {
  ATOMIC,
  byKey,
  type FieldType,
  joinPath,
  type ListTypeInfo,
  MAP,
  SET,
} from './field-types.js';

/** ObjectMeta, on every kind (custom resources too: the server's own schema for metadata). */
const OBJECT_META: ListTypeInfo = {
  'metadata.labels': MAP,
  'metadata.annotations': MAP,
  // patchStrategy:"merge" / listType=set
  'metadata.finalizers': SET,
  // patchStrategy:"merge" patchMergeKey:"uid" / listType=map listMapKey=uid
  'metadata.ownerReferences': byKey('uid'),
  'metadata.managedFields': ATOMIC,
};

/** The built-in kinds' tables, by `apiVersion/kind`. */
const BUILTIN_FIELD_TYPES: ReadonlyMap<string, ListTypeInfo> = new Map(
  BUILTIN_STRATEGIES.flatMap((s) =>
    s.fieldTypes === undefined ? [] : [[`${apiVersionOf(s.type)}/${s.type.kind}`, s.fieldTypes]],
  ),
);

/** The field types of a kind: ObjectMeta's, the built-in table's, then the caller's. */
export function fieldTypesOf(
  apiVersion: unknown,
  kind: unknown,
  extra?: ListTypeInfo,
): ListTypeInfo {
  const builtin = BUILTIN_FIELD_TYPES.get(`${String(apiVersion)}/${String(kind)}`) ?? {};
  const merged: Record<string, FieldType> = { ...OBJECT_META, ...builtin, ...extra };
  // A built-in kind's schema (from the client's models) knows its list keys but not their
  // defaults (ContainerPort.protocol's TCP): the kind's own table does.
  for (const [path, type] of Object.entries(builtin)) {
    const over = merged[path];
    if (
      'keyDefaults' in type &&
      over !== undefined &&
      'list' in over &&
      over.list === 'map' &&
      !('keyDefaults' in over)
    ) {
      merged[path] = { ...over, keyDefaults: type.keyDefaults };
    }
  }
  return merged;
}

export type ObjectKind = 'struct' | 'map' | 'atomic' | 'deduced';
export type ListKind =
  | 'atomic'
  | 'set'
  | { readonly keys: readonly string[]; readonly keyDefaults?: Readonly<Record<string, string>> };

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
    if (t.list === 'set') return 'set';
    return t.keyDefaults !== undefined
      ? { keys: t.keys, keyDefaults: t.keyDefaults }
      : { keys: t.keys };
  }

  field(pos: SchemaPos, name: string): SchemaPos {
    const at = pos as Pos;
    const kind = this.objectKind(at);
    if (kind === 'map' || kind === 'deduced') {
      if (at.star !== undefined) return at.star;
      const star = this.pos(joinPath(at.path, '*'), kind === 'deduced');
      if (this.keep()) at.star = star;
      return star;
    }
    let child = at.fields?.get(name);
    if (child === undefined) {
      child = this.pos(joinPath(at.path, name), false);
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
