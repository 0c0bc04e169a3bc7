// The `namespace` provisioner of scope classes: applies what a scope's class renders for it
// (the namespace envelope, then its resources) server-side under one field manager, only the
// objects the caches do not show as desired (so a steady scope costs no request, and a child
// edited or deleted by hand is put back); never takes an object that exists and is not this
// scope's (ADR 0028: the scope fails naming the holder, whose object is left as it was);
// prunes what the scope's inventory holds and its class no longer makes; waits for the
// resources marked for it to be Current (kstatus); and on delete removes (or, by the class's
// policy, lets go of) everything in the inventory that carries the scope's uid, each removal
// told to `onRemoved` (an Event on the scope and a WARN line).
import type { ChildReference } from '../../../api/index.js';
import { computeKStatus } from '../../../domain/kstatus.js';
import {
  MANAGED_BY_LABEL,
  ORPHANED_ANNOTATION,
  ORPHANED_FROM_LABEL,
  SCOPE_ANNOTATION,
  SCOPE_UID_LABEL,
  scopeNamespaceName,
} from '../../../domain/names.js';
import type { Child, Manifest } from '../../../domain/scope-classes/children.js';
import {
  KIND_NOT_ALLOWED,
  type KindAllowlist,
  kindAllowlist,
  kindRefusal,
} from '../../../domain/scope-classes/kinds.js';
import { canonicallyEqual } from '../../../domain/status.js';
import {
  apiVersionOf,
  isAlreadyExists,
  isNotFound,
  type Kube,
  KubeApiError,
  type KubeObject,
  Namespaces,
  type ResourceClient,
  type ResourceType,
} from '../../../kube/index.js';
import type {
  MissingRight,
  Progress,
  Removal,
  Removed,
  ScopeProvisioner,
  ScopeTarget,
} from '../scope-provisioner.js';
import { type ChildInformers, ENVELOPE_KINDS, resourceKey, resourceName } from './informers.js';

export const FIELD_MANAGER = 'nrn-operator';
/** The reason a scope fails with when an object its class makes is someone else's. */
export const CHILD_TAKEN = 'ChildTaken';

type Failed = Extract<Progress, { state: 'failed' }>;
const SCOPE_DELETED = 'the scope is deleted';

/** A child with the resource that serves it, and its namespace filled in. */
interface Resolved {
  readonly child: Child;
  readonly type: ResourceType;
  readonly manifest: Manifest;
  readonly ref: ChildReference;
}

const refKey = (ref: ChildReference) =>
  `${ref.apiVersion}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;

export class ClassProvisioner implements ScopeProvisioner {
  readonly type = 'namespace';
  /** apiVersion/kind → its resource, once known (the envelope's from the start). */
  private readonly types = new Map<string, ResourceType>();
  private readonly clients = new Map<string, ResourceClient>();
  /**
   * The resourceVersion each child had after the operator's last apply of it, for the children
   * the API server wrote in another form than the manifest (a quantity, a defaulted list item):
   * the cached object at that version is as desired though `contains` says otherwise. Only
   * those: the others are told up to date by `contains` alone, and an entry per child of
   * every scope would cost more than the objects' own specs. Dropped with the scope.
   */
  private readonly applied = new Map<string, { version: string; manifest: Manifest }>();

  constructor(
    private readonly kube: Pick<Kube, 'resource' | 'mapper'>,
    private readonly informers: ChildInformers,
    /** Told of every object deleted or let go of, once the API server has taken the request. */
    private readonly onRemoved: (target: ScopeTarget, removed: Removed) => void = () => {},
    /** The kinds a class's resources may be (ADR 0029): held here too, for when no webhook ran. */
    private readonly kinds: KindAllowlist = kindAllowlist(),
  ) {
    for (const type of ENVELOPE_KINDS) {
      this.types.set(`${apiVersionOf(type)}/${type.kind}`, type);
    }
  }

  async ensure(target: ScopeTarget, signal?: AbortSignal): Promise<Progress> {
    const resolution = await this.resolveAll(target, signal);
    if ('state' in resolution) return resolution;
    const resolved = resolution;
    const namespace = resolved.find((r) => r.child.entry === 'namespace');
    let made = false;
    if (namespace !== undefined) {
      const outcome = await this.ensureNamespace(target, namespace, signal);
      if (outcome === 'made') made = true;
      // Someone else's namespace never goes on record: the first one there is the scope's for
      // good (ADR 0028), and a class fixed later must be free to render another name.
      else if (outcome !== 'ours') return { ...outcome, inventory: target.inventory };
    }
    const inventory = mergeInventory(target.inventory, resolved);
    const stale = resolved.filter((r) => !(made && r === namespace) && !this.upToDate(r));
    // The namespace first (the others live in it), then the rest side by side.
    const first = stale[0] === namespace && namespace !== undefined ? [namespace] : [];
    for (const batch of [first, stale.filter((r) => r !== namespace)]) {
      const results = await Promise.allSettled(
        batch.map((r) =>
          r === namespace
            ? this.apply(r, signal)
            : this.applyOwned(target, r, made ? namespace?.ref.name : undefined, signal),
        ),
      );
      // What is someone else's never goes on record, so nothing of this scope's deletes it.
      const taken = new Set<string>();
      let failure: Failed | undefined;
      for (const [index, result] of results.entries()) {
        const r = batch[index] as Resolved;
        if (result.status === 'rejected') failure ??= refusedBy(result.reason, r);
        else if (result.value !== undefined) {
          taken.add(refKey(r.ref));
          failure ??= result.value;
        }
      }
      if (failure !== undefined) {
        const known = new Set(target.inventory.map(refKey));
        return {
          ...failure,
          inventory: inventory.filter((ref) => !taken.has(refKey(ref)) || known.has(refKey(ref))),
        };
      }
    }
    const desired = new Set(resolved.map((r) => refKey(r.ref)));
    const pruned = await this.prune(
      target,
      target.inventory.filter((ref) => !desired.has(refKey(ref))),
      signal,
    );
    if (pruned !== undefined) return { ...pruned, inventory };
    const done: Progress = {
      state: 'ready',
      outputs:
        target.envelopeNamespace !== undefined ? { namespace: target.envelopeNamespace } : {},
      inventory: resolved.map((r) => r.ref),
    };
    return this.waiting(resolved, done) ?? done;
  }

  peek(target: ScopeTarget): Progress | undefined {
    const resolved: Resolved[] = [];
    for (const child of target.children) {
      const type = this.types.get(`${child.manifest.apiVersion}/${child.manifest.kind}`);
      if (type === undefined || this.notAllowed(child, type) !== undefined) return undefined;
      resolved.push(resolve(child, type, target));
    }
    const namespace = resolved.find((r) => r.child.entry === 'namespace');
    if (namespace !== undefined) {
      const cached = this.informers.cached(Namespaces, undefined, namespace.ref.name);
      if (cached === undefined) return undefined;
      const refused = refusal(target, cached);
      if (refused !== undefined) return refused;
    }
    // Up to date includes carrying this scope's uid: a child someone else holds is not.
    if (!resolved.every((r) => this.upToDate(r))) return undefined;
    const desired = new Set(resolved.map((r) => refKey(r.ref)));
    if (target.inventory.some((ref) => !desired.has(refKey(ref)))) return undefined;
    const done: Progress = {
      state: 'ready',
      outputs:
        target.envelopeNamespace !== undefined ? { namespace: target.envelopeNamespace } : {},
      inventory: resolved.map((r) => r.ref),
    };
    return this.waiting(resolved, done) ?? done;
  }

  async remove(
    target: ScopeTarget,
    signal?: AbortSignal,
    removal: Removal = 'delete',
  ): Promise<Progress> {
    const refs = new Map<string, ChildReference>();
    for (const ref of target.inventory) refs.set(refKey(ref), ref);
    // Made before inventories were recorded: the namespace of the first provisioner.
    if (refs.size === 0) {
      const ref = { apiVersion: 'v1', kind: 'Namespace', name: scopeNamespaceName(target.id) };
      refs.set(refKey(ref), ref);
    }
    // What lives in a namespace being removed goes with it: one request instead of many.
    const namespaces = new Set(
      [...refs.values()].filter((ref) => ref.kind === 'Namespace').map((ref) => ref.name),
    );
    // A namespace kept (a class change) or orphaned (the deletion policy) takes nothing along:
    // what the operator made in it is deleted, or let go of, one by one.
    const outside = [...refs.values()].filter(
      (ref) =>
        removal !== 'delete' || ref.namespace === undefined || !namespaces.has(ref.namespace),
    );
    // Namespaces last: a cluster-scoped child may be what something in them needs.
    outside.sort((a, b) => Number(a.kind === 'Namespace') - Number(b.kind === 'Namespace'));
    const why = removal === 'keep-namespaces' ? 'its class changed' : SCOPE_DELETED;
    const left: string[] = [];
    for (const ref of outside) {
      const orphan = removal === 'orphan' || (removal === 'keep-namespaces' && isNamespace(ref));
      const state = orphan
        ? await this.orphanOne(target, ref, why, signal)
        : await this.removeOne(target, ref, why, signal);
      if (state === 'gone') continue;
      if (typeof state === 'object') return state;
      left.push(`${ref.kind} ${ref.namespace !== undefined ? `${ref.namespace}/` : ''}${ref.name}`);
    }
    for (const ref of refs.values()) this.applied.delete(refKey(ref));
    if (left.length === 0) return { state: 'ready', inventory: [] };
    return {
      state: 'in_progress',
      message: `waiting for ${left.join(', ')} to be deleted`,
      retryAfterMs: 250,
    };
  }

  /** Every child's resource, or why one has none (a kind the API server does not serve). */
  private async resolveAll(
    target: ScopeTarget,
    signal: AbortSignal | undefined,
  ): Promise<Resolved[] | Extract<Progress, { state: 'failed' }>> {
    const resolved: Resolved[] = [];
    for (const child of target.children) {
      const { apiVersion, kind } = child.manifest;
      let type = this.types.get(`${apiVersion}/${kind}`);
      if (type === undefined) {
        try {
          type = await this.kube.mapper.resourceFor(apiVersion, kind, signal);
        } catch (error) {
          if (error instanceof KubeApiError && !error.transient) {
            return failure(`${child.entry}: ${error.message}`, error);
          }
          throw error;
        }
        if (type === undefined) {
          return {
            state: 'failed',
            reason: 'ProvisionRefused',
            message: `${child.entry}: the API server serves no kind ${kind} in ${apiVersion}`,
          };
        }
      }
      // Before it is cached or watched: peek() trusts only kinds resolveAll let through.
      const notAllowed = this.notAllowed(child, type);
      if (notAllowed !== undefined) return notAllowed;
      this.types.set(`${apiVersion}/${kind}`, type);
      this.informers.informerFor(type);
      // Without list and watch the operator cannot see drift, nor tell when the child is gone.
      const refused = await this.informers.refusal(type, signal);
      if (refused !== undefined) {
        return {
          state: 'failed',
          reason: 'Forbidden',
          message: `${child.entry}: the operator may not ${refused.verb} ${refused.resource}: ${refused.message}`,
          missingRight: { verb: refused.verb, resource: refused.resource },
        };
      }
      resolved.push(resolve(child, type, target));
    }
    return resolved;
  }

  /** The class's resource is of a kind the operator's setting refuses (the envelope never is). */
  private notAllowed(child: Child, type: ResourceType): Failed | undefined {
    if (!child.entry.startsWith('resources.')) return undefined;
    const message = kindRefusal(this.kinds, child.entry, type);
    return message !== undefined
      ? { state: 'failed', reason: KIND_NOT_ALLOWED, message }
      : undefined;
  }

  /**
   * The envelope's namespace, ours or made now. Not in the cache of ours: create it, which
   * also says whether someone else's has the name (409), in one request instead of a read
   * and then an apply.
   */
  private async ensureNamespace(
    target: ScopeTarget,
    namespace: Resolved,
    signal: AbortSignal | undefined,
  ): Promise<'ours' | 'made' | Exclude<Progress, { state: 'ready' }>> {
    let current = this.informers.cached(Namespaces, undefined, namespace.ref.name);
    let made = false;
    if (current === undefined) {
      try {
        current = await this.client(Namespaces).create(namespace.manifest, {
          fieldManager: FIELD_MANAGER,
          ...(signal !== undefined ? { signal } : {}),
        });
        made = true;
      } catch (error) {
        if (!isAlreadyExists(error)) return refusedBy(error, namespace);
        current = await this.read(Namespaces, undefined, namespace.ref.name, signal);
      }
    }
    // Let go of by this very scope (its class changed, and back): taken back, marks and all.
    if (current?.metadata.labels?.[ORPHANED_FROM_LABEL] === target.uid) {
      current = await this.client(Namespaces).patch(
        { name: namespace.ref.name },
        {
          metadata: {
            uid: current.metadata.uid,
            resourceVersion: current.metadata.resourceVersion,
            labels: { ...namespace.manifest.metadata.labels, [ORPHANED_FROM_LABEL]: null },
            annotations: { [ORPHANED_ANNOTATION]: null },
          },
        },
        { type: 'merge', ...(signal !== undefined ? { signal } : {}) },
      );
    }
    return refusal(target, current) ?? (made ? 'made' : 'ours');
  }

  /**
   * Deletes what the class no longer makes (a namespace: lets go of it); a failure to report,
   * or undefined when done.
   */
  private async prune(
    target: ScopeTarget,
    refs: readonly ChildReference[],
    signal: AbortSignal | undefined,
  ): Promise<Exclude<Progress, { state: 'ready' }> | undefined> {
    const why = 'its class no longer makes it';
    for (const ref of refs) {
      // A namespace is never deleted by a change: it may hold what the operator did not make.
      const state = isNamespace(ref)
        ? await this.orphanOne(target, ref, why, signal)
        : await this.removeOne(target, ref, why, signal);
      if (typeof state === 'object') return state;
      this.applied.delete(refKey(ref));
    }
    return undefined;
  }

  /** Deletes one child when it carries the scope's uid: 'gone' once it is not there. */
  private async removeOne(
    target: ScopeTarget,
    ref: ChildReference,
    why: string,
    signal: AbortSignal | undefined,
  ): Promise<'gone' | 'deleting' | Failed> {
    const found = await this.ownedChild(target, ref, signal);
    if (found === 'gone') return 'gone';
    const { type, current } = found;
    if (current.metadata.deletionTimestamp !== undefined) return 'deleting';
    try {
      await this.client(type).delete(
        { name: ref.name, ...(ref.namespace !== undefined ? { namespace: ref.namespace } : {}) },
        {
          preconditions: { uid: current.metadata.uid ?? '' },
          ...(signal !== undefined ? { signal } : {}),
        },
      );
    } catch (error) {
      if (isNotFound(error)) return 'gone';
      if (error instanceof KubeApiError && error.code === 403) {
        return failure(`${ref.kind} ${ref.name}: ${error.message}`, error, {
          verb: 'delete',
          resource: resourceName(type),
        });
      }
      throw error;
    }
    this.onRemoved(target, { action: 'Deleted', ref, why, requested: why === SCOPE_DELETED });
    return 'deleting';
  }

  /**
   * Lets go of one child that carries the scope's uid: its marks are taken off (so no scope
   * deletes or prunes it again) and it says whose it was; 'gone' once it is not the scope's.
   */
  private async orphanOne(
    target: ScopeTarget,
    ref: ChildReference,
    why: string,
    signal: AbortSignal | undefined,
  ): Promise<'gone' | Failed> {
    const found = await this.ownedChild(target, ref, signal);
    if (found === 'gone') return 'gone';
    const { type, current } = found;
    try {
      await this.client(type).patch(
        { name: ref.name, ...(ref.namespace !== undefined ? { namespace: ref.namespace } : {}) },
        {
          metadata: {
            // Guarded: an object replaced meanwhile is not ours to relabel.
            uid: current.metadata.uid,
            resourceVersion: current.metadata.resourceVersion,
            labels: {
              [SCOPE_UID_LABEL]: null,
              [MANAGED_BY_LABEL]: null,
              [ORPHANED_FROM_LABEL]: target.uid,
            },
            annotations: {
              [ORPHANED_ANNOTATION]: `kept when ${why}: was scope ${target.key} (id ${target.id})`,
            },
          },
        },
        { type: 'merge', ...(signal !== undefined ? { signal } : {}) },
      );
    } catch (error) {
      if (isNotFound(error)) return 'gone';
      if (error instanceof KubeApiError && error.code === 403) {
        return failure(`${ref.kind} ${ref.name}: ${error.message}`, error, {
          verb: 'patch',
          resource: resourceName(type),
        });
      }
      throw error;
    }
    this.onRemoved(target, { action: 'Orphaned', ref, why, requested: why === SCOPE_DELETED });
    return 'gone';
  }

  /** The child as it is now when it carries the scope's uid; 'gone' when it does not. */
  private async ownedChild(
    target: ScopeTarget,
    ref: ChildReference,
    signal: AbortSignal | undefined,
  ): Promise<'gone' | { type: ResourceType; current: KubeObject }> {
    const type =
      this.types.get(`${ref.apiVersion}/${ref.kind}`) ??
      (await this.kube.mapper.resourceFor(ref.apiVersion, ref.kind, signal));
    // A kind no longer served: nothing of it can be left.
    if (type === undefined) return 'gone';
    // The informer's cache once it has listed (no read, and no `get` right needed); else a read.
    const current = this.informers.synced(type)
      ? this.informers.cached(type, ref.namespace, ref.name)
      : await this.read(type, ref.namespace, ref.name, signal);
    // Never touch what this scope does not own (a reused name, a hand-made object).
    if (current === undefined || current.metadata.labels?.[SCOPE_UID_LABEL] !== target.uid) {
      return 'gone';
    }
    return { type, current };
  }

  /**
   * Applies a child unless it exists and is not this scope's: a failure naming the holder
   * then (the holder's object untouched), undefined once applied. The cache tells whose a
   * child is, at no cost; one it does not show (or not yet: a kind's informer still making its
   * first list) is read first (a list by name), unless it goes in a namespace this very pass
   * created, where nothing else can be yet. So a new
   * scope's envelope costs what it did, a settled scope nothing, and the write stays a
   * server-side apply (the fields are the manager's `Apply`, pruned when the class drops them).
   */
  private async applyOwned(
    target: ScopeTarget,
    r: Resolved,
    freshNamespace: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Failed | undefined> {
    const fresh = freshNamespace !== undefined && r.ref.namespace === freshNamespace;
    const existing =
      this.informers.cached(r.type, r.ref.namespace, r.ref.name) ??
      (fresh ? undefined : await this.read(r.type, r.ref.namespace, r.ref.name, signal));
    if (existing !== undefined) {
      const taken = takenFrom(target, r, existing);
      if (taken !== undefined) return taken;
    }
    await this.apply(r, signal);
    return undefined;
  }

  /**
   * The object as the API server has it now, or undefined when there is none: a list by name,
   * since what a class names is granted list (its informer) but not always get.
   */
  private async read(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    signal: AbortSignal | undefined,
  ): Promise<KubeObject | undefined> {
    const list = await this.client(type).list({
      ...(namespace !== undefined ? { namespace } : {}),
      fieldSelector: `metadata.name=${name}`,
      ...(signal !== undefined ? { signal } : {}),
    });
    return list.items[0];
  }

  /** Applied; its resourceVersion remembered when the server changed its form. */
  private async apply(r: Resolved, signal: AbortSignal | undefined): Promise<void> {
    const written = await this.client(r.type).apply(r.manifest, {
      fieldManager: FIELD_MANAGER,
      force: true,
      ...(signal !== undefined ? { signal } : {}),
    });
    this.remember(r, written);
  }

  /** Its resourceVersion kept when the server wrote it in another form than the manifest. */
  private remember(r: Resolved, written: KubeObject): void {
    const key = refKey(r.ref);
    const version = written.metadata.resourceVersion;
    if (version !== undefined && !contains(written, r.manifest)) {
      this.applied.set(key, { version, manifest: r.manifest });
    } else {
      this.applied.delete(key);
    }
  }

  /** The cached child holds what the operator means it to: nothing to write. */
  private upToDate(r: Resolved): boolean {
    const found = this.informers.cached(r.type, r.ref.namespace, r.ref.name);
    if (found === undefined || found.metadata.deletionTimestamp !== undefined) return false;
    const applied = this.applied.get(refKey(r.ref));
    return (
      (applied !== undefined &&
        applied.version === found.metadata.resourceVersion &&
        canonicallyEqual(applied.manifest, r.manifest)) ||
      contains(found, r.manifest)
    );
  }

  /** In progress while a child waited for is not Current; undefined when none is left. */
  private waiting(resolved: readonly Resolved[], done: Progress): Progress | undefined {
    for (const r of resolved) {
      if (!r.child.waitFor) continue;
      const status = computeKStatus(this.informers.cached(r.type, r.ref.namespace, r.ref.name));
      if (status.status !== 'Current') {
        return {
          state: 'in_progress',
          message: `waiting for ${r.child.entry} (${r.ref.kind} ${r.ref.name}) to be Current: ${status.status}${status.message !== '' ? `, ${status.message}` : ''}`,
          retryAfterMs: 2000,
          ...(done.inventory !== undefined ? { inventory: done.inventory } : {}),
        };
      }
    }
    return undefined;
  }

  private client(type: ResourceType): ResourceClient {
    const key = resourceKey(type);
    let client = this.clients.get(key);
    if (client === undefined) {
      client = this.kube.resource(type);
      this.clients.set(key, client);
    }
    return client;
  }
}

/** The child with its namespace: the envelope's when its kind is namespaced and it names none. */
function resolve(child: Child, type: ResourceType, target: ScopeTarget): Resolved {
  let manifest = child.manifest;
  if (!type.namespaced) {
    const { namespace: _dropped, ...metadata } = manifest.metadata;
    manifest = { ...manifest, metadata };
  } else if (manifest.metadata.namespace === undefined && target.envelopeNamespace !== undefined) {
    manifest = {
      ...manifest,
      metadata: { ...manifest.metadata, namespace: target.envelopeNamespace },
    };
  }
  const namespace = manifest.metadata.namespace;
  return {
    child,
    type,
    manifest,
    ref: {
      apiVersion: manifest.apiVersion,
      kind: manifest.kind,
      ...(namespace !== undefined ? { namespace } : {}),
      name: manifest.metadata.name,
    },
  };
}

/** Previous inventory and what is about to be applied: everything that may exist now. */
function mergeInventory(
  previous: readonly ChildReference[],
  resolved: readonly Resolved[],
): ChildReference[] {
  const merged = new Map<string, ChildReference>();
  for (const ref of previous) merged.set(refKey(ref), ref);
  for (const r of resolved) merged.set(refKey(r.ref), r.ref);
  return [...merged.values()];
}

const isNamespace = (ref: ChildReference) => ref.apiVersion === 'v1' && ref.kind === 'Namespace';

/** Who holds an object that is not this scope's, in words. */
function holderOf(object: KubeObject): string {
  const labels = object.metadata.labels ?? {};
  const uid = labels[SCOPE_UID_LABEL];
  if (uid !== undefined) {
    const scope = object.metadata.annotations?.[SCOPE_ANNOTATION];
    return `it belongs to scope ${scope ?? '(unknown)'} (uid ${uid})`;
  }
  const orphaned = labels[ORPHANED_FROM_LABEL];
  if (orphaned !== undefined) return `it was let go of by scope uid ${orphaned}`;
  return 'it was not made by nrn-operator for a scope';
}

/** The scope fails, naming the object and its holder, when `existing` is not this scope's. */
function takenFrom(target: ScopeTarget, r: Resolved, existing: KubeObject): Failed | undefined {
  if (existing.metadata.labels?.[SCOPE_UID_LABEL] === target.uid) return undefined;
  const where = `${r.ref.kind} ${r.ref.namespace !== undefined ? `${r.ref.namespace}/` : ''}${r.ref.name}`;
  return {
    state: 'failed',
    reason: CHILD_TAKEN,
    message: `${r.child.entry} (${where}) exists and ${holderOf(existing)}; the scope takes nothing it did not make: rename it in the class (a per-scope placeholder such as \${scope.id}) or remove the holder's object`,
  };
}

/** Why the scope's namespace cannot be used as it is, if it cannot. */
function refusal(
  target: ScopeTarget,
  existing: KubeObject | undefined,
): Exclude<Progress, { state: 'ready' }> | undefined {
  if (existing === undefined) return undefined;
  const name = existing.metadata.name;
  if (existing.metadata.labels?.[SCOPE_UID_LABEL] !== target.uid) {
    return {
      state: 'failed',
      reason: 'NamespaceTaken',
      message: `namespace ${name} exists and does not belong to this scope: ${holderOf(existing)}`,
    };
  }
  if (existing.metadata.deletionTimestamp !== undefined) {
    return {
      state: 'in_progress',
      message: `namespace ${name} is terminating`,
      retryAfterMs: 1000,
    };
  }
  return undefined;
}

/**
 * `desired` is within `actual`: every field it sets holds the same value there. Lists must
 * match element by element: a list the operator sets is the operator's whole.
 */
export function contains(actual: unknown, desired: unknown): boolean {
  if (desired === null || typeof desired !== 'object') return actual === desired;
  if (Array.isArray(desired)) {
    return (
      Array.isArray(actual) &&
      actual.length === desired.length &&
      desired.every((item, index) => contains(actual[index], item))
    );
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  const record = actual as Record<string, unknown>;
  const wanted = desired as Record<string, unknown>;
  // for...in, not Object.entries: this runs for every child of every scope reconciled, and
  // the entries arrays were a tenth of what a burst of scopes allocated.
  for (const key in wanted) {
    if (Object.hasOwn(wanted, key) && !contains(record[key], wanted[key])) return false;
  }
  return true;
}

function failure(
  message: string,
  error: KubeApiError,
  missingRight?: MissingRight,
): Extract<Progress, { state: 'failed' }> {
  return {
    state: 'failed',
    reason: error.code === 403 ? 'Forbidden' : 'ProvisionRefused',
    message,
    ...(missingRight !== undefined ? { missingRight } : {}),
  };
}

/**
 * A refusal (400, 403, 422) will not fix itself: `failed`, naming the child. Conflicts, 5xx
 * and network errors are thrown on, for the work queue to retry with backoff.
 */
function refusedBy(error: unknown, r: Resolved): Extract<Progress, { state: 'failed' }> {
  if (
    error instanceof KubeApiError &&
    !error.transient &&
    error.code !== 409 &&
    error.code !== 404
  ) {
    const where = `${r.child.entry} (${r.ref.kind} ${r.ref.namespace !== undefined ? `${r.ref.namespace}/` : ''}${r.ref.name})`;
    return failure(
      `${where}: ${error.reason}: ${error.message}`,
      error,
      error.code === 403 ? { verb: 'patch', resource: resourceName(r.type) } : undefined,
    );
  }
  throw error;
}
