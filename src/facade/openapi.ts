// The facade's OpenAPI 3.1 document: the operations of the endpoints in endpoints/index.ts,
// each as its own folder describes it, over the components openapi-schemas.ts converts from the
// src/api zod schemas the routes validate with, so the published contract cannot drift from
// what the facade enforces.
import { createRequire } from 'node:module';
import { ENDPOINTS } from './endpoints/index.js';
import { type DocumentSchemas, documentSchemas, type Json } from './openapi-schemas.js';

export interface OpenApiOptions {
  /** Base URL the document advertises in `servers`; left out, clients resolve against `/`. */
  serverUrl?: string;
  /** `info.version`; defaults to the package's own version. */
  version?: string;
}

const FALLBACK_VERSION = '0.1.0';

/** Each endpoint's operation under its path and method, in the endpoints' order. */
function paths(schemas: DocumentSchemas): Json {
  const out: Record<string, Json> = {};
  for (const { openApi } of ENDPOINTS) {
    out[openApi.path] = { ...out[openApi.path], [openApi.method]: openApi.operation(schemas) };
  }
  return out;
}

function packageVersion(): string {
  try {
    // Two levels up from both src/facade and dist/facade.
    const pkg = createRequire(import.meta.url)('../../package.json') as {
      name?: unknown;
      version?: unknown;
    };
    if (pkg.name === 'nrn-operator' && typeof pkg.version === 'string') return pkg.version;
  } catch {
    // Bundled or relocated: the fallback below is still a valid document.
  }
  return FALLBACK_VERSION;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

let schemas: DocumentSchemas | undefined;
const documents = new Map<string, Json>();

/**
 * The OpenAPI 3.1 document of the facade's operations. Built once per distinct options and
 * frozen, since every caller (and every `/openapi.json` request) shares the same object.
 */
export function openApiDocument(options: OpenApiOptions = {}): Record<string, unknown> {
  const version = options.version ?? packageVersion();
  const key = JSON.stringify([options.serverUrl ?? null, version]);
  const cached = documents.get(key);
  if (cached !== undefined) return cached;

  schemas ??= documentSchemas(
    ENDPOINTS.flatMap(({ openApi }) => (openApi.query !== undefined ? [openApi.query] : [])),
  );
  const document: Json = {
    openapi: '3.1.0',
    info: {
      title: 'nrn-operator facade',
      version,
      description:
        'Service catalog and scopes, backed by Kubernetes custom resources. Every 4XX and 5XX ' +
        'answer has the Error shape; its code is stable.',
    },
    ...(options.serverUrl !== undefined ? { servers: [{ url: options.serverUrl }] } : {}),
    security: [{ bearer: [] }],
    tags: [{ name: 'services' }, { name: 'scopes' }, { name: 'status' }],
    paths: paths(schemas),
    components: {
      schemas: Object.fromEntries(schemas.components),
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'In a cluster, a Kubernetes token, checked with TokenReview and authorized with ' +
            "the caller's own RBAC; elsewhere, the facade's static token.",
        },
      },
    },
  };
  // Generated schemas are shared between documents; freezing keeps one caller's edit from
  // leaking into another's.
  deepFreeze(document);
  documents.set(key, document);
  return document;
}
