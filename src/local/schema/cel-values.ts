// A custom resource's JSON as the CEL value its rules see (apiextensions-apiserver's
// schema/cel/values.go UnstructuredToVal and model/escaping.go): typed by the schema, so that a
// `number` is a double even when whole, a property whose name is no CEL identifier is reached by
// its escaped name (`foo-bar` as `foo__dash__bar`, `namespace` as `__namespace__`), and the root's
// metadata shows only name and generateName (model.WithTypeAndObjectMeta). Other JSON maps as
// src/cel maps it. Not done: `format: date-time`/`duration`/`byte` as timestamps, durations, bytes
// (they stay strings).
import { celList, celMap } from '@bufbuild/cel';
import { toCel, ValueProblem } from '../../cel/index.js';
import { isObject } from '../patch/util.js';

type Json = Record<string, unknown>;

export interface CelNode {
  readonly number: boolean;
  /** Property name -> its CEL name and node (undefined: the property is not reachable). */
  readonly properties: Map<string, { name: string; node: CelNode } | undefined> | undefined;
  readonly additional: CelNode | undefined;
  readonly items: CelNode | undefined;
  readonly resourceRoot: boolean;
}

const RESERVED = new Set(
  'true false null in as break const continue else for function if import let loop package namespace return var void while'.split(
    ' ',
  ),
);

/** model.Escape: the CEL name of a property, or undefined when it has none. */
export function escapeProperty(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`;
  if (!/^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/.test(name)) return undefined;
  return name
    .replaceAll('__', '__underscores__')
    .replaceAll('.', '__dot__')
    .replaceAll('-', '__dash__')
    .replaceAll('/', '__slash__');
}

export function celNode(raw: Json, resourceRoot: boolean): CelNode {
  let properties: CelNode['properties'];
  if (isObject(raw.properties)) {
    properties = new Map();
    for (const [key, child] of Object.entries(raw.properties)) {
      const name = escapeProperty(key);
      properties.set(
        key,
        name === undefined || !isObject(child) ? undefined : { name, node: celNode(child, false) },
      );
    }
  }
  return {
    number: raw.type === 'number',
    properties,
    additional: isObject(raw.additionalProperties)
      ? celNode(raw.additionalProperties, false)
      : undefined,
    items: isObject(raw.items) ? celNode(raw.items, false) : undefined,
    resourceRoot,
  };
}

/** Values of one conversion; a decoded object is bounded by the request's size already. */
const MAX_NODES = 1_000_000;
const MAX_DEPTH = 1000;

export function celValueOf(value: unknown, node: CelNode | undefined): unknown {
  const budget = { nodes: MAX_NODES };
  const out = convert(value, node, MAX_DEPTH, budget);
  return out instanceof ValueProblem ? null : out;
}

function convert(
  value: unknown,
  node: CelNode | undefined,
  depth: number,
  budget: { nodes: number },
): unknown {
  if (node === undefined) return toCel(value, depth, budget);
  budget.nodes -= 1;
  if (budget.nodes < 0 || depth < 0) return new ValueProblem('too large');
  if (typeof value === 'number' && node.number) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const converted = convert(item, node.items, depth - 1, budget);
      if (converted instanceof ValueProblem) return converted;
      out.push(converted);
    }
    return celList(out as never);
  }
  if (!isObject(value)) return toCel(value, depth, budget);
  const out = new Map<string, unknown>();
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    let name = key;
    let child: CelNode | undefined;
    if (node.resourceRoot && (key === 'apiVersion' || key === 'kind')) child = undefined;
    else if (node.resourceRoot && key === 'metadata') {
      out.set(key, rootMetadata(item));
      continue;
    } else if (node.properties?.has(key)) {
      const prop = node.properties.get(key);
      if (prop === undefined) continue;
      name = prop.name;
      child = prop.node;
    } else child = node.additional;
    const converted = convert(item, child, depth - 1, budget);
    if (converted instanceof ValueProblem) return converted;
    out.set(name, converted);
  }
  return celMap(out as never);
}

function rootMetadata(metadata: unknown): unknown {
  const out = new Map<string, unknown>();
  if (isObject(metadata)) {
    for (const key of ['name', 'generateName'])
      if (typeof metadata[key] === 'string') out.set(key, metadata[key]);
  }
  return celMap(out as never);
}
