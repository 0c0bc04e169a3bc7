// CustomResourceDefinition (apiextensions.k8s.io/v1): its v1 defaults, what the API server
// checks when one is written, and the status it reports (names accepted, established).
// Serving the kinds a CRD defines is the registry's (typesOfCrd); deleting their objects with
// it is housekeeping's; the rules for its schemas are src/local/schema/crd-schema.ts's.
//
// The checks follow apiextensions-apiserver's apis/apiextensions/validation/validation.go
// (ValidateCustomResourceDefinition, ValidateCustomResourceDefinitionUpdate) on the internal
// type, which is why paths and values read as they do there: a v1 CRD is converted first
// (apis/apiextensions/v1/conversion.go), and when every version has the same schema,
// subresources or printer columns they move up to spec.validation, spec.subresources and
// spec.additionalPrinterColumns, so that is where their errors are reported; columns name
// their path `JSONPath`; the webhook of a conversion is spec.conversion.webhookClientConfig.
import { dns1035LabelErrors, invalid as invalidError, nameProblems, timestamp } from '../meta.js';
import { crdSchemaIssues, isNonStructural, STRICTEST } from '../schema/crd-schema.js';
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
} from '../schema/field-errors.js';
import { goQuote, goStrings } from '../schema/goformat.js';
import { isProps, type Props } from '../schema/props.js';
import { compileSchemaNodes } from '../schema/validate.js';
import type { KubeObject } from '../types.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const CRD_TYPE = builtinType(
  'apiextensions.k8s.io',
  'v1',
  'CustomResourceDefinition',
  'customresourcedefinitions',
  { namespaced: false, shortNames: ['crd', 'crds'], hasStatus: true },
);

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

const API_APPROVAL = 'api-approved.kubernetes.io';
const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_COLUMN_FORMATS = [
  'byte',
  'date',
  'date-time',
  'double',
  'float',
  'int32',
  'int64',
  'password',
];
const CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

const text = (o: Props, key: string): string =>
  typeof o[key] === 'string' ? (o[key] as string) : '';
const props = (o: Props, key: string): Props | undefined =>
  isProps(o[key]) ? (o[key] as Props) : undefined;
const propsList = (o: Props, key: string): Props[] =>
  Array.isArray(o[key]) ? (o[key] as unknown[]).map((x) => (isProps(x) ? x : {})) : [];
const stringList = (o: Props, key: string): string[] =>
  Array.isArray(o[key]) ? (o[key] as unknown[]).map((x) => (typeof x === 'string' ? x : '')) : [];

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // Semantic.DeepEqual: an empty slice or map equals none at all.
  const empty = (v: unknown) =>
    v === undefined || v === null || (Array.isArray(v) && v.length === 0);
  if (empty(a) && empty(b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => sameJson(v, b[i]));
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (!sameJson((a as Props)[k], (b as Props)[k])) return false;
  return true;
}

// --- v1 defaults (apis/apiextensions/v1/defaults.go) ---------------------------------------

/** SetDefaults_CustomResourceDefinitionSpec and the webhook service's port, on the object. */
function setDefaults(crd: KubeObject): void {
  if (!isProps(crd.spec)) return;
  const spec = crd.spec;
  const names = props(spec, 'names');
  if (names !== undefined) {
    const kind = text(names, 'kind');
    if (text(names, 'singular') === '') names.singular = kind.toLowerCase();
    if (text(names, 'listKind') === '' && kind !== '') names.listKind = `${kind}List`;
  }
  if (spec.conversion === undefined || spec.conversion === null)
    spec.conversion = { strategy: 'None' };
  const service = props(
    props(props(props(spec, 'conversion') ?? {}, 'webhook') ?? {}, 'clientConfig') ?? {},
    'service',
  );
  if (service !== undefined && (service.port === undefined || service.port === null))
    service.port = 443;
}

// --- the internal view ----------------------------------------------------------------------

/** The spec as the internal type holds it after conversion from v1. */
interface Internal {
  versions: Props[];
  /** Set when every version had the same; the versions' own are then gone. */
  validation: Props | undefined;
  subresources: Props | undefined;
  columns: Props[] | undefined;
  /** Per version, what did not move up. */
  versionSchema: Array<Props | undefined>;
  versionSubresources: Array<Props | undefined>;
  versionColumns: Array<Props[] | undefined>;
}

function toInternal(spec: Props): Internal {
  const versions = propsList(spec, 'versions');
  const schemas = versions.map((v) => props(v, 'schema'));
  const subresources = versions.map((v) => props(v, 'subresources'));
  const columns = versions.map((v) =>
    Array.isArray(v.additionalPrinterColumns)
      ? propsList(v, 'additionalPrinterColumns')
      : undefined,
  );
  const identical = <T>(list: T[]) => list.length > 0 && list.every((x) => sameJson(x, list[0]));
  const schemasUp = identical(schemas);
  const subresourcesUp = identical(subresources);
  const columnsUp = identical(columns);
  return {
    versions,
    validation: schemasUp ? schemas[0] : undefined,
    subresources: subresourcesUp ? subresources[0] : undefined,
    columns: columnsUp ? columns[0] : undefined,
    versionSchema: schemasUp ? versions.map(() => undefined) : schemas,
    versionSubresources: subresourcesUp ? versions.map(() => undefined) : subresources,
    versionColumns: columnsUp ? versions.map(() => undefined) : columns,
  };
}

/** %#v of the internal []CustomResourceDefinitionVersion, as errors on spec.versions quote it. */
function sharpVersions(internal: Internal, spec: Props): GoText {
  if (!Array.isArray(spec.versions))
    return new GoText('[]apiextensions.CustomResourceDefinitionVersion(nil)');
  const pointer = (type: string, set: boolean) => `(*${type})(${set ? '0xc000000000' : 'nil'})`;
  const columns = (list: Props[] | undefined) =>
    list === undefined || list.length === 0
      ? '[]apiextensions.CustomResourceColumnDefinition(nil)'
      : `[]apiextensions.CustomResourceColumnDefinition{${list
          .map(
            (c) =>
              `apiextensions.CustomResourceColumnDefinition{Name:${goQuote(text(c, 'name'))}, Type:${goQuote(text(c, 'type'))}, Format:${goQuote(text(c, 'format'))}, Description:${goQuote(text(c, 'description'))}, Priority:${typeof c.priority === 'number' ? c.priority : 0}, JSONPath:${goQuote(text(c, 'jsonPath'))}}`,
          )
          .join(', ')}}`;
  const items = internal.versions.map((v, i) => {
    const selectable = propsList(v, 'selectableFields');
    const fields = [
      `Name:${goQuote(text(v, 'name'))}`,
      `Served:${v.served === true}`,
      `Storage:${v.storage === true}`,
      `Deprecated:${v.deprecated === true}`,
      `DeprecationWarning:${pointer('string', typeof v.deprecationWarning === 'string')}`,
      `Schema:${pointer('apiextensions.CustomResourceValidation', internal.versionSchema[i] !== undefined)}`,
      `Subresources:${pointer('apiextensions.CustomResourceSubresources', internal.versionSubresources[i] !== undefined)}`,
      `AdditionalPrinterColumns:${columns(internal.versionColumns[i])}`,
      `SelectableFields:${
        selectable.length === 0 || internal.validation !== undefined
          ? '[]apiextensions.SelectableField(nil)'
          : `[]apiextensions.SelectableField{${selectable.map((f) => `apiextensions.SelectableField{JSONPath:${goQuote(text(f, 'jsonPath'))}}`).join(', ')}}`
      }`,
    ];
    return `apiextensions.CustomResourceDefinitionVersion{${fields.join(', ')}}`;
  });
  return new GoText(`[]apiextensions.CustomResourceDefinitionVersion{${items.join(', ')}}`);
}

// --- rules ------------------------------------------------------------------------------------

/** Which rules apply: all on create; an update is spared those its old object broke already. */
interface Options {
  requireOpenAPISchema: boolean;
  requireValidPropertyType: boolean;
  requirePrunedDefaults: boolean;
  requireAtomicSetType: boolean;
  requireMapListKeysMapSetValidation: boolean;
  requireRecognizedConversionReviewVersion: boolean;
  requireImmutableNames: boolean;
  /**
   * On an update, each old version's schema by name: a version whose schema is unchanged is
   * spared the CEL cost limits (versionsWithUnchangedSchemas, suppressPerExpressionCost), so
   * that what was accepted once stays updatable whatever the estimate says today.
   */
  oldSchemas: ReadonlyMap<string, Props | undefined>;
}

/** Every openAPIV3Schema of a spec, top-level (folded) or per version. */
function schemasOf(spec: Props): Props[] {
  return propsList(spec, 'versions')
    .map((v) => props(props(v, 'schema') ?? {}, 'openAPIV3Schema'))
    .filter((s): s is Props => s !== undefined);
}

/** SchemaHas: whether any node of the schema satisfies `pred`. */
function schemaHas(s: unknown, pred: (s: Props) => boolean): boolean {
  if (!isProps(s)) return false;
  if (pred(s)) return true;
  const children: unknown[] = [s.not];
  if (isProps(s.items)) children.push(s.items);
  if (Array.isArray(s.items)) children.push(...s.items);
  for (const k of ['allOf', 'anyOf', 'oneOf'])
    if (Array.isArray(s[k])) children.push(...(s[k] as unknown[]));
  for (const k of ['properties', 'patternProperties', 'definitions', 'dependencies'])
    if (isProps(s[k])) children.push(...Object.values(s[k] as Props));
  if (isProps(s.additionalProperties)) children.push(s.additionalProperties);
  if (isProps(s.additionalItems)) children.push(s.additionalItems);
  return children.some((c) => schemaHas(c, pred));
}

const OPENAPI_V3_TYPES = new Set(['array', 'boolean', 'integer', 'number', 'object', 'string']);

/** Whether an update leaves this version's schema as the stored CRD had it. */
function unchangedSchema(options: Options, version: Props): boolean {
  const name = text(version, 'name');
  return (
    options.oldSchemas.has(name) && sameJson(options.oldSchemas.get(name), props(version, 'schema'))
  );
}

function optionsFor(old: KubeObject | undefined): Options {
  if (old === undefined) {
    return {
      requireOpenAPISchema: true,
      requireValidPropertyType: true,
      requirePrunedDefaults: true,
      requireAtomicSetType: true,
      requireMapListKeysMapSetValidation: true,
      requireRecognizedConversionReviewVersion: true,
      requireImmutableNames: false,
      oldSchemas: new Map(),
    };
  }
  const spec = isProps(old.spec) ? old.spec : {};
  const schemas = schemasOf(spec);
  const any = (pred: (s: Props) => boolean) => schemas.some((s) => schemaHas(s, pred));
  const oldReviewVersions = stringList(
    props(props(spec, 'conversion') ?? {}, 'webhook') ?? {},
    'conversionReviewVersions',
  );
  const conditions = propsList(isProps(old.status) ? old.status : {}, 'conditions');
  return {
    requireOpenAPISchema: propsList(spec, 'versions').every((v) =>
      isProps(props(v, 'schema')?.openAPIV3Schema),
    ),
    requireValidPropertyType: !any((s) => {
      const type = text(s, 'type');
      return type !== '' && !OPENAPI_V3_TYPES.has(type);
    }),
    // Unpruned defaults can only be told apart in a structural schema, as the server does.
    requirePrunedDefaults: !schemas.some((root) => {
      if (isNonStructural(root)) return false;
      const nodes = compileSchemaNodes(root);
      return schemaHas(root, (s) => {
        if (s.default === undefined || s.default === null) return false;
        return !sameJson(nodes.prune(s, s.default, s === root), s.default);
      });
    }),
    requireAtomicSetType: !any((s) => {
      if (s['x-kubernetes-list-type'] !== 'set' || !isProps(s.items)) return false;
      const is = s.items;
      if (is.type === 'array')
        return (
          is['x-kubernetes-list-type'] !== undefined && is['x-kubernetes-list-type'] !== 'atomic'
        );
      if (is.type === 'object') return is['x-kubernetes-map-type'] !== 'atomic';
      return false;
    }),
    requireMapListKeysMapSetValidation: !any((s) => {
      if (!isProps(s.items)) return false;
      const listType = s['x-kubernetes-list-type'];
      if (listType !== 'set' && listType !== 'map') return false;
      if (s.items.nullable === true) return true;
      if (listType !== 'map') return false;
      const itemProps = props(s.items, 'properties') ?? {};
      const requiredKeys = stringList(s.items, 'required');
      return stringList(s, 'x-kubernetes-list-map-keys').some((k) => {
        const p = itemProps[k];
        if (!isProps(p)) return false;
        return (
          (!requiredKeys.includes(k) && (p.default === undefined || p.default === null)) ||
          p.nullable === true
        );
      });
    }),
    requireRecognizedConversionReviewVersion:
      oldReviewVersions.length === 0 ||
      oldReviewVersions.some((v) => CONVERSION_REVIEW_VERSIONS.includes(v)),
    requireImmutableNames: conditions.some((c) => c.type === 'Established' && c.status === 'True'),
    oldSchemas: new Map(
      propsList(spec, 'versions').map((v) => [text(v, 'name'), props(v, 'schema')] as const),
    ),
  };
}

function validateNames(names: Props, path: string, out: FieldIssue[]): void {
  const at = (name: string) => childPath(path, name);
  const plural = text(names, 'plural');
  const singular = text(names, 'singular');
  const kind = text(names, 'kind');
  const listKind = text(names, 'listKind');
  const label = (field: string, value: string) => {
    const errs = dns1035LabelErrors(value);
    if (value !== '' && errs.length > 0) out.push(invalid(at(field), value, errs.join(',')));
  };
  label('plural', plural);
  label('singular', singular);
  for (const [field, value] of [
    ['kind', kind],
    ['listKind', listKind],
  ] as const) {
    const errs = dns1035LabelErrors(value.toLowerCase());
    if (value !== '' && errs.length > 0)
      out.push(
        invalid(
          at(field),
          value,
          `may have mixed case, but should otherwise match: ${errs.join(',')}`,
        ),
      );
  }
  stringList(names, 'shortNames').forEach((short, i) => {
    const errs = dns1035LabelErrors(short);
    if (errs.length > 0) out.push(invalid(indexPath(at('shortNames'), i), short, errs.join(',')));
  });
  if (kind !== '' && kind === listKind)
    out.push(invalid(at('listKind'), listKind, 'kind and listKind may not be the same'));
  stringList(names, 'categories').forEach((category, i) => {
    const errs = dns1035LabelErrors(category);
    if (errs.length > 0)
      out.push(invalid(indexPath(at('categories'), i), category, errs.join(',')));
  });
}

/** validateSimpleJSONPath */
function simpleJsonPath(value: string, path: string, out: FieldIssue[]): boolean {
  if (value === '') out.push(invalid(path, value, 'must not be empty'));
  else if (!value.startsWith('.'))
    out.push(invalid(path, value, 'must be a simple json path starting with .'));
  else return true;
  return false;
}

/** ValidateCustomResourceColumnDefinition */
function validateColumn(column: Props, path: string, out: FieldIssue[]): void {
  if (text(column, 'name') === '') out.push(required(childPath(path, 'name')));
  const type = text(column, 'type');
  const types = `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`;
  if (type === '') out.push(required(childPath(path, 'type'), types));
  else if (!PRINTER_COLUMN_TYPES.includes(type))
    out.push(invalid(childPath(path, 'type'), type, types));
  const format = text(column, 'format');
  if (format !== '' && !PRINTER_COLUMN_FORMATS.includes(format))
    out.push(
      invalid(
        childPath(path, 'format'),
        format,
        `must be one of ${PRINTER_COLUMN_FORMATS.join(',')}`,
      ),
    );
  const jsonPath = text(column, 'jsonPath');
  if (jsonPath === '') out.push(required(childPath(path, 'JSONPath')));
  else simpleJsonPath(jsonPath, childPath(path, 'JSONPath'), out);
}

/** ValidateCustomResourceDefinitionSubresources: the scale subresource's paths. */
function validateSubresources(
  subresources: Props | undefined,
  path: string,
  out: FieldIssue[],
): void {
  const scale = subresources === undefined ? undefined : props(subresources, 'scale');
  if (scale === undefined) return;
  for (const [field, under] of [
    ['specReplicasPath', '.spec.'],
    ['statusReplicasPath', '.status.'],
  ] as const) {
    const at = `${path}.scale.${field}`;
    const value = text(scale, field);
    if (value === '') out.push(required(at));
    else if (simpleJsonPath(value, at, out) && !value.startsWith(under))
      out.push(invalid(at, value, `should be a json path under ${under.slice(0, -1)}`));
  }
  const selector = text(scale, 'labelSelectorPath');
  const at = `${path}.scale.labelSelectorPath`;
  if (selector !== '' && simpleJsonPath(selector, at, out)) {
    if (!selector.startsWith('.spec.') && !selector.startsWith('.status.'))
      out.push(invalid(at, selector, 'should be a json path under either .spec or .status'));
  }
}

/** validateDeprecationWarning */
function deprecationWarningErrors(deprecated: boolean, warning: unknown): string[] {
  if (typeof warning !== 'string') return [];
  if (!deprecated) return ['can only be set for deprecated versions'];
  const errors: string[] = [];
  if (Buffer.byteLength(warning) > 256) errors.push('must be <= 256 characters long');
  if (warning === '') errors.push('must not be an empty string');
  let index = 0;
  for (const ch of warning) {
    if (!/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)) {
      errors.push(
        `must only contain printable UTF-8 characters; non-printable character found at index ${index}`,
      );
      break;
    }
    index += Buffer.byteLength(ch);
  }
  return errors;
}

/** validateCustomResourceConversion, with the webhook as the internal type names it. */
function validateConversion(
  conversion: Props | undefined,
  options: Options,
  out: FieldIssue[],
): void {
  if (conversion === undefined) return;
  const path = 'spec.conversion';
  const strategy = text(conversion, 'strategy');
  if (strategy === '') out.push(required(`${path}.strategy`));
  else if (strategy !== 'None' && strategy !== 'Webhook')
    out.push(notSupported(`${path}.strategy`, strategy, ['None', 'Webhook']));
  const webhook = props(conversion, 'webhook');
  const clientConfig = webhook === undefined ? undefined : props(webhook, 'clientConfig');
  const reviewVersions = webhook === undefined ? undefined : webhook.conversionReviewVersions;
  const configPath = `${path}.webhookClientConfig`;
  const reviewPath = `${path}.conversionReviewVersions`;
  if (strategy !== 'Webhook') {
    if (clientConfig !== undefined)
      out.push(forbidden(configPath, 'should not be set when strategy is not set to Webhook'));
    if (Array.isArray(reviewVersions) && reviewVersions.length > 0)
      out.push(forbidden(reviewPath, 'should not be set when strategy is not set to Webhook'));
    return;
  }
  if (clientConfig === undefined) {
    out.push(required(configPath, 'required when strategy is set to Webhook'));
  } else {
    const url = clientConfig.url;
    const service = props(clientConfig, 'service');
    if ((url === undefined || url === null) === (service === undefined))
      out.push(required(configPath, 'exactly one of url or service is required'));
    else if (typeof url === 'string') webhookUrl(url, `${configPath}.url`, out);
    else if (service !== undefined) {
      if (text(service, 'name') === '')
        out.push(required(`${configPath}.service.name`, 'service name is required'));
      if (text(service, 'namespace') === '')
        out.push(required(`${configPath}.service.namespace`, 'service namespace is required'));
      const port = service.port;
      if (typeof port === 'number' && (port < 1 || port > 65535 || !Number.isInteger(port))) {
        out.push(
          invalid(
            `${configPath}.service.port`,
            port,
            'port is not valid: must be between 1 and 65535, inclusive',
          ),
        );
      }
    }
  }
  const versions = Array.isArray(reviewVersions)
    ? stringList(webhook ?? {}, 'conversionReviewVersions')
    : [];
  if (versions.length === 0) {
    out.push(required(reviewPath));
    return;
  }
  const seen = new Set<string>();
  let accepted = false;
  versions.forEach((v, i) => {
    const at = indexPath(reviewPath, i);
    if (seen.has(v)) {
      out.push(invalid(at, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const err of dns1035LabelErrors(v)) out.push(invalid(at, v, err));
    if (CONVERSION_REVIEW_VERSIONS.includes(v)) accepted = true;
  });
  if (options.requireRecognizedConversionReviewVersion && !accepted) {
    out.push(
      invalid(
        reviewPath,
        new GoText(goStrings(versions)),
        `must include at least one of ${CONVERSION_REVIEW_VERSIONS.join(', ')}`,
      ),
    );
  }
}

/** webhook.ValidateWebhookURL with https required. */
function webhookUrl(value: string, path: string, out: FieldIssue[]): void {
  const form = '; desired format: https://host[/path]';
  let url: URL;
  try {
    url = new URL(value);
  } catch (error) {
    out.push(required(path, `url must be a valid URL: ${(error as Error).message}${form}`));
    return;
  }
  const scheme = url.protocol.replace(/:$/, '');
  if (scheme !== 'https')
    out.push(invalid(path, scheme, `'https' is the only allowed URL scheme${form}`));
  if (url.host === '') out.push(invalid(path, url.host, `host must be specified${form}`));
  if (url.username !== '' || url.password !== '') {
    const user = url.password === '' ? url.username : `${url.username}:${url.password}`;
    out.push(invalid(path, user, 'user information is not permitted in the URL'));
  }
  if (url.hash !== '')
    out.push(invalid(path, url.hash.slice(1), 'fragments are not permitted in the URL'));
  if (url.search !== '')
    out.push(invalid(path, url.search.slice(1), 'query parameters are not permitted in the URL'));
}

/** validateCustomResourceDefinitionSpec */
function validateSpec(spec: Props, internal: Internal, options: Options, out: FieldIssue[]): void {
  const group = text(spec, 'group');
  if (group === '') out.push(required('spec.group'));
  else {
    const errs = nameProblems(group, 'subdomain');
    if (errs.length > 0) out.push(invalid('spec.group', group, errs.join(',')));
    else if (!group.includes('.'))
      out.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  const scope = text(spec, 'scope');
  if (scope === '') out.push(required('spec.scope'));
  else if (scope !== 'Cluster' && scope !== 'Namespaced')
    out.push(notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  const preserveUnknownFields = spec.preserveUnknownFields === true;
  const schemaRules = {
    ...STRICTEST,
    requireValidPropertyType: options.requireValidPropertyType,
    requirePrunedDefaults: options.requirePrunedDefaults,
    requireAtomicSetType: options.requireAtomicSetType,
    requireMapListKeysMapSetValidation: options.requireMapListKeysMapSetValidation,
  };
  const { versions } = internal;
  if (internal.validation === undefined || !isProps(internal.validation.openAPIV3Schema)) {
    versions.forEach((v, i) => {
      const schema = internal.versionSchema[i];
      const at = `spec.versions[${i}].schema.openAPIV3Schema`;
      if (schema === undefined || !isProps(schema.openAPIV3Schema)) {
        if (options.requireOpenAPISchema) out.push(required(at, 'schemas are required'));
        else if (!preserveUnknownFields && v.served === true)
          out.push(required(at, 'because otherwise all fields are pruned'));
      }
    });
  }
  if (
    preserveUnknownFields &&
    schemasOf(spec).some((s) => schemaHas(s, (n) => n.default !== undefined && n.default !== null))
  ) {
    out.push(
      invalid(
        'spec.preserveUnknownFields',
        true,
        'must be false in order to use defaults in the schema',
      ),
    );
  }
  let storage = 0;
  const seen = new Set<string>();
  let unique = true;
  versions.forEach((v, i) => {
    const at = `spec.versions[${i}]`;
    if (v.storage === true) storage++;
    const name = text(v, 'name');
    if (seen.has(name)) unique = false;
    seen.add(name);
    const errs = dns1035LabelErrors(name);
    if (errs.length > 0) out.push(invalid(`${at}.name`, name, errs.join(',')));
    // validateCustomResourceDefinitionVersion
    for (const err of deprecationWarningErrors(v.deprecated === true, v.deprecationWarning))
      out.push(invalid(`${at}.deprecationWarning`, v.deprecationWarning, err));
    const subresources = internal.versionSubresources[i] ?? internal.subresources;
    const schema = internal.versionSchema[i];
    if (schema !== undefined) {
      out.push(
        ...crdSchemaIssues(schema, `${at}.schema`, {
          ...schemaRules,
          statusEnabled: isProps(subresources?.status),
          suppressCelCost: unchangedSchema(options, v),
        }),
      );
    }
    validateSubresources(internal.versionSubresources[i], `${at}.subresources`, out);
    (internal.versionColumns[i] ?? []).forEach((column, j) => {
      validateColumn(column, `${at}.additionalPrinterColumns[${j}]`, out);
    });
  });
  if (!unique)
    out.push(
      invalid('spec.versions', sharpVersions(internal, spec), 'must contain unique version names'),
    );
  if (storage !== 1) {
    out.push(
      invalid(
        'spec.versions',
        sharpVersions(internal, spec),
        'must have exactly one version marked as storage version',
      ),
    );
  }
  // The internal spec.version is versions[0]'s name, checked again under its own path.
  const first = versions[0];
  if (first !== undefined) {
    const name = text(first, 'name');
    const errs = dns1035LabelErrors(name);
    if (name !== '' && errs.length > 0) out.push(invalid('spec.version', name, errs.join(',')));
  }
  const names = props(spec, 'names') ?? {};
  for (const field of ['plural', 'singular', 'kind', 'listKind'])
    if (text(names, field) === '') out.push(required(`spec.names.${field}`));
  validateNames(names, 'spec.names', out);
  const anyStatus =
    isProps(internal.subresources?.status) ||
    internal.versionSubresources.some((s) => isProps(s?.status));
  if (internal.validation !== undefined) {
    out.push(
      ...crdSchemaIssues(internal.validation, 'spec.validation', {
        ...schemaRules,
        statusEnabled: anyStatus,
        suppressCelCost: versions.every((v) => unchangedSchema(options, v)),
      }),
    );
  }
  validateSubresources(internal.subresources, 'spec.subresources', out);
  (internal.columns ?? []).forEach((column, j) => {
    validateColumn(column, `spec.additionalPrinterColumns[${j}]`, out);
  });
  const conversion = props(spec, 'conversion');
  const strategy = conversion === undefined ? '' : text(conversion, 'strategy');
  if (conversion !== undefined && strategy !== 'None' && preserveUnknownFields)
    out.push(
      invalid(
        'spec.conversion.strategy',
        strategy,
        'must be None if spec.preserveUnknownFields is true',
      ),
    );
  validateConversion(conversion, options, out);
}

/** GetAPIApprovalState: a protected group's CRD carries a reviewed API's link. */
function approvalOf(crd: KubeObject): { state: string; reason: string } {
  const value = crd.metadata.annotations?.[API_APPROVAL] ?? '';
  if (value === '') {
    return {
      state: 'missing',
      reason: `protected groups must have approval annotation ${goQuote(API_APPROVAL)}, see https://github.com/kubernetes/enhancements/pull/1111`,
    };
  }
  if (value.startsWith('unapproved')) return { state: 'bypassed', reason: '' };
  // url.ParseRequestURI: an absolute URL, or an absolute path.
  let valid = value.startsWith('/');
  try {
    valid ||= new URL(value).protocol !== '';
  } catch {
    // not a URL
  }
  if (valid) return { state: 'approved', reason: '' };
  return {
    state: 'invalid',
    reason: `protected groups must have approval annotation ${goQuote(API_APPROVAL)} with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
  };
}

function validateApproval(
  crd: KubeObject,
  old: KubeObject | undefined,
  group: string,
  out: FieldIssue[],
): void {
  const protectedGroup =
    group === 'k8s.io' ||
    group.endsWith('.k8s.io') ||
    group === 'kubernetes.io' ||
    group.endsWith('.kubernetes.io');
  if (!protectedGroup) return;
  const now = approvalOf(crd);
  if (old !== undefined && approvalOf(old).state === now.state) return;
  const at = keyPath('metadata.annotations', API_APPROVAL);
  if (now.state === 'missing') out.push(required(at, now.reason));
  else if (now.state === 'invalid')
    out.push(invalid(at, crd.metadata.annotations?.[API_APPROVAL] ?? '', now.reason));
}

/** ValidateCustomResourceDefinitionStoredVersions */
function validateStoredVersions(stored: string[], versions: Props[], out: FieldIssue[]): void {
  if (stored.length === 0) {
    out.push(
      invalid(
        'status.storedVersions',
        new GoText(goStrings(undefined)),
        'must have at least one stored version',
      ),
    );
    return;
  }
  const left = new Map(stored.map((v, i) => [v, i]));
  for (const v of versions) {
    const name = text(v, 'name');
    if (v.storage === true && !left.has(name))
      out.push(
        invalid(
          'status.storedVersions',
          new GoText(goStrings(stored)),
          `must have the storage version ${name}`,
        ),
      );
    left.delete(name);
  }
  for (const [v, i] of left) {
    out.push(
      invalid(
        `status.storedVersions[${i}]`,
        v,
        `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`,
      ),
    );
  }
}

/** ValidateImmutableField */
function immutable(value: unknown, before: unknown, path: string, out: FieldIssue[]): void {
  if (!sameJson(value, before)) out.push(invalid(path, value ?? '', 'field is immutable'));
}

/**
 * Every problem the real API server reports for this CRD, in its order: metadata.name, the
 * spec, stored versions, API approval, preserveUnknownFields, and on an update what may not
 * change. `storedVersions` are the ones the write would record.
 */
export function crdCauses(
  crd: KubeObject,
  old: KubeObject | undefined,
  storedVersions: string[],
): FieldIssue[] {
  const out: FieldIssue[] = [];
  const spec = isProps(crd.spec) ? crd.spec : {};
  const names = props(spec, 'names') ?? {};
  const group = text(spec, 'group');
  const plural = text(names, 'plural');
  const name = crd.metadata.name ?? '';
  if (old === undefined && name !== `${plural}.${group}`)
    out.push(invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  const options = optionsFor(old);
  const internal = toInternal(spec);
  validateSpec(spec, internal, options, out);
  if (old !== undefined) {
    const before = isProps(old.spec) ? old.spec : {};
    const beforeNames = props(before, 'names') ?? {};
    if (options.requireImmutableNames) {
      immutable(spec.scope, before.scope, 'spec.scope', out);
      immutable(names.kind, beforeNames.kind, 'spec.names.kind', out);
    }
    immutable(spec.group, before.group, 'spec.group', out);
    immutable(names.plural, beforeNames.plural, 'spec.names.plural', out);
  }
  validateStoredVersions(storedVersions, internal.versions, out);
  validateApproval(crd, old, group, out);
  const oldPreserve =
    old !== undefined && isProps(old.spec) && old.spec.preserveUnknownFields === true;
  if (!oldPreserve && spec.preserveUnknownFields === true) {
    out.push(
      invalid(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  }
  return out;
}

/** Defaults, checks and the status the server reports, for a CRD being written. */
function prepareCrd(crd: KubeObject, old: KubeObject | undefined): void {
  setDefaults(crd);
  const spec = (isProps(crd.spec) ? crd.spec : {}) as Props;
  const previous = (old?.status ?? {}) as {
    storedVersions?: string[];
    conditions?: Array<{ type: string; lastTransitionTime: string }>;
  };
  // PrepareForCreate/PrepareForUpdate: the storage version joins the ones stored before.
  const storedVersions = [...(old === undefined ? [] : (previous.storedVersions ?? []))];
  const storage = propsList(spec, 'versions').find((v) => v.storage === true);
  if (storage !== undefined && !storedVersions.includes(text(storage, 'name')))
    storedVersions.push(text(storage, 'name'));
  const causes = crdCauses(crd, old, storedVersions);
  if (causes.length > 0) throw invalidError(CRD_TYPE, crd.metadata.name ?? '', causes);
  if (old === undefined) {
    const finalizers = crd.metadata.finalizers ?? [];
    if (!finalizers.includes(CRD_CLEANUP_FINALIZER))
      crd.metadata.finalizers = [...finalizers, CRD_CLEANUP_FINALIZER];
  }
  const names = props(spec, 'names') ?? {};
  const acceptedNames = {
    plural: names.plural,
    singular: names.singular,
    kind: names.kind,
    listKind: names.listKind,
    ...(names.shortNames ? { shortNames: names.shortNames } : {}),
    ...(names.categories ? { categories: names.categories } : {}),
  };
  const since = (type: string) =>
    previous.conditions?.find((c) => c.type === type)?.lastTransitionTime ?? timestamp();
  crd.status = {
    conditions: [
      {
        type: 'NamesAccepted',
        status: 'True',
        reason: 'NoConflicts',
        message: 'no conflicts found',
        lastTransitionTime: since('NamesAccepted'),
      },
      {
        type: 'Established',
        status: 'True',
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
        lastTransitionTime: since('Established'),
      },
    ],
    acceptedNames,
    storedVersions,
  };
}

export const customResourceDefinitionStrategy: KindStrategy = {
  countsGeneration: true,
  type: CRD_TYPE,
  prepare: prepareCrd,
};
