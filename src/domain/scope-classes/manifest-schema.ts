// A ScopeClass's manifest template checked against the OpenAPI v3 schema the API server
// publishes for its kind (ADR 0031), before any scope renders it: a field the kind does not
// have, or a value of the wrong type, is a problem at its path, as kro checks the resources of a
// ResourceGraphDefinition against their CRDs' schemas. The rule for placeholders, which cannot
// be typed before a scope renders them: a value that is one placeholder (`${scope.id}`) may be
// of any type; a string with a placeholder inside text (`web-${scope.id}`) renders a string, and
// is accepted where a string is (an int-or-string too), refused where a number, a boolean, an
// object or a list is. Only types and unknown fields are judged: `required`, enums, formats and
// patterns are the API server's at apply (a server default or a placeholder may fill them).
import type { TemplateProblem } from './template.js';
import { placeholdersOf } from './template.js';

type Schema = Readonly<Record<string, unknown>>;

/** A kind's schema and what its `$ref`s (`#/components/schemas/<name>`) resolve against. */
export interface PublishedSchema {
  readonly schema: Schema;
  readonly components: Readonly<Record<string, Schema>>;
}

/** Problems reported for one manifest; the walk stops past them. */
export const MAX_SCHEMA_PROBLEMS = 20;
const MAX_REF_HOPS = 32;
const COMPONENTS = '#/components/schemas/';
const PRESERVE = 'x-kubernetes-preserve-unknown-fields';
const INT_OR_STRING = 'x-kubernetes-int-or-string';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const QUANTITY_SCHEMA: Schema = { oneOf: [{ type: 'string' }, { type: 'number' }] };

/**
 * The problems of `manifest` (a template, placeholders unrendered) against `published`, each at
 * its path under `path` (`spec.resources[1].manifest.data.a`); at most MAX_SCHEMA_PROBLEMS.
 */
export function manifestSchemaProblems(
  manifest: unknown,
  published: PublishedSchema,
  path: string,
): TemplateProblem[] {
  const walker = new Walker(published.components);
  walker.check(manifest, published.schema, path);
  return walker.problems;
}

/** What a value is, in the schema's words. */
function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

class Walker {
  readonly problems: TemplateProblem[] = [];

  constructor(private readonly components: Readonly<Record<string, Schema>>) {}

  check(value: unknown, node: Schema, path: string): void {
    if (this.problems.length >= MAX_SCHEMA_PROBLEMS) return;
    const schema = this.resolve(node);
    if (schema === undefined) return;
    // A null clears a field (kube-apiserver decodes it as unset); it is not a type error here.
    if (value === null) return;
    let embedded = false;
    if (typeof value === 'string') {
      const form = placeholdersOf(value).form;
      if (form === 'whole') return;
      embedded = form === 'embedded';
    }
    // kube-openapi writes a field with a description as allOf: [{$ref}] (v3).
    if (Array.isArray(schema.allOf)) {
      for (const part of schema.allOf) if (isSchema(part)) this.check(value, part, path);
    }
    const branches = [schema.anyOf, schema.oneOf].find(Array.isArray) as unknown[] | undefined;
    if (branches !== undefined && !this.matchesABranch(value, branches, path)) return;
    const expected = expectedType(schema);
    if (expected === undefined) return;
    if (expected === 'int-or-string') {
      const given = typeOf(value);
      if (given !== 'integer' && given !== 'string') this.wrong(path, 'integer or string', value);
      return;
    }
    const given = typeOf(value);
    const fits = given === expected || (expected === 'number' && given === 'integer');
    if (!fits) {
      this.wrong(path, expected, value, embedded);
      return;
    }
    if (expected === 'array') {
      const items = schema.items;
      if (isSchema(items)) {
        for (const [i, item] of (value as unknown[]).entries()) {
          this.check(item, items, `${path}[${i}]`);
        }
      }
      return;
    }
    if (expected === 'object') this.object(value as Record<string, unknown>, schema, path);
  }

  private object(value: Record<string, unknown>, schema: Schema, path: string): void {
    const properties = isSchema(schema.properties)
      ? (schema.properties as Record<string, unknown>)
      : undefined;
    const additional = schema.additionalProperties;
    const open =
      schema[PRESERVE] === true ||
      additional === true ||
      // An object the schema says nothing of (RawExtension, FieldsV1) is not judged.
      (properties === undefined && !isSchema(additional));
    for (const [key, item] of Object.entries(value)) {
      const at = joinPath(path, key);
      const known = properties !== undefined && Object.hasOwn(properties, key);
      const sub = known ? properties[key] : additional;
      if (isSchema(sub)) this.check(item, sub, at);
      else if (!known && !open) this.problem(at, `unknown field ${JSON.stringify(key)}`);
    }
  }

  /** True when some branch takes the value's type (or none can be told); else a problem. */
  private matchesABranch(value: unknown, branches: unknown[], path: string): boolean {
    const types: string[] = [];
    for (const branch of branches) {
      const resolved = isSchema(branch) ? this.resolve(branch) : undefined;
      const type = resolved === undefined ? undefined : expectedType(resolved);
      if (type === undefined) return true;
      types.push(type);
    }
    const given = typeOf(value);
    const fits = types.some(
      (t) =>
        t === given ||
        (t === 'number' && given === 'integer') ||
        (t === 'int-or-string' && (given === 'integer' || given === 'string')),
    );
    if (!fits) this.wrong(path, types.join(' or '), value);
    return false;
  }

  /** The schema a `$ref` names, followed to the end; undefined if it names none. */
  private resolve(node: Schema): Schema | undefined {
    let schema = node;
    for (let hops = 0; typeof schema.$ref === 'string'; hops++) {
      const ref = schema.$ref;
      const name = ref.startsWith(COMPONENTS) ? ref.slice(COMPONENTS.length) : undefined;
      // Quantity's JSON is a string or a number (its UnmarshalJSON), whatever a document says.
      if (name === QUANTITY) return QUANTITY_SCHEMA;
      const target = name === undefined ? undefined : this.components[name];
      // The API server's document is not ours to judge: a dangling reference checks nothing.
      if (target === undefined || hops >= MAX_REF_HOPS) return undefined;
      schema = target;
    }
    return schema;
  }

  private wrong(path: string, expected: string, value: unknown, embedded = false): void {
    this.problem(
      path,
      embedded
        ? `expected ${expected}, got a string with a placeholder inside text (only a value that is one placeholder, such as \${scope.id}, may render another type)`
        : `expected ${expected}, got ${typeOf(value)}`,
    );
  }

  private problem(path: string, message: string): void {
    if (this.problems.length < MAX_SCHEMA_PROBLEMS) this.problems.push({ path, message });
  }
}

/** The type a schema node wants: one of JSON Schema's, `int-or-string`, or undefined (any). */
function expectedType(schema: Schema): string | undefined {
  if (schema[INT_OR_STRING] === true || schema.format === 'int-or-string') return 'int-or-string';
  if (typeof schema.type === 'string') return schema.type;
  // Properties without a type: an object, as kube-openapi writes some definitions.
  if (isSchema(schema.properties) || isSchema(schema.additionalProperties)) return 'object';
  return undefined;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `.key`, or `["key"]` when the key is not a plain identifier (as template.ts writes paths). */
function joinPath(path: string, key: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}
