// Which attributes of a service are secret, for the catalog: what one ServiceSpecification's
// schema marks (read by src/domain/services/attributes, as the reconciler reads it), what every
// specification claiming one id marks together, and the tree of paths an item leaves out.
// Applying them to an item is render.ts's job.
import { propertiesOf } from '../../domain/services/attributes.js';

/** Where the values of a service's secret attributes are, for a caller allowed to see them. */
export interface SecretAttributes {
  /** The Secret named by spec.secret_attributes_ref, in the Service's namespace. */
  readonly name: string;
  /** Keys of the properties the specification marks `secret: true`, sorted: what to read from it. */
  readonly keys: readonly string[];
  /** Where each key's value goes in the attributes (`db.password` -> `['db', 'password']`). */
  readonly paths: ReadonlyMap<string, readonly string[]>;
  /** Keys whose schema type is not string: their value is read as JSON, as the reconciler does. */
  readonly jsonValued: ReadonlySet<string>;
}

/**
 * What to leave out of the attributes: `true` for the whole value, else, by property name,
 * what to leave out inside it.
 */
export type HiddenAttributes = true | ReadonlyMap<string, HiddenAttributes>;

export const NOTHING_HIDDEN: HiddenAttributes = new Map();

/** The paths given, as HiddenAttributes: a path hides its value and everything in it. */
export function hiddenAttributes(paths: Iterable<readonly string[]>): HiddenAttributes {
  type Node = Map<string, Node | true>;
  const root: Node = new Map();
  for (const path of paths) {
    if (path.length === 0) return true;
    let node = root;
    for (const [i, name] of path.entries()) {
      const next = node.get(name);
      if (next === true) break;
      if (i === path.length - 1) node.set(name, true);
      else if (next === undefined) {
        const made: Node = new Map();
        node.set(name, made);
        node = made;
      } else node = next;
    }
  }
  return root;
}

/** What one ServiceSpecification says of secrets, read as the reconciler reads it. */
export interface SchemaSecrets {
  /** Secret key -> its path and schema types. */
  readonly secret: ReadonlyMap<string, { path: readonly string[]; types: readonly string[] }>;
  /**
   * Where the schema marks secrets it cannot use (the reconciler refuses it): hidden all the
   * same, as services of it may exist and hold values there.
   */
  readonly concealed: readonly (readonly string[])[];
}

const NO_SCHEMA_SECRETS: SchemaSecrets = { secret: new Map(), concealed: [] };

export function secretsOfSchema(schema: unknown): SchemaSecrets {
  if (!isRecord(schema)) return NO_SCHEMA_SECRETS;
  const { secret, concealed } = propertiesOf(schema);
  return secret.size === 0 && concealed.length === 0 ? NO_SCHEMA_SECRETS : { secret, concealed };
}

/** What the specifications claiming one id mark secret, together: what their services hide. */
export interface SpecSecrets {
  /** Sorted. */
  readonly keys: readonly string[];
  readonly paths: ReadonlyMap<string, readonly string[]>;
  /** NOTHING_HIDDEN itself when no path is hidden. */
  readonly hidden: HiddenAttributes;
  readonly jsonValued: ReadonlySet<string>;
  /** All of the above as one string, to tell whether a change changes anything. */
  readonly signature: string;
}

const NO_KEYS: ReadonlySet<string> = new Set();

export const NO_SECRETS: SpecSecrets = {
  keys: [],
  paths: new Map(),
  hidden: NOTHING_HIDDEN,
  jsonValued: NO_KEYS,
  signature: '',
};

/**
 * The secrets of every claimant of a specification id, merged. Every claimant counts: the one
 * that owns the id may change, and hiding an attribute a stalled duplicate calls secret is the
 * safe side.
 */
export function secretsOfClaimants(claimants: Iterable<SchemaSecrets>): SpecSecrets {
  const types = new Map<string, string[]>();
  const paths = new Map<string, readonly string[]>();
  const hide: (readonly string[])[] = [];
  for (const { secret, concealed } of claimants) {
    for (const [key, { path, types: t }] of secret) {
      types.set(key, [...(types.get(key) ?? []), ...t]);
      hide.push(path);
      // Claimants putting one key at different paths (`a.b` the name, or a -> b): both are
      // hidden, and the value is shown at one of them, the same one whatever the order.
      const known = paths.get(key);
      if (known === undefined || JSON.stringify(path) < JSON.stringify(known)) paths.set(key, path);
    }
    hide.push(...concealed);
  }
  const keys = [...types.keys()].sort();
  const jsonValued = new Set(
    keys.filter((k) => {
      const t = types.get(k) ?? [];
      return t.length > 0 && !t.includes('string');
    }),
  );
  const hidden = [...new Set(hide.map((path) => JSON.stringify(path)))].sort();
  const signature = JSON.stringify([keys.map((k) => [k, paths.get(k), jsonValued.has(k)]), hidden]);
  // Every secret key hides its path: nothing hidden is no key either.
  if (hidden.length === 0) return { ...NO_SECRETS, signature };
  return {
    keys,
    paths,
    hidden: hiddenAttributes(hidden.map((path) => JSON.parse(path) as string[])),
    jsonValued,
    signature,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
