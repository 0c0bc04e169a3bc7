// The CRD generator: turns the zod schemas of the kinds into apiextensions.k8s.io/v1
// CustomResourceDefinitions with structural openAPIV3Schema (rules: docs/zod-to-crd.md).
import { stringify } from 'yaml';
import { z } from 'zod';
import { CATEGORY, GROUP, KINDS, type KindInfo, VERSION } from './resources.js';

type Schema = Record<string, unknown>;

/** JSON's exact integer range: zod writes it on every `.int()`, a CRD needs none of it. */
const SAFE = Number.MAX_SAFE_INTEGER;

// Formats the API server validates itself: zod's regex for them would only be noise, and
// not every one of them is RE2 (the API server's regex engine).
const FORMATS_WITHOUT_PATTERN = new Set(['uuid', 'date-time', 'uri']);

export class CrdSchemaError extends Error {
  constructor(path: string, problem: string) {
    super(`${path || '<root>'}: ${problem}`);
    this.name = 'CrdSchemaError';
  }
}

const isSchema = (v: unknown): v is Schema =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Converts one draft 2020-12 node (as zod writes it) into a structural CRD node. */
export function toStructural(node: Schema, path = ''): Schema {
  for (const key of ['anyOf', 'oneOf', 'allOf', 'not', '$ref', 'patternProperties']) {
    if (key in node)
      throw new CrdSchemaError(path, `${key} has no structural form; restate the schema`);
  }
  const out: Schema = {};
  let type = node.type;
  if (Array.isArray(type)) {
    const rest = type.filter((t) => t !== 'null');
    if (rest.length !== 1) throw new CrdSchemaError(path, `a union of types ${type.join(', ')}`);
    type = rest[0];
    out.nullable = true;
  }
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (type === undefined && !preserve) throw new CrdSchemaError(path, 'a node with no type');
  if (type !== undefined) out.type = type;

  for (const [key, value] of Object.entries(node)) {
    switch (key) {
      case '$schema':
      case 'type':
      case 'propertyNames': // maps are keyed by strings anyway
        break;
      case 'properties': {
        if (!isSchema(value)) throw new CrdSchemaError(path, 'properties is not an object');
        const entries = Object.entries(value);
        if (entries.length > 0) {
          out.properties = Object.fromEntries(
            entries.map(([name, child]) => [
              name,
              toStructural(child as Schema, `${path}.${name}`),
            ]),
          );
        }
        break;
      }
      case 'additionalProperties': {
        // false (zod's .strict()) is left to pruning and fieldValidation=Strict; a typed map
        // is kept; a catch-all next to named properties is expressed by preserving unknowns.
        if (value === false) break;
        const hasProperties = isSchema(node.properties) && Object.keys(node.properties).length > 0;
        if (!isSchema(value) || Object.keys(value).length === 0 || hasProperties) {
          out['x-kubernetes-preserve-unknown-fields'] = true;
        } else {
          out.additionalProperties = toStructural(value, `${path}.*`);
        }
        break;
      }
      case 'items':
        if (!isSchema(value)) throw new CrdSchemaError(path, 'items must be one schema');
        out.items = toStructural(value, `${path}[]`);
        break;
      case 'minimum':
      case 'maximum':
        if (type === 'integer' && Math.abs(value as number) === SAFE) break;
        out[key] = value;
        break;
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        // Draft 2020-12 gives the bound itself; OpenAPI v3.0 (a CRD) a boolean beside it.
        out[key === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value;
        out[key] = true;
        break;
      case 'pattern':
        if (!FORMATS_WITHOUT_PATTERN.has(node.format as string)) out.pattern = value;
        break;
      default:
        out[key] = value;
    }
  }
  if (type === 'integer') out.format ??= 'int64';
  if (out['x-kubernetes-preserve-unknown-fields'] === true && out.properties === undefined) {
    delete out.additionalProperties;
  }
  return out;
}

function jsonSchemaOf(schema: z.ZodType, path: string): Schema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'throw',
  });
  return toStructural(rest as Schema, path);
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: Schema;
}

export function buildCrd(info: KindInfo): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${info.plural}.${GROUP}`,
      labels: { 'app.kubernetes.io/name': 'nrn-operator', 'app.kubernetes.io/part-of': 'nrn' },
    },
    spec: {
      group: GROUP,
      scope: info.namespaced === false ? 'Cluster' : 'Namespaced',
      names: {
        kind: info.kind,
        listKind: `${info.kind}List`,
        plural: info.plural,
        singular: info.singular,
        shortNames: [...info.shortNames],
        categories: [CATEGORY],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: info.printerColumns.map((c) => ({ ...c })),
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: info.description,
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: jsonSchemaOf(info.spec, '.spec'),
                status: jsonSchemaOf(info.status, '.status'),
              },
            },
          },
        },
      ],
    },
  };
}

export function allCrds(): CustomResourceDefinition[] {
  return Object.values(KINDS).map(buildCrd);
}

export const GENERATED_HEADER = '# Generated by `npm run generate` from src/api. Do not edit.\n';

/** The files of `crds/`, by name: one CRD per file, as `kubectl apply -f crds/` expects. */
export function renderCrdFiles(): Map<string, string> {
  return new Map(
    allCrds().map((crd) => [
      `${crd.metadata.name}.yaml`,
      GENERATED_HEADER + stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false }),
    ]),
  );
}
