// The resource types the local control plane serves: the built-in kinds (each its strategy's,
// kinds/), and every kind a registered CustomResourceDefinition defines. Answers discovery from
// the same table.
import { BUILTIN_STRATEGIES, strategyOf } from './kinds/index.js';
import { type ResourceType, storageKeyOf, storageVersionHashOf } from './resource-type.js';
import { REVIEW_GROUPS, unstoredResources } from './reviews.js';
import type { PrinterColumn } from './table.js';
import { ApiError, type KubeObject } from './types.js';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** The built-in kinds' types, each made by its strategy (kinds/). */
export const BUILTIN_TYPES: readonly ResourceType[] = BUILTIN_STRATEGIES.map((s) => s.type);

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: Record<string, unknown> };
  subresources?: { status?: unknown };
  additionalPrinterColumns?: PrinterColumn[];
}

/** The resource types a (valid) CRD defines: one per served version. */
export function typesOfCrd(crd: KubeObject): ResourceType[] {
  const spec = crd.spec as {
    group: string;
    scope: string;
    names: { kind: string; plural: string; singular?: string; listKind?: string };
    versions: CrdVersion[];
  } & { names: { shortNames?: string[]; categories?: string[] } };
  const storageVersion = spec.versions.find((v) => v.storage === true)?.name;
  return spec.versions
    .filter((v) => v.served !== false)
    .map((v) => ({
      group: spec.group,
      version: v.name,
      kind: spec.names.kind,
      resource: spec.names.plural,
      singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
      listKind: spec.names.listKind ?? `${spec.names.kind}List`,
      namespaced: spec.scope === 'Namespaced',
      shortNames: spec.names.shortNames ?? [],
      categories: spec.names.categories ?? [],
      hasStatus: v.subresources?.status !== undefined,
      ...(v.schema?.openAPIV3Schema ? { schema: v.schema.openAPIV3Schema } : {}),
      // A CRD without columns still prints Name and Age, unlike a built-in kind.
      printerColumns: v.additionalPrinterColumns ?? [],
      custom: true,
      nameRule: 'subdomain' as const,
      ...(storageVersion !== undefined ? { storageVersion } : {}),
    }));
}

/** The live table of types, keyed by group/version/resource. */
export class Registry {
  private readonly types = new Map<string, ResourceType>();
  private readonly byCrd = new Map<string, ResourceType[]>();
  /** Bumped on every change, so discovery and OpenAPI caches know when to rebuild. */
  generation = 0;

  constructor() {
    for (const t of BUILTIN_TYPES) this.types.set(this.key(t.group, t.version, t.resource), t);
  }

  private key(group: string, version: string, resource: string): string {
    return `${group}/${version}/${resource}`;
  }

  private byStorage = new Map<string, ResourceType>();
  private byStorageAt = -1;

  /**
   * A type stored under `key` (any of its versions): what a stored object is read as. Never a
   * view of another type's objects (events.k8s.io's Event): the stored shape is the owner's.
   */
  forStorageKey(key: string): ResourceType | undefined {
    if (this.byStorageAt !== this.generation) {
      this.byStorage = new Map();
      for (const t of this.types.values()) {
        const at = storageKeyOf(t);
        if (t.storedAs === undefined && !this.byStorage.has(at)) this.byStorage.set(at, t);
      }
      this.byStorageAt = this.generation;
    }
    return this.byStorage.get(key);
  }

  lookup(group: string, version: string, resource: string): ResourceType | undefined {
    return this.types.get(this.key(group, version, resource));
  }

  require(group: string, version: string, resource: string): ResourceType {
    const found = this.lookup(group, version, resource);
    if (found === undefined) {
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    }
    return found;
  }

  all(): ResourceType[] {
    return [...this.types.values()];
  }

  /** Every version of a resource (for storage: all versions share one key). */
  setCrd(crdName: string, types: ResourceType[]): void {
    this.removeCrd(crdName);
    for (const t of types) this.types.set(this.key(t.group, t.version, t.resource), t);
    this.byCrd.set(crdName, types);
    this.generation++;
  }

  removeCrd(crdName: string): void {
    for (const t of this.byCrd.get(crdName) ?? []) {
      this.types.delete(this.key(t.group, t.version, t.resource));
    }
    if (this.byCrd.delete(crdName)) this.generation++;
  }

  /** Group versions in a stable order: core first, then groups by name. */
  groupVersions(): Array<{ group: string; versions: string[] }> {
    const groups = new Map<string, Set<string>>();
    for (const t of this.types.values()) {
      const versions = groups.get(t.group) ?? new Set<string>();
      versions.add(t.version);
      groups.set(t.group, versions);
    }
    return [...groups.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([group, versions]) => ({ group, versions: [...versions].sort().reverse() }));
  }

  // --- discovery documents ---------------------------------------------------------------

  apiVersions(serverAddress: string): Record<string, unknown> {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }

  /** The group versions discovery lists: the stored kinds', and the review kinds' v1. */
  private discoveryGroupVersions(): Array<{ group: string; versions: string[] }> {
    const stored = this.groupVersions();
    const reviews = REVIEW_GROUPS.filter((g) => !stored.some((s) => s.group === g));
    return [...stored, ...reviews.map((group) => ({ group, versions: ['v1'] }))].sort((a, b) =>
      a.group < b.group ? -1 : a.group > b.group ? 1 : 0,
    );
  }

  apiGroup(group: string): Record<string, unknown> | undefined {
    const found = this.discoveryGroupVersions().find((g) => g.group === group && group !== '');
    if (found === undefined) return undefined;
    const versions = found.versions.map((version) => ({
      groupVersion: `${group}/${version}`,
      version,
    }));
    return {
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: group,
      versions,
      preferredVersion: versions[0],
    };
  }

  apiGroupList(): Record<string, unknown> {
    const groups = this.discoveryGroupVersions()
      .filter((g) => g.group !== '')
      .map((g) => this.apiGroup(g.group));
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }

  apiResourceList(group: string, version: string): Record<string, unknown> | undefined {
    const types = this.all().filter((t) => t.group === group && t.version === version);
    const unstored = unstoredResources(group, version);
    if (types.length === 0 && unstored.length === 0) return undefined;
    const stored = types
      .sort((a, b) => (a.resource < b.resource ? -1 : 1))
      .flatMap((t) => {
        const strategy = strategyOf(t);
        const main = {
          name: t.resource,
          singularName: t.singular,
          namespaced: t.namespaced,
          kind: t.kind,
          verbs: strategy?.noDeleteCollection
            ? VERBS.filter((v) => v !== 'deletecollection')
            : VERBS,
          ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
          ...(t.categories.length > 0 ? { categories: t.categories } : {}),
          storageVersionHash: storageVersionHashOf(t),
        };
        const subresource = (name: string, verbs: string[]) => ({
          name: `${t.resource}/${name}`,
          singularName: '',
          namespaced: t.namespaced,
          kind: t.kind,
          verbs,
        });
        // A kind's own subresources (namespaces/finalize) take PUT only.
        const own = Object.keys(strategy?.subresources ?? {}).map((name) =>
          subresource(name, ['update']),
        );
        const status = t.hasStatus ? [subresource('status', ['get', 'patch', 'update'])] : [];
        // A scale subresource answers autoscaling/v1 Scale, which discovery names (scale.ts).
        const scale =
          strategy?.scale === undefined
            ? []
            : [
                {
                  name: `${t.resource}/scale`,
                  singularName: '',
                  namespaced: t.namespaced,
                  group: 'autoscaling',
                  version: 'v1',
                  kind: 'Scale',
                  verbs: ['get', 'patch', 'update'],
                },
              ];
        return [main, ...[...own, ...scale, ...status].sort((a, b) => (a.name < b.name ? -1 : 1))];
      });
    // By name, as the installer lists a version's paths (serviceaccounts/token after serviceaccounts).
    const resources = [...stored, ...unstored].sort((a, b) =>
      String(a.name) < String(b.name) ? -1 : 1,
    );
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group === '' ? version : `${group}/${version}`,
      resources,
    };
  }
}
