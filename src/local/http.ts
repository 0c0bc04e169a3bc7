// HTTP plumbing of the local control plane: request bodies (JSON, YAML or Kubernetes protobuf,
// size-limited), answers as JSON, and Status errors.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { jsonDepth, valueDepthExceeds } from '../util/json-depth.js';
import { decodeKubeProtobuf } from './protobuf.js';
import { ApiError } from './types.js';

/** The real API server refuses request bodies over 3 MiB. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  // Events rather than an async iterator: this runs on every write, and iterators cost more.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () =>
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)),
    );
    req.once('error', reject);
  });
}

function tooLarge(limit: number): ApiError {
  return new ApiError(
    413,
    'RequestEntityTooLarge',
    `the request body is larger than the limit of ${limit} bytes`,
  );
}

/**
 * How deeply a body may nest. kube-apiserver's decoders stop at 10,000 levels; the code that
 * walks an object here (patches, field ownership, schema validation) recurses, and 1,000 levels
 * is well inside its stack at every path (test/unit/limits.test.ts) and far past any
 * manifest's depth. ADR 0003 records the difference.
 */
export const MAX_BODY_DEPTH = 1000;

/**
 * managedFields mirror an object's fields a few levels deeper than they stand, so an object
 * read back nests deeper than what was written: a client that sends it back (PUT of what it
 * read) is measured without them.
 */
const MANAGED_FIELDS_MARGIN = 16;

/**
 * Parses a body as JSON, YAML when the client says so (apply-patch+yaml, application/yaml), or
 * Kubernetes protobuf, which kubectl's typed commands (create namespace, create secret ...) send.
 */
export function parseBody(body: Buffer, contentType: string | undefined): unknown {
  if (/cbor/i.test(contentType ?? '')) {
    // Clients that can fall back to JSON do so on a 415.
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf`,
    );
  }
  if (/protobuf/i.test(contentType ?? '')) return bounded(decodeKubeProtobuf(body));
  const text = body.toString('utf8');
  if (text.trim() === '') throw new ApiError(400, 'BadRequest', 'the request body is empty');
  const yaml = /yaml/i.test(contentType ?? '');
  const jsonText = !yaml || text.trimStart().startsWith('{');
  // Checked on the text, before any parser or walker recurses into it. (A YAML string may hold
  // brackets, so YAML proper is measured once parsed, below.)
  const depth = jsonText ? jsonDepth(text, MAX_BODY_DEPTH + MANAGED_FIELDS_MARGIN) : 0;
  if (depth > MAX_BODY_DEPTH + MANAGED_FIELDS_MARGIN) throw tooDeep();
  // Clients (client-go, ours) send apply bodies as JSON under the YAML type; JSON is YAML, and
  // JSON.parse costs a fraction of the YAML parser, so JSON-looking text tries it first.
  if (yaml && jsonText) {
    try {
      return depth > MAX_BODY_DEPTH ? bounded(JSON.parse(text)) : JSON.parse(text);
    } catch (error) {
      if (error instanceof ApiError) throw error;
      // Not JSON after all (YAML flow style): the YAML parser decides below.
    }
  }
  let parsed: unknown;
  try {
    // logLevel error: the library's warnings (an unknown directive...) would go to
    // process.emitWarning, a line on stderr with the client's text in it, at every request.
    parsed = yaml
      ? parseYaml(text, { prettyErrors: false, maxAliasCount: 100, logLevel: 'error' })
      : JSON.parse(text);
  } catch (error) {
    const what = yaml ? 'YAML' : 'JSON';
    throw new ApiError(
      400,
      'BadRequest',
      `the request body is not valid ${what}: ${(error as Error).message}`,
    );
  }
  // YAML's block style nests without brackets.
  return yaml || depth > MAX_BODY_DEPTH ? bounded(parsed) : parsed;
}

/** The value, if it nests no more than the limit with its managedFields left out. */
function bounded(value: unknown): unknown {
  let measured = value;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const { metadata } = value as { metadata?: unknown };
    if (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)) {
      measured = { ...value, metadata: { ...metadata, managedFields: undefined } };
    }
  }
  if (valueDepthExceeds(measured, MAX_BODY_DEPTH)) throw tooDeep();
  return value;
}

function tooDeep(): ApiError {
  return new ApiError(
    400,
    'BadRequest',
    `the request body nests more than ${MAX_BODY_DEPTH} levels deep: exceeded max depth`,
  );
}

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: ApiError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, error.code, error.toStatus());
}

/** What the client asked for: a Table (kubectl get), or plain objects. */
export function wantsTable(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  // kubectl lists alternatives in order of preference; honour the first one that names a type.
  for (const part of accept.split(',')) {
    const params = part.split(';').map((p) => p.trim());
    if (params.includes('as=Table')) return true;
    if (params[0] === 'application/json' && params.length === 1) return false;
  }
  return false;
}

/** The `Warning` header value the real server sends (code 299). */
export const warningHeader = (messages: string[]): string =>
  messages.map((m) => `299 - "${m.replaceAll('"', '\\"')}"`).join(', ');
