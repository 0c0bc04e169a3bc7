// What makes a CRD schema structural, as apiextensions-apiserver decides it
// (pkg/apiserver/schema): NewStructural (convert.go) refuses what a structural schema cannot
// hold; ValidateStructural (validation.go, complete.go) checks its invariants — a type for
// every specified field, only value validations under allOf/anyOf/oneOf/not, nothing there that
// the structure does not also say, metadata restricted to name and generateName — with the
// options kube-apiserver 1.32 uses for CRDs (nothing nested beyond that).
import { RE2JS } from 're2js';
import {
  childPath,
  type FieldIssue,
  forbidden,
  indexPath,
  invalid,
  issueText,
  keyPath,
  required,
} from './field-errors.js';
import {
  additionalProperties,
  flag,
  hasDefault,
  isProps,
  isSet,
  items,
  type Props,
  schemaList,
  schemaMap,
  str,
  strings,
} from './props.js';

// --- NewStructural ------------------------------------------------------------------------

/** validateUnsupportedFields: what no structural schema holds, anywhere. */
function unsupported(s: Props): string | undefined {
  if (str(s, 'id') !== '') return "OpenAPIV3Schema 'id' is not supported";
  if (str(s, '$schema') !== '') return "OpenAPIV3Schema 'schema' is not supported";
  if (str(s, '$ref') !== '') return "OpenAPIV3Schema '$ref' is not supported";
  if (schemaMap(s, 'patternProperties').length > 0)
    return "OpenAPIV3Schema 'patternProperties' is not supported";
  if (isProps(s.dependencies) && Object.keys(s.dependencies).length > 0)
    return "OpenAPIV3Schema 'dependencies' is not supported";
  if (isSet(s, 'additionalItems')) return "OpenAPIV3Schema 'additionalItems' is not supported";
  if (schemaMap(s, 'definitions').length > 0)
    return "OpenAPIV3Schema 'definitions' is not supported";
  return undefined;
}

const ITEMS_ARRAY = "OpenAPIV3Schema 'items' must be a schema, but is an array";

/** The error NewStructural returns for this schema, in the order it walks it; undefined if none. */
export function newStructuralError(s: Props, nested = false): string | undefined {
  const own = unsupported(s);
  if (own !== undefined) return own;
  // newValueValidation: not, then allOf, anyOf, oneOf.
  for (const junctor of [
    ...(isProps(s.not) ? [s.not] : []),
    ...schemaList(s, 'allOf'),
    ...schemaList(s, 'anyOf'),
    ...schemaList(s, 'oneOf'),
  ]) {
    const err = newStructuralError(junctor, true);
    if (err !== undefined) return err;
  }
  // newGenerics: additionalProperties' schema is converted on its own.
  const additional = additionalProperties(s);
  if (additional?.schema !== undefined) {
    const err = newStructuralError(additional.schema, nested);
    if (err !== undefined) return err;
  }
  if (s['x-kubernetes-preserve-unknown-fields'] === false)
    return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined";
  const list = items(s);
  if (list !== undefined) {
    if (list.schemas.length > 0) return ITEMS_ARRAY;
    if (list.schema !== undefined) {
      const err = newStructuralError(list.schema, nested);
      if (err !== undefined) return err;
    }
  }
  for (const [, child] of schemaMap(s, 'properties')) {
    const err = newStructuralError(child, nested);
    if (err !== undefined) return err;
  }
  return undefined;
}

// --- ValidateStructural ---------------------------------------------------------------------

type Level = 'root' | 'item' | 'field';

const TYPE_EMPTY: Record<Level, string> = {
  root: 'must not be empty at the root',
  item: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
};

/** The IntOrString pattern's branch: `type: <t>` and nothing else. */
function onlyType(s: Props, type: string): boolean {
  if (s.type !== type) return false;
  return Object.entries(s).every(
    ([k, v]) => k === 'type' || v === undefined || v === null || v === false || v === '',
  );
}

/** anyOf: [{type: integer}, {type: string}], the first IntOrString exception. */
function isIntOrStringAnyOf(s: Props): boolean {
  const anyOf = schemaList(s, 'anyOf');
  return (
    anyOf.length === 2 &&
    onlyType(anyOf[0] as Props, 'integer') &&
    onlyType(anyOf[1] as Props, 'string')
  );
}

/** allOf: [{anyOf: [{type: integer}, {type: string}]}, ...], the second. */
const isIntOrStringAllOf = (s: Props): boolean => {
  const first = schemaList(s, 'allOf')[0];
  return first !== undefined && isIntOrStringAnyOf(first);
};

/** validateValueValidation: the junctors of a node, and its pattern. */
function valueValidation(
  s: Props,
  skipAnyOf: boolean,
  skipFirstAllOfAnyOf: boolean,
  lvl: Level,
  path: string,
  out: FieldIssue[],
): void {
  if (!skipAnyOf) {
    schemaList(s, 'anyOf').forEach((x, i) => {
      nested(x, false, lvl, indexPath(childPath(path, 'anyOf'), i), out);
    });
  }
  schemaList(s, 'allOf').forEach((x, i) => {
    nested(x, skipFirstAllOfAnyOf && i === 0, lvl, indexPath(childPath(path, 'allOf'), i), out);
  });
  schemaList(s, 'oneOf').forEach((x, i) => {
    nested(x, false, lvl, indexPath(childPath(path, 'oneOf'), i), out);
  });
  if (isProps(s.not)) nested(s.not, false, lvl, childPath(path, 'not'), out);
  const pattern = str(s, 'pattern');
  if (pattern !== '') {
    // regexp.Compile: RE2, whose error text re2js reproduces.
    try {
      RE2JS.compile(pattern);
    } catch (error) {
      out.push(
        invalid(
          childPath(path, 'pattern'),
          pattern,
          `must be a valid regular expression, but isn't: ${(error as Error).message}`,
        ),
      );
    }
  }
}

/** validateNestedValueValidation: under a junctor only value validations may stand. */
function nested(v: Props, skipAnyOf: boolean, lvl: Level, path: string, out: FieldIssue[]): void {
  valueValidation(v, skipAnyOf, false, lvl, path, out);
  const list = items(v);
  if (list?.schema !== undefined) nested(list.schema, false, lvl, childPath(path, 'items'), out);
  const props = schemaMap(v, 'properties');
  for (const [k, child] of props) {
    nested(child, false, 'field', keyPath(childPath(path, 'properties'), k), out);
  }
  const at = (name: string) => childPath(path, name);
  if (str(v, 'type') !== '') out.push(forbidden(at('type'), 'must be empty to be structural'));
  if (additionalProperties(v) !== undefined)
    out.push(forbidden(at('additionalProperties'), 'must be undefined to be structural'));
  if (hasDefault(v)) out.push(forbidden(at('default'), 'must be undefined to be structural'));
  if (str(v, 'title') !== '') out.push(forbidden(at('title'), 'must be empty to be structural'));
  if (str(v, 'description') !== '')
    out.push(forbidden(at('description'), 'must be empty to be structural'));
  if (flag(v, 'nullable')) out.push(forbidden(at('nullable'), 'must be false to be structural'));
  for (const ext of [
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-embedded-resource',
    'x-kubernetes-int-or-string',
  ]) {
    if (flag(v, ext)) out.push(forbidden(at(ext), 'must be false to be structural'));
  }
  if ((strings(v, 'x-kubernetes-list-map-keys') ?? []).length > 0)
    out.push(forbidden(at('x-kubernetes-list-map-keys'), 'must be empty to be structural'));
  if (isSet(v, 'x-kubernetes-list-type'))
    out.push(forbidden(at('x-kubernetes-list-type'), 'must be undefined to be structural'));
  if (isSet(v, 'x-kubernetes-map-type'))
    out.push(forbidden(at('x-kubernetes-map-type'), 'must be undefined to be structural'));
  if (Array.isArray(v['x-kubernetes-validations']) && v['x-kubernetes-validations'].length > 0)
    out.push(forbidden(at('x-kubernetes-validations'), 'must be empty to be structural'));
  // Reasoning about metadata there could restrict it in ways the server does not want.
  if (props.some(([k]) => k === 'metadata')) {
    out.push(
      forbidden(
        keyPath(childPath(path, 'properties'), 'metadata'),
        'must not be specified in a nested context',
      ),
    );
  }
}

/** Whether a ValueValidation is all zero values (the metadata rule compares it with one). */
function noValueValidation(s: Props): boolean {
  for (const k of ['format', 'pattern']) if (str(s, k) !== '') return false;
  for (const k of ['exclusiveMaximum', 'exclusiveMinimum', 'uniqueItems'])
    if (flag(s, k)) return false;
  for (const k of [
    'maximum',
    'minimum',
    'maxLength',
    'minLength',
    'maxItems',
    'minItems',
    'multipleOf',
    'maxProperties',
    'minProperties',
    'required',
    'not',
  ]) {
    if (isSet(s, k)) return false;
  }
  for (const k of ['enum', 'allOf', 'oneOf', 'anyOf']) {
    const v = s[k];
    if (Array.isArray(v) && v.length > 0) return false;
  }
  return true;
}

/** validateStructuralMetadataInvariants: `metadata` may restrict name and generateName only. */
function metadataInvariants(
  s: Props,
  checkMetadata: boolean,
  lvl: Level,
  path: string,
  out: FieldIssue[],
): void {
  const type = str(s, 'type');
  if (checkMetadata && type !== 'object')
    out.push(invalid(childPath(path, 'type'), type, 'must be object'));
  if (lvl !== 'root') return;
  const names = schemaMap(s, 'properties').map(([k]) => k);
  const onlyNames =
    names.length === 0 ||
    (names.length <= 2 && names.every((k) => k === 'name' || k === 'generateName'));
  const generic =
    str(s, 'description') === '' &&
    str(s, 'title') === '' &&
    !flag(s, 'nullable') &&
    additionalProperties(s) === undefined;
  const extensions =
    !flag(s, 'x-kubernetes-preserve-unknown-fields') &&
    !flag(s, 'x-kubernetes-embedded-resource') &&
    !flag(s, 'x-kubernetes-int-or-string') &&
    strings(s, 'x-kubernetes-list-map-keys') === undefined &&
    !isSet(s, 'x-kubernetes-list-type') &&
    !isSet(s, 'x-kubernetes-map-type') &&
    !isSet(s, 'x-kubernetes-validations');
  if (!(onlyNames && generic && extensions && items(s) === undefined && noValueValidation(s))) {
    // The server's own TODO: this is an Invalid, which it cannot print, so a Forbidden.
    out.push(
      forbidden(
        path,
        'must not specify anything other than name and generateName, but metadata is implicitly specified',
      ),
    );
  }
}

/** validateStructuralInvariants, recursively over items, properties and additionalProperties. */
function invariants(s: Props, lvl: Level, path: string, out: FieldIssue[]): void {
  const type = str(s, 'type');
  const list = items(s);
  const itemSchema = list?.schema;
  if (type === 'array' && itemSchema === undefined)
    out.push(required(childPath(path, 'items'), 'must be specified'));
  if (itemSchema !== undefined) invariants(itemSchema, 'item', childPath(path, 'items'), out);
  const props = schemaMap(s, 'properties');
  for (const [k, child] of props) {
    invariants(child, 'field', keyPath(childPath(path, 'properties'), k), out);
  }
  const additional = additionalProperties(s);
  if (additional !== undefined) {
    if (lvl === 'root')
      out.push(forbidden(childPath(path, 'additionalProperties'), 'must not be used at the root'));
    if (additional.schema !== undefined)
      invariants(additional.schema, 'field', childPath(path, 'additionalProperties'), out);
  }
  const intOrString = flag(s, 'x-kubernetes-int-or-string');
  const preserve = flag(s, 'x-kubernetes-preserve-unknown-fields');
  const embedded = flag(s, 'x-kubernetes-embedded-resource');
  // validateExtensions
  if (intOrString && preserve) {
    out.push(
      invalid(
        childPath(path, 'x-kubernetes-preserve-unknown-fields'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  }
  if (intOrString && embedded) {
    out.push(
      invalid(
        childPath(path, 'x-kubernetes-embedded-resource'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  }
  valueValidation(s, isIntOrStringAnyOf(s), isIntOrStringAllOf(s), lvl, path, out);

  const checkMetadata = lvl === 'root' || embedded;
  const atType = childPath(path, 'type');
  if (embedded && type !== 'object') {
    const detail = 'must be object if x-kubernetes-embedded-resource is true';
    out.push(type === '' ? required(atType, detail) : invalid(atType, type, detail));
  } else if (type === '' && !intOrString && !preserve) {
    out.push(required(atType, TYPE_EMPTY[lvl]));
  }
  if (embedded && additional !== undefined) {
    out.push(
      forbidden(
        childPath(path, 'additionalProperties'),
        'must not be used if x-kubernetes-embedded-resource is set',
      ),
    );
  }
  if (lvl === 'root' && type !== '' && type !== 'object')
    out.push(invalid(atType, type, 'must be object at the root'));
  const prop = (name: string) => props.find(([k]) => k === name)?.[1];
  const propertiesPath = childPath(path, 'properties');
  if (checkMetadata) {
    for (const name of ['kind', 'apiVersion']) {
      const p = prop(name);
      if (p !== undefined && str(p, 'type') !== 'string') {
        out.push(
          invalid(
            childPath(keyPath(propertiesPath, name), 'type'),
            str(p, 'type'),
            'must be string',
          ),
        );
      }
    }
  }
  const metadata = prop('metadata');
  if (metadata !== undefined)
    metadataInvariants(metadata, checkMetadata, lvl, keyPath(propertiesPath, 'metadata'), out);
  if (embedded && !preserve && props.length === 0) {
    out.push(
      required(
        propertiesPath,
        'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ),
    );
  }
}

// --- completeness (complete.go) -------------------------------------------------------------

/** validateValueValidationCompleteness: what the junctors of `v` name, `s` must specify. */
function valueCompleteness(
  v: Props,
  s: Props | undefined,
  sPath: string,
  vPath: string,
  out: FieldIssue[],
): void {
  if (s === undefined) {
    out.push(required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  if (isProps(v.not)) nestedCompleteness(v.not, s, sPath, childPath(vPath, 'not'), out);
  for (const junctor of ['allOf', 'anyOf', 'oneOf']) {
    schemaList(v, junctor).forEach((x, i) => {
      nestedCompleteness(x, s, sPath, indexPath(childPath(vPath, junctor), i), out);
    });
  }
}

function nestedCompleteness(
  v: Props,
  s: Props | undefined,
  sPath: string,
  vPath: string,
  out: FieldIssue[],
): void {
  if (s === undefined) {
    out.push(required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  valueCompleteness(v, s, sPath, vPath, out);
  const vItems = items(v)?.schema;
  if (vItems !== undefined) {
    nestedCompleteness(
      vItems,
      items(s)?.schema,
      childPath(sPath, 'items'),
      childPath(vPath, 'items'),
      out,
    );
  }
  const sProps = new Map(schemaMap(s, 'properties'));
  for (const [k, child] of schemaMap(v, 'properties')) {
    const sChild = sProps.get(k);
    const sAt = keyPath(childPath(sPath, 'properties'), k);
    const vAt = keyPath(childPath(vPath, 'properties'), k);
    if (sChild === undefined) out.push(required(sAt, `because it is defined in ${vAt}`));
    else nestedCompleteness(child, sChild, sAt, vAt, out);
  }
}

/**
 * ValidateStructural: every violation of a structural schema, sorted by their text as the
 * server sorts them. Only meaningful when newStructuralError found nothing.
 */
export function validateStructural(root: Props, path: string): FieldIssue[] {
  const out: FieldIssue[] = [];
  invariants(root, 'root', path, out);
  // complete.go walks the root's junctors only (and the junctors nested in those).
  valueCompleteness(root, root, path, path, out);
  const text = out.map((i) => [issueText(i), i] as const);
  text.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return text.map(([, i]) => i);
}
