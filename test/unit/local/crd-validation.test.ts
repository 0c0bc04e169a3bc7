// A CustomResourceDefinition written to the local control plane is checked rule by rule as
// apiextensions-apiserver checks it: one case per rule, each naming the upstream function it
// follows (apis/apiextensions/validation/validation.go unless said otherwise; the structural
// rules are pkg/apiserver/schema/validation.go's ValidateStructural and convert.go's
// NewStructural; defaults are pkg/apiserver/schema/defaulting/validation.go's
// ValidateDefaults). Each case expects the exact causes, `<field>: <message>`, in the order
// kube-apiserver lists them.
import { describe, expect, it } from 'vitest';
import { customResourceDefinitionStrategy } from '../../../src/local/kinds/customresourcedefinition.js';
import { ApiError, type KubeObject } from '../../../src/local/types.js';

type Json = Record<string, any>;

const context = { servedTypes: () => [] };

/** A valid v1 CRD of widgets.example.com, one version, with `schema` as its openAPIV3Schema. */
function crd(schema: Json = { type: 'object' }, change: (c: Json) => void = () => {}): Json {
  const c: Json = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  };
  change(c);
  return c;
}

/** A schema whose root has these properties. */
const props = (properties: Json, extra: Json = {}) => ({ type: 'object', properties, ...extra });
/** A schema with `spec` holding this one property `a`. */
const field = (a: Json) => props({ spec: { type: 'object', properties: { a } } });

const AT = 'spec.validation.openAPIV3Schema';
const A = `${AT}.properties[spec].properties[a]`;

/** The causes of the 422 the write gets, as `<field>: <message>`; [] when it is taken. */
function causes(object: Json, old?: Json): string[] {
  try {
    customResourceDefinitionStrategy.prepare?.(
      structuredClone(object) as KubeObject,
      old === undefined ? undefined : (structuredClone(old) as KubeObject),
      context,
    );
    return [];
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    expect(error.code).toBe(422);
    const list = error.details?.causes ?? [];
    // The message lists the same causes, bracketed when there are several.
    const parts = list.map((c) => `${c.field}: ${c.message}`);
    const detail = parts.length > 1 ? `[${parts.join(', ')}]` : parts[0];
    expect(error.message).toBe(
      `CustomResourceDefinition.apiextensions.k8s.io "${object.metadata.name}" is invalid: ${detail}`,
    );
    return parts;
  }
}

/** The CRD as stored once created: what an update starts from. */
function created(object: Json): Json {
  const copy = structuredClone(object) as KubeObject;
  customResourceDefinitionStrategy.prepare?.(copy, undefined, context);
  return copy;
}

const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const VERSION = (storage: boolean) =>
  `apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:${storage}, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}`;

describe('what apiextensions-apiserver accepts is accepted', () => {
  it.each([
    // ValidateCustomResourceDefinitionOpenAPISchema: true only restates the default.
    [
      'additionalProperties: true beside properties',
      field({ type: 'object', additionalProperties: true, properties: { b: { type: 'string' } } }),
    ],
    [
      'additionalProperties: false without properties',
      field({ type: 'object', additionalProperties: false }),
    ],
    ['an enum of another type than its field', field({ type: 'integer', enum: ['1', true] })],
    ['properties on a string', field({ type: 'string', properties: { b: { type: 'string' } } })],
    [
      'a version not shaped v1beta1',
      crd({ type: 'object' }, (c) => {
        c.spec.versions[0].name = 'stable';
      }).spec.versions[0].schema.openAPIV3Schema,
    ],
    // isIntOrStringAnyOfPattern
    [
      'int-or-string spelled out under anyOf',
      field({
        'x-kubernetes-int-or-string': true,
        anyOf: [{ type: 'integer' }, { type: 'string' }],
      }),
    ],
    [
      'metadata restricting name',
      props({
        metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } },
      }),
    ],
    [
      'a map list keyed by a required field',
      field({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['k'],
        items: { type: 'object', required: ['k'], properties: { k: { type: 'string' } } },
      }),
    ],
    [
      'a set of atomic objects',
      field({
        type: 'array',
        'x-kubernetes-list-type': 'set',
        items: { type: 'object', 'x-kubernetes-map-type': 'atomic' },
      }),
    ],
    ['a default that validates', field({ type: 'integer', minimum: 1, default: 3 })],
  ])('%s', (_, schema) => {
    expect(causes(crd(schema as Json))).toEqual([]);
  });

  it('fills in the v1 defaults: singular, listKind, conversion strategy (SetDefaults_CustomResourceDefinitionSpec)', () => {
    const stored = created(
      crd({ type: 'object' }, (c) => {
        c.spec.names = { plural: 'widgets', kind: 'Widget' };
      }),
    );
    expect(stored.spec.names).toEqual({
      plural: 'widgets',
      kind: 'Widget',
      singular: 'widget',
      listKind: 'WidgetList',
    });
    expect(stored.spec.conversion).toEqual({ strategy: 'None' });
    expect(stored.status.storedVersions).toEqual(['v1']);
  });
});

describe('validateCustomResourceDefinitionSpec and ValidateCustomResourceDefinition', () => {
  it.each<[string, Json, string[]]>([
    [
      'ValidateCustomResourceDefinition: metadata.name must be plural.group',
      crd(undefined, (c) => {
        c.metadata.name = 'gadgets.example.com';
      }),
      [
        'metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group',
      ],
    ],
    [
      'spec.group is required',
      crd(undefined, (c) => {
        c.spec.group = '';
        c.metadata.name = 'widgets.';
      }),
      ['spec.group: Required value'],
    ],
    [
      'spec.group is an RFC 1123 subdomain (IsDNS1123Subdomain)',
      crd(undefined, (c) => {
        c.spec.group = 'Example.com';
        c.metadata.name = 'widgets.Example.com';
      }),
      [`spec.group: Invalid value: "Example.com": ${SUBDOMAIN}`],
    ],
    [
      'spec.group has a dot',
      crd(undefined, (c) => {
        c.spec.group = 'example';
        c.metadata.name = 'widgets.example';
      }),
      ['spec.group: Invalid value: "example": should be a domain with at least one dot'],
    ],
    [
      'validateEnumStrings: spec.scope is required',
      crd(undefined, (c) => {
        delete c.spec.scope;
      }),
      ['spec.scope: Required value'],
    ],
    [
      'validateEnumStrings: spec.scope is Cluster or Namespaced',
      crd(undefined, (c) => {
        c.spec.scope = 'Global';
      }),
      ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
    ],
    [
      'a version name is a DNS-1035 label, and so is spec.version, its copy',
      crd(undefined, (c) => {
        c.spec.versions[0].name = 'V1';
      }),
      [
        `spec.versions[0].name: Invalid value: "V1": ${DNS1035}`,
        `spec.version: Invalid value: "V1": ${DNS1035}`,
      ],
    ],
    [
      'version names are unique',
      crd(undefined, (c) => {
        c.spec.versions.push({ ...c.spec.versions[0], storage: false });
      }),
      [
        `spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{${VERSION(true)}, ${VERSION(false)}}: must contain unique version names`,
      ],
    ],
    [
      'exactly one storage version, and so one stored version (ValidateCustomResourceDefinitionStoredVersions)',
      crd(undefined, (c) => {
        c.spec.versions[0].storage = false;
      }),
      [
        `spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{${VERSION(false)}}: must have exactly one version marked as storage version`,
        'status.storedVersions: Invalid value: []string(nil): must have at least one stored version',
      ],
    ],
    [
      'every version has a schema (requireOpenAPISchema)',
      crd(undefined, (c) => {
        delete c.spec.versions[0].schema;
      }),
      ['spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required'],
    ],
    [
      'names.plural and names.kind are required; listKind too when no kind defaults it',
      crd(undefined, (c) => {
        c.spec.names = {};
        c.metadata.name = '.example.com';
      }),
      [
        'spec.names.plural: Required value',
        'spec.names.singular: Required value',
        'spec.names.kind: Required value',
        'spec.names.listKind: Required value',
      ],
    ],
    [
      'ValidateCustomResourceDefinitionNames: plural and singular are DNS-1035 labels',
      crd(undefined, (c) => {
        c.spec.names.plural = '1widgets';
        c.spec.names.singular = 'Widget';
        c.metadata.name = '1widgets.example.com';
      }),
      [
        `spec.names.plural: Invalid value: "1widgets": ${DNS1035}`,
        `spec.names.singular: Invalid value: "Widget": ${DNS1035}`,
      ],
    ],
    [
      'ValidateCustomResourceDefinitionNames: kind and listKind may have mixed case only',
      crd(undefined, (c) => {
        c.spec.names.kind = 'Wid_get';
        c.spec.names.listKind = 'Wid_getList';
      }),
      [
        `spec.names.kind: Invalid value: "Wid_get": may have mixed case, but should otherwise match: ${DNS1035}`,
        `spec.names.listKind: Invalid value: "Wid_getList": may have mixed case, but should otherwise match: ${DNS1035}`,
      ],
    ],
    [
      'ValidateCustomResourceDefinitionNames: short names and categories are DNS-1035 labels',
      crd(undefined, (c) => {
        c.spec.names.shortNames = ['w', 'W2'];
        c.spec.names.categories = ['all', 'my_things'];
      }),
      [
        `spec.names.shortNames[1]: Invalid value: "W2": ${DNS1035}`,
        `spec.names.categories[1]: Invalid value: "my_things": ${DNS1035}`,
      ],
    ],
    [
      'ValidateCustomResourceDefinitionNames: kind and listKind differ',
      crd(undefined, (c) => {
        c.spec.names.listKind = 'Widget';
      }),
      ['spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same'],
    ],
    [
      'ValidateCustomResourceColumnDefinition: type, format and JSONPath (reported at the top when every version has the same columns)',
      crd(undefined, (c) => {
        c.spec.versions[0].additionalPrinterColumns = [
          { name: 'A', type: 'text', format: 'uuid', jsonPath: 'spec.a' },
          { name: '', type: '', jsonPath: '' },
        ];
      }),
      [
        'spec.additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string',
        'spec.additionalPrinterColumns[0].format: Invalid value: "uuid": must be one of byte,date,date-time,double,float,int32,int64,password',
        'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.a": must be a simple json path starting with .',
        'spec.additionalPrinterColumns[1].name: Required value',
        'spec.additionalPrinterColumns[1].type: Required value: must be one of boolean,date,integer,number,string',
        'spec.additionalPrinterColumns[1].JSONPath: Required value',
      ],
    ],
    [
      'ValidateCustomResourceColumnDefinition: per version when versions differ',
      crd(undefined, (c) => {
        c.spec.versions.push({
          name: 'v2',
          served: true,
          storage: false,
          schema: c.spec.versions[0].schema,
          additionalPrinterColumns: [{ name: 'A', type: 'string', jsonPath: 'x' }],
        });
      }),
      [
        'spec.versions[1].additionalPrinterColumns[0].JSONPath: Invalid value: "x": must be a simple json path starting with .',
      ],
    ],
    [
      'validateDeprecationWarning: only for deprecated versions',
      crd(undefined, (c) => {
        c.spec.versions[0].deprecationWarning = 'old';
      }),
      [
        'spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions',
      ],
    ],
    [
      'ValidateCustomResourceDefinitionSubresources: scale paths under .spec and .status',
      crd(undefined, (c) => {
        c.spec.versions[0].subresources = {
          scale: { specReplicasPath: '.status.replicas', statusReplicasPath: 'replicas' },
        };
      }),
      [
        'spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec',
        'spec.subresources.scale.statusReplicasPath: Invalid value: "replicas": must be a simple json path starting with .',
      ],
    ],
    [
      'validateCustomResourceConversion: a webhook needs its client config and review versions',
      crd(undefined, (c) => {
        c.spec.conversion = { strategy: 'Webhook' };
      }),
      [
        'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
        'spec.conversion.conversionReviewVersions: Required value',
      ],
    ],
    [
      'validateCustomResourceConversion: no webhook without the Webhook strategy',
      crd(undefined, (c) => {
        c.spec.conversion = {
          strategy: 'None',
          webhook: { clientConfig: { url: 'https://x' }, conversionReviewVersions: ['v1'] },
        };
      }),
      [
        'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
        'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
      ],
    ],
    [
      'validateCustomResourceConversion: a webhook URL is https, without a query (ValidateWebhookURL)',
      crd(undefined, (c) => {
        c.spec.conversion = {
          strategy: 'Webhook',
          webhook: {
            clientConfig: { url: 'http://x/convert?a=1' },
            conversionReviewVersions: ['v2'],
          },
        };
      }),
      [
        `spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
        'spec.conversion.webhookClientConfig.url: Invalid value: "a=1": query parameters are not permitted in the URL',
        'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
      ],
    ],
    [
      'validatePreserveUnknownFields: never true in v1',
      crd(undefined, (c) => {
        c.spec.preserveUnknownFields = true;
      }),
      [
        'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ],
    ],
    [
      'validateAPIApproval: a *.k8s.io group carries the api-approved annotation',
      crd(undefined, (c) => {
        c.spec.group = 'things.k8s.io';
        c.metadata.name = 'widgets.things.k8s.io';
      }),
      [
        'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
      ],
    ],
  ])('%s', (_, object, expected) => {
    expect(causes(object)).toEqual(expected);
  });

  it('validateAPIApproval: takes a URL or a reason starting with "unapproved"', () => {
    for (const value of [
      'https://github.com/kubernetes/enhancements/pull/1111',
      'unapproved, testing',
    ]) {
      const object = crd(undefined, (c) => {
        c.spec.group = 'things.k8s.io';
        c.metadata.name = 'widgets.things.k8s.io';
        c.metadata.annotations = { 'api-approved.kubernetes.io': value };
      });
      expect(causes(object)).toEqual([]);
    }
  });
});

describe('validateCustomResourceDefinitionSpecUpdate and ValidateCustomResourceDefinitionStoredVersions', () => {
  const before = created(crd());

  it('keeps group and plural, and scope and kind once established (ValidateImmutableField)', () => {
    const after = structuredClone(before);
    after.spec.scope = 'Cluster';
    after.spec.names.kind = 'Gadget';
    after.spec.names.listKind = 'GadgetList';
    after.spec.names.plural = 'gadgets';
    after.spec.group = 'other.com';
    expect(causes(after, before)).toEqual([
      'spec.scope: Invalid value: "Cluster": field is immutable',
      'spec.names.kind: Invalid value: "Gadget": field is immutable',
      'spec.group: Invalid value: "other.com": field is immutable',
      'spec.names.plural: Invalid value: "gadgets": field is immutable',
    ]);
  });

  it('keeps a stored version in spec.versions until it is migrated away', () => {
    const after = structuredClone(before);
    after.spec.versions = [{ ...after.spec.versions[0], name: 'v2' }];
    expect(causes(after, before)).toEqual([
      'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions',
    ]);
  });

  it('records a new storage version beside the old one', () => {
    const after = structuredClone(before);
    after.spec.versions[0].storage = false;
    after.spec.versions.push({ ...after.spec.versions[0], name: 'v2', storage: true });
    const copy = structuredClone(after) as KubeObject;
    customResourceDefinitionStrategy.prepare?.(copy, before as KubeObject, context);
    expect((copy.status as Json).storedVersions).toEqual(['v1', 'v2']);
  });
});

describe('validateCustomResourceDefinitionValidation and ValidateCustomResourceDefinitionOpenAPISchema', () => {
  it.each<[string, Json, string[]]>([
    [
      'nullable cannot be true at the root',
      { type: 'object', nullable: true },
      [`${AT}.nullable: Forbidden: nullable cannot be true at the root`],
    ],
    [
      'specStandardValidatorV3: type is one of the OpenAPI v3 types',
      field({ type: 'text' }),
      [
        `${A}.type: Unsupported value: "text": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      ],
    ],
    [
      'specStandardValidatorV3: type null, nullable instead',
      field({ type: 'null' }),
      [
        `${A}.type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
        `${A}.type: Forbidden: type cannot be set to null, use nullable as an alternative`,
      ],
    ],
    [
      'specStandardValidatorV3: no default in top-level metadata',
      props({ metadata: { type: 'object', default: {} } }),
      [`${AT}.properties[metadata].default: Forbidden: must not be set in top-level metadata`],
    ],
    [
      'specStandardValidatorV3: no id, $ref, definitions, dependencies, patternProperties or additionalItems (and NewStructural is silent then)',
      field({
        type: 'object',
        id: 'x',
        $ref: '#/x',
        definitions: { d: { type: 'string' } },
        dependencies: { d: ['e'] },
        patternProperties: { '^x': { type: 'string' } },
        additionalItems: false,
      }),
      [
        `${A}.id: Forbidden: id is not supported`,
        `${A}.additionalItems: Forbidden: additionalItems is not supported`,
        `${A}.patternProperties: Forbidden: patternProperties is not supported`,
        `${A}.definitions: Forbidden: definitions is not supported`,
        `${A}.dependencies: Forbidden: dependencies is not supported`,
        `${A}.$ref: Forbidden: $ref is not supported`,
      ],
    ],
    [
      'NewStructural: $schema is refused, alone, as the structural conversion words it',
      field({ type: 'string', $schema: 'http://json-schema.org/draft-04/schema#' }),
      [`${AT}: Invalid value: "": OpenAPIV3Schema 'schema' is not supported`],
    ],
    [
      'specStandardValidatorV3: items is one schema, not a list',
      field({ type: 'array', items: [{ type: 'string' }] }),
      [`${A}.items: Forbidden: items must be a schema object and not an array`],
    ],
    [
      'specStandardValidatorV3: no embedded resource inside a resource meta',
      props({
        metadata: { type: 'object' },
        spec: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
          properties: {
            kind: {
              type: 'string',
              'x-kubernetes-embedded-resource': true,
              'x-kubernetes-preserve-unknown-fields': true,
            },
          },
        },
      }),
      [
        `${AT}.properties[spec].properties[kind].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`,
        `${AT}.properties[spec].properties[kind].x-kubernetes-embedded-resource: Forbidden: must not be used inside of resource meta`,
      ],
    ],
    [
      'uniqueItems cannot be true',
      field({ type: 'array', items: { type: 'string' }, uniqueItems: true }),
      [
        `${A}.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
      ],
    ],
    [
      'additionalProperties: false or a schema beside properties',
      field({
        type: 'object',
        properties: { b: { type: 'string' } },
        additionalProperties: { type: 'string' },
      }),
      [
        `${A}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
      ],
    ],
    [
      'x-kubernetes-preserve-unknown-fields is true or undefined',
      field({ type: 'object', 'x-kubernetes-preserve-unknown-fields': false }),
      [
        `${A}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`,
      ],
    ],
    [
      'x-kubernetes-map-type: on objects, atomic or granular',
      field({ type: 'string', 'x-kubernetes-map-type': 'merge' }),
      [
        `${A}.type: Invalid value: "string": must be object if x-kubernetes-map-type is specified`,
        `${A}.x-kubernetes-map-type: Unsupported value: "merge": supported values: "atomic", "granular"`,
      ],
    ],
    [
      'x-kubernetes-list-type: on arrays, atomic, set or map',
      field({ 'x-kubernetes-list-type': 'bag' }),
      [
        `${A}.type: Required value: must not be empty for specified object fields`,
        `${A}.type: Required value: must be array if x-kubernetes-list-type is specified`,
        `${A}.x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
      ],
    ],
    [
      'requireAtomicSetType: a set holds atomic objects',
      field({ type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object' } }),
      [
        `${A}.items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set`,
      ],
    ],
    [
      'x-kubernetes-list-map-keys only with x-kubernetes-list-type: map',
      field({ type: 'array', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'string' } }),
      [
        `${A}.x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`,
      ],
    ],
    [
      'x-kubernetes-list-type: map names its keys, and holds objects',
      field({ type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'string' } }),
      [
        `${A}.x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
        `${A}.items.type: Invalid value: "string": must be object if parent array's x-kubernetes-list-type is map`,
      ],
    ],
    [
      'map list keys are scalar properties of the items, named once',
      field({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['k', 'o', 'k', 'z'],
        items: {
          type: 'object',
          required: ['k', 'o'],
          properties: { k: { type: 'string' }, o: { type: 'object' } },
        },
      }),
      [
        `${A}.items.properties[o].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
        `${A}.x-kubernetes-list-map-keys: Invalid value: []string{"k", "o", "k", "z"}: must not contain duplicate entries`,
        `${A}.x-kubernetes-list-map-keys: Invalid value: []string{"k", "o", "k", "z"}: entries must all be names of item properties`,
      ],
    ],
    [
      'validateMapListKeysMapSet: keys are required or defaulted, never nullable, and so are items',
      field({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['k'],
        items: {
          type: 'object',
          nullable: true,
          properties: { k: { type: 'string', nullable: true } },
        },
      }),
      [
        `${A}.items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map`,
        `${A}.items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
        `${A}.items.properties[k].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`,
      ],
    ],
    [
      'x-kubernetes-validations: a rule, a one-line message, a supported reason',
      field({
        type: 'string',
        'x-kubernetes-validations': [
          { rule: ' ' },
          { rule: 'self.size() > 1', message: 'a\nb' },
          { rule: 'self.size() > 1', reason: 'FieldValueTooLong' },
        ],
      }),
      [
        `${A}.x-kubernetes-validations[0].rule: Required value: rule is not specified`,
        `${A}.x-kubernetes-validations[1].message: Invalid value: "a\\nb": message must not contain line breaks`,
        `${A}.x-kubernetes-validations[2].reason: Unsupported value: "FieldValueTooLong": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
      ],
    ],
  ])('%s', (_, schema, expected) => {
    expect(causes(crd(schema))).toEqual(expected);
  });

  it('status subresource: the root is an object holding only what survives the split (allowedFieldsAtRootSchema)', () => {
    const arrayRoot = causes(
      crd({ type: 'array', items: { type: 'string' } }, (c) => {
        c.spec.versions[0].subresources = { status: {} };
      }),
    );
    expect(arrayRoot[0]).toBe(
      `${AT}.type: Invalid value: "array": only "object" is allowed as the type at the root of the schema if the status subresource is enabled`,
    );
    const withEnum = causes(
      crd({ type: 'object', enum: [{}] }, (c) => {
        c.spec.versions[0].subresources = { status: {} };
      }),
    );
    expect(withEnum).toHaveLength(1);
    expect(withEnum[0]).toMatch(
      /^spec\.validation\.openAPIV3Schema: Invalid value: apiextensions\.JSONSchemaProps\{ID:"", Schema:"", Ref:\(\*string\)\(nil\), Description:"", Type:"object", Nullable:false, .*Enum:\[\]apiextensions\.JSON\{map\[string\]interface \{\}\{\}\}, .*\}: only \[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations\] fields are allowed at the root of the schema if the status subresource is enabled$/,
    );
  });

  it('quotes a large schema in that message only up to 64 KiB, where Go prints it whole', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 5_000 }, (_, i) => [`p${i}`, { type: 'string' }]),
    );
    const [message] = causes(
      crd({ type: 'object', enum: [{}], properties }, (c) => {
        c.spec.versions[0].subresources = { status: {} };
      }),
    );
    expect(message).toContain('"p0":apiextensions.JSONSchemaProps{ID:""');
    expect(message).toContain('"p999":…');
    expect(message?.length).toBeLessThan(200 * 1024);
  });

  it('per-version schemas that differ are reported under their version', () => {
    const object = crd(field({ type: 'text' }), (c) => {
      c.spec.versions.push({
        name: 'v2',
        served: true,
        storage: false,
        schema: { openAPIV3Schema: { type: 'object' } },
      });
    });
    expect(causes(object)).toEqual([
      `spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[a].type: Unsupported value: "text": supported values: "array", "boolean", "integer", "number", "object", "string"`,
    ]);
  });
});

describe('ValidateStructural (pkg/apiserver/schema/validation.go), sorted as it sorts', () => {
  it.each<[string, Json, string[]]>([
    [
      'validateStructuralInvariants: an array has items',
      field({ type: 'array' }),
      [`${A}.items: Required value: must be specified`],
    ],
    [
      'validateStructuralInvariants: no additionalProperties at the root',
      { type: 'object', additionalProperties: { type: 'string' } },
      [`${AT}.additionalProperties: Forbidden: must not be used at the root`],
    ],
    [
      'validateExtensions: int-or-string neither preserves nor embeds',
      field({
        'x-kubernetes-int-or-string': true,
        'x-kubernetes-preserve-unknown-fields': true,
        'x-kubernetes-embedded-resource': true,
      }),
      [
        `${A}.type: Required value: must be object if x-kubernetes-embedded-resource is true`,
        `${A}.x-kubernetes-embedded-resource: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
        `${A}.x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
      ],
    ],
    [
      'validateNestedValueValidation: only value validations under a junctor',
      field({
        type: 'object',
        properties: { b: { type: 'string' } },
        anyOf: [
          {
            type: 'object',
            description: 'd',
            title: 't',
            nullable: true,
            default: {},
            additionalProperties: true,
            'x-kubernetes-preserve-unknown-fields': true,
            'x-kubernetes-list-type': 'atomic',
            'x-kubernetes-map-type': 'atomic',
            'x-kubernetes-validations': [{ rule: 'true' }],
          },
        ],
      }),
      [
        `${A}.anyOf[0].additionalProperties: Forbidden: must be undefined to be structural`,
        `${A}.anyOf[0].default: Forbidden: must be undefined to be structural`,
        `${A}.anyOf[0].description: Forbidden: must be empty to be structural`,
        `${A}.anyOf[0].nullable: Forbidden: must be false to be structural`,
        `${A}.anyOf[0].title: Forbidden: must be empty to be structural`,
        `${A}.anyOf[0].type: Forbidden: must be empty to be structural`,
        `${A}.anyOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural`,
        `${A}.anyOf[0].x-kubernetes-map-type: Forbidden: must be undefined to be structural`,
        `${A}.anyOf[0].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural`,
        `${A}.anyOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural`,
        // ValidateCustomResourceDefinitionOpenAPISchema then walks the branch too.
        `${A}.anyOf[0].type: Invalid value: "object": must be array if x-kubernetes-list-type is specified`,
      ],
    ],
    [
      'validateValueValidation: a pattern compiles with Go regexp (RE2)',
      field({ type: 'string', allOf: [{ pattern: '(?=x)' }] }),
      [
        `${A}.allOf[0].pattern: Invalid value: "(?=x)": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: \`(?=\``,
      ],
    ],
    [
      'validateStructuralInvariants: an embedded resource is an object with properties or preserved fields, and no additionalProperties',
      field({
        'x-kubernetes-embedded-resource': true,
        type: 'object',
        additionalProperties: { type: 'string' },
      }),
      [
        `${A}.additionalProperties: Forbidden: must not be used if x-kubernetes-embedded-resource is set`,
        `${A}.properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
      ],
    ],
    [
      'validateStructuralInvariants: a type at the root, for array items and for object fields',
      { properties: { a: { type: 'array', items: {} } } },
      [
        `${AT}.properties[a].items.type: Required value: must not be empty for specified array items`,
        `${AT}.type: Required value: must not be empty at the root`,
      ],
    ],
    [
      'validateStructuralInvariants: an object at the root',
      { type: 'string' },
      [`${AT}.type: Invalid value: "string": must be object at the root`],
    ],
    [
      'validateStructuralInvariants: kind and apiVersion are strings, metadata an object',
      props({
        kind: { type: 'integer' },
        apiVersion: { type: 'boolean' },
        metadata: { type: 'string' },
      }),
      [
        `${AT}.properties[apiVersion].type: Invalid value: "boolean": must be string`,
        `${AT}.properties[kind].type: Invalid value: "integer": must be string`,
        `${AT}.properties[metadata].type: Invalid value: "string": must be object`,
      ],
    ],
    [
      'validateStructuralMetadataInvariants: metadata restricts name and generateName only',
      props({ metadata: { type: 'object', description: 'the metadata' } }),
      [
        `${AT}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
      ],
    ],
    [
      'validateNestedValueValidation: no metadata in a nested context',
      props({ spec: { type: 'object' } }, { allOf: [{ properties: { metadata: {} } }] }),
      [
        `${AT}.allOf[0].properties[metadata]: Forbidden: must not be specified in a nested context`,
        `${AT}.properties[metadata]: Required value: because it is defined in ${AT}.allOf[0].properties[metadata]`,
      ],
    ],
    [
      'validateStructuralCompleteness: what a junctor names, the structure specifies',
      props(
        { spec: { type: 'object' } },
        { anyOf: [{ properties: { spec: { properties: { x: { minLength: 1 } } } } }] },
      ),
      [
        `${AT}.properties[spec].properties[x]: Required value: because it is defined in ${AT}.anyOf[0].properties[spec].properties[x]`,
      ],
    ],
  ])('%s', (_, schema, expected) => {
    expect(causes(crd(schema))).toEqual(expected);
  });
});

describe('ValidateDefaults (pkg/apiserver/schema/defaulting/validation.go)', () => {
  it.each<[string, Json, string[]]>([
    [
      'a default validates against its own node, in kube-openapi words',
      field({ type: 'integer', default: 'x' }),
      [`${A}.default: Invalid value: "string":  in body must be of type integer: "string"`],
    ],
    [
      'a default deeper in an object validates at its own path',
      field({
        type: 'object',
        properties: { n: { type: 'integer', maximum: 3 } },
        default: { n: 5 },
      }),
      [`${A}.default.n: Invalid value: 5: n in body should be less than or equal to 3`],
    ],
    [
      'a default is pruned already',
      field({ type: 'object', properties: { n: { type: 'integer' } }, default: { n: 1, m: 2 } }),
      [
        `${A}.default: Invalid value: map[string]interface {}{"m":2, "n":1}: must not have unknown fields`,
      ],
    ],
    [
      'defaults are checked only once the schema is structural',
      field({ type: 'array', default: 'x' }),
      [`${A}.items: Required value: must be specified`],
    ],
  ])('%s', (_, schema, expected) => {
    expect(causes(crd(schema))).toEqual(expected);
  });
});

// The estimated cost of x-kubernetes-validations (getExpressionCost, StaticEstimatedCostLimit);
// the estimator itself is cel-estimate.test.ts's.
describe('rule cost at create and update', () => {
  const costly = (maxItems?: number) =>
    props({
      spec: {
        type: 'object',
        'x-kubernetes-validations': [{ rule: 'self.items.all(x, self.items.all(y, x == y))' }],
        properties: {
          items: { type: 'array', items: { type: 'integer' }, ...(maxItems ? { maxItems } : {}) },
        },
      },
    });
  const RULE = `${AT}.properties[spec].x-kubernetes-validations[0].rule`;

  it('refuses a create over the limit, and an update that makes a schema so', () => {
    expect(causes(crd(costly()))[0]).toBe(
      `${RULE}: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    );
    expect(causes(crd(costly(10)))).toEqual([]);
    expect(causes(crd(costly()), crd(costly(10)))).toHaveLength(3);
  });

  it('spares an update that leaves the schema as stored (versionsWithUnchangedSchemas)', () => {
    // A CRD stored before the limits were checked stays updatable: labels, other fields.
    const stored = crd(costly());
    const relabelled = crd(costly(), (c) => {
      c.metadata.labels = { team: 'a' };
    });
    expect(causes(relabelled, stored)).toEqual([]);
  });
});
