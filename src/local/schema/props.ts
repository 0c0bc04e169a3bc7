// A CRD's openAPIV3Schema node as apiextensions-apiserver holds it once decoded: the internal
// JSONSchemaProps (apis/apiextensions/types_jsonschema.go). Absent and JSON null read as Go's
// zero value; `additionalProperties` and `items` as their schema-or-bool and schema-or-array
// unions. Also how fmt's %#v prints such a node, for the messages that quote one whole.
import { goNumber, goQuote } from './goformat.js';

export type Props = Record<string, unknown>;

export const isProps = (v: unknown): v is Props =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string field; '' when absent (Go's zero value). */
export const str = (s: Props, key: string): string => {
  const v = s[key];
  return typeof v === 'string' ? v : '';
};

/** A bool field: only `true` is true. */
export const flag = (s: Props, key: string): boolean => s[key] === true;

/** A pointer field: set unless absent or null. */
export const isSet = (s: Props, key: string): boolean => s[key] !== undefined && s[key] !== null;

/** A map of schemas (properties, patternProperties, definitions), in the order written. */
export function schemaMap(s: Props, key: string): Array<[string, Props]> {
  const v = s[key];
  if (!isProps(v)) return [];
  return Object.entries(v).map(([k, child]) => [k, isProps(child) ? child : {}]);
}

/** A list of schemas (allOf, anyOf, oneOf). */
export function schemaList(s: Props, key: string): Props[] {
  const v = s[key];
  return Array.isArray(v) ? v.map((x) => (isProps(x) ? x : {})) : [];
}

/** A []string field; undefined when absent, as a nil slice. */
export function strings(s: Props, key: string): string[] | undefined {
  const v = s[key];
  return Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String(x))) : undefined;
}

/** JSONSchemaPropsOrBool: `true`/`false`, or a schema (which allows). */
export interface OrBool {
  allows: boolean;
  schema: Props | undefined;
}

export function additionalProperties(s: Props): OrBool | undefined {
  const v = s.additionalProperties;
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return { allows: v, schema: undefined };
  return { allows: true, schema: isProps(v) ? v : {} };
}

/** JSONSchemaPropsOrArray: one schema, or a list of them. */
export interface OrArray {
  schema: Props | undefined;
  schemas: Props[];
}

export function items(s: Props): OrArray | undefined {
  const v = s.items;
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return { schema: undefined, schemas: v.map((x) => (isProps(x) ? x : {})) };
  return { schema: isProps(v) ? v : {}, schemas: [] };
}

/** `default` is a *JSON: a JSON null decodes as no default at all. */
export const hasDefault = (s: Props): boolean => isSet(s, 'default');

/** The Go struct field of each JSON key, in the struct's order (JSONSchemaProps). */
export const GO_FIELDS: ReadonlyArray<readonly [go: string, json: string, kind: GoKind]> = [
  ['ID', 'id', 'string'],
  ['Schema', '$schema', 'string'],
  ['Ref', '$ref', '*string'],
  ['Description', 'description', 'string'],
  ['Type', 'type', 'string'],
  ['Nullable', 'nullable', 'bool'],
  ['Format', 'format', 'string'],
  ['Title', 'title', 'string'],
  ['Default', 'default', '*JSON'],
  ['Maximum', 'maximum', '*float64'],
  ['ExclusiveMaximum', 'exclusiveMaximum', 'bool'],
  ['Minimum', 'minimum', '*float64'],
  ['ExclusiveMinimum', 'exclusiveMinimum', 'bool'],
  ['MaxLength', 'maxLength', '*int64'],
  ['MinLength', 'minLength', '*int64'],
  ['Pattern', 'pattern', 'string'],
  ['MaxItems', 'maxItems', '*int64'],
  ['MinItems', 'minItems', '*int64'],
  ['UniqueItems', 'uniqueItems', 'bool'],
  ['MultipleOf', 'multipleOf', '*float64'],
  ['Enum', 'enum', '[]JSON'],
  ['MaxProperties', 'maxProperties', '*int64'],
  ['MinProperties', 'minProperties', '*int64'],
  ['Required', 'required', '[]string'],
  ['Items', 'items', '*JSONSchemaPropsOrArray'],
  ['AllOf', 'allOf', '[]JSONSchemaProps'],
  ['OneOf', 'oneOf', '[]JSONSchemaProps'],
  ['AnyOf', 'anyOf', '[]JSONSchemaProps'],
  ['Not', 'not', '*JSONSchemaProps'],
  ['Properties', 'properties', 'map'],
  ['AdditionalProperties', 'additionalProperties', '*JSONSchemaPropsOrBool'],
  ['PatternProperties', 'patternProperties', 'map'],
  ['Dependencies', 'dependencies', 'JSONSchemaDependencies'],
  ['AdditionalItems', 'additionalItems', '*JSONSchemaPropsOrBool'],
  ['Definitions', 'definitions', 'JSONSchemaDefinitions'],
  ['ExternalDocs', 'externalDocs', '*ExternalDocumentation'],
  ['Example', 'example', '*JSON'],
  ['XPreserveUnknownFields', 'x-kubernetes-preserve-unknown-fields', '*bool'],
  ['XEmbeddedResource', 'x-kubernetes-embedded-resource', 'bool'],
  ['XIntOrString', 'x-kubernetes-int-or-string', 'bool'],
  ['XListMapKeys', 'x-kubernetes-list-map-keys', '[]string'],
  ['XListType', 'x-kubernetes-list-type', '*string'],
  ['XMapType', 'x-kubernetes-map-type', '*string'],
  ['XValidations', 'x-kubernetes-validations', 'ValidationRules'],
];

type GoKind =
  | 'string'
  | 'bool'
  | '*string'
  | '*bool'
  | '*JSON'
  | '*float64'
  | '*int64'
  | '[]JSON'
  | '[]string'
  | '*JSONSchemaPropsOrArray'
  | '[]JSONSchemaProps'
  | '*JSONSchemaProps'
  | 'map'
  | '*JSONSchemaPropsOrBool'
  | 'JSONSchemaDependencies'
  | 'JSONSchemaDefinitions'
  | '*ExternalDocumentation'
  | 'ValidationRules';

/** Whether a field holds Go's zero value, as reflect.DeepEqual with the zero would say. */
export function isZero(s: Props, json: string, kind: GoKind): boolean {
  const v = s[json];
  if (v === undefined || v === null) return true;
  switch (kind) {
    case 'string':
      return v === '';
    case 'bool':
      return v !== true;
    // Decoded slices and maps are non-nil once written, even empty, except the ones apiserver
    // builds by appending (enum) or skips when empty.
    case '[]JSON':
      return Array.isArray(v) && v.length === 0;
    default:
      return false;
  }
}

// %#v prints a non-nil pointer below the top level as its address, which no one can predict;
// this one stands for it.
const ADDRESS = '0xc000000000';

const PKG = 'apiextensions';

/** fmt's %#v of a decoded JSON value held in an apiextensions.JSON (interface{}). */
function sharpJSON(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[]interface {}{${v.map(sharpJSON).join(', ')}}`;
  const record = v as Props;
  return `map[string]interface {}{${Object.keys(record)
    .sort()
    .map((k) => `${goQuote(k)}:${sharpJSON(record[k])}`)
    .join(', ')}}`;
}

function sharpField(s: Props, json: string, kind: GoKind, budget: Budget): string {
  const v = s[json];
  const nil = v === undefined || v === null;
  const pointer = (type: string) => `(*${type})(${nil ? 'nil' : ADDRESS})`;
  switch (kind) {
    case 'string':
      return goQuote(typeof v === 'string' ? v : '');
    case 'bool':
      return v === true ? 'true' : 'false';
    case '*string':
      return pointer('string');
    case '*bool':
      return pointer('bool');
    case '*JSON':
      return pointer(`${PKG}.JSON`);
    case '*float64':
      return pointer('float64');
    case '*int64':
      return pointer('int64');
    case '*JSONSchemaPropsOrArray':
      return pointer(`${PKG}.JSONSchemaPropsOrArray`);
    case '*JSONSchemaProps':
      return pointer(`${PKG}.JSONSchemaProps`);
    case '*JSONSchemaPropsOrBool':
      return pointer(`${PKG}.JSONSchemaPropsOrBool`);
    case '*ExternalDocumentation':
      return pointer(`${PKG}.ExternalDocumentation`);
    case '[]JSON':
      return Array.isArray(v) && v.length > 0
        ? `[]${PKG}.JSON{${v.map(sharpJSON).join(', ')}}`
        : `[]${PKG}.JSON(nil)`;
    case '[]string': {
      const list = strings(s, json);
      return list === undefined ? '[]string(nil)' : `[]string{${list.map(goQuote).join(', ')}}`;
    }
    case '[]JSONSchemaProps':
      return Array.isArray(v)
        ? `[]${PKG}.JSONSchemaProps{${schemaList(s, json)
            .map((x) => sharpNode(x, budget))
            .join(', ')}}`
        : `[]${PKG}.JSONSchemaProps(nil)`;
    case 'map':
      return isProps(v)
        ? `map[string]${PKG}.JSONSchemaProps{${schemaMap(s, json)
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([k, child]) => `${goQuote(k)}:${sharpNode(child, budget)}`)
            .join(', ')}}`
        : `map[string]${PKG}.JSONSchemaProps(nil)`;
    case 'ValidationRules':
      return Array.isArray(v)
        ? `${PKG}.ValidationRules{${v.map(sharpRule).join(', ')}}`
        : `${PKG}.ValidationRules(nil)`;
    // Both are refused wherever they appear; their contents are not spelled out.
    case 'JSONSchemaDependencies':
    case 'JSONSchemaDefinitions':
      return nil ? `${PKG}.${kind}(nil)` : `${PKG}.${kind}{…}`;
  }
}

function sharpRule(rule: unknown): string {
  const r = isProps(rule) ? rule : {};
  const text = (k: string) => goQuote(str(r, k));
  const pointer = (k: string, type: string) => `(*${type})(${isSet(r, k) ? ADDRESS : 'nil'})`;
  return `${PKG}.ValidationRule{Rule:${text('rule')}, Message:${text('message')}, MessageExpression:${text('messageExpression')}, Reason:${pointer('reason', `${PKG}.FieldValueErrorReason`)}, FieldPath:${text('fieldPath')}, OptionalOldSelf:${pointer('optionalOldSelf', 'bool')}}`;
}

/** What is left to print: each node prints every one of its ~45 fields, even empty. */
interface Budget {
  left: number;
}

// Go prints the whole schema whatever its size; past this many characters the rest is `…`, so
// that a schema of many small nodes cannot make a message hundreds of times its own size.
const SHARP_LIMIT = 64 * 1024;

function sharpNode(s: Props, budget: Budget): string {
  if (budget.left <= 0) return '…';
  const fields = GO_FIELDS.map(([go, json, kind]) => `${go}:${sharpField(s, json, kind, budget)}`);
  const text = `${PKG}.JSONSchemaProps{${fields.join(', ')}}`;
  budget.left -= text.length;
  return text;
}

/** fmt's %#v of a JSONSchemaProps value: `apiextensions.JSONSchemaProps{ID:"", ...}`. */
export function sharpSchema(s: Props): string {
  return sharpNode(s, { left: SHARP_LIMIT });
}
