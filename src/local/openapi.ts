// OpenAPI v3 documents built from the registry: the root index kubectl reads first, and one
// document per group version with every kind's schema (for `kubectl explain`) and PATCH
// operations that declare `fieldValidation` (so default `kubectl apply` trusts the server to
// check unknown fields).
import { createHash } from 'node:crypto';
import type { Registry } from './registry.js';
import { apiVersionOf, type ResourceType } from './resource-type.js';

/** `platform.nrn.dev` + `v1alpha1` + `Scope` → `dev.nrn.platform.v1alpha1.Scope`, as kube-openapi names it. */
export function definitionName(t: Pick<ResourceType, 'group' | 'version' | 'kind'>): string {
  if (t.group === '') return `io.k8s.api.core.v1.${t.kind}`;
  const reversed = t.group.split('.').reverse().join('.');
  return `${reversed}.${t.version}.${t.kind}`;
}

const gvPath = (group: string, version: string) =>
  group === '' ? `api/${version}` : `apis/${group}/${version}`;

const param = (name: string, description: string, type = 'string') => ({
  name,
  in: 'query',
  description,
  schema: { type, uniqueItems: true },
});
const WRITE_PARAMS = [
  param('dryRun', 'When present, modifications are not persisted. Valid value: All.'),
  param('fieldManager', 'Name of the actor making the change.'),
  param('fieldValidation', 'Ignore, Warn or Strict: what to do with unknown or duplicate fields.'),
];

function operations(t: ResourceType, ref: string) {
  const gvk = { group: t.group, version: t.version, kind: t.kind };
  const op = (action: string, verb: string, extra: object = {}) => ({
    operationId: `${verb}${t.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    responses: {
      '200': { description: 'OK', content: { 'application/json': { schema: { $ref: ref } } } },
    },
    ...extra,
  });
  const body = (types: string[]) => ({
    requestBody: { content: Object.fromEntries(types.map((c) => [c, { schema: { $ref: ref } }])) },
  });
  return {
    item: {
      get: op('get', 'read'),
      put: op('put', 'replace', { ...body(['*/*']), parameters: WRITE_PARAMS }),
      patch: op('patch', 'patch', {
        ...body([
          'application/json-patch+json',
          'application/merge-patch+json',
          'application/apply-patch+yaml',
          ...(t.custom ? [] : ['application/strategic-merge-patch+json']),
        ]),
        parameters: [
          ...WRITE_PARAMS,
          param('force', 'Force is going to "force" Apply requests.', 'boolean'),
        ],
      }),
      delete: op('delete', 'delete'),
    },
    collection: {
      get: op('list', 'list'),
      post: op('post', 'create', { ...body(['*/*']), parameters: WRITE_PARAMS }),
    },
  };
}

function schemaOf(t: ResourceType): Record<string, unknown> {
  // Built-ins are schemaless here, but kubectl's client-side apply walks metadata in them.
  const base = t.schema ?? {
    type: 'object',
    description: `${t.kind} (served by the local control plane; its schema is not described here).`,
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
    'x-kubernetes-preserve-unknown-fields': true,
  };
  return {
    ...base,
    'x-kubernetes-group-version-kind': [{ group: t.group, version: t.version, kind: t.kind }],
  };
}

export class OpenApi {
  private cache = new Map<string, { body: string; hash: string }>();
  private cachedAt = -1;

  constructor(private readonly registry: Registry) {}

  private refresh(): void {
    if (this.cachedAt === this.registry.generation) return;
    this.cache = new Map();
    for (const { group, versions } of this.registry.groupVersions()) {
      for (const version of versions) {
        const body = JSON.stringify(this.build(group, version));
        const hash = createHash('sha512').update(body).digest('hex').slice(0, 128).toUpperCase();
        this.cache.set(gvPath(group, version), { body, hash });
      }
    }
    this.cachedAt = this.registry.generation;
  }

  root(): Record<string, unknown> {
    this.refresh();
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const [path, { hash }] of this.cache)
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
    return { paths };
  }

  /** The document for `api/v1` or `apis/<group>/<version>`, as JSON text. */
  document(path: string): string | undefined {
    this.refresh();
    return this.cache.get(path)?.body;
  }

  private build(group: string, version: string): Record<string, unknown> {
    const types = this.registry.all().filter((t) => t.group === group && t.version === version);
    const paths: Record<string, unknown> = {};
    const schemas: Record<string, unknown> = {};
    for (const t of types) {
      const name = definitionName(t);
      const ref = `#/components/schemas/${name}`;
      schemas[name] = schemaOf(t);
      const ops = operations(t, ref);
      const base = `/${gvPath(group, version)}`;
      const nsParam = { name: 'namespace', in: 'path', required: true, schema: { type: 'string' } };
      const nameParam = { name: 'name', in: 'path', required: true, schema: { type: 'string' } };
      const collection = t.namespaced
        ? `${base}/namespaces/{namespace}/${t.resource}`
        : `${base}/${t.resource}`;
      const common = t.namespaced ? [nsParam] : [];
      paths[collection] = { ...ops.collection, parameters: common };
      paths[`${collection}/{name}`] = { ...ops.item, parameters: [...common, nameParam] };
      if (t.hasStatus) {
        paths[`${collection}/{name}/status`] = {
          get: ops.item.get,
          put: ops.item.put,
          patch: ops.item.patch,
          parameters: [...common, nameParam],
        };
      }
    }
    return {
      openapi: '3.0.0',
      info: { title: 'Kubernetes', version: apiVersionOf({ group, version }) },
      paths,
      components: { schemas },
    };
  }
}
