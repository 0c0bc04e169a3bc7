// The control loops a real cluster runs beside its API server, reduced to what this one
// needs: owner-reference garbage collection (background, foreground, orphan), namespace
// termination, CRD registration and the cleanup of a deleted CRD's objects.
import type { Logger } from 'pino';
import { CRD_CLEANUP_FINALIZER, CRD_TYPE } from './kinds/customresourcedefinition.js';
import { NAMESPACE_TYPE, namespaceDeletionConditions } from './kinds/namespace.js';
import type { Objects, WriteListener } from './objects.js';
import { clone } from './patch/util.js';
import { type Registry, typesOfCrd } from './registry.js';
import { type ResourceType, storageKeyOf } from './resource-type.js';
import type { KubeObject } from './types.js';
import type { ChangeEvent } from './watch.js';

type Task =
  | { kind: 'dependents'; uid: string }
  | { kind: 'namespace'; name: string }
  | { kind: 'crd'; name: string }
  | { kind: 'foreground'; ref: ObjectRef }
  | { kind: 'orphan'; ref: ObjectRef };

interface ObjectRef {
  resource: string;
  namespace: string;
  name: string;
}

const refKey = (r: ObjectRef) => `${r.resource}\u0000${r.namespace}\u0000${r.name}`;
const taskKey = (t: Task) =>
  t.kind === 'dependents'
    ? `d:${t.uid}`
    : 'ref' in t
      ? `${t.kind}:${refKey(t.ref)}`
      : `${t.kind}:${t.name}`;

const SYSTEM = { fieldValidation: 'Ignore' as const, dryRun: false, warnings: [] };

/**
 * The namespace controller's namespaceDeletionGracePeriod (pkg/controller/namespace): it starts
 * emptying a deleted namespace 5 s after it sees it Terminating. Clients rely on that window:
 * `kubectl delete -f` of a set holding its Namespace deletes the rest of the set in it.
 */
export const NAMESPACE_DELETION_GRACE_MS = 5_000;

/** The bootstrap controller's SystemNamespaces (pkg/controlplane/controller/systemnamespaces). */
const SYSTEM_NAMESPACES: ReadonlySet<string> = new Set([
  'kube-system',
  'kube-public',
  'kube-node-lease',
]);

export interface HousekeepingOptions {
  /** How long a Terminating namespace keeps its content before it is emptied. */
  readonly namespaceDeletionGraceMs?: number;
}

export class Housekeeping implements WriteListener {
  /** Live objects by uid, and the dependents of each owner uid. */
  private readonly byUid = new Map<string, ObjectRef>();
  private readonly dependents = new Map<string, Set<string>>();
  private readonly refs = new Map<string, ObjectRef>();
  private readonly queue: Task[] = [];
  private readonly queued = new Set<string>();
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Terminating namespaces by name: when their grace ends, and the timer that ends it. */
  private readonly graces = new Map<string, { due: number; timer: NodeJS.Timeout }>();
  private readonly namespaceDeletionGraceMs: number;

  constructor(
    private readonly objects: Objects,
    private readonly registry: Registry,
    private readonly log: Logger,
    options: HousekeepingOptions = {},
  ) {
    this.namespaceDeletionGraceMs = options.namespaceDeletionGraceMs ?? NAMESPACE_DELETION_GRACE_MS;
    objects.listen(this);
  }

  /**
   * Indexes what is stored and resumes work a crash interrupted. An object this cannot read
   * (stored by an older version, before its metadata was checked) is handed to `invalid` and
   * left out, so that one bad record never keeps the rest from being served.
   */
  start(
    stored: Iterable<{ type: ResourceType; object: KubeObject }>,
    invalid: (object: KubeObject, type: ResourceType, error: unknown) => void,
  ): void {
    for (const record of stored) {
      try {
        this.index(storageKeyOf(record.type), undefined, record.object);
        this.resume(record.type, record.object);
      } catch (error) {
        invalid(record.object, record.type, error);
      }
    }
    // Dependents whose owners vanished while we were down.
    for (const owner of this.dependents.keys()) {
      if (!this.byUid.has(owner)) this.enqueue({ kind: 'dependents', uid: owner });
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.graces.values()) clearTimeout(timer);
    this.graces.clear();
    await this.running;
  }

  /**
   * Resolves when no work is queued (tests and shutdown use it), namespaces still in their
   * deletion grace included.
   */
  async idle(): Promise<void> {
    const waiting = () => [...this.graces.values()].some((grace) => grace.due > 0);
    while (this.running !== undefined || waiting()) {
      if (this.running !== undefined) await this.running;
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  committed(
    event: ChangeEvent,
    before: KubeObject | undefined,
    after: KubeObject | undefined,
  ): void {
    this.index(event.resource, before, after);
    if (event.resource === storageKeyOf(CRD_TYPE)) this.crdChanged(event.name, after);
    if (after === undefined) {
      const uid = before?.metadata.uid;
      if (uid !== undefined) this.enqueue({ kind: 'dependents', uid });
      this.afterDelete(event, before);
      return;
    }
    const type = this.registry.forStorageKey(event.resource);
    if (type !== undefined) this.resume(type, after);
  }

  // --- indexes ----------------------------------------------------------------------------

  private index(
    resource: string,
    before: KubeObject | undefined,
    after: KubeObject | undefined,
  ): void {
    const object = after ?? before;
    if (object === undefined) return;
    const ref: ObjectRef = {
      resource,
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name ?? '',
    };
    const key = refKey(ref);
    for (const owner of ownersOf(before)) this.dependents.get(owner)?.delete(key);
    if (before?.metadata.uid !== undefined) this.byUid.delete(before.metadata.uid);
    if (after === undefined) {
      this.refs.delete(key);
      return;
    }
    this.refs.set(key, ref);
    if (after.metadata.uid !== undefined) this.byUid.set(after.metadata.uid, ref);
    for (const owner of ownersOf(after)) {
      const set = this.dependents.get(owner) ?? new Set<string>();
      set.add(key);
      this.dependents.set(owner, set);
    }
  }

  private crdChanged(name: string, crd: KubeObject | undefined): void {
    if (crd === undefined) {
      this.registry.removeCrd(name);
    } else if (crd.metadata.deletionTimestamp === undefined) {
      this.registry.setCrd(name, typesOfCrd(crd));
    }
  }

  /** Work an object in its current state calls for. */
  private resume(type: ResourceType, object: KubeObject): void {
    if (object.metadata.deletionTimestamp === undefined) return;
    const finalizers = object.metadata.finalizers ?? [];
    const ref = this.refOf(type, object);
    if (type === NAMESPACE_TYPE) this.namespaceTerminating(ref.name);
    if (type === CRD_TYPE) this.enqueue({ kind: 'crd', name: ref.name });
    if (finalizers.includes('foregroundDeletion')) this.enqueue({ kind: 'foreground', ref });
    if (finalizers.includes('orphan')) this.enqueue({ kind: 'orphan', ref });
  }

  /** A namespace seen Terminating: emptied once its grace has passed (once per deletion). */
  private namespaceTerminating(name: string): void {
    if (this.graces.has(name)) return;
    if (this.namespaceDeletionGraceMs <= 0) {
      this.enqueue({ kind: 'namespace', name });
      return;
    }
    const timer = setTimeout(() => {
      const grace = this.graces.get(name);
      if (grace?.timer !== timer) return;
      grace.due = 0;
      this.enqueue({ kind: 'namespace', name });
    }, this.namespaceDeletionGraceMs);
    timer.unref();
    this.graces.set(name, { due: Date.now() + this.namespaceDeletionGraceMs, timer });
  }

  private afterDelete(event: ChangeEvent, before: KubeObject | undefined): void {
    // The API server's bootstrap controller keeps its system namespaces: one deleted (only
    // kube-node-lease can be) is made again.
    if (event.resource === storageKeyOf(NAMESPACE_TYPE) && SYSTEM_NAMESPACES.has(event.name)) {
      // After this write has answered, as the bootstrap controller would, from outside it.
      setImmediate(() => this.recreateNamespace(event.name));
    }
    if (event.namespace !== '') {
      const ns = this.objects.find(NAMESPACE_TYPE, '', event.namespace);
      if (ns?.metadata.deletionTimestamp !== undefined)
        this.enqueue({ kind: 'namespace', name: event.namespace });
    }
    // A foreground owner waits for its last dependent.
    for (const owner of ownersOf(before)) {
      const ref = this.byUid.get(owner);
      if (ref !== undefined) this.enqueue({ kind: 'foreground', ref });
    }
    for (const crdType of this.registry.all()) {
      if (crdType.custom && storageKeyOf(crdType) === event.resource) {
        const crdName = `${crdType.resource}.${crdType.group}`;
        const crd = this.objects.find(CRD_TYPE, '', crdName);
        if (crd?.metadata.deletionTimestamp !== undefined)
          this.enqueue({ kind: 'crd', name: crdName });
        break;
      }
    }
  }

  private recreateNamespace(name: string): void {
    if (this.stopped || this.objects.find(NAMESPACE_TYPE, '', name) !== undefined) return;
    try {
      this.objects.create(
        NAMESPACE_TYPE,
        '',
        { metadata: { name } },
        {
          ...SYSTEM,
          fieldManager: 'kube-apiserver',
        },
      );
    } catch (error) {
      this.log.warn({ err: error, namespace: name }, 'system namespace not made again');
    }
  }

  private refOf(type: ResourceType, object: KubeObject): ObjectRef {
    return {
      resource: storageKeyOf(type),
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name ?? '',
    };
  }

  private typeOf(resource: string): ResourceType | undefined {
    return this.registry.forStorageKey(resource);
  }

  // --- the work loop ----------------------------------------------------------------------

  private enqueue(task: Task): void {
    const key = taskKey(task);
    if (this.stopped || this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(task);
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  private async drain(): Promise<void> {
    // Let the write that queued the work answer its client first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (
      let task = this.queue.shift();
      task !== undefined && !this.stopped;
      task = this.queue.shift()
    ) {
      this.queued.delete(taskKey(task));
      try {
        await this.run(task);
      } catch (error) {
        this.log.warn({ err: error, task }, 'housekeeping task failed; retrying');
        setTimeout(() => this.enqueue(task), 200).unref();
      }
    }
  }

  private async run(task: Task): Promise<void> {
    switch (task.kind) {
      case 'dependents':
        return this.collectDependents(task.uid);
      case 'namespace':
        return this.terminateNamespace(task.name);
      case 'crd':
        return this.cleanUpCrd(task.name);
      case 'foreground':
        return this.foreground(task.ref);
      case 'orphan':
        return this.orphan(task.ref);
    }
  }

  private async writeAll(results: Array<{ durable?: Promise<void> }>): Promise<void> {
    await Promise.all(results.map((r) => r.durable));
  }

  private dependentsOf(uid: string): Array<{ type: ResourceType; object: KubeObject }> {
    const out: Array<{ type: ResourceType; object: KubeObject }> = [];
    for (const key of this.dependents.get(uid) ?? []) {
      const ref = this.refs.get(key);
      const type = ref && this.typeOf(ref.resource);
      const object = ref && type && this.objects.find(type, ref.namespace, ref.name);
      if (type && object) out.push({ type, object });
    }
    return out;
  }

  /** An owner is gone: delete each dependent none of whose owners remain. */
  private async collectDependents(uid: string): Promise<void> {
    if (this.byUid.has(uid)) return;
    const writes = [];
    for (const { type, object } of this.dependentsOf(uid)) {
      if (object.metadata.deletionTimestamp !== undefined) continue;
      if (ownersOf(object).some((owner) => this.byUid.has(owner))) continue;
      writes.push(
        this.objects.delete(type, object.metadata.namespace ?? '', object.metadata.name ?? '', {
          dryRun: false,
          propagationPolicy: 'Background',
        }),
      );
    }
    if (writes.length === 0) this.dependents.delete(uid);
    await this.writeAll(writes);
  }

  private async foreground(ref: ObjectRef): Promise<void> {
    const type = this.typeOf(ref.resource);
    const owner = type && this.objects.find(type, ref.namespace, ref.name);
    if (!type || !owner || owner.metadata.deletionTimestamp === undefined) return;
    const remaining = this.dependentsOf(owner.metadata.uid ?? '');
    const writes = remaining
      .filter(({ object }) => object.metadata.deletionTimestamp === undefined)
      .map(({ type: t, object }) =>
        this.objects.delete(t, object.metadata.namespace ?? '', object.metadata.name ?? '', {
          dryRun: false,
          propagationPolicy: 'Foreground',
        }),
      );
    await this.writeAll(writes);
    if (remaining.length === 0) await this.dropFinalizer(type, owner, 'foregroundDeletion');
  }

  private async orphan(ref: ObjectRef): Promise<void> {
    const type = this.typeOf(ref.resource);
    const owner = type && this.objects.find(type, ref.namespace, ref.name);
    if (!type || !owner) return;
    const uid = owner.metadata.uid ?? '';
    const writes = this.dependentsOf(uid).map(({ type: t, object }) => {
      const next = clone(object);
      next.metadata.ownerReferences = (next.metadata.ownerReferences ?? []).filter(
        (o) => o?.uid !== uid,
      );
      if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
      return this.objects.update(t, next.metadata.namespace ?? '', next.metadata.name ?? '', next, {
        ...SYSTEM,
        fieldManager: 'garbage-collector',
      });
    });
    await this.writeAll(writes);
    await this.dropFinalizer(type, owner, 'orphan');
  }

  private async dropFinalizer(
    type: ResourceType,
    object: KubeObject,
    finalizer: string,
  ): Promise<void> {
    const current = this.objects.find(
      type,
      object.metadata.namespace ?? '',
      object.metadata.name ?? '',
    );
    if (!current || !(current.metadata.finalizers ?? []).includes(finalizer)) return;
    const next = clone(current);
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    await this.writeAll([
      this.objects.update(type, next.metadata.namespace ?? '', next.metadata.name ?? '', next, {
        ...SYSTEM,
        fieldManager: 'garbage-collector',
      }),
    ]);
  }

  /**
   * Deletes everything in a terminating namespace once its grace is over, reporting progress
   * in its status conditions as the namespace controller does; lifts its finalizer once it is
   * empty.
   */
  private async terminateNamespace(name: string): Promise<void> {
    const ns = this.objects.find(NAMESPACE_TYPE, '', name);
    if (ns?.metadata.deletionTimestamp === undefined) {
      this.forgetGrace(name);
      return;
    }
    const grace = this.graces.get(name);
    if (grace === undefined) return this.namespaceTerminating(name);
    if (grace.due > 0) return; // its timer brings us back
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    const writes = [];
    const seen = new Set<string>();
    for (const type of this.registry.all()) {
      const key = storageKeyOf(type);
      if (!type.namespaced || seen.has(key)) continue;
      seen.add(key);
      for (const object of this.objects.list(type, name).items) {
        // As the controller names them: `<resource>.<group>`, so `configmaps.` for core.
        const named = `${type.resource}.${type.group}`;
        remaining.set(named, (remaining.get(named) ?? 0) + 1);
        for (const finalizer of object.metadata.finalizers ?? []) {
          finalizers.set(finalizer, (finalizers.get(finalizer) ?? 0) + 1);
        }
        if (object.metadata.deletionTimestamp !== undefined) continue;
        writes.push(
          this.objects.delete(type, name, object.metadata.name ?? '', {
            dryRun: false,
            propagationPolicy: 'Background',
          }),
        );
      }
    }
    await this.writeAll(writes);
    if (remaining.size > 0) {
      // The last deletion in it brings us back here.
      await this.writeAll([this.reportTermination(ns, remaining, finalizers)]);
      return;
    }
    const next = clone(ns);
    next.spec = { ...((next.spec as object | undefined) ?? {}), finalizers: [] };
    this.forgetGrace(name);
    await this.writeAll([
      this.objects.update(
        NAMESPACE_TYPE,
        '',
        name,
        next,
        { ...SYSTEM, fieldManager: 'namespace-controller' },
        'finalize',
      ),
    ]);
  }

  /** The namespace controller's status conditions (deletion/status_condition_utils.go). */
  private reportTermination(
    ns: KubeObject,
    remaining: ReadonlyMap<string, number>,
    finalizers: ReadonlyMap<string, number>,
  ): { durable?: Promise<void> } {
    const conditions = namespaceDeletionConditions(ns, remaining, finalizers, new Date());
    if (conditions === undefined) return {};
    const next = clone(ns);
    next.status = { ...((next.status as object | undefined) ?? {}), conditions };
    return this.objects.update(
      NAMESPACE_TYPE,
      '',
      ns.metadata.name ?? '',
      next,
      { ...SYSTEM, fieldManager: 'namespace-controller' },
      'status',
    );
  }

  private forgetGrace(name: string): void {
    const grace = this.graces.get(name);
    if (grace !== undefined) clearTimeout(grace.timer);
    this.graces.delete(name);
  }

  /** Deletes every object of a deleted CRD, then lets the CRD go. */
  private async cleanUpCrd(name: string): Promise<void> {
    const crd = this.objects.find(CRD_TYPE, '', name);
    if (crd?.metadata.deletionTimestamp === undefined) return;
    const types = typesOfCrd(crd);
    const type = types[0];
    let remaining = 0;
    if (type !== undefined) {
      // The CRD is no longer served, so address its objects through a type of our own.
      const writes = [];
      for (const object of this.objects.list(type, undefined).items) {
        remaining++;
        if (object.metadata.deletionTimestamp !== undefined) continue;
        writes.push(
          this.objects.delete(type, object.metadata.namespace ?? '', object.metadata.name ?? '', {
            dryRun: false,
            propagationPolicy: 'Background',
          }),
        );
      }
      await this.writeAll(writes);
    }
    if (remaining === 0) await this.dropFinalizer(CRD_TYPE, crd, CRD_CLEANUP_FINALIZER);
  }
}

/**
 * The owner uids of an object. Writes are checked before they are stored, so every reference
 * has a uid; records stored before that check may not, and are read the same way.
 */
function ownersOf(object: KubeObject | undefined): string[] {
  const refs: unknown = object?.metadata.ownerReferences;
  if (!Array.isArray(refs)) return [];
  const uids: string[] = [];
  for (const ref of refs as unknown[]) {
    const uid = (ref as { uid?: unknown } | null)?.uid;
    if (typeof uid === 'string' && uid !== '') uids.push(uid);
  }
  return uids;
}
