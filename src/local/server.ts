// The HTTP face of the local control plane: authentication, URL routing to resource types
// and verbs, discovery, OpenAPI, list and watch (as objects or as Tables).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Admission } from './admission/index.js';
import type { AccessControl } from './auth/access.js';
import type { UserInfo } from './auth/attributes.js';
import { parseBody, readBody, sendError, sendJson, wantsTable, warningHeader } from './http.js';
import { strategyOf, subresourceOf } from './kinds/index.js';
import { NAMESPACE_TYPE, namespaceStrategy, refuseImmortalDelete } from './kinds/namespace.js';
import { checkListVersion, versionOptions } from './list-options.js';
import { invalid } from './meta.js';
import { ApiServerMetrics } from './metrics.js';
import type {
  DeleteOptions,
  FieldValidation,
  Objects,
  Subresource,
  WriteOptions,
} from './objects.js';
import type { OpenApi } from './openapi.js';
import { patchTypeOf } from './patch/index.js';
import type { Registry } from './registry.js';
import {
  apiVersionOf,
  qualifiedResource,
  type ResourceType,
  storageKeyOf,
} from './resource-type.js';
import { hasScale, serveScale } from './scale.js';
import { type IncludeObject, parseIncludeObject, toTable } from './table.js';
import { tableColumnsOf } from './table-columns.js';
import { ApiError, badRequest, type KubeObject } from './types.js';
import {
  type ChangeEvent,
  DEFAULT_WATCH_LIMITS,
  TooOldError,
  WatchBudget,
  type WatchHub,
  type WatchLimits,
  WatchStream,
} from './watch.js';
import { WatchEncoder } from './watch-encoding.js';

export const KUBERNETES_VERSION = { major: '1', minor: '32' };

export interface ApiServerOptions {
  /** Who each request is and whether it may (auth/): every request but /version and health. */
  access: AccessControl;
  /** The admission webhooks clients' writes go through; none without. */
  admission?: Admission;
  tls: { cert: string; key: string };
  log: Logger;
  /** Waits until every acknowledged write is durable, so reads never show a write a crash could lose. */
  durable: () => Promise<void>;
  /** How often a watch that asked for bookmarks gets one. */
  bookmarkIntervalMs?: number;
  /** Stored objects found invalid at start, for /metrics. */
  invalidStoredObjects?: number;
  /** What watchers may hold unread before they are closed (DEFAULT_WATCH_LIMITS). */
  watchLimits?: Partial<WatchLimits>;
}

interface Route {
  type: ResourceType;
  namespace: string | undefined;
  name?: string;
  subresource?: string;
}

const FIELD_VALIDATIONS = new Set(['Strict', 'Warn', 'Ignore']);

/** What may follow `namespaces/<name>/` when it names a namespace's subresource, not a resource. */
const NAMESPACE_SUBRESOURCES: ReadonlySet<string> = new Set([
  ...(NAMESPACE_TYPE.hasStatus ? ['status'] : []),
  ...Object.keys(namespaceStrategy.subresources ?? {}),
]);

export class ApiServer {
  readonly server: Server;
  private readonly streams = new Set<WatchStream>();
  private readonly watchBudget: WatchBudget;
  private readonly metrics: ApiServerMetrics;
  /** Every TCP connection, TLS handshake done or not: what close() must end. */
  private readonly sockets = new Set<Socket>();
  /** Who each request in progress is, for the AdmissionReviews of its write. */
  private readonly users = new WeakMap<IncomingMessage, UserInfo>();

  constructor(
    private readonly registry: Registry,
    private readonly objects: Objects,
    private readonly hub: WatchHub,
    private readonly openapi: OpenApi,
    private readonly options: ApiServerOptions,
  ) {
    this.watchBudget = new WatchBudget(
      { ...DEFAULT_WATCH_LIMITS, ...options.watchLimits },
      (stream, held, reason) => {
        this.metrics.terminatedWatchers.inc({ resource: stream.resource });
        options.log.info(
          { resource: stream.resource, held, reason },
          'watcher closed: it does not read fast enough',
        );
      },
    );
    this.metrics = new ApiServerMetrics(this.watchBudget, options.invalidStoredObjects);
    this.server = createServer({ cert: options.tls.cert, key: options.tls.key }, (req, res) => {
      this.handle(req, res).catch((error: unknown) => this.fail(res, error));
    });
    this.server.keepAliveTimeout = 65_000;
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /**
   * Stops listening and ends every connection: closeAllConnections() would miss those that
   * have sent no request yet (still in the TLS handshake, or opened ahead by a client's pool),
   * and server.close() would wait for them.
   */
  close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    return closed;
  }

  /** Ends every open watch, as a restarting server would: clients must re-watch. */
  dropWatches(): void {
    for (const stream of this.streams) stream.close();
  }

  private fail(res: ServerResponse, error: unknown): void {
    if (error instanceof ApiError) {
      sendError(res, error);
      return;
    }
    this.options.log.error({ err: error }, 'request failed');
    sendError(
      res,
      new ApiError(
        500,
        'InternalError',
        'an error on the server prevented the request from succeeding',
      ),
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Split by hand: a WHATWG URL per request costs more than the rest of routing.
    const raw = req.url ?? '/';
    const mark = raw.indexOf('?');
    const url = {
      pathname: mark < 0 ? raw : raw.slice(0, mark),
      searchParams: new URLSearchParams(mark < 0 ? '' : raw.slice(mark + 1)),
    };
    const path = trimSlashes(url.pathname) || '/';
    if (path === '/version') return sendJson(res, 200, this.version());
    if (path === '/healthz' || path === '/livez' || path === '/readyz') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('ok');
      return;
    }
    const admitted = this.options.access.admit(req, url.pathname, url.searchParams);
    this.users.set(req, admitted.user);
    if (path === '/metrics') {
      res.writeHead(200, { 'Content-Type': this.metrics.registry.contentType });
      res.end(await this.metrics.registry.metrics());
      return;
    }
    if (await this.options.access.serve(req, res, admitted)) return;
    const segments = path
      .split('/')
      .filter((s) => s !== '')
      // Most segments hold no escape: decoding them anyway costs a call each.
      .map((s) => (s.includes('%') ? decodeSegment(s) : s));
    const [root, ...rest] = segments;
    if (root === 'openapi') return this.openapi.serve(req, res, rest);
    if (root === 'api') {
      if (rest.length === 0) {
        // The address this server is reached at, as kube-apiserver advertises its own.
        const { localAddress, localPort } = req.socket;
        const host = localAddress?.includes(':') ? `[${localAddress}]` : localAddress;
        return sendJson(res, 200, this.registry.apiVersions(`${host}:${localPort}`));
      }
      const [version, ...tail] = rest;
      return this.serveGroupVersion(req, res, url, '', version as string, tail);
    }
    if (root === 'apis') {
      if (rest.length === 0) return sendJson(res, 200, this.registry.apiGroupList());
      const [group, version, ...tail] = rest;
      if (version === undefined) {
        const doc = this.registry.apiGroup(group as string);
        if (doc === undefined) throw notFoundPath();
        return sendJson(res, 200, doc);
      }
      return this.serveGroupVersion(req, res, url, group as string, version, tail);
    }
    throw notFoundPath();
  }

  private version(): Record<string, string> {
    return {
      ...KUBERNETES_VERSION,
      gitVersion: `v${KUBERNETES_VERSION.major}.${KUBERNETES_VERSION.minor}.0-nrn-local`,
      gitCommit: '',
      gitTreeState: 'clean',
      buildDate: '2026-01-01T00:00:00Z',
      goVersion: 'n/a',
      compiler: 'n/a',
      platform: `${process.platform}/${GO_ARCH[process.arch] ?? process.arch}`,
    };
  }

  private async serveGroupVersion(
    req: IncomingMessage,
    res: ServerResponse,
    url: { searchParams: URLSearchParams },
    group: string,
    version: string,
    tail: string[],
  ): Promise<void> {
    if (tail.length === 0) {
      const doc = this.registry.apiResourceList(group, version);
      if (doc === undefined) throw notFoundPath();
      return sendJson(res, 200, doc);
    }
    const route = this.route(group, version, tail);
    const method = req.method ?? 'GET';
    const q = url.searchParams;
    if (route.name === undefined) {
      if (method === 'GET') {
        return isTrue(q.get('watch'))
          ? this.watch(req, res, route, q)
          : this.list(req, res, route, q);
      }
      if (method === 'POST') return this.create(req, res, route, q);
      if (method === 'DELETE') return this.deleteCollection(req, res, route, q);
      throw methodNotAllowed(method);
    }
    if (route.subresource === 'scale') {
      if (method !== 'GET' && method !== 'PUT' && method !== 'PATCH')
        throw methodNotAllowed(method);
      return serveScale(
        {
          objects: this.objects,
          writeOptions: () => this.writeOptions(q, req),
          durable: () => this.options.durable(),
          body: async () => parseBody(await readBody(req), req.headers['content-type']),
          sendJson: (code, body, headers) => sendJson(res, code, body, headers),
          warningHeader,
        },
        req,
        route.type,
        route.namespace ?? '',
        route.name as string,
        q,
      );
    }
    switch (method) {
      case 'GET':
        return this.get(req, res, route, q);
      case 'PUT':
        return this.update(req, res, route, q);
      case 'PATCH':
        return this.patch(req, res, route, q);
      case 'DELETE':
        return this.delete(req, res, route, q);
      default:
        throw methodNotAllowed(method);
    }
  }

  /** Maps the path after `/api/v1` or `/apis/<g>/<v>` to a type, namespace, name, subresource. */
  private route(group: string, version: string, tail: string[]): Route {
    let namespace: string | undefined;
    let rest = tail;
    // `namespaces/<ns>/<plural>...` is namespaced; `namespaces/<name>[/<subresource>]` is a namespace.
    const namespaceItself =
      group === '' &&
      tail[0] === 'namespaces' &&
      (tail.length <= 2 || (tail.length === 3 && NAMESPACE_SUBRESOURCES.has(tail[2] as string)));
    if (tail[0] === 'namespaces' && tail.length >= 3 && !namespaceItself) {
      namespace = tail[1];
      rest = tail.slice(2);
    }
    const [plural, name, subresource, ...extra] = rest;
    if (extra.length > 0 || plural === undefined) throw notFoundPath();
    const type = this.registry.lookup(group, version, plural);
    if (type === undefined) throw notFoundPath();
    if (namespace !== undefined && !type.namespaced) throw notFoundPath();
    if (namespace === undefined && type.namespaced && name !== undefined) throw notFoundPath();
    if (subresource !== undefined) {
      const allowed =
        subresource === 'status'
          ? type.hasStatus
          : subresource === 'scale'
            ? hasScale(type)
            : subresourceOf(type, subresource) !== undefined;
      if (!allowed) throw notFoundPath();
    }
    return {
      type,
      namespace,
      ...(name !== undefined ? { name } : {}),
      ...(subresource !== undefined ? { subresource } : {}),
    };
  }

  // --- verbs ------------------------------------------------------------------------------

  private writeOptions(q: URLSearchParams, req: IncomingMessage): WriteOptions {
    const dryRun = q.getAll('dryRun');
    for (const value of dryRun) {
      if (value !== 'All')
        throw badRequest(`dryRun: Unsupported value: "${value}": supported values: "All"`);
    }
    const fieldValidation = q.get('fieldValidation') ?? 'Warn';
    if (!FIELD_VALIDATIONS.has(fieldValidation)) {
      throw badRequest(
        `fieldValidation: Unsupported value: "${fieldValidation}": supported values: "Ignore", "Strict", "Warn"`,
      );
    }
    const manager = q.get('fieldManager') ?? managerFromUserAgent(req.headers['user-agent']);
    if (manager.length > 128)
      throw badRequest('fieldManager: Too long: may not be more than 128 bytes');
    return {
      fieldManager: manager,
      fieldValidation: fieldValidation as FieldValidation,
      dryRun: dryRun.length > 0,
      warnings: [],
    };
  }

  /**
   * A write through the admission webhooks (admission/): run again, on a fresh copy of the
   * body, each time a webhook had to be awaited; its warnings are the last run's and theirs.
   */
  private async admitted<O extends WriteOptions, T>(
    req: IncomingMessage,
    route: Route,
    options: O,
    body: unknown,
    write: (body: unknown, options: O) => T,
  ): Promise<T> {
    const admission = this.options.admission;
    if (admission === undefined) return write(body, options);
    let warnings: string[] = [];
    const admitted = await admission.admit(this.requestContext(req, route, options), (hooks) => {
      warnings = [];
      return hooks === undefined
        ? write(body, { ...options, warnings })
        : write(structuredClone(body), { ...options, warnings, admission: hooks });
    });
    options.warnings.push(...warnings, ...admitted.warnings);
    return admitted.result;
  }

  private async admittedDelete(
    req: IncomingMessage,
    route: Route,
    options: DeleteOptions,
    namespace: string,
    name: string,
  ) {
    const remove = (admission?: DeleteOptions['admission']) =>
      this.objects.delete(route.type, namespace, name, {
        ...options,
        ...(admission !== undefined ? { admission } : {}),
      });
    const admission = this.options.admission;
    if (admission === undefined) return remove();
    const context = this.requestContext(req, route, { dryRun: options.dryRun });
    return (await admission.admit(context, remove)).result;
  }

  private requestContext(
    req: IncomingMessage,
    route: Route,
    options: { dryRun: boolean; fieldManager?: string },
  ) {
    return {
      user: this.users.get(req) ?? {
        username: 'system:anonymous',
        groups: ['system:unauthenticated'],
      },
      dryRun: options.dryRun,
      ...(options.fieldManager !== undefined ? { fieldManager: options.fieldManager } : {}),
      type: route.type,
      subresource: route.subresource ?? '',
    };
  }

  private async respond(
    res: ServerResponse,
    code: number,
    written: { object: KubeObject; json?: string; durable?: Promise<void> },
    options: WriteOptions,
  ): Promise<void> {
    await written.durable;
    const headers: Record<string, string> =
      options.warnings.length > 0 ? { Warning: warningHeader(options.warnings) } : {};
    sendJson(res, code, written.json ?? written.object, headers);
  }

  private async create(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    q: URLSearchParams,
  ): Promise<void> {
    if (route.type.namespaced && route.namespace === undefined) throw notFoundPath();
    const body = parseBody(await readBody(req), req.headers['content-type']);
    const options = this.writeOptions(q, req);
    const written = await this.admitted(req, route, options, body, (b, o) =>
      this.objects.create(route.type, route.namespace ?? '', b, o),
    );
    await this.respond(res, 201, written, options);
  }

  private async update(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    q: URLSearchParams,
  ): Promise<void> {
    const body = parseBody(await readBody(req), req.headers['content-type']);
    const options = this.writeOptions(q, req);
    const written = await this.admitted(req, route, options, body, (b, o) =>
      this.objects.update(
        route.type,
        route.namespace ?? '',
        route.name as string,
        b,
        o,
        route.subresource as Subresource | undefined,
      ),
    );
    await this.respond(res, 200, written, options);
  }

  private async patch(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    q: URLSearchParams,
  ): Promise<void> {
    const patchType = patchTypeOf(req.headers['content-type'], { strategic: !route.type.custom });
    // A kind's own subresources (namespaces' finalize) take PUT only, as on a real server.
    if (route.subresource !== undefined && route.subresource !== 'status')
      throw methodNotAllowed('PATCH');
    const body = parseBody(await readBody(req), req.headers['content-type']);
    const options = { ...this.writeOptions(q, req), force: isTrue(q.get('force')) };
    // ValidatePatchOptions, before anything else is looked at (handlers/patch.go).
    if (patchType === 'apply' && !q.get('fieldManager')) {
      throw invalid(PATCH_OPTIONS, '', [
        {
          reason: 'FieldValueRequired',
          message: 'Required value: is required for apply patch',
          field: 'fieldManager',
        },
      ]);
    }
    if (patchType !== 'apply' && q.has('force')) {
      throw invalid(PATCH_OPTIONS, '', [
        {
          reason: 'FieldValueForbidden',
          message: 'Forbidden: may not be specified for non-apply patch',
          field: 'force',
        },
      ]);
    }
    const written = await this.admitted(req, route, options, body, (b, o) =>
      this.objects.patch(
        route.type,
        route.namespace ?? '',
        route.name as string,
        patchType,
        b,
        { ...o, force: options.force },
        route.subresource as 'status' | undefined,
      ),
    );
    await this.respond(res, written.created ? 201 : 200, written, options);
  }

  private async delete(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    q: URLSearchParams,
  ): Promise<void> {
    const options = await deleteRequestOptions(req, q);
    // NamespaceLifecycle admission, which runs on requests, not on the controllers' own deletes.
    if (storageKeyOf(route.type) === storageKeyOf(NAMESPACE_TYPE)) {
      refuseImmortalDelete(route.name as string);
    }
    const written = await this.admittedDelete(
      req,
      route,
      options,
      route.namespace ?? '',
      route.name as string,
    );
    await written.durable;
    sendJson(res, 200, this.deleted(route, written.object, options.dryRun));
  }

  /**
   * What a DELETE answers: the object while it waits (finalizers) or where the kind returns
   * deleted objects; otherwise, once it is gone, the registry's finalizeDelete `Status`.
   */
  private deleted(route: Route, object: KubeObject, dryRun: boolean): KubeObject | object {
    const custom = route.type.custom;
    if (custom || strategyOf(route.type)?.returnsDeletedObject === true) return object;
    const { name, namespace, uid, finalizers, deletionTimestamp } = object.metadata;
    const waiting = dryRun
      ? (finalizers ?? []).length > 0 || deletionTimestamp !== undefined
      : this.objects.find(route.type, namespace ?? '', name ?? '') !== undefined;
    if (waiting) return object;
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: {
        name,
        ...(route.type.group !== '' ? { group: route.type.group } : {}),
        kind: route.type.resource,
        uid,
      },
    };
  }

  private async deleteCollection(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    q: URLSearchParams,
  ): Promise<void> {
    if (strategyOf(route.type)?.noDeleteCollection) throw methodNotAllowed('DELETE');
    const options = await deleteRequestOptions(req, q);
    versionOptions(q, false, route.type);
    const listed = this.objects.list(route.type, route.namespace, listOptions(q));
    const writes = await Promise.all(
      listed.items.map((o) =>
        this.admittedDelete(req, route, options, o.metadata.namespace ?? '', o.metadata.name ?? ''),
      ),
    );
    await Promise.all(writes.map((w) => w.durable));
    sendJson(res, 200, {
      kind: route.type.listKind,
      apiVersion: apiVersionOf(route.type),
      metadata: { resourceVersion: String(this.objects.revision) },
      items: writes.map((w) => w.object),
    });
  }

  /**
   * A GET of one object; kubectl get NAME asks it as a Table, which has the columns a list of
   * the type has (endpoints/handlers/response.go transformObject: asTable of the object).
   */
  private async get(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    q: URLSearchParams,
  ): Promise<void> {
    await this.options.durable();
    const object = this.objects.get(route.type, route.namespace ?? '', route.name as string);
    if (!wantsTable(req.headers.accept)) return sendJson(res, 200, object);
    const table = toTable([object], tableColumnsOf(route.type), {
      includeObject: includeObjectOf(q),
      resourceVersion: object.metadata.resourceVersion ?? '',
    });
    sendJson(res, 200, table);
  }

  private async list(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    q: URLSearchParams,
  ): Promise<void> {
    const versions = versionOptions(q, false, route.type);
    await this.options.durable();
    checkListVersion(versions, this.objects.revision);
    const result = this.objects.list(route.type, route.namespace, listOptions(q));
    if (wantsTable(req.headers.accept)) {
      const table = toTable(result.items, tableColumnsOf(route.type), {
        includeObject: includeObjectOf(q),
        resourceVersion: result.resourceVersion,
        ...(result.continue !== undefined ? { continue: result.continue } : {}),
        ...(result.remainingItemCount !== undefined
          ? { remainingItemCount: result.remainingItemCount }
          : {}),
      });
      return sendJson(res, 200, table);
    }
    sendJson(res, 200, {
      kind: route.type.listKind,
      apiVersion: apiVersionOf(route.type),
      metadata: {
        resourceVersion: result.resourceVersion,
        ...(result.continue !== undefined
          ? { continue: result.continue, remainingItemCount: result.remainingItemCount }
          : {}),
      },
      items: result.items,
    });
  }

  private async watch(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    q: URLSearchParams,
  ): Promise<void> {
    const type = route.type;
    const versions = versionOptions(q, true, type);
    const matches = this.objects.selector(type, listOptions(q));
    // Without a selector every change is sent as it happened, and nothing needs parsing.
    const everything = this.objects.selectsAll(listOptions(q));
    const encoder = new WatchEncoder(
      type,
      wantsTable(req.headers.accept) ? includeObjectOf(q) : undefined,
    );
    const sendInitial = isTrue(q.get('sendInitialEvents'));
    const timeoutMs = parseTimeout(q.get('timeoutSeconds'));
    await this.options.durable();
    const stream = new WatchStream(res, this.watchBudget, qualifiedResource(type));
    this.streams.add(stream);
    stream.whenClosed(() => this.streams.delete(stream));
    const emit = (kind: string, object: KubeObject) =>
      stream.sendLine(encoder.object(kind, object));
    /** Sends a change: its line is built once, and shared by every watcher sending the same. */
    const emitChange = (kind: string, event: ChangeEvent) =>
      stream.sendLine(encoder.change(kind, event));
    let lastRevision = 0;
    const deliver = (event: ChangeEvent): boolean => {
      lastRevision = event.revision;
      if (everything) return emitChange(event.type, event);
      const now = event.object();
      const before = event.previousObject();
      const was = before !== undefined && matches(before);
      const is = event.type !== 'DELETED' && matches(now);
      // An object entering or leaving the selection is ADDED or DELETED for this watcher.
      if (event.type === 'DELETED') {
        return was || matches(now) ? emitChange('DELETED', event) : stream.isOpen;
      }
      if (is && !was) return emitChange('ADDED', event);
      if (is && was) return emitChange('MODIFIED', event);
      if (!is && was) return emitChange('DELETED', event);
      return stream.isOpen;
    };
    let from: number;
    if (versions.resourceVersion === 0 || sendInitial) {
      const listed = this.objects.list(type, route.namespace, listOptions(q));
      for (const object of listed.items) emit('ADDED', object);
      from = Number(listed.resourceVersion);
      if (sendInitial) {
        stream.send('BOOKMARK', bookmark(type, listed.resourceVersion, true));
      }
    } else {
      from = versions.resourceVersion;
    }
    lastRevision = from;
    try {
      const unsubscribe = this.hub.subscribe(
        {
          resource: storageKeyOf(type),
          namespace: type.namespaced ? route.namespace : undefined,
          deliver,
        },
        from,
      );
      stream.whenClosed(unsubscribe);
    } catch (error) {
      if (!(error instanceof TooOldError)) throw error;
      stream.send('ERROR', new ApiError(410, 'Expired', error.message).toStatus());
      stream.close();
      return;
    }
    const sendBookmark = () =>
      stream.send('BOOKMARK', bookmark(type, String(Math.max(lastRevision, from)), false));
    if (isTrue(q.get('allowWatchBookmarks'))) {
      stream.every(this.options.bookmarkIntervalMs ?? 60_000, sendBookmark);
    }
    if (timeoutMs === undefined) return;
    stream.after(timeoutMs, () => {
      if (isTrue(q.get('allowWatchBookmarks'))) sendBookmark();
      stream.close();
    });
  }
}

function bookmark(
  type: ResourceType,
  resourceVersion: string,
  initialEventsEnd: boolean,
): Record<string, unknown> {
  return {
    kind: type.kind,
    apiVersion: apiVersionOf(type),
    metadata: {
      resourceVersion,
      ...(initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
    },
  };
}

interface DeleteBody {
  propagationPolicy?: string;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: string[];
}

/**
 * A DELETE's body as the DeleteOptions it must be. kube-apiserver decodes it into
 * metav1.DeleteOptions (apiserver/pkg/endpoints/handlers/delete.go): `null` decodes to no
 * options, and so does a `null` field; a body that is not an object, or a field of another
 * type, does not decode — the caller's 400 here, as for the body of a create.
 */
function deleteOptionsOf(body: unknown): DeleteBody {
  if (body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('the body of a DELETE must be a DeleteOptions object');
  }
  const { propagationPolicy, preconditions, dryRun } = body as Record<string, unknown>;
  const options: DeleteBody = {};
  if (propagationPolicy !== undefined && propagationPolicy !== null) {
    if (typeof propagationPolicy !== 'string')
      throw badRequest('propagationPolicy: must be a string');
    options.propagationPolicy = propagationPolicy;
  }
  if (dryRun !== undefined && dryRun !== null) {
    if (!Array.isArray(dryRun) || !dryRun.every((v) => typeof v === 'string')) {
      throw badRequest('dryRun: must be a list of strings');
    }
    options.dryRun = dryRun;
  }
  if (preconditions !== undefined && preconditions !== null) {
    if (typeof preconditions !== 'object' || Array.isArray(preconditions)) {
      throw badRequest('preconditions: must be an object');
    }
    const { uid, resourceVersion } = preconditions as Record<string, unknown>;
    const given: { uid?: string; resourceVersion?: string } = {};
    for (const [field, value] of [
      ['uid', uid],
      ['resourceVersion', resourceVersion],
    ] as const) {
      if (value === undefined || value === null) continue;
      if (typeof value !== 'string') throw badRequest(`preconditions.${field}: must be a string`);
      given[field] = value;
    }
    options.preconditions = given;
  }
  return options;
}

/**
 * A DELETE's options, from its query and its DeleteOptions body (a delete of one object and of
 * a collection take the same): the propagation policy, preconditions and dry run.
 */
async function deleteRequestOptions(
  req: IncomingMessage,
  q: URLSearchParams,
): Promise<DeleteOptions> {
  const raw = await readBody(req);
  const body = raw.length > 0 ? deleteOptionsOf(parseBody(raw, req.headers['content-type'])) : {};
  const policy = q.get('propagationPolicy') ?? body.propagationPolicy;
  if (policy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(policy)) {
    throw badRequest(
      `propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
    );
  }
  const dryRunValues = [...q.getAll('dryRun'), ...(body.dryRun ?? [])];
  for (const value of dryRunValues) {
    if (value !== 'All')
      throw badRequest(`dryRun: Unsupported value: "${value}": supported values: "All"`);
  }
  return {
    ...(policy !== undefined
      ? { propagationPolicy: policy as 'Orphan' | 'Background' | 'Foreground' }
      : {}),
    ...(body.preconditions ? { preconditions: body.preconditions } : {}),
    dryRun: dryRunValues.length > 0,
  };
}

function listOptions(q: URLSearchParams) {
  const limit = q.get('limit');
  const parsedLimit = limit === null ? undefined : Number(limit);
  if (parsedLimit !== undefined && (!Number.isInteger(parsedLimit) || parsedLimit < 0)) {
    throw badRequest(`limit: Invalid value: "${limit}": must be a non-negative integer`);
  }
  return {
    ...(q.get('labelSelector') !== null ? { labelSelector: q.get('labelSelector') as string } : {}),
    ...(q.get('fieldSelector') !== null ? { fieldSelector: q.get('fieldSelector') as string } : {}),
    ...(parsedLimit !== undefined ? { limit: parsedLimit } : {}),
    ...(q.get('continue') ? { continue: q.get('continue') as string } : {}),
  };
}

function includeObjectOf(q: URLSearchParams): IncludeObject {
  return parseIncludeObject(q.get('includeObject') ?? undefined);
}

/** The longest delay Node's timers take: past it the delay overflows and they fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * When a watch ends, in milliseconds; undefined for never (until the client goes). Watches end
 * on their own, as on a real server, so clients re-watch and never stall.
 *
 * kube-apiserver decodes `timeoutSeconds` into an *int64 with strconv.ParseInt (apimachinery
 * runtime/conversion.go) and answers a failure with 400 and the error's text (handlers/get.go
 * ListResource); absent or 0 is its minimum request timeout (1800 s) times 1 to 2, and a
 * negative one has passed already. A timeout past what a Node timer holds (24.8 days) is
 * "until the client goes", rather than the overflow that fires the timer at once.
 */
function parseTimeout(value: string | null): number | undefined {
  if (value !== null && !/^[+-]?[0-9]+$/.test(value)) {
    throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`);
  }
  const seconds = value === null ? 0n : BigInt(value);
  if (seconds > INT64_MAX || seconds < INT64_MIN) {
    throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: value out of range`);
  }
  if (seconds === 0n) return (1800 + Math.random() * 1800) * 1000;
  if (seconds < 0n) return 0;
  return seconds * 1000n > BigInt(MAX_TIMER_MS) ? undefined : Number(seconds) * 1000;
}

const PATCH_OPTIONS = { kind: 'PatchOptions', group: 'meta.k8s.io' };

/** Node's names of architectures as Go's GOARCH, which /version's `platform` is made of. */
const GO_ARCH: Readonly<Record<string, string>> = {
  x64: 'amd64',
  ia32: '386',
  ppc64: 'ppc64le',
};

/**
 * A boolean query parameter as kube-apiserver reads one (apimachinery's
 * Convert_Slice_string_To_bool): absent, `0` and `false` in any case are false; anything else,
 * the empty value of `?watch` included, is true. Python's client sends `watch=True`.
 */
const isTrue = (v: string | null) => v !== null && v !== '0' && v.toLowerCase() !== 'false';

/** The real server names an unnamed manager after the client's user agent, up to its first '/'. */
function managerFromUserAgent(agent: string | undefined): string {
  const name = (agent ?? 'unknown').split('/')[0]?.trim();
  return name === undefined || name === '' ? 'unknown' : name.slice(0, 128);
}

/**
 * The path without its trailing slashes. Not `/\/+$/`: V8 retries that regex at each slash of
 * a run that does not end the path, quadratic in the run a client may send unauthenticated.
 */
function trimSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  return end === path.length ? path : path.slice(0, end);
}

/** A path segment's escapes decoded; a malformed one is the client's error, as in Go's url. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`invalid URL escape in path segment ${JSON.stringify(segment)}`);
  }
}

function notFoundPath(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

/**
 * go-restful's 405 as kube-apiserver's serviceErrorHandler words it (NewGenericServerResponse):
 * the method is not named, and the details are empty.
 */
function methodNotAllowed(_method: string): ApiError {
  return new ApiError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
    {},
  );
}
