// The read model of GET /service: every Service rendered once as the spec's item (secret
// attributes left out) and its JSON, filed in sorted lists — one per NRN it carries (a trie of
// NRN segments), one per subtree of the top levels, one per type, one per status, one for all —
// so that a page costs about its own size, whatever the size of the catalog. This class follows
// the informers and ties the parts: render.ts (the item), secrets.ts (which attributes are
// secret), query/ (the lists, the trie, the planner and the merge that read them).
import type { ServiceSpecificationSpec } from '../../api/index.js';
import { type KubeObject, keyOf } from '../../kube/index.js';
import { Buckets } from './query/buckets.js';
import { type CatalogQuery, Planner, type PlanOptions } from './query/plan.js';
import { readPage } from './query/read.js';
import { Row, timeOf } from './query/row.js';
import { type CatalogEntry, entryOf, type ServiceObject } from './render.js';
import {
  NO_SECRETS,
  NOTHING_HIDDEN,
  type SchemaSecrets,
  type SpecSecrets,
  secretsOfClaimants,
  secretsOfSchema,
} from './secrets.js';

export type { CatalogQuery } from './query/plan.js';
export { type CatalogEntry, type ServiceObject, withSecretValues } from './render.js';

export type SpecificationObject = KubeObject<ServiceSpecificationSpec, unknown>;

export type ServiceCatalogOptions = PlanOptions;

interface CatalogPage {
  readonly entries: readonly CatalogEntry[];
}

/** What the catalog needs of an informer (src/kube's Informer is one). */
export interface WatchedKind<O> {
  readonly cache: { list(): O[] };
  on(event: 'add' | 'delete', listener: (object: O) => void): () => void;
  on(event: 'update', listener: (object: O, old: O) => void): () => void;
}

export class ServiceCatalog {
  private readonly rows = new Map<string, Row>();
  private readonly buckets = new Buckets();
  private readonly planner: Planner;
  /** ServiceSpecification key -> its spec.id and what its schema says of secrets. */
  private readonly specifications = new Map<
    string,
    { readonly id: string; readonly secrets: SchemaSecrets }
  >();
  /** spec.id -> the secret attributes every specification claiming that id marks, together. */
  private readonly secretsById = new Map<string, SpecSecrets>();
  private changes = 0;

  constructor(options: ServiceCatalogOptions = {}) {
    this.planner = new Planner(this.buckets, options);
  }

  get size(): number {
    return this.rows.size;
  }

  /** Moves on with every change a page could show; what was read at one version still holds. */
  get version(): number {
    return this.changes;
  }

  /** Loads what the informers hold and follows them; returns the function that stops that. */
  attach(
    services: WatchedKind<ServiceObject>,
    specifications: WatchedKind<SpecificationObject>,
  ): () => void {
    // Specifications first, so services are rendered once with their secret keys known.
    for (const object of specifications.cache.list()) this.upsertSpecification(object);
    for (const object of services.cache.list()) this.upsertService(object);
    const off = [
      specifications.on('add', (o) => this.upsertSpecification(o)),
      specifications.on('update', (o) => this.upsertSpecification(o)),
      specifications.on('delete', (o) => this.removeSpecification(o)),
      services.on('add', (o) => this.upsertService(o)),
      services.on('update', (o) => this.upsertService(o)),
      services.on('delete', (o) => this.removeService(o)),
    ];
    return () => {
      for (const stop of off) stop();
    };
  }

  get(namespace: string | undefined, name: string): CatalogEntry | undefined {
    return this.rows.get(keyOf({ name, ...(namespace ? { namespace } : {}) }))?.entry;
  }

  /** The secret attribute names of a specification id (sorted; empty when none or unknown). */
  secretKeys(specificationId: string): readonly string[] {
    return (this.secretsById.get(specificationId) ?? NO_SECRETS).keys;
  }

  upsertService(object: ServiceObject): void {
    const key = keyOf(object.metadata);
    let row = this.rows.get(key);
    if (row !== undefined && row.object === object) return; // an informer resync
    this.changes++;
    const spec = object.spec;
    const createdMs = timeOf(object.metadata.creationTimestamp);
    const uid = object.metadata.uid ?? '';
    if (row !== undefined && (row.createdMs !== createdMs || row.uid !== uid)) {
      // Deleted and made again under the same name: its place in every list moves. Unfiled
      // before its NRNs are looked up, as unfiling may prune the trie nodes they would find.
      this.buckets.unfile(row);
      row = undefined;
    }
    const entity = this.buckets.intern(spec?.entity_nrn);
    const links = this.buckets.linksOf(spec?.linkable_to, entity);
    const type = spec?.type;
    const status = object.status?.status;
    const specId = spec?.specification_id;
    if (row === undefined) {
      row = new Row(key, object, createdMs, uid, type, status, specId, entity, links);
      this.rows.set(key, row);
      this.buckets.file(row);
    } else {
      // Joins its new lists before leaving the old, so no node it keeps is pruned in between.
      this.buckets.move(row, type, status, entity, links);
      row.object = object;
      row.specId = specId;
    }
    row.entry = this.render(object);
  }

  removeService(object: Pick<ServiceObject, 'metadata'>): void {
    const key = keyOf(object.metadata);
    const row = this.rows.get(key);
    if (row === undefined) return;
    this.changes++;
    this.rows.delete(key);
    this.buckets.unfile(row);
  }

  upsertSpecification(object: SpecificationObject): void {
    const key = keyOf(object.metadata);
    const old = this.specifications.get(key);
    const id = object.spec?.id;
    if (id === undefined) {
      this.removeSpecification(object);
      return;
    }
    this.changes++;
    this.specifications.set(key, { id, secrets: secretsOfSchema(object.spec?.attributes?.schema) });
    if (old !== undefined && old.id !== id) this.refreshSecrets(old.id);
    this.refreshSecrets(id);
  }

  removeSpecification(object: Pick<SpecificationObject, 'metadata'>): void {
    const key = keyOf(object.metadata);
    const old = this.specifications.get(key);
    if (old === undefined) return;
    this.changes++;
    this.specifications.delete(key);
    this.refreshSecrets(old.id);
  }

  /** One page: the services matching every filter given, by created_at then id. */
  query(query: CatalogQuery): CatalogPage {
    const limit = Math.max(0, Math.floor(query.limit));
    const offset = Math.max(0, Math.floor(query.offset));
    if (limit === 0) return { entries: [] };
    const plan = this.planner.plan(query, offset + limit);
    return { entries: plan === undefined ? [] : readPage(plan, offset, limit) };
  }

  private render(object: ServiceObject): CatalogEntry {
    return entryOf(object, this.secretsOf(object.spec?.specification_id));
  }

  private secretsOf(specificationId: string | undefined): SpecSecrets {
    return specificationId === undefined
      ? NO_SECRETS
      : (this.secretsById.get(specificationId) ?? NO_SECRETS);
  }

  /**
   * Recomputes the secret keys of a specification id and, when they changed, re-renders its
   * services. A scan of all rows: specifications change rarely, and an index by
   * specification_id would cost every service memory for that.
   */
  private refreshSecrets(id: string): void {
    const secrets = secretsOfClaimants(this.claimantsOf(id));
    if (this.secretsOf(id).signature === secrets.signature) return;
    if (secrets.hidden === NOTHING_HIDDEN) this.secretsById.delete(id);
    else this.secretsById.set(id, secrets);
    for (const row of this.rows.values()) {
      if (row.specId === id) row.entry = this.render(row.object);
    }
  }

  /** What each specification claiming `id` says of secrets. */
  private *claimantsOf(id: string): Iterable<SchemaSecrets> {
    for (const specification of this.specifications.values()) {
      if (specification.id === id) yield specification.secrets;
    }
  }
}
