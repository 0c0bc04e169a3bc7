// The abuse scenario's inputs, as fast-check arbitraries: paths with bad percent-escapes, query
// values of every parameter the API server reads, content types, and bodies — arbitrary JSON,
// objects whose metadata has the wrong types, deep nesting, sizes past the limits — with the
// ones that must be refused kept apart from the ones that may be accepted.
import fc from 'fast-check';

/**
 * A request body's text, printed short in a counterexample: fast-check would print a body of
 * 8 MiB in full.
 */
export class Body {
  constructor(readonly text: string) {}

  [fc.toStringMethod](): string {
    const { text } = this;
    return text.length <= 300
      ? JSON.stringify(text)
      : `<${text.length} chars: ${JSON.stringify(text.slice(0, 150))}...${JSON.stringify(text.slice(-50))}>`;
  }
}

/** Percent-escapes that do not decode (bad hex, cut short, invalid UTF-8, NUL, slash). */
export const BAD_ESCAPES = [
  '%',
  '%z',
  '%zz',
  '%2',
  '%c3%28',
  '%ff',
  '%fe%ff',
  '%00',
  '%2F',
  '%2e%2e',
  '%e2%82',
  '%ed%a0%80',
  '%C0%AF',
  '%%',
  '%u0041',
] as const;

/** Characters undici sends in a request target as they are (it refuses controls and space). */
const targetChar = fc
  .integer({ min: 0x21, max: 0xff })
  .filter((c) => c !== 0x7f)
  .map((c) => String.fromCharCode(c));

/** A value as a client could put it in a URL: escaped, raw (odd bytes included), bad escapes. */
export const urlText = fc.oneof(
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: targetChar, maxLength: 40 }),
  fc
    .tuple(
      fc.string({ maxLength: 8 }),
      fc.constantFrom(...BAD_ESCAPES),
      fc.string({ maxLength: 8 }),
    )
    .map(([a, bad, b]) => `${encodeURIComponent(a)}${bad}${encodeURIComponent(b)}`),
);

/** Headers must still be sendable: no controls besides tab (undici refuses the rest). */
export const headerText = fc.string({
  unit: fc
    .integer({ min: 0x09, max: 0xff })
    .filter((c) => c === 0x09 || (c >= 0x20 && c !== 0x7f))
    .map((c) => String.fromCharCode(c)),
  maxLength: 80,
});

// --- the API server ------------------------------------------------------------------------

const API_SEGMENTS = [
  'api',
  'apis',
  'v1',
  'v1alpha1',
  'v2',
  'platform.nrn.dev',
  'apiextensions.k8s.io',
  'coordination.k8s.io',
  'authentication.k8s.io',
  'namespaces',
  'configmaps',
  'secrets',
  'scopes',
  'services',
  'applications',
  'leases',
  'events',
  'tokenreviews',
  'customresourcedefinitions',
  'status',
  'finalize',
  'scale',
  'openapi',
  'v3',
  'watch',
  'default',
  'nrn-system',
  '',
  '.',
  '..',
] as const;

/** Paths under /api, /apis and elsewhere, of known and arbitrary segments. */
export function apiPath(known: readonly string[]): fc.Arbitrary<string> {
  const segment = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...API_SEGMENTS, ...known) },
    { weight: 2, arbitrary: urlText },
    { weight: 1, arbitrary: fc.constantFrom(...BAD_ESCAPES) },
  );
  return fc
    .tuple(
      fc.constantFrom('/api', '/apis', '/apis/platform.nrn.dev/v1alpha1', '/api/v1', ''),
      fc.array(segment, { maxLength: 7 }),
    )
    .map(([root, segments]) => `${root}/${segments.join('/')}`);
}

/** The query parameters the API server reads (and a few it does not). */
export const QUERY_KEYS = [
  'watch',
  'limit',
  'continue',
  'timeoutSeconds',
  'labelSelector',
  'fieldSelector',
  'resourceVersion',
  'resourceVersionMatch',
  'dryRun',
  'fieldValidation',
  'fieldManager',
  'propagationPolicy',
  'allowWatchBookmarks',
  'sendInitialEvents',
  'includeObject',
  'force',
  'pretty',
  'gracePeriodSeconds',
  'orphanDependents',
] as const;

const QUERY_VALUES = [
  '',
  'true',
  'false',
  '1',
  '0',
  '-1',
  '5',
  '1e3',
  '0x10',
  'NaN',
  'Infinity',
  '9007199254740993',
  '99999999999999999999',
  '2147483648',
  'All',
  'Strict',
  'Ignore',
  'Warn',
  'Orphan',
  'Background',
  'Foreground',
  'Object',
  'None',
  'Metadata',
  'NotOlderThan',
  'Exact',
  'a=b',
  'a!=b',
  'a==b,c!=d',
  'a in (b,c)',
  'a notin (b)',
  '!a',
  'a,',
  '=',
  'a in (',
  'metadata.name=x',
  'metadata.namespace!=y',
  'status.phase=Running',
  'spec.x=1',
  'eyJydiI6MSwic3RhcnQiOiJ4In0',
  'not-base64!',
  `${'a'.repeat(300)}=b`,
] as const;

/** A query string of known and arbitrary parameters with known and arbitrary values. */
export const apiQuery = fc
  .array(
    fc.tuple(
      fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...QUERY_KEYS) }, urlText),
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...QUERY_VALUES.map(encodeURIComponent)) },
        urlText,
      ),
    ),
    { maxLength: 5 },
  )
  .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));

export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
  'application/apply-patch+cbor',
  'application/vnd.kubernetes.protobuf',
  'application/cbor',
  'text/plain',
  'multipart/form-data; boundary=x',
  '*/*',
  'application/json; charset=utf-16',
  'application/x-www-form-urlencoded',
] as const;

export const contentType = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  { weight: 1, arbitrary: headerText },
);

export const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;

/** A value of a JSON type other than string (what `name: 5` is). */
const notString = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
);
/** Not an object (labels: 5, labels: [...]). */
const notObject = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.string({ maxLength: 10 }),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { minLength: 1, maxLength: 2 }),
);
/** Not a list (finalizers: "x"). */
const notArray = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.string({ maxLength: 10 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), {
    minKeys: 1,
    maxKeys: 2,
  }),
);

/** Not an item of those lists (an object, or a string for finalizers): null, 5, true, [1]. */
const notItem = fc.oneof(fc.constant(null), fc.integer(), fc.boolean(), fc.array(fc.nat()));

const STRING_FIELDS = [
  'name',
  'generateName',
  'namespace',
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'selfLink',
] as const;
const NUMBER_FIELDS = ['generation', 'deletionGracePeriodSeconds'] as const;

/**
 * Metadata no API server may accept: a field of the wrong JSON type (name: 5, labels: [],
 * ownerReferences: [null] ...), the object otherwise well-formed, so that the wrong type is
 * what is refused. (`null` is left out: for a map or a list it means "none", which is valid.)
 */
export const brokenMetadata: fc.Arbitrary<unknown> = fc.oneof(
  notObject,
  fc
    .tuple(fc.constantFrom(...STRING_FIELDS), notString)
    .map(([field, value]) => ({ name: 'abuse-x', [field]: value })),
  fc
    .tuple(fc.constantFrom(...NUMBER_FIELDS), fc.oneof(fc.string({ maxLength: 5 }), notObject))
    .filter(([, v]) => typeof v !== 'number')
    .map(([field, value]) => ({ name: 'abuse-x', [field]: value })),
  fc
    .tuple(
      fc.constantFrom('labels', 'annotations'),
      fc.oneof(
        notObject,
        fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), notString, {
          minKeys: 1,
          maxKeys: 3,
        }),
      ),
    )
    .map(([field, value]) => ({ name: 'abuse-x', [field]: value })),
  fc
    .tuple(
      fc.constantFrom('finalizers', 'ownerReferences', 'managedFields'),
      fc.oneof(notArray, fc.array(notItem, { minLength: 1, maxLength: 3 })),
    )
    // A null managedFields entry is a zero entry, which kube-apiserver's field manager drops
    // and replaces with its own: accepted there, so not "must be refused".
    .filter(
      ([field, value]) =>
        !(field === 'managedFields' && Array.isArray(value) && value.includes(null)),
    )
    .map(([field, value]) => ({ name: 'abuse-x', [field]: value })),
  fc
    .record(
      {
        apiVersion: notString,
        kind: notString,
        name: notString,
        uid: notString,
        controller: fc.oneof(fc.string(), fc.integer()),
      },
      { requiredKeys: ['name'] },
    )
    .map((reference) => ({ name: 'abuse-x', ownerReferences: [reference] })),
);

/** How a body's text is made larger or deeper than anything a client should send. */
export type Excess =
  | { kind: 'none' }
  | { kind: 'deep'; levels: number }
  | { kind: 'large'; bytes: number };

export const excess: fc.Arbitrary<Excess> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Excess>({ kind: 'none' }) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 50, max: 20_000 })
      .map((levels): Excess => ({ kind: 'deep', levels })),
  },
  {
    weight: 1,
    // Around the API server's 3 MiB and the facade's 256 KiB limits, and far past them.
    arbitrary: fc
      .constantFrom(200 * 1024, 257 * 1024, 3 * 1024 * 1024 - 512, 3 * 1024 * 1024 + 1, 8 << 20)
      .map((bytes): Excess => ({ kind: 'large', bytes })),
  },
);

/** The JSON text of an object with one more field holding the excess (a value or a string). */
export function withExcess(object: object, more: Excess): Body {
  const text = JSON.stringify(object);
  if (more.kind === 'none' || !text.startsWith('{')) return new Body(text);
  const rest = text === '{}' ? '}' : `,${text.slice(1)}`;
  if (more.kind === 'deep') {
    return new Body(
      `{"abuseDeep":${'{"a":['.repeat(more.levels)}1${']}'.repeat(more.levels)}${rest}`,
    );
  }
  return new Body(`{"abuseLarge":"${'x'.repeat(more.bytes)}"${rest}`);
}

/** Arbitrary fields besides metadata, as a careless client adds them. */
export const extraFields = fc.dictionary(
  fc.oneof(fc.constantFrom('spec', 'data', 'stringData', 'status', 'type', 'items'), fc.string()),
  fc.jsonValue({ maxDepth: 3 }),
  { maxKeys: 4 },
);

/** An object whose metadata must be refused, possibly deep or large as well. */
export const refusedObject = fc
  .tuple(brokenMetadata, extraFields, excess)
  .map(([metadata, extra, more]) => withExcess({ ...extra, metadata }, more));

/** Any JSON text at all, or text that is not JSON. */
export const anyBodyText = fc
  .oneof(
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
    fc.string({ maxLength: 200 }),
    fc.constantFrom('', '{', '[', '{"a":1,}', 'null', '"', '\u0000', '---\n- a\n-', '{{{'),
  )
  .map((text) => new Body(text));

/**
 * A JSON patch whose first operation tests a value the object does not hold: refused whatever
 * follows, since a patch applies all of its operations or none.
 */
export const failingJsonPatch = fc
  .tuple(
    fc.constantFrom('/metadata/uid', '/metadata/name', '/data/password', '/spec', '/metadata'),
    fc.jsonValue({ maxDepth: 2 }),
    fc.array(
      fc.record({
        op: fc.oneof(
          fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'),
          fc.string(),
        ),
        path: fc.oneof(
          fc.constantFrom('/metadata/name', '/metadata/labels/a', '/-', '', '/'),
          fc.string(),
        ),
        from: fc.string(),
        value: fc.jsonValue({ maxDepth: 2 }),
      }),
      { maxLength: 3 },
    ),
  )
  .map(([path, value, rest]) => [{ op: 'test', path, value: { abuse: value } }, ...rest]);
