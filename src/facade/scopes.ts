// The scope side of the facade: POST /scope turned into a Scope resource (named
// `<application id>-<slug>` so the API server settles concurrent creates, with its id, slug,
// domain and NRN accepted in status before the answer), and a Scope resource turned back into
// the spec's Scope object for the answer and GET /scope/{id}.
import type { Logger } from 'pino';
import type {
  ApplicationSpec,
  ApplicationStatus,
  CreateScopeRequest,
  Scope,
  ScopeSpec,
  ScopeStatus,
} from '../api/index.js';
import { applicationById } from '../domain/applications.js';
import type { EventRecorder } from '../domain/event-recorder.js';
import { SCOPE_ID_LABEL, slugify } from '../domain/names.js';
import {
  accept,
  type IdAllocator,
  type Identity,
  identify,
  SCOPE_ID_INDEX,
  slugHolder,
} from '../domain/scopes/index.js';
import {
  type Informer,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type Kube,
  type KubeObject,
  type ResourceClient,
  Scopes,
} from '../kube/index.js';
import { FacadeError } from './errors.js';
import { kubeFailure } from './kube-errors.js';

type ScopeObject = KubeObject<ScopeSpec, ScopeStatus>;

/** How many times a status write that lost a race with the operator is tried again. */
const ACCEPT_ATTEMPTS = 5;

export interface ScopeStoreOptions {
  readonly kube: Pick<Kube, 'resource'>;
  readonly log: Logger;
  readonly applications: Informer<ApplicationSpec, ApplicationStatus>;
  /** Indexed by indexScopes and indexScopeIds (domain/scopes). */
  readonly scopes: Informer<ScopeSpec, ScopeStatus>;
  readonly ids: IdAllocator;
  readonly events: EventRecorder;
  readonly baseDomain: string;
  readonly now?: () => Date;
}

export class ScopeStore {
  private readonly client: ResourceClient<ScopeSpec, ScopeStatus>;
  private readonly now: () => Date;

  constructor(private readonly options: ScopeStoreOptions) {
    this.client = options.kube.resource(Scopes);
    this.now = options.now ?? (() => new Date());
  }

  /**
   * The namespace a new scope of this application goes to (the application's own), or
   * undefined when no application has the id. The route asks the caller's right before it
   * says which: a caller without it must not learn whether the application exists.
   */
  applicationNamespace(applicationId: number): string | undefined {
    const app = applicationById(this.options.applications, applicationId);
    if (app?.spec === undefined) return undefined;
    return app.metadata.namespace ?? 'default';
  }

  /**
   * Creates the scope and accepts it (`pending`, with id, slug, domain and NRN in status).
   * Nothing is left behind on failure: a resource whose acceptance fails is deleted again, and
   * an id allocated for a create that failed is a gap, never a duplicate.
   */
  async create(request: CreateScopeRequest): Promise<Scope> {
    const app = applicationById(this.options.applications, request.application_id);
    if (app?.spec === undefined) {
      throw new FacadeError(
        'APPLICATION_NOT_FOUND',
        `application ${request.application_id} does not exist`,
      );
    }
    const namespace = app.metadata.namespace ?? 'default';
    const slug = slugify(request.name);
    const holder = slugHolder(this.options.scopes, request.application_id, slug, undefined, app);
    if (holder !== undefined) throw alreadyExists(request, slug, holder);

    const id = await this.options.ids.allocate().catch((error: unknown) => {
      throw kubeFailure(error, 'allocating a scope id');
    });
    let created: ScopeObject;
    const name = `${request.application_id}-${slug}`;
    try {
      created = await this.client.create({
        metadata: {
          name,
          namespace,
          labels: { [SCOPE_ID_LABEL]: String(id) },
        },
        spec: request,
      });
    } catch (error) {
      if (isAlreadyExists(error)) {
        // Made since the cache last heard: read, to name it as the cache would have.
        const existing = await this.client.get({ namespace, name }).catch(() => undefined);
        throw alreadyExists(request, slug, existing ?? { metadata: { namespace, name } });
      }
      throw kubeFailure(error, 'creating the scope');
    }

    const identity = identify(app.spec, request.name, id, this.options.baseDomain);
    try {
      return scopeView(await this.accept(created, identity));
    } catch (error) {
      await this.undo(created);
      throw kubeFailure(error, 'accepting the scope');
    }
  }

  /** The scope with this id as it stands; the API is asked when the cache has not seen it yet. */
  async get(id: number): Promise<{ scope: Scope; namespace: string } | undefined> {
    const cached = this.options.scopes.byIndex(SCOPE_ID_INDEX, String(id))[0];
    let object: ScopeObject | undefined = cached;
    if (object === undefined) {
      // Right after a create the informer may lag; one labelled list settles it.
      const listed = await this.client
        .list({ labelSelector: `${SCOPE_ID_LABEL}=${id}`, limit: 10 })
        .catch((error: unknown) => {
          throw kubeFailure(error, 'reading the scope');
        });
      object = listed.items.find((s) => (s.status?.id ?? id) === id);
    }
    if (object === undefined) return undefined;
    return { scope: scopeView(object), namespace: object.metadata.namespace ?? 'default' };
  }

  /**
   * Writes `pending` with the identity, guarded by resourceVersion. The operator may get there
   * first (its finalizer or its own acceptance): then the write is retried on the fresh
   * object, unless the operator already gave the scope an id, which is then the answer.
   */
  private async accept(created: ScopeObject, identity: Identity): Promise<ScopeObject> {
    let scope = created;
    for (let attempt = 1; ; attempt++) {
      if (scope.status?.id !== undefined) return scope;
      try {
        const written = await accept(this.client, this.options.events, scope, identity, this.now());
        return written ?? scope;
      } catch (error) {
        if (!isConflict(error) || attempt >= ACCEPT_ATTEMPTS) throw error;
        scope = await this.client.get({
          namespace: scope.metadata.namespace ?? '',
          name: scope.metadata.name,
        });
      }
    }
  }

  /** Best effort: deletes exactly the object this request created (uid precondition). */
  private async undo(created: ScopeObject): Promise<void> {
    const ref = { namespace: created.metadata.namespace ?? '', name: created.metadata.name };
    try {
      await this.client.delete(ref, {
        preconditions: { uid: created.metadata.uid ?? '' },
      });
      // Every delete the operator's processes make is said (ADR 0028).
      this.options.log.warn(
        { scope: `${ref.namespace}/${ref.name}` },
        'scope of a failed create deleted',
      );
      this.options.events.record(
        created,
        'Warning',
        'Deleted',
        'deleted: the POST /scope that created it failed before it was accepted',
      );
    } catch (error) {
      if (isNotFound(error)) return;
      this.options.log.error(
        { err: error, scope: `${ref.namespace}/${ref.name}` },
        'scope of a failed create not deleted',
      );
    }
  }
}

/** The 409 naming the scope that holds the slug: its name, its id when it has one, its resource. */
function alreadyExists(
  request: CreateScopeRequest,
  slug: string,
  holder: {
    metadata: { namespace?: string; name: string };
    spec?: { name?: string };
    status?: { id?: number };
  },
): FacadeError {
  const { namespace, name } = holder.metadata;
  const named = holder.spec?.name !== undefined ? ` ${JSON.stringify(holder.spec.name)}` : '';
  const id = holder.status?.id !== undefined ? ` (id ${holder.status.id})` : '';
  return new FacadeError(
    'SCOPE_ALREADY_EXISTS',
    `application ${request.application_id} already has scope${named}${id}, resource ${namespace}/${name}, with slug ${slug}, which ${JSON.stringify(request.name)} would take`,
  );
}

/**
 * The spec's Scope object for a Scope resource. Defaults fill what the spec lists and the
 * resource leaves out; a field with no value is left out, never null. The spec's `messages`
 * object is what the caller sent, with the operator's lifecycle messages under `lifecycle`.
 */
export function scopeView(object: KubeObject<ScopeSpec, ScopeStatus>): Scope {
  const spec = object.spec;
  const status = object.status ?? {};
  const lifecycle = status.messages ?? [];
  const view: Scope = {
    ...(status.id !== undefined ? { id: status.id } : {}),
    ...(spec !== undefined
      ? {
          name: spec.name,
          type: spec.type,
          application_id: spec.application_id,
          requested_spec: spec.requested_spec,
          capabilities: spec.capabilities ?? {},
          messages: { ...(spec.messages ?? {}), ...(lifecycle.length > 0 ? { lifecycle } : {}) },
          external_created: spec.external_created ?? false,
          tags: spec.tags ?? [],
          profiles: spec.profiles ?? [],
          dimensions: spec.dimensions ?? {},
          ...(spec.tier !== undefined ? { tier: spec.tier } : {}),
          ...(spec.metadata !== undefined ? { metadata: spec.metadata } : {}),
        }
      : {}),
    status: status.status ?? 'pending',
    ...(status.slug !== undefined ? { slug: status.slug } : {}),
    ...(status.domain !== undefined ? { domain: status.domain } : {}),
    runtime_configurations: [],
  };
  return view;
}
