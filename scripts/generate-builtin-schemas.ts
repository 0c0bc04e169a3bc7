// Writes src/local/builtin-schemas/schemas.json: the structure of the built-in kinds the local
// control plane stores (kinds/ strategies name them), from the official OpenAPI spec as
// @kubernetes/client-node's generated models carry it (attributeTypeMap: JSON name, type and
// format of every field of every definition). src/local may not import client-node (ADR 0015's
// layering, .dependency-cruiser.cjs), so the schema is generated into the repo and checked:
// test/unit/builtin-schemas.test.ts fails when this script would write something else.
//
// The models lose two things the spec has, put back here: which string fields are Quantities
// (kubernetes-models' typings name them IIoK8sApimachineryPkgApiResourceQuantity; the spec's
// Quantity takes a string or a number), and which package a definition belongs to (client-node
// drops the group from most names; kube-openapi names io.k8s.api.<group>.<version>.<Kind>).
//
// Usage: npx tsx scripts/generate-builtin-schemas.ts [--check]
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';

const OUT = new URL('../src/local/builtin-schemas/schemas.json', import.meta.url);

/** The stored kinds: `apiVersion/Kind` and the client-node model of each, core first. */
const KINDS: ReadonlyArray<readonly [string, string]> = [
  ['v1/Pod', 'V1Pod'],
  ['v1/Service', 'V1Service'],
  ['v1/Endpoints', 'V1Endpoints'],
  ['v1/PersistentVolumeClaim', 'V1PersistentVolumeClaim'],
  // Not served by kube for itself here, but kubectl apply --prune's default allowlist names it.
  ['v1/PersistentVolume', 'V1PersistentVolume'],
  ['v1/ReplicationController', 'V1ReplicationController'],
  ['v1/PodTemplate', 'V1PodTemplate'],
  ['v1/Node', 'V1Node'],
  // Stored by strategies of their own (kinds/), listed for the OpenAPI documents only: a
  // ScopeClass's manifests are validated against what the API server publishes (ADR 0031).
  ['v1/ConfigMap', 'V1ConfigMap'],
  ['v1/Secret', 'V1Secret'],
  ['v1/ServiceAccount', 'V1ServiceAccount'],
  ['apps/v1/Deployment', 'V1Deployment'],
  ['apps/v1/StatefulSet', 'V1StatefulSet'],
  ['apps/v1/DaemonSet', 'V1DaemonSet'],
  ['apps/v1/ReplicaSet', 'V1ReplicaSet'],
  ['batch/v1/Job', 'V1Job'],
  ['batch/v1/CronJob', 'V1CronJob'],
  ['autoscaling/v2/HorizontalPodAutoscaler', 'V2HorizontalPodAutoscaler'],
  ['networking.k8s.io/v1/NetworkPolicy', 'V1NetworkPolicy'],
  ['networking.k8s.io/v1/Ingress', 'V1Ingress'],
  ['networking.k8s.io/v1/IngressClass', 'V1IngressClass'],
  ['policy/v1/PodDisruptionBudget', 'V1PodDisruptionBudget'],
  [
    'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration',
    'V1ValidatingWebhookConfiguration',
  ],
  [
    'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration',
    'V1MutatingWebhookConfiguration',
  ],
  ['discovery.k8s.io/v1/EndpointSlice', 'V1EndpointSlice'],
];

/** apimachinery's definitions, named as kube-openapi names them. */
const META = new Set([
  'ObjectMeta',
  'ListMeta',
  'LabelSelector',
  'LabelSelectorRequirement',
  'ManagedFieldsEntry',
  'OwnerReference',
  'Condition',
]);
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** The Quantity fields of these kinds' definitions (kubernetes-models' typings). */
const QUANTITY_FIELDS = new Set([
  'V2HPAScalingRules.tolerance',
  'V2MetricTarget.averageValue',
  'V2MetricTarget.value',
  'V2MetricValueStatus.averageValue',
  'V2MetricValueStatus.value',
  'V1ContainerStatus.allocatedResources',
  'V1EmptyDirVolumeSource.sizeLimit',
  'V1NodeStatus.allocatable',
  'V1NodeStatus.capacity',
  'V1PersistentVolumeClaimStatus.allocatedResources',
  'V1PersistentVolumeClaimStatus.capacity',
  'V1PersistentVolumeSpec.capacity',
  'V1PodSpec.overhead',
  'V1ResourceFieldSelector.divisor',
  'V1ResourceRequirements.limits',
  'V1ResourceRequirements.requests',
  'V1VolumeResourceRequirements.limits',
  'V1VolumeResourceRequirements.requests',
]);

type Schema = Record<string, unknown>;
interface Attribute {
  baseName: string;
  type: string;
  format: string;
}
type Model = { getAttributeTypeMap(): Attribute[] };

const models = k8s as unknown as Record<string, Model | undefined>;
const definitions: Record<string, Schema> = {};
const names = new Map<string, string>();

/** `V1PodSpec` met first under `group` → `io.k8s.api.core.v1.PodSpec`. */
function definitionName(model: string, group: string): string {
  const known = names.get(model);
  if (known !== undefined) return known;
  const m = /^([A-Z][a-z]+)?(V\d+(?:(?:alpha|beta)\d+)?)([A-Z]\w*)$/.exec(model);
  if (m === null) throw new Error(`unexpected model name ${model}`);
  const [, prefix, version, kind] = m as unknown as [string, string | undefined, string, string];
  const pkg = META.has(kind)
    ? 'io.k8s.apimachinery.pkg.apis.meta'
    : `io.k8s.api.${prefix !== undefined ? prefix.toLowerCase() : group}`;
  const name = `${pkg}.${version.toLowerCase()}.${kind}`;
  names.set(model, name);
  return name;
}

function typeSchema(type: string, format: string, group: string): Schema {
  const array = /^Array<(.+)>$/.exec(type);
  if (array !== null) return { type: 'array', items: typeSchema(array[1] as string, '', group) };
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map !== null)
    return { type: 'object', additionalProperties: typeSchema(map[1] as string, '', group) };
  switch (type) {
    case 'string':
      return format === 'byte' ? { type: 'string', format } : { type: 'string' };
    case 'number':
      return format === 'int32' || format === 'int64'
        ? { type: 'integer', format }
        : { type: 'number', ...(format !== '' ? { format } : {}) };
    case 'boolean':
      return { type: 'boolean' };
    case 'Date':
      return { type: 'string', format: format === '' ? 'date-time' : format };
    case 'IntOrString':
      return { 'x-kubernetes-int-or-string': true };
    case 'any':
      // runtime.RawExtension and friends: kept as sent.
      return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  }
  return { $ref: define(type, group) };
}

/** Each definition once, its fields sorted as the spec sorts them. */
function define(model: string, group: string): string {
  const name = definitionName(model, group);
  if (definitions[name] !== undefined) return name;
  const found = models[model];
  if (found === undefined || typeof found.getAttributeTypeMap !== 'function')
    throw new Error(`no model ${model}`);
  const properties: Record<string, Schema> = {};
  definitions[name] = { type: 'object', properties };
  for (const a of [...found.getAttributeTypeMap()].sort((x, y) =>
    x.baseName < y.baseName ? -1 : 1,
  )) {
    properties[a.baseName] = QUANTITY_FIELDS.has(`${model}.${a.baseName}`)
      ? quantity(a.type)
      : typeSchema(a.type, a.format, group);
  }
  return name;
}

function quantity(type: string): Schema {
  const ref = { $ref: QUANTITY };
  if (type === 'string') return ref;
  if (/^\{ \[key: string\]: string; \}$/.test(type))
    return { type: 'object', additionalProperties: ref };
  throw new Error(`unexpected Quantity field type ${type}`);
}

const kinds: Record<string, string> = {};
for (const [apiVersion, model] of KINDS) {
  const slash = apiVersion.lastIndexOf('/');
  const gv = apiVersion.slice(0, slash);
  const group = gv.includes('/') ? (gv.split('/')[0] as string).replace(/\.k8s\.io$/, '') : 'core';
  kinds[apiVersion] = define(model, group);
}
// The spec's own: a string or a number (resource.Quantity's OpenAPIV3OneOfTypes).
definitions[QUANTITY] = { oneOf: [{ type: 'string' }, { type: 'number' }] };

const sorted = Object.fromEntries(Object.entries(definitions).sort(([a], [b]) => (a < b ? -1 : 1)));
// As the repo's formatter writes JSON, so that `biome ci` and --check agree on one text.
const formatted = spawnSync(
  fileURLToPath(new URL('../node_modules/.bin/biome', import.meta.url)),
  ['format', '--stdin-file-path=src/local/builtin-schemas/schemas.json'],
  { input: JSON.stringify({ kinds, definitions: sorted }), encoding: 'utf8', timeout: 60_000 },
);
if (formatted.status !== 0) throw new Error(`biome format failed: ${formatted.stderr}`);
const text = formatted.stdout;
if (process.argv.includes('--check')) {
  if (readFileSync(OUT, 'utf8') !== text) {
    console.error('src/local/builtin-schemas/schemas.json is stale: run this script');
    process.exit(1);
  }
} else {
  writeFileSync(OUT, text);
}
