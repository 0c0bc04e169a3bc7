// Service attributes against their specification's JSON Schema: which properties are secret
// (`secret: true`, at any depth), the plain and secret values merged and checked together with
// ajv (formats included), and the compiled validators kept per specification generation so a
// schema compiles once.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';

/** The attribute schema as a ServiceSpecification holds it. */
export type AttributeSchema = Readonly<Record<string, unknown>>;

/** A property marked `secret: true`, and where its value is. */
export interface SecretAttribute {
  /** Its key in the Secret named by secret_attributes_ref: `path` joined by `.`. */
  readonly key: string;
  /** Property names from the top of the attributes down to it. */
  readonly path: readonly string[];
  /** Schema type(s) at its place, for reading its value (a Secret holds strings). */
  readonly types: readonly string[];
}

/** What the schema says about secrets, without compiling it. */
export interface SchemaProperties {
  /** Properties marked `secret: true` at a fixed path, by Secret key. */
  readonly secret: ReadonlyMap<string, SecretAttribute>;
  /** Schema type(s) of each top-level property, for the Secret's keys that are not secret ones. */
  readonly types: ReadonlyMap<string, readonly string[]>;
  /** Why the schema's `secret: true` marks cannot all be honoured; empty when they can. */
  readonly problems: readonly string[];
  /**
   * For each problem, the deepest fixed path holding what it is about (`[]`: the whole
   * attributes): a reader that still shows the attributes hides these.
   */
  readonly concealed: readonly (readonly string[])[];
}

/** Compiled once per specification (uid) and generation. */
export interface CompiledSchema {
  readonly validate: ValidateFunction;
  readonly secret: ReadonlyMap<string, SecretAttribute>;
  readonly types: ReadonlyMap<string, readonly string[]>;
}

export type AttributeResult =
  | { readonly ok: true; readonly attributes: Record<string, unknown> }
  | { readonly ok: false; readonly reason: string; readonly message: string };

const MAX_CACHED = 1000;
/** What Kubernetes accepts as a key of a Secret's data. */
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
const SECRET_KEY_MAX = 253;
/** Schema nodes looked at per schema: `$ref`s can make a small schema expand a lot. */
const MAX_VISITS = 20_000;

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = formats.default;

export class SchemaCache {
  // One Ajv per cache: it keeps compiled schemas. `strict: false` lets `secret` and other
  // annotations through and makes an unknown `format` a no-op (JSON Schema calls format an
  // annotation; refusing a specification for a vendor format would be the surprise).
  private readonly ajv = new Ajv({ allErrors: true, strict: false, logger: false });
  private readonly compiled = new Map<string, CompiledSchema>();

  constructor() {
    this.ajv.addKeyword({ keyword: 'secret', schemaType: 'boolean' });
    addFormats(this.ajv);
  }

  /**
   * The validator of one specification generation; throws when the schema does not compile,
   * or marks `secret: true` where no Secret key can address it (a value there could not be
   * kept out of spec.attributes or the facade's answers).
   */
  get(uid: string, generation: number | undefined, schema: AttributeSchema): CompiledSchema {
    const key = `${uid}/${generation ?? 0}`;
    const hit = this.compiled.get(key);
    if (hit !== undefined) return hit;
    // Before compiling: ajv would keep a schema compiled for nothing.
    const { secret, types, problems } = propertiesOf(schema);
    if (problems.length > 0) throw new Error(problems.join('; '));
    const validate = this.ajv.compile(schema as Record<string, unknown>);
    // Older generations of this specification are never asked for again.
    for (const old of this.compiled.keys())
      if (old.startsWith(`${uid}/`)) this.compiled.delete(old);
    // ajv keeps every compiled schema it saw (keyed by the schema object); drop them with ours.
    if (this.compiled.size >= MAX_CACHED) {
      this.compiled.clear();
      this.ajv.removeSchema();
    }
    const entry: CompiledSchema = { validate, secret, types };
    this.compiled.set(key, entry);
    return entry;
  }
}

// Where a subschema applies. In place: to the same value as its parent, so a property found
// through it has the same fixed path. Elsewhere: to array items or to properties whose names
// the schema does not fix, which no Secret key can name.
const IN_PLACE = new Set([
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependencies',
]);
const ELSEWHERE = [
  'items',
  'prefixItems',
  'additionalItems',
  'contains',
  'additionalProperties',
  'patternProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
];
const SUBSCHEMAS = new Set([...IN_PLACE, ...ELSEWHERE]);
/** Keywords holding subschemas by name; the others hold one, or a list. */
const MAPS = new Set(['dependentSchemas', 'dependencies', 'patternProperties']);
const DEFINITIONS = ['$defs', 'definitions'];

interface Walk {
  /** Whether the schema has `secret: true` anywhere: else no problem is worth reporting. */
  readonly marked: boolean;
  visits: number;
  /** By pathKey. */
  readonly marks: Map<string, { path: readonly string[]; at: string }>;
  /** By pathKey: the types each fixed path may have. */
  readonly types: Map<string, { path: readonly string[]; types: Set<string> }>;
  readonly problems: { holder: readonly string[]; message: string }[];
}

interface Place {
  /** The fixed path; where it stopped being fixed, the deepest fixed path above. */
  readonly path: readonly string[];
  /** Undefined while fixed; else the keyword (as a pointer) that made it not. */
  readonly elsewhere: string | undefined;
  /** False below `not` and `if`, whose `type` is not one the value has. */
  readonly typed: boolean;
  /** JSON pointer of this node, for messages. */
  readonly at: string;
  /** What `#/...` references resolve against: the nearest node with an `$id`. */
  readonly base: Record<string, unknown>;
  /** `$ref` targets being expanded, to stop on recursion. */
  readonly expanding: ReadonlySet<unknown>;
}

/**
 * Which properties are secret, each one's Secret key and schema types, and what makes the
 * schema's secrets unusable. A property is secret when marked `secret: true` at a place that
 * `properties` fix, also through allOf/anyOf/oneOf/not/if/then/else/dependentSchemas and a
 * `$ref` to a JSON pointer in the schema (whichever branch applies: a mark anywhere counts,
 * and its types are those of every branch).
 * A mark under items, additionalProperties, patternProperties and the like, or one that a
 * reference outside the document or a recursive `$ref` could reach, has no fixed path: it is a
 * problem, as are two secret paths sharing a key and a key Kubernetes does not accept.
 */
export function propertiesOf(schema: AttributeSchema): SchemaProperties {
  const root = schema as Record<string, unknown>;
  const walk: Walk = {
    marked: hasMark(root),
    visits: 0,
    marks: new Map(),
    types: new Map(),
    problems: [],
  };
  visit(walk, root, {
    path: [],
    elsewhere: undefined,
    typed: true,
    at: '#',
    base: root,
    expanding: new Set([root]),
  });
  if (walk.visits > MAX_VISITS && walk.marked) {
    walk.problems.push({
      holder: [],
      message: `the schema expands to more than ${MAX_VISITS} subschemas (through $ref), too many to find its secret properties`,
    });
  }
  const typesAt = (path: readonly string[]) => [...(walk.types.get(pathKey(path))?.types ?? [])];
  // A mark below a secret property is covered by it: the whole value is in the Secret.
  const secretAbove = (path: readonly string[], self: boolean) => {
    for (let n = self ? path.length : path.length - 1; n > 0; n--)
      if (walk.marks.has(pathKey(path.slice(0, n)))) return true;
    return false;
  };
  const covered = (path: readonly string[]) => secretAbove(path, false);
  const coveredOrSecret = (path: readonly string[]) => secretAbove(path, true);
  const byKey = new Map<string, { path: readonly string[]; at: string }[]>();
  for (const mark of walk.marks.values()) {
    if (covered(mark.path)) continue;
    const key = mark.path.join('.');
    byKey.set(key, [...(byKey.get(key) ?? []), mark]);
  }
  const problems = walk.problems.filter((p) => !coveredOrSecret(p.holder));
  const secret = new Map<string, SecretAttribute>();
  for (const [key, marks] of [...byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const [first] = marks;
    if (first === undefined) continue;
    if (marks.length > 1) {
      for (const mark of marks) {
        problems.push({
          holder: mark.path,
          message: `secret properties ${marks.map((m) => m.at).join(' and ')} would share the Secret key "${key}": rename one`,
        });
      }
    } else if (!SECRET_KEY.test(key) || key.length > SECRET_KEY_MAX) {
      problems.push({
        holder: first.path,
        message: `secret property ${first.at} cannot be given: its Secret key would be "${key}", and a Secret key is at most ${SECRET_KEY_MAX} of [-._a-zA-Z0-9]`,
      });
    } else {
      secret.set(key, { key, path: first.path, types: typesAt(first.path) });
    }
  }
  const types = new Map<string, readonly string[]>();
  for (const { path, types: t } of walk.types.values())
    if (path.length === 1 && path[0] !== undefined) types.set(path[0], [...t]);
  return {
    secret,
    types,
    problems: problems.map((p) => p.message),
    concealed: problems.map((p) => p.holder),
  };
}

function visit(walk: Walk, node: unknown, place: Place): void {
  if (!isRecord(node)) return;
  if (++walk.visits > MAX_VISITS) return;
  const { path, elsewhere, at } = place;
  const base = typeof node.$id === 'string' && !node.$id.startsWith('#') ? node : place.base;
  if (elsewhere === undefined) {
    const key = pathKey(path);
    const known = walk.types.get(key) ?? { path, types: new Set<string>() };
    walk.types.set(key, known);
    if (place.typed) for (const t of typeList(node.type)) known.types.add(t);
  }
  if (node.secret === true) {
    if (elsewhere !== undefined) {
      walk.problems.push({ holder: path, message: noFixedPath(at, elsewhere, path) });
      return;
    }
    if (path.length === 0) {
      walk.problems.push({
        holder: path,
        message: `secret: true at ${at} marks the whole attributes: mark the properties that are secret instead`,
      });
      return;
    }
    if (!walk.marks.has(pathKey(path))) walk.marks.set(pathKey(path), { path, at });
  }
  const at2 = (...parts: (string | number)[]) =>
    [at, ...parts.map((p) => escapePointer(String(p)))].join('/');
  const properties = node.properties;
  if (isRecord(properties)) {
    for (const [name, sub] of Object.entries(properties)) {
      const next = elsewhere === undefined ? [...path, name] : path;
      visit(walk, sub, { ...place, base, path: next, typed: true, at: at2('properties', name) });
    }
  }
  for (const [keyword, sub] of Object.entries(node)) {
    if (!SUBSCHEMAS.has(keyword)) continue;
    const go = (s: unknown, pointer: string) =>
      visit(walk, s, {
        ...place,
        base,
        at: pointer,
        elsewhere: elsewhere ?? (IN_PLACE.has(keyword) ? undefined : pointer),
        typed: place.typed && keyword !== 'not' && keyword !== 'if',
      });
    if (Array.isArray(sub)) for (const [i, s] of sub.entries()) go(s, at2(keyword, i));
    else if (MAPS.has(keyword)) {
      if (isRecord(sub)) for (const [name, s] of Object.entries(sub)) go(s, at2(keyword, name));
    } else go(sub, at2(keyword));
  }
  if (typeof node.$ref === 'string')
    followRef(walk, node.$ref, { ...place, base, at: at2('$ref') });
}

function followRef(walk: Walk, ref: string, place: Place): void {
  const target = ref === '#' || ref.startsWith('#/') ? resolvePointer(place.base, ref) : undefined;
  if (target === undefined) {
    if (walk.marked) {
      walk.problems.push({
        holder: place.path,
        message: `$ref "${ref}" at ${place.at} is not a JSON pointer to a subschema of this schema ("#/..."), so whether it holds secret properties cannot be told: a schema with secret properties refers only with those`,
      });
    }
    return;
  }
  if (place.expanding.has(target)) {
    if (hasMark(target)) {
      walk.problems.push({
        holder: place.path,
        message: `$ref "${ref}" at ${place.at} is recursive and holds secret: true, which then has no fixed path: mark an enclosing property secret instead`,
      });
    }
    return;
  }
  visit(walk, target, { ...place, at: ref, expanding: new Set([...place.expanding, target]) });
}

function noFixedPath(at: string, elsewhere: string, holder: readonly string[]): string {
  const instead =
    holder.length > 0
      ? `mark attributes.${holder.join('.')} secret instead`
      : 'mark a property that encloses it secret instead';
  return `secret: true at ${at} has no fixed path in the attributes (it is under ${elsewhere}), so no Secret key can name it: ${instead}`;
}

/** Whether `secret: true` appears anywhere in the schema, definitions included. */
function hasMark(node: unknown): boolean {
  if (!isRecord(node)) return false;
  if (node.secret === true) return true;
  for (const keyword of ['properties', ...SUBSCHEMAS, ...DEFINITIONS]) {
    const sub = node[keyword];
    if (Array.isArray(sub)) {
      if (sub.some(hasMark)) return true;
    } else if (keyword === 'properties' || MAPS.has(keyword) || DEFINITIONS.includes(keyword)) {
      if (isRecord(sub) && Object.values(sub).some(hasMark)) return true;
    } else if (hasMark(sub)) return true;
  }
  return false;
}

function resolvePointer(base: Record<string, unknown>, ref: string): unknown {
  let node: unknown = base;
  for (const raw of ref.slice(2).split('/')) {
    if (ref === '#') break;
    let part: string;
    try {
      part = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(node)) node = node[Number(part)];
    else if (isRecord(node) && Object.hasOwn(node, part)) node = node[part];
    else return undefined;
  }
  return isRecord(node) ? node : undefined;
}

function typeList(type: unknown): string[] {
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string');
  return [];
}

function pathKey(path: readonly string[]): string {
  return JSON.stringify(path);
}

function escapePointer(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * Secret properties given in the plain attributes, where anyone who can read the Service
 * would see them: refused. Needs no Secret, so it is asked even when the Secret is not there.
 */
export function secretsInPlain(
  compiled: Pick<CompiledSchema, 'secret'>,
  plain: Readonly<Record<string, unknown>>,
): Extract<AttributeResult, { ok: false }> | undefined {
  const inPlain = [...compiled.secret.values()].filter((s) => hasPath(plain, s.path));
  if (inPlain.length === 0) return undefined;
  const many = inPlain.length > 1;
  return {
    ok: false,
    reason: 'SecretInSpec',
    message: `${inPlain.map((s) => `attributes.${s.key}`).join(', ')} ${many ? 'are' : 'is'} secret: put ${many ? 'them' : 'it'} in the Secret named by spec.secret_attributes_ref (${many ? 'keys' : 'key'} ${inPlain.map((s) => s.key).join(', ')}), not in spec.attributes`,
  };
}

/**
 * Plain attributes (spec.attributes) and secret ones (the Secret's keys, decoded) as one
 * object, validated against the schema. A key naming a secret property (`db.password`) puts
 * its value at that path; any other key is a top-level attribute. Messages name fields, never
 * values: they end up in status and Events, which anyone who can read the Service can read.
 */
export function resolveAttributes(
  compiled: CompiledSchema,
  plain: Readonly<Record<string, unknown>>,
  secret: Readonly<Record<string, string>>,
  secretName: string | undefined,
): AttributeResult {
  const misplaced = secretsInPlain(compiled, plain);
  if (misplaced !== undefined) return misplaced;
  const both = Object.keys(secret).filter(
    (name) => !compiled.secret.has(name) && Object.hasOwn(plain, name),
  );
  if (both.length > 0) {
    return {
      ok: false,
      reason: 'InvalidAttributes',
      message: `${both.map((n) => `attributes.${n}`).join(', ')} set both in spec.attributes and in secret ${secretName ?? ''}`,
    };
  }
  const { attributes, unplaced } = mergeAttributes(compiled, plain, secret);
  if (unplaced.length > 0) {
    return {
      ok: false,
      reason: 'InvalidAttributes',
      message: unplaced
        .map(
          (s) =>
            `attributes.${s.path.slice(0, -1).join('.')} must be an object to hold secret attributes.${s.key} (key ${s.key} of secret ${secretName ?? ''})`,
        )
        .join('; '),
    };
  }
  if (compiled.validate(attributes)) return { ok: true, attributes };
  return {
    ok: false,
    reason: 'InvalidAttributes',
    message: (compiled.validate.errors ?? []).map(describeError).join('; '),
  };
}

/**
 * The plain attributes with the Secret's values put in, unvalidated (what a provider is given
 * when deleting); `plain` is left as it is. Keys that are not secret properties go first, at
 * the top, so a secret path may lead into one of them. `unplaced`: secret properties whose
 * parent is there but not an object.
 */
export function mergeAttributes(
  compiled: Pick<CompiledSchema, 'secret' | 'types'>,
  plain: Readonly<Record<string, unknown>>,
  secret: Readonly<Record<string, string>>,
): { attributes: Record<string, unknown>; unplaced: SecretAttribute[] } {
  const attributes: Record<string, unknown> = { ...plain };
  const nested: SecretAttribute[] = [];
  for (const [name, value] of Object.entries(secret)) {
    const property = compiled.secret.get(name);
    if (property !== undefined) nested.push(property);
    else setOwn(attributes, name, secretValue(value, compiled.types.get(name)));
  }
  const unplaced: SecretAttribute[] = [];
  for (const property of nested.sort((a, b) => (a.key < b.key ? -1 : 1))) {
    const value = secretValue(secret[property.key] ?? '', property.types);
    if (!placeAt(attributes, property.path, value)) unplaced.push(property);
  }
  return { attributes, unplaced };
}

/**
 * Sets `value` at `path` in `root`, copying each object on the way (they may be shared with
 * the resource) and making the missing ones; false when one on the way is not an object.
 */
export function placeAt(
  root: Record<string, unknown>,
  path: readonly string[],
  value: unknown,
): boolean {
  let node = root;
  for (const name of path.slice(0, -1)) {
    const child = Object.hasOwn(node, name) ? node[name] : undefined;
    if (child !== undefined && !isRecord(child)) return false;
    const copy: Record<string, unknown> = { ...(child ?? {}) };
    setOwn(node, name, copy);
    node = copy;
  }
  const last = path[path.length - 1];
  if (last === undefined) return false;
  setOwn(node, last, value);
  return true;
}

/** An own data property even for `__proto__`, which plain assignment would treat as the prototype. */
function setOwn(object: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(object, name, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

function hasPath(value: unknown, path: readonly string[]): boolean {
  let node = value;
  for (const name of path) {
    if (!isRecord(node) || !Object.hasOwn(node, name)) return false;
    node = node[name];
  }
  return true;
}

/**
 * A Secret holds strings; a property typed otherwise (a number, a boolean, an object) is read
 * as JSON when it parses, so `port: "5432"` in a Secret meets `type: integer`.
 */
export function secretValue(value: string, types: readonly string[] | undefined): unknown {
  if (types === undefined || types.length === 0 || types.includes('string')) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** `attributes.port: must be integer`, from ajv's instancePath and the property it names. */
export function describeError(error: ErrorObject): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  const params = error.params as Record<string, unknown>;
  const named =
    typeof params.missingProperty === 'string'
      ? params.missingProperty
      : typeof params.additionalProperty === 'string'
        ? params.additionalProperty
        : typeof params.propertyName === 'string'
          ? params.propertyName
          : undefined;
  if (named !== undefined) path.push(named);
  const field = ['attributes', ...path].join('.');
  const message =
    typeof params.missingProperty === 'string'
      ? 'required'
      : typeof params.additionalProperty === 'string'
        ? 'is not allowed by the specification'
        : (error.message ?? 'is invalid');
  return `${field}: ${message}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
