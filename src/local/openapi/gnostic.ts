// The protobuf form of a Swagger 2.0 document: gnostic's openapi_v2.Document
// (github.com/google/gnostic-models openapiv2/OpenAPIv2.proto), what kube-openapi's handler
// serves for `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
// (ToProtoBinary: gnostic's ParseDocument, then proto.Marshal) and what kubectl reads
// (client-go discovery's OpenAPISchema parses nothing else). It encodes the parts of the
// vocabulary our documents use, in field-number order as Go's proto.Marshal writes them, and
// throws on anything else: a key gnostic would refuse must not reach a client as a silent gap.

type Json = Record<string, unknown>;

/** Protocol buffers wire format: varints, length-delimited fields, 64-bit doubles. */
class Writer {
  private readonly chunks: Buffer[] = [];

  private varint(value: bigint): void {
    // int64 fields are two's complement in ten bytes when negative.
    let v = BigInt.asUintN(64, value);
    const bytes: number[] = [];
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v !== 0n) byte |= 0x80;
      bytes.push(byte);
    } while (v !== 0n);
    this.chunks.push(Buffer.from(bytes));
  }

  private tag(field: number, wireType: number): void {
    this.varint(BigInt((field << 3) | wireType));
  }

  private bytes(field: number, data: Buffer): void {
    this.tag(field, 2);
    this.varint(BigInt(data.length));
    this.chunks.push(data);
  }

  /** A proto3 string: left out when empty. */
  string(field: number, value: unknown): void {
    if (value === undefined || value === '') return;
    if (typeof value !== 'string') throw new Error(`field ${field}: expected a string`);
    this.bytes(field, Buffer.from(value, 'utf8'));
  }

  strings(field: number, values: unknown): void {
    if (values === undefined) return;
    for (const v of asArray(values)) {
      if (typeof v !== 'string') throw new Error(`field ${field}: expected strings`);
      this.bytes(field, Buffer.from(v, 'utf8'));
    }
  }

  /** A proto3 bool: left out when false, unless it is a oneof member (always written). */
  bool(field: number, value: unknown, always = false): void {
    if (value === undefined || (value === false && !always)) return;
    if (typeof value !== 'boolean') throw new Error(`field ${field}: expected a boolean`);
    this.tag(field, 0);
    this.varint(value ? 1n : 0n);
  }

  int64(field: number, value: unknown): void {
    if (value === undefined || value === 0) return;
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      throw new Error(`field ${field}: expected an integer`);
    }
    this.tag(field, 0);
    this.varint(BigInt(value));
  }

  double(field: number, value: unknown): void {
    if (value === undefined || value === 0) return;
    if (typeof value !== 'number') throw new Error(`field ${field}: expected a number`);
    this.tag(field, 1);
    const b = Buffer.alloc(8);
    b.writeDoubleLE(value);
    this.chunks.push(b);
  }

  /** A message field: written whenever set, even empty, as Go writes a non-nil pointer. */
  message(field: number, write: (w: Writer) => void): void {
    const inner = new Writer();
    write(inner);
    this.bytes(field, inner.finish());
  }

  finish(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => {
  if (!Array.isArray(v)) throw new Error('expected an array');
  return v;
};
const asObject = (v: unknown, what: string): Json => {
  if (!isObject(v)) throw new Error(`${what}: expected an object`);
  return v;
};
/** A map's entries in the order Go's encoding/json wrote them: by key. */
const sortedEntries = (v: Json): Array<[string, unknown]> =>
  Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** Refuses keys outside `allowed` that are not vendor extensions, as gnostic's parser does. */
function checkKeys(v: Json, allowed: readonly string[], what: string): void {
  for (const key of Object.keys(v)) {
    if (!key.startsWith('x-') && !allowed.includes(key)) {
      throw new Error(`${what} has invalid property: ${key}`);
    }
  }
}

/**
 * A value gnostic keeps as YAML text (openapi_v2.Any: vendor extensions, enum values, defaults).
 * JSON is YAML to Go's parsers; characters YAML will not take raw are escaped.
 */
function anyYaml(value: unknown): string {
  const json = JSON.stringify(value).replace(
    /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `${json}\n`;
}

/** Any { google.protobuf.Any value = 1; string yaml = 2; } */
const writeAny = (w: Writer, value: unknown) => w.string(2, anyYaml(value));

/** The `x-` keys of an object as NamedAny entries (name = 1, value = 2). */
function vendorExtensions(w: Writer, field: number, v: Json): void {
  for (const [name, value] of sortedEntries(v)) {
    if (!name.startsWith('x-')) continue;
    w.message(field, (n) => {
      n.string(1, name);
      n.message(2, (a) => writeAny(a, value));
    });
  }
}

const SCHEMA_KEYS = [
  '$ref',
  'format',
  'title',
  'description',
  'default',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxProperties',
  'minProperties',
  'required',
  'enum',
  'additionalProperties',
  'type',
  'items',
  'allOf',
  'properties',
  'discriminator',
  'readOnly',
  'example',
];

function writeSchema(w: Writer, s: Json): void {
  checkKeys(s, SCHEMA_KEYS, 'Schema');
  w.string(1, s.$ref);
  w.string(2, s.format);
  w.string(3, s.title);
  w.string(4, s.description);
  if (s.default !== undefined) w.message(5, (a) => writeAny(a, s.default));
  w.double(6, s.multipleOf);
  w.double(7, s.maximum);
  w.bool(8, s.exclusiveMaximum);
  w.double(9, s.minimum);
  w.bool(10, s.exclusiveMinimum);
  w.int64(11, s.maxLength);
  w.int64(12, s.minLength);
  w.string(13, s.pattern);
  w.int64(14, s.maxItems);
  w.int64(15, s.minItems);
  w.bool(16, s.uniqueItems);
  w.int64(17, s.maxProperties);
  w.int64(18, s.minProperties);
  w.strings(19, s.required);
  if (s.enum !== undefined) for (const e of asArray(s.enum)) w.message(20, (a) => writeAny(a, e));
  const additional = s.additionalProperties;
  if (additional !== undefined) {
    // AdditionalPropertiesItem { oneof { Schema schema = 1; bool boolean = 2; } }
    w.message(21, (a) =>
      typeof additional === 'boolean'
        ? a.bool(2, additional, true)
        : a.message(1, (x) => writeSchema(x, asObject(additional, 'additionalProperties'))),
    );
  }
  // TypeItem { repeated string value = 1; }
  if (s.type !== undefined)
    w.message(22, (t) => t.strings(1, Array.isArray(s.type) ? s.type : [s.type]));
  if (s.items !== undefined) {
    // ItemsItem { repeated Schema schema = 1; }
    const items = Array.isArray(s.items) ? s.items : [s.items];
    w.message(23, (i) => {
      for (const item of items) i.message(1, (x) => writeSchema(x, asObject(item, 'items')));
    });
  }
  if (s.allOf !== undefined) {
    for (const sub of asArray(s.allOf))
      w.message(24, (x) => writeSchema(x, asObject(sub, 'allOf')));
  }
  if (s.properties !== undefined) {
    // Properties { repeated NamedSchema additional_properties = 1; }
    w.message(25, (p) => namedSchemas(p, asObject(s.properties, 'properties')));
  }
  w.string(26, s.discriminator);
  w.bool(27, s.readOnly);
  if (s.example !== undefined) w.message(30, (a) => writeAny(a, s.example));
  vendorExtensions(w, 31, s);
}

/** NamedSchema { string name = 1; Schema value = 2; } entries, as field 1 of the container. */
function namedSchemas(w: Writer, map: Json): void {
  for (const [name, schema] of sortedEntries(map)) {
    w.message(1, (n) => {
      n.string(1, name);
      n.message(2, (x) => writeSchema(x, asObject(schema, name)));
    });
  }
}

const PARAMETER_KEYS = ['name', 'in', 'description', 'required', 'type', 'format', 'uniqueItems'];

/** ParametersItem { oneof { Parameter parameter = 1; JsonReference json_reference = 2; } } */
function writeParameter(w: Writer, p: Json): void {
  w.message(1, (parameter) => {
    if (p.in === 'body') {
      checkKeys(p, ['name', 'in', 'description', 'required', 'schema'], 'BodyParameter');
      // Parameter.body_parameter = 1: description 1, name 2, in 3, required 4, schema 5.
      parameter.message(1, (b) => {
        b.string(1, p.description);
        b.string(2, p.name);
        b.string(3, p.in);
        b.bool(4, p.required);
        b.message(5, (x) => writeSchema(x, asObject(p.schema, 'schema')));
        vendorExtensions(b, 6, p);
      });
      return;
    }
    checkKeys(p, PARAMETER_KEYS, 'Parameter');
    // Parameter.non_body_parameter = 2 → NonBodyParameter { query = 3; path = 4 }. The two
    // sub-schemas number their fields alike up to `name`, then path has no allowEmptyValue.
    const sub = p.in === 'query' ? 3 : p.in === 'path' ? 4 : undefined;
    if (sub === undefined) throw new Error(`parameter in ${String(p.in)} is not supported`);
    const shift = sub === 3 ? 1 : 0;
    parameter.message(2, (n) =>
      n.message(sub, (q) => {
        q.bool(1, p.required);
        q.string(2, p.in);
        q.string(3, p.description);
        q.string(4, p.name);
        q.string(5 + shift, p.type);
        q.string(6 + shift, p.format);
        q.bool(19 + shift, p.uniqueItems);
        vendorExtensions(q, 22 + shift, p);
      }),
    );
  });
}

const OPERATION_KEYS = [
  'tags',
  'description',
  'operationId',
  'produces',
  'consumes',
  'parameters',
  'responses',
  'schemes',
];

function writeOperation(w: Writer, o: Json): void {
  checkKeys(o, OPERATION_KEYS, 'Operation');
  w.strings(1, o.tags);
  w.string(3, o.description);
  w.string(5, o.operationId);
  w.strings(6, o.produces);
  w.strings(7, o.consumes);
  if (o.parameters !== undefined) {
    for (const p of asArray(o.parameters))
      w.message(8, (x) => writeParameter(x, asObject(p, 'parameter')));
  }
  // Responses { repeated NamedResponseValue response_code = 1; }
  w.message(9, (r) => {
    for (const [code, response] of sortedEntries(asObject(o.responses, 'responses'))) {
      const value = asObject(response, code);
      checkKeys(value, ['description', 'schema'], 'Response');
      r.message(1, (n) => {
        n.string(1, code);
        // ResponseValue.response = 1 → Response { description 1; SchemaItem schema 2 }
        n.message(2, (v) =>
          v.message(1, (resp) => {
            resp.string(1, value.description);
            if (value.schema !== undefined) {
              resp.message(2, (si) =>
                si.message(1, (x) => writeSchema(x, asObject(value.schema, 'schema'))),
              );
            }
            vendorExtensions(resp, 5, value);
          }),
        );
      });
    }
  });
  w.strings(10, o.schemes);
  vendorExtensions(w, 13, o);
}

const METHODS: ReadonlyArray<readonly [string, number]> = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['options', 6],
  ['head', 7],
  ['patch', 8],
];

function writePathItem(w: Writer, item: Json): void {
  checkKeys(item, ['parameters', ...METHODS.map(([m]) => m)], 'PathItem');
  for (const [method, field] of METHODS) {
    if (item[method] !== undefined)
      w.message(field, (x) => writeOperation(x, asObject(item[method], method)));
  }
  if (item.parameters !== undefined) {
    for (const p of asArray(item.parameters))
      w.message(9, (x) => writeParameter(x, asObject(p, 'parameter')));
  }
  vendorExtensions(w, 10, item);
}

/** The document's protobuf bytes. */
export function encodeSwagger(doc: Json): Buffer {
  checkKeys(
    doc,
    ['swagger', 'info', 'paths', 'definitions', 'securityDefinitions', 'security'],
    'Document',
  );
  const w = new Writer();
  w.string(1, doc.swagger);
  const info = asObject(doc.info, 'info');
  checkKeys(info, ['title', 'version', 'description'], 'Info');
  w.message(2, (i) => {
    i.string(1, info.title);
    i.string(2, info.version);
    i.string(3, info.description);
    vendorExtensions(i, 7, info);
  });
  // Paths { repeated NamedAny vendor_extension = 1; repeated NamedPathItem path = 2; }
  w.message(8, (p) => {
    const paths = asObject(doc.paths, 'paths');
    vendorExtensions(p, 1, paths);
    for (const [path, item] of sortedEntries(paths)) {
      if (path.startsWith('x-')) continue;
      p.message(2, (n) => {
        n.string(1, path);
        n.message(2, (x) => writePathItem(x, asObject(item, path)));
      });
    }
  });
  if (doc.definitions !== undefined) {
    w.message(9, (d) => namedSchemas(d, asObject(doc.definitions, 'definitions')));
  }
  // SecurityRequirement { repeated NamedStringArray additional_properties = 1; }
  if (doc.security !== undefined) {
    for (const requirement of asArray(doc.security)) {
      w.message(12, (s) => {
        for (const [name, scopes] of sortedEntries(asObject(requirement, 'security'))) {
          s.message(1, (n) => {
            n.string(1, name);
            n.message(2, (a) => a.strings(1, scopes));
          });
        }
      });
    }
  }
  if (doc.securityDefinitions !== undefined) {
    // SecurityDefinitions → NamedSecurityDefinitionsItem → api_key_security = 2.
    w.message(13, (s) => {
      for (const [name, scheme] of sortedEntries(
        asObject(doc.securityDefinitions, 'securityDefinitions'),
      )) {
        const value = asObject(scheme, name);
        if (value.type !== 'apiKey')
          throw new Error(`security scheme ${name}: only apiKey is supported`);
        checkKeys(value, ['type', 'name', 'in', 'description'], 'ApiKeySecurity');
        s.message(1, (n) => {
          n.string(1, name);
          n.message(2, (item) =>
            item.message(2, (k) => {
              k.string(1, value.type);
              k.string(2, value.name);
              k.string(3, value.in);
              k.string(4, value.description);
              vendorExtensions(k, 5, value);
            }),
          );
        });
      }
    });
  }
  vendorExtensions(w, 16, doc);
  return w.finish();
}
