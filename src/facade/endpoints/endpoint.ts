// What an endpoint of the facade is: its route (path, hooks, handler) and its operation in
// /openapi.json, kept side by side in one folder so the two cannot drift apart; and what its
// handler is given. app.ts serves the list in ./index.ts, openapi.ts documents it.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Authenticator } from '../auth.js';
import type { ServiceCatalog } from '../catalog/index.js';
import type { DocumentSchemas, Json } from '../openapi-schemas.js';
import type { ScopeStore } from '../scopes.js';
import type { ReadEvents } from '../status/events.js';
import type { StatusStore } from '../status/store.js';
import type { StreamLimits } from '../status/streams.js';
import type { PageCacheLimits } from './list-services/pages.js';

/** The content type of every answer, errors included. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** A Secret's decoded values, by key. */
export type SecretValues = Readonly<Record<string, string>>;

/** What the endpoints answer from. */
export interface EndpointDeps {
  readonly log: Logger;
  readonly auth: Authenticator;
  readonly catalog: ServiceCatalog;
  readonly scopes: ScopeStore;
  /** The decoded values of a Secret, undefined when there is none. Never logged. */
  readonly readSecret: (namespace: string, name: string) => Promise<SecretValues | undefined>;
  /** Every scope and service summarised, for the status calls and GET /watch. */
  readonly status: StatusStore;
  /** The last Events about an object, for the status detail call. */
  readonly readEvents: ReadEvents;
  /** Bounds of GET /watch; the defaults (streams.ts) where left out. */
  readonly streams?: Partial<StreamLimits>;
  /** Bounds of the rendered-page cache of GET /service; `{pages: 0, ...}` turns it off. */
  readonly pageCache?: PageCacheLimits;
}

export interface Endpoint {
  /** Adds the route to the app; called once per app, so state it keeps is the app's. */
  readonly route: (app: FastifyInstance, deps: EndpointDeps) => void;
  readonly openApi: DocumentedOperation;
}

/** An endpoint's operation in /openapi.json. */
export interface DocumentedOperation {
  /** The path as OpenAPI spells it (`/scope/{id}`; the route spells it `/scope/:id`). */
  readonly path: string;
  readonly method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /**
   * The schema of its query string, if any: converted with the document's components, so its
   * fields can `$ref` them, and offered back as `schemas.queryParameters(query)`.
   */
  readonly query?: z.ZodType;
  /** The OpenAPI operation object, from the document's converted schemas. */
  readonly operation: (schemas: DocumentSchemas) => Json;
}
