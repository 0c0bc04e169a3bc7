// The API server's rules for a CRD's openAPIV3Schema (apiextensions.k8s.io/v1): the schema
// must be structural, and use only the keywords and extensions Kubernetes accepts. Used
// when a CRD is created on the local control plane, and by the tests of our own CRDs.

import { RE2JS } from 're2js';
import { goQuote } from './goformat.js';

type Schema = Record<string, unknown>;

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const FORBIDDEN = [
  '$ref',
  '$schema',
  'definitions',
  'dependencies',
  'additionalItems',
  'patternProperties',
  'id',
];
const LIST_TYPES = new Set(['atomic', 'set', 'map']);
// Inside allOf/anyOf/oneOf/not only value validations may stand (the "skeleton" rule).
const NOT_IN_JUNCTORS = [
  'type',
  'nullable',
  'default',
  'description',
  'additionalProperties',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
];

const isSchema = (v: unknown): v is Schema =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export interface SchemaProblem {
  readonly path: string;
  readonly message: string;
}

function typeMatches(type: unknown, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isSchema(value);
    default:
      return true;
  }
}

function checkNode(
  node: Schema,
  path: string,
  typeRequired: boolean,
  inJunctor: boolean,
  out: SchemaProblem[],
): void {
  const problem = (where: string, message: string) => out.push({ path: where, message });
  for (const key of FORBIDDEN)
    if (key in node) problem(`${path}.${key}`, 'Forbidden: not allowed in a CRD schema');
  if (node.uniqueItems === true)
    problem(`${path}.uniqueItems`, 'Forbidden: uniqueItems cannot be true');

  const type = node.type;
  const preserve = node['x-kubernetes-preserve-unknown-fields'];
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  if (preserve !== undefined && preserve !== true) {
    problem(
      `${path}.x-kubernetes-preserve-unknown-fields`,
      'Invalid value: must be true or undefined',
    );
  }
  if (inJunctor) {
    for (const key of NOT_IN_JUNCTORS) {
      if (key in node)
        problem(`${path}.${key}`, 'Forbidden: must not be used inside allOf, anyOf, oneOf or not');
    }
  } else if (type === undefined) {
    if (typeRequired && preserve !== true && !intOrString)
      problem(`${path}.type`, 'Required value: must not be empty for specified fields');
  } else if (typeof type !== 'string' || !TYPES.has(type)) {
    problem(`${path}.type`, `Unsupported value: ${JSON.stringify(type)}`);
  }

  const props = node.properties;
  const additional = node.additionalProperties;
  if (props !== undefined && additional !== undefined) {
    problem(
      `${path}.additionalProperties`,
      'Forbidden: additionalProperties and properties are mutually exclusive',
    );
  }
  if (additional === false) problem(`${path}.additionalProperties`, 'Forbidden: must not be false');
  if ((props !== undefined || isSchema(additional)) && type !== undefined && type !== 'object') {
    problem(`${path}.type`, 'Invalid value: must be object when properties are given');
  }
  if (props !== undefined) {
    if (!isSchema(props)) problem(`${path}.properties`, 'Invalid value: must be an object');
    else
      for (const [name, child] of Object.entries(props)) {
        const at = `${path}.properties[${name}]`;
        if (isSchema(child)) checkNode(child, at, !inJunctor, inJunctor, out);
        else problem(at, 'Invalid value: must be a schema');
      }
  }
  if (isSchema(additional))
    checkNode(additional, `${path}.additionalProperties`, !inJunctor, inJunctor, out);

  const items = node.items;
  if (items !== undefined) {
    if (!isSchema(items)) problem(`${path}.items`, 'Forbidden: items must be a single schema');
    else checkNode(items, `${path}.items`, !inJunctor, inJunctor, out);
    if (type !== undefined && type !== 'array')
      problem(`${path}.type`, 'Invalid value: must be array when items are given');
  } else if (type === 'array' && !inJunctor) {
    problem(`${path}.items`, 'Required value: must be specified for arrays');
  }

  for (const junctor of ['allOf', 'anyOf', 'oneOf']) {
    const list = node[junctor];
    if (list === undefined) continue;
    if (!Array.isArray(list)) problem(`${path}.${junctor}`, 'Invalid value: must be a list');
    else
      for (const [i, s] of list.entries()) {
        if (isSchema(s)) checkNode(s, `${path}.${junctor}[${i}]`, false, true, out);
      }
  }
  if (isSchema(node.not)) checkNode(node.not, `${path}.not`, false, true, out);

  // apiextensions-apiserver's structural validation: regexp.Compile(pattern), so anything
  // RE2 refuses (lookaround, back-references, \Z...) is refused with Go's own error text.
  if (typeof node.pattern === 'string' && node.pattern !== '') {
    try {
      RE2JS.compile(node.pattern);
    } catch (error) {
      problem(
        `${path}.pattern`,
        `Invalid value: ${goQuote(node.pattern)}: must be a valid regular expression, but isn't: ${(error as Error).message}`,
      );
    }
  }
  if (Array.isArray(node.enum) && typeof type === 'string') {
    node.enum.forEach((v, i) => {
      if (!typeMatches(type, v))
        problem(`${path}.enum[${i}]`, `Invalid value: must be of type ${type}`);
    });
  }
  if (
    'default' in node &&
    typeof type === 'string' &&
    !(node.nullable === true && node.default === null)
  ) {
    if (!typeMatches(type, node.default))
      problem(`${path}.default`, `Invalid value: must be of type ${type}`);
  }
  checkListType(node, path, problem);
}

function checkListType(
  node: Schema,
  path: string,
  problem: (where: string, message: string) => void,
): void {
  const listType = node['x-kubernetes-list-type'];
  if (listType === undefined) return;
  if (node.type !== 'array' || typeof listType !== 'string' || !LIST_TYPES.has(listType)) {
    problem(
      `${path}.x-kubernetes-list-type`,
      'Invalid value: must be atomic, set or map, on an array',
    );
    return;
  }
  if (listType !== 'map') return;
  const keys = node['x-kubernetes-list-map-keys'];
  const items = isSchema(node.items) ? node.items : {};
  const itemProps = isSchema(items.properties) ? items.properties : {};
  const required = Array.isArray(items.required) ? items.required : [];
  if (!Array.isArray(keys) || keys.length === 0) {
    problem(`${path}.x-kubernetes-list-map-keys`, 'Required value: a map list names its keys');
    return;
  }
  if (items.type !== 'object')
    problem(`${path}.items.type`, 'Invalid value: a map list holds objects');
  for (const key of keys) {
    const prop = itemProps[key as string];
    if (!isSchema(prop))
      problem(
        `${path}.x-kubernetes-list-map-keys`,
        `Invalid value: ${key} is not a property of the items`,
      );
    else if (!required.includes(key) && !('default' in prop)) {
      problem(
        `${path}.x-kubernetes-list-map-keys`,
        `Invalid value: ${key} must be required or defaulted`,
      );
    }
  }
}

/** Every problem with a CRD version's openAPIV3Schema; empty when the API server accepts it. */
export function checkStructuralSchema(root: unknown, path = 'openAPIV3Schema'): SchemaProblem[] {
  const out: SchemaProblem[] = [];
  if (!isSchema(root)) return [{ path, message: 'Required value: a schema is required' }];
  if (root.type !== 'object')
    out.push({ path: `${path}.type`, message: 'Unsupported value: the root must be an object' });
  checkNode(root, path, true, false, out);
  const metadata = isSchema(root.properties) ? root.properties.metadata : undefined;
  if (isSchema(metadata)) {
    // Only name and generateName may be constrained; everything else belongs to the server.
    const allowed = new Set(['type', 'properties']);
    const props = isSchema(metadata.properties) ? Object.keys(metadata.properties) : [];
    const extra = Object.keys(metadata).filter((k) => !allowed.has(k));
    const extraProps = props.filter((p) => p !== 'name' && p !== 'generateName');
    if (extra.length > 0 || extraProps.length > 0 || metadata.type !== 'object') {
      out.push({
        path: `${path}.properties[metadata]`,
        message: 'Forbidden: must not specify anything other than name and generateName',
      });
    }
  }
  return out;
}
