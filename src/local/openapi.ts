// The OpenAPI documents the local control plane serves, rebuilt when the served types change:
// `/openapi/v3` (the root index kubectl reads first, then one document per group version with
// every kind's schema, for `kubectl explain`, and PATCH operations that declare
// `fieldValidation`, so default `kubectl apply` trusts the server to check unknown fields) and
// `/openapi/v2` (one Swagger 2.0 document, as JSON or as gnostic's protobuf, which kubectl
// falls back to for `kind: List` files, for custom resources applied with their CRD, and
// which kubectl before 1.29 always reads). What the documents hold is openapi/documents.ts'.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './http.js';
import { openApiV2, openApiV3 } from './openapi/documents.js';
import { encodeSwagger } from './openapi/gnostic.js';
import type { Registry } from './registry.js';
import { ApiError } from './types.js';

const gvPath = (group: string, version: string) =>
  group === '' ? `api/${version}` : `apis/${group}/${version}`;

/** kube-openapi's ETag and v3 hash: SHA-512 of the JSON, upper-case hex. */
const sha512 = (data: string) => createHash('sha512').update(data).digest('hex').toUpperCase();

interface V2Document {
  readonly document: Record<string, unknown>;
  readonly json: Buffer;
  /** Made on the first request that asks for it (kubectl's; browsers and curl take JSON). */
  protobuf?: Buffer;
  /** Quoted, as the ETag header carries it. */
  readonly etag: string;
  /** When the served types last changed, to the second, as Last-Modified carries it. */
  readonly lastModified: Date;
}

/** kube-openapi's v2 handler: the media types it serves, in its order, and what it answers. */
const V2_FORMATS = [
  { type: 'application', subtype: 'json', contentType: 'application/json' },
  // The deprecated spelling is what kubectl sends; the answer names the current one.
  {
    type: 'application',
    subtype: 'com.github.proto-openapi.spec.v2@v1.0+protobuf',
    contentType: 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
  },
  {
    type: 'application',
    subtype: 'com.github.proto-openapi.spec.v2.v1.0+protobuf',
    contentType: 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
  },
] as const;

export class OpenApi {
  private v3 = new Map<string, { body: string; hash: string }>();
  private v3At = -1;
  private v2: V2Document | undefined;
  private v2At = -1;

  constructor(private readonly registry: Registry) {}

  /** Answers `/openapi/<rest>`. */
  serve(req: IncomingMessage, res: ServerResponse, rest: readonly string[]): void {
    const [version, ...path] = rest;
    if (version === 'v3') this.serveV3(res, path);
    else if (version === 'v2' && path.length === 0) this.serveV2(req, res);
    else
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  }

  private serveV3(res: ServerResponse, path: readonly string[]): void {
    this.refreshV3();
    if (path.length === 0) {
      const paths: Record<string, { serverRelativeURL: string }> = {};
      for (const [gv, { hash }] of this.v3)
        paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${hash}` };
      sendJson(res, 200, { paths });
      return;
    }
    const doc = this.v3.get(path.join('/'));
    if (doc === undefined) {
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    }
    sendJson(res, 200, doc.body, { 'Cache-Control': 'public, immutable' });
  }

  private refreshV3(): void {
    if (this.v3At === this.registry.generation) return;
    this.v3 = new Map();
    const types = this.registry.all();
    for (const { group, versions } of this.registry.groupVersions()) {
      for (const version of versions) {
        const body = JSON.stringify(
          openApiV3(types.filter((t) => t.group === group && t.version === version)),
        );
        this.v3.set(gvPath(group, version), { body, hash: sha512(body) });
      }
    }
    this.v3At = this.registry.generation;
  }

  /**
   * `/openapi/v2` as kube-openapi's handler serves it (pkg/handler/handler.go): the first
   * format of the Accept header's (goautoneg's order) that it knows, else a bare 406; one ETag
   * for both forms (`Vary: Accept`), and http.ServeContent's conditional answers (304 on a
   * matching If-None-Match, or on If-Modified-Since when there is none).
   */
  private serveV2(req: IncomingMessage, res: ServerResponse): void {
    const format = negotiate(req.headers.accept || '*/*');
    if (format === undefined) {
      res.writeHead(406, { Vary: 'Accept', 'Content-Length': 0 });
      res.end();
      return;
    }
    const doc = this.documentV2();
    if (notModified(req, doc.etag, doc.lastModified)) {
      res.writeHead(304, { Vary: 'Accept', ETag: doc.etag });
      res.end();
      return;
    }
    let body = doc.json;
    if (format.contentType !== 'application/json') {
      doc.protobuf ??= encodeSwagger(doc.document);
      body = doc.protobuf;
    }
    res.writeHead(200, {
      'Accept-Ranges': 'bytes',
      'Content-Length': body.length,
      'Content-Type': format.contentType,
      ETag: doc.etag,
      'Last-Modified': doc.lastModified.toUTCString(),
      Vary: 'Accept',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  private documentV2(): V2Document {
    if (this.v2 !== undefined && this.v2At === this.registry.generation) return this.v2;
    const document = openApiV2(this.registry.all());
    const json = JSON.stringify(document);
    const lastModified = new Date(Math.floor(Date.now() / 1000) * 1000);
    this.v2 = { document, json: Buffer.from(json), etag: `"${sha512(json)}"`, lastModified };
    this.v2At = this.registry.generation;
    return this.v2;
  }
}

interface Clause {
  readonly type: string;
  readonly subtype: string;
  readonly q: number;
}

/** What goautoneg.ParseAccept makes of a header: clauses, by preference. */
export function parseAccept(header: string): Clause[] {
  const clauses: Clause[] = [];
  for (const raw of header.split(',')) {
    const [range = '', ...params] = raw.trim().split(';');
    const [type = '', subtype, ...extra] = range.split('/').map((s) => s.trim());
    if (extra.length > 0) continue;
    if (subtype === undefined && type !== '*') continue;
    let q = 1;
    for (const param of params) {
      const eq = param.indexOf('=');
      if (eq < 0 || param.slice(0, eq).trim() !== 'q') continue;
      q = parseGoFloat(param.slice(eq + 1));
    }
    clauses.push({ type, subtype: subtype ?? '*', q });
  }
  // goautoneg's order: higher q first, then a named type before `*`, a named subtype before `*`.
  // (Not a total order; Go sorts the few clauses a header holds by insertion, as here.)
  const less = (a: Clause, b: Clause) =>
    a.q > b.q || (a.type !== '*' && b.type === '*') || (a.subtype !== '*' && b.subtype === '*');
  if (clauses.length <= 12) {
    for (let i = 1; i < clauses.length; i++) {
      for (let j = i; j > 0 && less(clauses[j] as Clause, clauses[j - 1] as Clause); j--) {
        [clauses[j - 1], clauses[j]] = [clauses[j] as Clause, clauses[j - 1] as Clause];
      }
    }
    return clauses;
  }
  return clauses.sort((a, b) => (less(a, b) ? -1 : less(b, a) ? 1 : 0));
}

/** strconv.ParseFloat's decimal forms; anything it refuses is 0, as goautoneg keeps it. */
function parseGoFloat(text: string): number {
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) return 0;
  return Number(text);
}

function negotiate(accept: string): (typeof V2_FORMATS)[number] | undefined {
  for (const clause of parseAccept(accept)) {
    const format = V2_FORMATS.find(
      (f) =>
        (clause.type === f.type || clause.type === '*') &&
        (clause.subtype === f.subtype || clause.subtype === '*'),
    );
    if (format !== undefined) return format;
  }
  return undefined;
}

/** http.ServeContent's checkIfNoneMatch (weak comparison, `*`) and checkIfModifiedSince. */
function notModified(req: IncomingMessage, etag: string, lastModified: Date): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const noneMatch = req.headers['if-none-match'];
  if (noneMatch !== undefined) {
    const weak = (tag: string) => tag.trim().replace(/^W\//, '');
    return noneMatch.split(',').some((tag) => tag.trim() === '*' || weak(tag) === etag);
  }
  const since = req.headers['if-modified-since'];
  if (since === undefined) return false;
  const time = Date.parse(since);
  return !Number.isNaN(time) && lastModified.getTime() <= time;
}
