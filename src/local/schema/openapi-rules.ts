// The rules apiextensions-apiserver applies to every node of a CRD's openAPIV3Schema
// (apis/apiextensions/validation/validation.go: ValidateCustomResourceDefinitionOpenAPISchema
// and specStandardValidatorV3.validate): the keywords Kubernetes does not support, defaults
// where they cannot be, additionalProperties beside properties, and the x-kubernetes-*
// extensions (list and map types, map list keys, the checks of x-kubernetes-validations, their
// CEL compiled by schema/cel-rules.ts).

import { messageExpressionCompileError, ruleCompileError } from './cel-rules.js';
import {
  childPath,
  type FieldIssue,
  forbidden,
  GoText,
  indexPath,
  invalid,
  keyPath,
  notSupported,
  required,
} from './field-errors.js';
import { goQuote, goStrings } from './goformat.js';
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

/** Which of the rules that an update of an older CRD may be spared apply (validationOptions). */
export interface SchemaRuleOptions {
  requireValidPropertyType: boolean;
  requireAtomicSetType: boolean;
  requireMapListKeysMapSetValidation: boolean;
}

export const ALL_RULES: SchemaRuleOptions = {
  requireValidPropertyType: true,
  requireAtomicSetType: true,
  requireMapListKeysMapSetValidation: true,
};

/** specStandardValidatorV3, as it is narrowed on the way down. */
interface Ssv {
  allowDefaults: boolean;
  disallowDefaultsReason: string;
  insideResourceMeta: boolean;
}

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);
const SUPPORTED_REASONS = [
  'FieldValueDuplicate',
  'FieldValueForbidden',
  'FieldValueInvalid',
  'FieldValueRequired',
];
const NEWLINES = /[\n\r]+/;

const nonEmptyMap = (v: unknown) => isProps(v) && Object.keys(v).length > 0;

/** specStandardValidatorV3.validate: the keywords of OpenAPI v3 that Kubernetes refuses. */
function standard(
  s: Props,
  path: string,
  ssv: Ssv,
  options: SchemaRuleOptions,
  out: FieldIssue[],
): void {
  const at = (name: string) => childPath(path, name);
  const type = str(s, 'type');
  if (options.requireValidPropertyType && type !== '' && !OPENAPI_V3_TYPES.includes(type))
    out.push(notSupported(at('type'), type, OPENAPI_V3_TYPES));
  if (hasDefault(s) && !ssv.allowDefaults) {
    const reason = ssv.disallowDefaultsReason;
    out.push(forbidden(at('default'), `must not be set${reason === '' ? '' : ` ${reason}`}`));
  }
  if (str(s, 'id') !== '') out.push(forbidden(at('id'), 'id is not supported'));
  if (isSet(s, 'additionalItems'))
    out.push(forbidden(at('additionalItems'), 'additionalItems is not supported'));
  if (nonEmptyMap(s.patternProperties))
    out.push(forbidden(at('patternProperties'), 'patternProperties is not supported'));
  if (nonEmptyMap(s.definitions))
    out.push(forbidden(at('definitions'), 'definitions is not supported'));
  if (isSet(s, 'dependencies'))
    out.push(forbidden(at('dependencies'), 'dependencies is not supported'));
  if (isSet(s, '$ref')) out.push(forbidden(at('$ref'), '$ref is not supported'));
  if (type === 'null')
    out.push(forbidden(at('type'), 'type cannot be set to null, use nullable as an alternative'));
  if ((items(s)?.schemas.length ?? 0) > 0)
    out.push(forbidden(at('items'), 'items must be a schema object and not an array'));
  if (ssv.insideResourceMeta && flag(s, 'x-kubernetes-embedded-resource')) {
    out.push(
      forbidden(at('x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'),
    );
  }
}

/** validateMapListKeysMapSet: set and map items, and map keys, are never null. */
function mapListKeysMapSet(s: Props, path: string, out: FieldIssue[]): void {
  const item = items(s)?.schema;
  const listType = s['x-kubernetes-list-type'];
  if (item === undefined || (listType !== 'set' && listType !== 'map')) return;
  const itemsPath = childPath(path, 'items');
  if (flag(item, 'nullable')) {
    out.push(
      forbidden(
        childPath(itemsPath, 'nullable'),
        `cannot be nullable when x-kubernetes-list-type is ${listType}`,
      ),
    );
  }
  if (listType !== 'map') return;
  const requiredKeys = new Set(strings(item, 'required') ?? []);
  const props = new Map(schemaMap(item, 'properties'));
  for (const key of strings(s, 'x-kubernetes-list-map-keys') ?? []) {
    const prop = props.get(key);
    if (prop === undefined) continue;
    const at = keyPath(childPath(itemsPath, 'properties'), key);
    if (!requiredKeys.has(key) && !hasDefault(prop)) {
      out.push(
        required(
          childPath(at, 'default'),
          'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
        ),
      );
    }
    if (flag(prop, 'nullable')) {
      out.push(
        forbidden(
          childPath(at, 'nullable'),
          'this property is in x-kubernetes-list-map-keys, so it cannot be nullable',
        ),
      );
    }
  }
}

/** The extensions' own rules: map and list types, map list keys. */
function extensions(s: Props, path: string, options: SchemaRuleOptions, out: FieldIssue[]): void {
  const at = (name: string) => childPath(path, name);
  const type = str(s, 'type');
  if (s['x-kubernetes-preserve-unknown-fields'] === false)
    out.push(
      invalid(at('x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'),
    );
  const mapType = s['x-kubernetes-map-type'];
  if (isSet(s, 'x-kubernetes-map-type')) {
    if (type !== 'object') {
      const detail = 'must be object if x-kubernetes-map-type is specified';
      out.push(type === '' ? required(at('type'), detail) : invalid(at('type'), type, detail));
    }
    if (mapType !== 'atomic' && mapType !== 'granular')
      out.push(notSupported(at('x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
  }
  const listType = s['x-kubernetes-list-type'];
  const hasListType = isSet(s, 'x-kubernetes-list-type');
  const item = items(s);
  if (hasListType && type !== 'array') {
    const detail = 'must be array if x-kubernetes-list-type is specified';
    out.push(type === '' ? required(at('type'), detail) : invalid(at('type'), type, detail));
  } else if (options.requireAtomicSetType && listType === 'set' && item?.schema !== undefined) {
    const is = item.schema;
    const detail = 'must be atomic as item of a list with x-kubernetes-list-type=set';
    if (str(is, 'type') === 'array') {
      const inner = is['x-kubernetes-list-type'];
      if (isSet(is, 'x-kubernetes-list-type') && inner !== 'atomic')
        out.push(invalid(childPath(at('items'), 'x-kubernetes-list-type'), inner, detail));
    } else if (str(is, 'type') === 'object' && is['x-kubernetes-map-type'] !== 'atomic') {
      // The server quotes the items' list type here, which an object's items have not.
      out.push(
        invalid(
          childPath(at('items'), 'x-kubernetes-map-type'),
          is['x-kubernetes-list-type'],
          detail,
        ),
      );
    }
  }
  if (hasListType && listType !== 'atomic' && listType !== 'set' && listType !== 'map')
    out.push(notSupported(at('x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  const keys = strings(s, 'x-kubernetes-list-map-keys') ?? [];
  if (keys.length > 0) {
    const detail = 'must be map if x-kubernetes-list-map-keys is non-empty';
    if (!hasListType) out.push(required(at('x-kubernetes-list-type'), detail));
    else if (listType !== 'map') out.push(invalid(at('x-kubernetes-list-type'), listType, detail));
  }
  if (listType === 'map') {
    if (keys.length === 0) {
      out.push(
        required(
          at('x-kubernetes-list-map-keys'),
          'must not be empty if x-kubernetes-list-type is map',
        ),
      );
    }
    if (item === undefined)
      out.push(required(at('items'), 'must have a schema if x-kubernetes-list-type is map'));
    else if (item.schema === undefined) {
      out.push(
        invalid(
          at('items'),
          new GoText(
            `apiextensions.JSONSchemaPropsOrArray{Schema:(*apiextensions.JSONSchemaProps)(nil), JSONSchemas:[]apiextensions.JSONSchemaProps{…}}`,
          ),
          'must only have a single schema if x-kubernetes-list-type is map',
        ),
      );
    } else {
      const itemType = str(item.schema, 'type');
      if (itemType !== 'object') {
        out.push(
          invalid(
            childPath(at('items'), 'type'),
            itemType,
            "must be object if parent array's x-kubernetes-list-type is map",
          ),
        );
      } else {
        const props = new Map(schemaMap(item.schema, 'properties'));
        const seen = new Set<string>();
        const keysValue = new GoText(goStrings(keys));
        for (const key of keys) {
          const prop = props.get(key);
          if (prop === undefined) {
            out.push(
              invalid(
                at('x-kubernetes-list-map-keys'),
                keysValue,
                'entries must all be names of item properties',
              ),
            );
          } else if (str(prop, 'type') === 'array' || str(prop, 'type') === 'object') {
            out.push(
              invalid(
                childPath(keyPath(childPath(at('items'), 'properties'), key), 'type'),
                itemType,
                "must be a scalar type if parent array's x-kubernetes-list-type is map",
              ),
            );
          }
          if (seen.has(key)) {
            out.push(
              invalid(
                at('x-kubernetes-list-map-keys'),
                keysValue,
                'must not contain duplicate entries',
              ),
            );
          }
          seen.add(key);
        }
      }
    }
  }
  if (options.requireMapListKeysMapSetValidation) mapListKeysMapSet(s, path, out);
}

/** An apiextensions.ValidationRule as Go's %#v prints it (a set pointer shows an address). */
function ruleSharp(rule: Props): GoText {
  const pointer = (type: string, key: string) =>
    isSet(rule, key) ? `(*${type})(0xc000000000)` : `(*${type})(nil)`;
  return new GoText(
    `apiextensions.ValidationRule{Rule:${goQuote(str(rule, 'rule'))}, Message:${goQuote(str(rule, 'message'))}, MessageExpression:${goQuote(str(rule, 'messageExpression'))}, Reason:${pointer('apiextensions.FieldValueErrorReason', 'reason')}, FieldPath:${goQuote(str(rule, 'fieldPath'))}, OptionalOldSelf:${pointer('bool', 'optionalOldSelf')}}`,
  );
}

/** The checks of x-kubernetes-validations, and their CEL compiled. */
function validationRules(s: Props, path: string, out: FieldIssue[]): void {
  const rules = s['x-kubernetes-validations'];
  if (!Array.isArray(rules)) return;
  rules.forEach((raw, i) => {
    const rule = isProps(raw) ? raw : {};
    const at = (name: string) =>
      childPath(indexPath(childPath(path, 'x-kubernetes-validations'), i), name);
    const text = str(rule, 'rule').trim();
    const message = str(rule, 'message');
    const trimmedMessage = message.trim();
    if (text === '') out.push(required(at('rule'), 'rule is not specified'));
    else if (message !== '' && trimmedMessage === '')
      out.push(invalid(at('message'), message, 'message must be non-empty if specified'));
    else if (NEWLINES.test(trimmedMessage))
      out.push(invalid(at('message'), message, 'message must not contain line breaks'));
    else if (NEWLINES.test(text) && trimmedMessage === '')
      out.push(required(at('message'), 'message must be specified if rule contains line breaks'));
    const messageExpression = str(rule, 'messageExpression');
    if (messageExpression !== '' && messageExpression.trim() === '') {
      out.push(
        required(at('messageExpression'), 'messageExpression must be non-empty if specified'),
      );
    }
    if (isSet(rule, 'reason') && !SUPPORTED_REASONS.includes(str(rule, 'reason')))
      out.push(notSupported(at('reason'), rule.reason, SUPPORTED_REASONS));
    const fieldPath = str(rule, 'fieldPath');
    if (fieldPath !== '' && fieldPath.trim() === '')
      out.push(invalid(at('fieldPath'), fieldPath, 'fieldPath must be non-empty if specified'));
    if (NEWLINES.test(fieldPath))
      out.push(invalid(at('fieldPath'), fieldPath, 'fieldPath must not contain line breaks'));
    // The CEL itself (cel.Compile in validation.go): the rule as %#v prints it, then cel-go's issues.
    const ruleError = text === '' ? undefined : ruleCompileError(str(rule, 'rule'));
    if (ruleError !== undefined) out.push(invalid(at('rule'), ruleSharp(rule), ruleError));
    const messageError =
      messageExpression.trim() === ''
        ? undefined
        : messageExpressionCompileError(messageExpression);
    if (messageError !== undefined)
      out.push(invalid(at('messageExpression'), ruleSharp(rule), messageError));
  });
}

function walk(
  s: Props,
  path: string,
  ssv: Ssv,
  isRoot: boolean,
  options: SchemaRuleOptions,
  out: FieldIssue[],
): void {
  standard(s, path, ssv, options, out);
  if (flag(s, 'uniqueItems')) {
    out.push(
      forbidden(
        childPath(path, 'uniqueItems'),
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  }
  const props = schemaMap(s, 'properties');
  const additional = additionalProperties(s);
  if (additional !== undefined) {
    // `additionalProperties: true` beside properties only restates the default; false or a
    // schema would contradict the convention that unknown fields are ignored.
    if (props.length > 0 && (!additional.allows || additional.schema !== undefined)) {
      out.push(
        forbidden(
          childPath(path, 'additionalProperties'),
          'additionalProperties and properties are mutual exclusive',
        ),
      );
    }
    if (additional.schema !== undefined) {
      const sub = ssv.insideResourceMeta
        ? {
            ...ssv,
            allowDefaults: false,
            disallowDefaultsReason: 'inside additionalProperties applying to object metadata',
          }
        : ssv;
      walk(additional.schema, childPath(path, 'additionalProperties'), sub, false, options, out);
    }
  }
  const embedded = flag(s, 'x-kubernetes-embedded-resource');
  for (const [name, child] of props) {
    let sub = ssv;
    if ((isRoot || embedded) && META_FIELDS.has(name)) {
      sub = { ...sub, insideResourceMeta: true };
      if (isRoot)
        sub = { ...sub, allowDefaults: false, disallowDefaultsReason: `in top-level ${name}` };
    }
    walk(child, keyPath(childPath(path, 'properties'), name), sub, false, options, out);
  }
  if (isProps(s.not)) walk(s.not, childPath(path, 'not'), ssv, false, options, out);
  for (const junctor of ['allOf', 'oneOf', 'anyOf']) {
    schemaList(s, junctor).forEach((x, i) => {
      walk(x, indexPath(childPath(path, junctor), i), ssv, false, options, out);
    });
  }
  for (const [name, child] of schemaMap(s, 'definitions'))
    walk(child, keyPath(childPath(path, 'definitions'), name), ssv, false, options, out);
  const list = items(s);
  if (list?.schema !== undefined)
    walk(list.schema, childPath(path, 'items'), ssv, false, options, out);
  list?.schemas.forEach((x, i) => {
    walk(x, indexPath(childPath(path, 'items'), i), ssv, false, options, out);
  });
  if (isProps(s.dependencies)) {
    for (const [name, dependency] of Object.entries(s.dependencies)) {
      if (isProps(dependency))
        walk(dependency, keyPath(childPath(path, 'dependencies'), name), ssv, false, options, out);
    }
  }
  extensions(s, path, options, out);
  validationRules(s, path, out);
}

/** ValidateCustomResourceDefinitionOpenAPISchema over a whole openAPIV3Schema, from its root. */
export function openAPISchemaIssues(
  root: Props,
  path: string,
  options: SchemaRuleOptions = ALL_RULES,
): FieldIssue[] {
  const out: FieldIssue[] = [];
  walk(
    root,
    path,
    { allowDefaults: true, disallowDefaultsReason: '', insideResourceMeta: false },
    true,
    options,
    out,
  );
  return out;
}
