// Decoding Kubernetes protobuf request bodies (kubectl's typed commands) into JSON objects: the
// wire format, the runtime.Unknown envelope, and each kind's message as its strategy (kinds/)
// describes it in the vocabulary of protobuf-messages.ts.
import { AUTH_MESSAGES } from './auth/messages.js';
import { BUILTIN_STRATEGIES } from './kinds/index.js';
import { type FieldSpec, MessageSpec, type Scalar } from './protobuf-messages.js';
import { apiVersionOf } from './resource-type.js';
import { ApiError, type KubeObject, type ObjectMeta } from './types.js';

/** `k8s\0`: what every Kubernetes protobuf body starts with. */
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** The kinds whose protobuf bodies are understood, by `apiVersion/kind`. */
const KINDS: ReadonlyMap<string, MessageSpec> = new Map([
  ...BUILTIN_STRATEGIES.flatMap((s) =>
    s.protobuf === undefined
      ? []
      : [[`${apiVersionOf(s.type)}/${s.type.kind}`, s.protobuf] as const],
  ),
  // Kinds created but never stored: the reviews and TokenRequest (auth/).
  ...AUTH_MESSAGES,
]);

export const PROTOBUF_KINDS: readonly string[] = [...KINDS.keys()];

/**
 * Decodes a Kubernetes protobuf body (magic, `runtime.Unknown` envelope, the kind's own message)
 * into the JSON object Go would have written for it.
 */
export function decodeKubeProtobuf(body: Buffer): KubeObject {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new ApiError(
      400,
      'BadRequest',
      `the request body is not Kubernetes protobuf: it does not start with the "k8s\\x00" prefix`,
    );
  }
  const envelope = readEnvelope(body.subarray(MAGIC.length));
  if (envelope.contentEncoding !== '') {
    throw unsupported(`protobuf content encoding "${envelope.contentEncoding}" is not supported`);
  }
  if (envelope.contentType !== '' && envelope.contentType !== PROTOBUF_MEDIA_TYPE) {
    throw unsupported(`protobuf envelope content type "${envelope.contentType}" is not supported`);
  }
  const { apiVersion, kind } = envelope;
  if (apiVersion === '' || kind === '') {
    throw malformed('the envelope has no apiVersion or kind');
  }
  const spec = KINDS.get(`${apiVersion}/${kind}`);
  if (spec === undefined) {
    throw unsupported(
      `protobuf bodies of kind ${kind} (${apiVersion}) are not supported - send it as application/json; ` +
        `protobuf is decoded for: ${PROTOBUF_KINDS.join(', ')}`,
    );
  }
  const { metadata, ...rest } = decodeMessage(envelope.raw, spec, '');
  return { kind, apiVersion, metadata: (metadata ?? {}) as ObjectMeta, ...rest };
}

interface Envelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

/** runtime.Unknown{typeMeta=1{apiVersion=1, kind=2}, raw=2, contentEncoding=3, contentType=4}. */
function readEnvelope(bytes: Uint8Array): Envelope {
  const envelope: Envelope = {
    apiVersion: '',
    kind: '',
    raw: new Uint8Array(),
    contentEncoding: '',
    contentType: '',
  };
  const reader = new Reader(bytes, 'the envelope');
  while (!reader.done) {
    const { field, wire } = reader.tag();
    if (field === 1 && wire === LEN) {
      const typeMeta = new Reader(reader.bytes(), 'the envelope typeMeta');
      while (!typeMeta.done) {
        const tag = typeMeta.tag();
        if (tag.field === 1 && tag.wire === LEN) envelope.apiVersion = utf8(typeMeta.bytes());
        else if (tag.field === 2 && tag.wire === LEN) envelope.kind = utf8(typeMeta.bytes());
        else typeMeta.skip(tag.wire);
      }
    } else if (field === 2 && wire === LEN) envelope.raw = reader.bytes();
    else if (field === 3 && wire === LEN) envelope.contentEncoding = utf8(reader.bytes());
    else if (field === 4 && wire === LEN) envelope.contentType = utf8(reader.bytes());
    else reader.skip(wire);
  }
  return envelope;
}

function decodeMessage(
  bytes: Uint8Array,
  spec: MessageSpec,
  path: string,
): Record<string, unknown> {
  const singles = new Map<FieldSpec, unknown>();
  const lists = new Map<FieldSpec, unknown[]>();
  const maps = new Map<FieldSpec, Record<string, unknown>>();
  const reader = new Reader(bytes, path === '' ? 'the object' : path);
  while (!reader.done) {
    const { field: number, wire } = reader.tag();
    const field = spec.byNumber.get(number);
    // Unknown fields are skipped, as Go's generated code does: a newer client may send more.
    if (field === undefined) {
      reader.skip(wire);
      continue;
    }
    const at = path === '' ? field.name : `${path}.${field.name}`;
    if (field.shape === 'map') {
      const [key, value] = decodeMapEntry(reader, wire, field.type, at);
      const entries = maps.get(field) ?? {};
      entries[key] = value;
      maps.set(field, entries);
    } else if (field.shape === 'list') {
      const values = lists.get(field) ?? [];
      if (wire === LEN && (field.type === 'int32' || field.type === 'int64')) {
        // A packed run of numbers: proto2 writes them one by one, but a reader takes either.
        const packed = new Reader(reader.bytes(), at);
        while (!packed.done) values.push(decodeValue(packed, VARINT, field.type, at));
      } else {
        values.push(decodeValue(reader, wire, field.type, `${at}[${values.length}]`));
      }
      lists.set(field, values);
    } else {
      singles.set(field, decodeValue(reader, wire, field.type, at));
    }
  }
  const object: Record<string, unknown> = {};
  for (const field of spec.order) {
    if (field.shape === 'map') {
      const entries = maps.get(field);
      if (entries !== undefined) object[field.name] = entries;
    } else if (field.shape === 'list') {
      const values = lists.get(field);
      if (values !== undefined) object[field.name] = values;
    } else if (field.shape === 'inline') {
      const value = singles.get(field);
      if (value !== undefined) Object.assign(object, value);
    } else if (singles.has(field)) {
      const value = singles.get(field);
      if (field.keepZero || !isZero(value)) object[field.name] = value;
    }
  }
  return object;
}

const isZero = (value: unknown): boolean => value === '' || value === 0 || value === false;

/** A map field is a repeated entry message {key=1, value=2}; a missing part is its zero value. */
function decodeMapEntry(
  reader: Reader,
  wire: number,
  type: Scalar | MessageSpec,
  path: string,
): [string, unknown] {
  expectWire(wire, LEN, path);
  const entry = new Reader(reader.bytes(), path);
  let key = '';
  let value: unknown;
  while (!entry.done) {
    const tag = entry.tag();
    if (tag.field === 1) {
      expectWire(tag.wire, LEN, `${path} key`);
      key = utf8(entry.bytes());
    } else if (tag.field === 2) {
      value = decodeValue(entry, tag.wire, type, `${path}[${JSON.stringify(key)}]`);
    } else {
      entry.skip(tag.wire);
    }
  }
  return [key, value ?? zeroOf(type)];
}

function zeroOf(type: Scalar | MessageSpec): unknown {
  switch (type) {
    case 'string':
    case 'bytes':
      return '';
    // Go's zero Quantity prints as "0".
    case 'quantity':
      return '0';
    default:
      return type instanceof MessageSpec ? {} : null;
  }
}

function decodeValue(
  reader: Reader,
  wire: number,
  type: Scalar | MessageSpec,
  path: string,
): unknown {
  if (type instanceof MessageSpec) {
    expectWire(wire, LEN, path);
    return decodeMessage(reader.bytes(), type, path);
  }
  switch (type) {
    case 'string':
      expectWire(wire, LEN, path);
      return utf8(reader.bytes());
    case 'bytes':
      expectWire(wire, LEN, path);
      // []byte is base64 in Kubernetes' JSON (Secret.data, ConfigMap.binaryData).
      return Buffer.from(reader.bytes()).toString('base64');
    case 'bool':
      expectWire(wire, VARINT, path);
      return reader.varint() !== 0n;
    case 'int32':
      expectWire(wire, VARINT, path);
      return Number(BigInt.asIntN(32, reader.varint()));
    case 'int64': {
      expectWire(wire, VARINT, path);
      const value = BigInt.asIntN(64, reader.varint());
      if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
        throw malformed(`${path}: ${value} does not fit in a JSON number`);
      }
      return Number(value);
    }
    case 'time':
    case 'microTime':
      expectWire(wire, LEN, path);
      return decodeTime(reader.bytes(), type === 'microTime', path);
    case 'quantity': {
      expectWire(wire, LEN, path);
      // resource.Quantity{string=1}.
      const quantity = new Reader(reader.bytes(), path);
      let text = '0';
      while (!quantity.done) {
        const tag = quantity.tag();
        if (tag.field === 1) {
          expectWire(tag.wire, LEN, path);
          text = utf8(quantity.bytes());
        } else {
          quantity.skip(tag.wire);
        }
      }
      return text;
    }
    case 'intOrString': {
      expectWire(wire, LEN, path);
      // IntOrString{type=1, intVal=2, strVal=3}: type 1 is a string, anything else the int.
      const value = new Reader(reader.bytes(), path);
      let kind = 0n;
      let int = 0;
      let str = '';
      while (!value.done) {
        const tag = value.tag();
        if (tag.field === 1 && tag.wire === VARINT) kind = value.varint();
        else if (tag.field === 2 && tag.wire === VARINT)
          int = Number(BigInt.asIntN(32, value.varint()));
        else if (tag.field === 3 && tag.wire === LEN) str = utf8(value.bytes());
        else value.skip(tag.wire);
      }
      return kind === 1n ? str : int;
    }
    case 'fieldsV1': {
      expectWire(wire, LEN, path);
      // FieldsV1{Raw=1}: Raw is already the JSON the field set is written as.
      const fields = new Reader(reader.bytes(), path);
      let raw: Uint8Array = new Uint8Array();
      while (!fields.done) {
        const tag = fields.tag();
        if (tag.field === 1) {
          expectWire(tag.wire, LEN, path);
          raw = fields.bytes();
        } else {
          fields.skip(tag.wire);
        }
      }
      try {
        return JSON.parse(utf8(raw)) as unknown;
      } catch {
        throw malformed(`${path}: the field set is not valid JSON`);
      }
    }
  }
}

/** The Unix seconds of Go's zero time.Time, which Go's JSON writes as null. */
const GO_ZERO_SECONDS = -62135596800n;
/** 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z, the range Timestamp allows. */
const MAX_SECONDS = 253402300799n;

/**
 * Time and MicroTime are Timestamp{seconds=1, nanos=2}. Go writes a zero time as an empty message
 * and its JSON as null; Time's JSON has whole seconds, MicroTime's six fractional digits.
 */
function decodeTime(bytes: Uint8Array, micro: boolean, path: string): string | null {
  if (bytes.length === 0) return null;
  const reader = new Reader(bytes, path);
  let seconds = 0n;
  let nanos = 0;
  while (!reader.done) {
    const tag = reader.tag();
    if (tag.field === 1) {
      expectWire(tag.wire, VARINT, path);
      seconds = BigInt.asIntN(64, reader.varint());
    } else if (tag.field === 2) {
      expectWire(tag.wire, VARINT, path);
      nanos = Number(BigInt.asIntN(32, reader.varint()));
    } else {
      reader.skip(tag.wire);
    }
  }
  if (nanos < 0 || nanos > 999_999_999) throw malformed(`${path}: nanos ${nanos} is out of range`);
  if (seconds === GO_ZERO_SECONDS && nanos === 0) return null;
  if (seconds < GO_ZERO_SECONDS || seconds > MAX_SECONDS) {
    throw malformed(`${path}: ${seconds} seconds is outside the years 0001 to 9999`);
  }
  const whole = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  if (!micro) return `${whole}Z`;
  const fraction = String(Math.floor(nanos / 1000)).padStart(6, '0');
  return `${whole}.${fraction}Z`;
}

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;

/** Reads the protobuf wire format: varints, length-delimited runs, and skips the rest. */
class Reader {
  private pos = 0;

  constructor(
    private readonly buf: Uint8Array,
    private readonly where: string,
  ) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  varint(): bigint {
    let value = 0n;
    for (let i = 0; i < 10; i++) {
      const byte = this.buf[this.pos];
      if (byte === undefined) throw malformed(`${this.where}: a varint runs past the end`);
      this.pos += 1;
      value |= BigInt(byte & 0x7f) << BigInt(7 * i);
      if ((byte & 0x80) === 0) return BigInt.asUintN(64, value);
    }
    throw malformed(`${this.where}: a varint is longer than 10 bytes`);
  }

  tag(): { field: number; wire: number } {
    const key = this.varint();
    const field = key >> 3n;
    if (field === 0n || field > 0x1fffffffn) {
      throw malformed(`${this.where}: field number ${field} is invalid`);
    }
    return { field: Number(field), wire: Number(key & 7n) };
  }

  bytes(): Uint8Array {
    const length = this.varint();
    if (length > BigInt(this.buf.length - this.pos)) {
      throw malformed(`${this.where}: a length-delimited field runs past the end`);
    }
    return this.take(Number(length));
  }

  skip(wire: number): void {
    switch (wire) {
      case VARINT:
        this.varint();
        return;
      case FIXED64:
        this.take(8);
        return;
      case LEN:
        this.bytes();
        return;
      case FIXED32:
        this.take(4);
        return;
      default:
        // 3 and 4 are proto2 groups, which Kubernetes never uses; 6 and 7 do not exist.
        throw malformed(`${this.where}: wire type ${wire} is not supported`);
    }
  }

  private take(length: number): Uint8Array {
    if (this.pos + length > this.buf.length) {
      throw malformed(`${this.where}: a field runs past the end`);
    }
    const slice = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return slice;
  }
}

function expectWire(wire: number, expected: number, path: string): void {
  if (wire !== expected) {
    throw malformed(`${path}: wire type ${wire} where ${expected} was expected`);
  }
}

const decoder = new TextDecoder();
const utf8 = (bytes: Uint8Array): string => decoder.decode(bytes);

const malformed = (detail: string) =>
  new ApiError(400, 'BadRequest', `the protobuf request body is malformed: ${detail}`);

const unsupported = (message: string) => new ApiError(415, 'UnsupportedMediaType', message);
