// Service attributes against their specification's JSON Schema: which properties are secret
// (`secret: true`), the plain and secret values merged and checked together with ajv, and the
// compiled validators kept per specification generation so a schema compiles once.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

/** The attribute schema as a ServiceSpecification holds it. */
export type AttributeSchema = Readonly<Record<string, unknown>>;

/** Compiled once per specification (uid) and generation. */
export interface CompiledSchema {
  readonly validate: ValidateFunction;
  /** Top-level properties marked `secret: true`. */
  readonly secret: ReadonlySet<string>;
  /** Schema type(s) of each top-level property, for reading secret values (always strings). */
  readonly types: ReadonlyMap<string, readonly string[]>;
}

export type AttributeResult =
  | { readonly ok: true; readonly attributes: Record<string, unknown> }
  | { readonly ok: false; readonly reason: string; readonly message: string };

const MAX_CACHED = 1000;

export class SchemaCache {
  // One Ajv per cache: it keeps compiled schemas, and `secret` must be a known keyword so
  // strict-minded schemas stay valid; unknown formats are ignored (no ajv-formats dependency).
  private readonly ajv = new Ajv({ allErrors: true, strict: false, logger: false });
  private readonly compiled = new Map<string, CompiledSchema>();

  constructor() {
    this.ajv.addKeyword({ keyword: 'secret', schemaType: 'boolean' });
  }

  /** The validator of one specification generation; throws when the schema does not compile. */
  get(uid: string, generation: number | undefined, schema: AttributeSchema): CompiledSchema {
    const key = `${uid}/${generation ?? 0}`;
    const hit = this.compiled.get(key);
    if (hit !== undefined) return hit;
    const validate = this.ajv.compile(schema as Record<string, unknown>);
    // Older generations of this specification are never asked for again.
    for (const old of this.compiled.keys())
      if (old.startsWith(`${uid}/`)) this.compiled.delete(old);
    // ajv keeps every compiled schema it saw (keyed by the schema object); drop them with ours.
    if (this.compiled.size >= MAX_CACHED) {
      this.compiled.clear();
      this.ajv.removeSchema();
    }
    const entry: CompiledSchema = { validate, ...propertiesOf(schema) };
    this.compiled.set(key, entry);
    return entry;
  }
}

/** Which top-level properties are secret, and each one's schema type(s). */
export function propertiesOf(schema: AttributeSchema): Pick<CompiledSchema, 'secret' | 'types'> {
  const secret = new Set<string>();
  const types = new Map<string, readonly string[]>();
  const properties = schema.properties;
  if (isRecord(properties)) {
    for (const [name, property] of Object.entries(properties)) {
      if (!isRecord(property)) continue;
      if (property.secret === true) secret.add(name);
      const type = property.type;
      if (typeof type === 'string') types.set(name, [type]);
      else if (Array.isArray(type))
        types.set(
          name,
          type.filter((t) => typeof t === 'string'),
        );
    }
  }
  return { secret, types };
}

/**
 * Plain attributes (spec.attributes) and secret ones (the Secret's keys, decoded) as one
 * object, validated against the schema. Messages name fields, never values: they end up in
 * status and Events, which anyone who can read the Service can read.
 */
export function resolveAttributes(
  compiled: CompiledSchema,
  plain: Readonly<Record<string, unknown>>,
  secret: Readonly<Record<string, string>>,
  secretName: string | undefined,
): AttributeResult {
  const inPlain = Object.keys(plain).filter((name) => compiled.secret.has(name));
  if (inPlain.length > 0) {
    return {
      ok: false,
      reason: 'SecretInSpec',
      message: `${inPlain.map((n) => `attributes.${n}`).join(', ')} ${inPlain.length > 1 ? 'are' : 'is'} secret: put ${inPlain.length > 1 ? 'them' : 'it'} in the Secret named by spec.secret_attributes_ref, not in spec.attributes`,
    };
  }
  const both = Object.keys(secret).filter((name) => Object.hasOwn(plain, name));
  if (both.length > 0) {
    return {
      ok: false,
      reason: 'InvalidAttributes',
      message: `${both.map((n) => `attributes.${n}`).join(', ')} set both in spec.attributes and in secret ${secretName ?? ''}`,
    };
  }
  const attributes: Record<string, unknown> = { ...plain };
  for (const [name, value] of Object.entries(secret)) {
    attributes[name] = secretValue(value, compiled.types.get(name));
  }
  if (compiled.validate(attributes)) return { ok: true, attributes };
  return {
    ok: false,
    reason: 'InvalidAttributes',
    message: (compiled.validate.errors ?? []).map(describeError).join('; '),
  };
}

/**
 * A Secret holds strings; a property typed otherwise (a number, a boolean, an object) is read
 * as JSON when it parses, so `port: "5432"` in a Secret meets `type: integer`.
 */
function secretValue(value: string, types: readonly string[] | undefined): unknown {
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
