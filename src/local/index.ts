// The local control plane assembled: durable store, registry, generic object registry,
// housekeeping loops, watch hub and HTTP server, plus the kubeconfig that points at it.

import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { silentLogger } from '../log.js';
import { Admission } from './admission/index.js';
import { AccessControl } from './auth/access.js';
import { ClusterRoleAggregator } from './auth/aggregation.js';
import { bootstrapPolicy } from './auth/bootstrap-policy.js';
import { Housekeeping } from './housekeeping.js';
import { CRD_TYPE } from './kinds/customresourcedefinition.js';
import { EVENT_TYPE } from './kinds/event.js';
import { BANNED_OWNERS } from './kinds/index.js';
import { NAMESPACE_TYPE } from './kinds/namespace.js';
import { kubeconfigYaml, loadOrCreateToken, writePrivate } from './kubeconfig.js';
import { ensureKubernetesService } from './kubernetes-service.js';
import { decodeMetadata, metadataCauses } from './meta.js';
import { Objects } from './objects.js';
import { OpenApi } from './openapi.js';
import { mkdirPrivate } from './private.js';
import { BUILTIN_TYPES, Registry, typesOfCrd } from './registry.js';
import { type ResourceType, storageKeyOf } from './resource-type.js';
import type { LocalUser } from './reviews.js';

export type { LocalUser } from './reviews.js';

import { ApiServer } from './server.js';
import { Store } from './storage/store.js';
import { loadOrCreateTls } from './tls.js';
import type { KubeObject } from './types.js';
import { type ChangeEvent, WatchHub, type WatchLimits } from './watch.js';

export interface ControlPlaneOptions {
  dataDir: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  log?: Logger;
  /** fdatasync every commit group; off only for throwaway data. */
  fsync?: boolean;
  /** How many recent changes a watch can resume from. */
  watchWindow?: number;
  bookmarkIntervalMs?: number;
  /** What watchers may hold unread, each and together, before the slowest are closed. */
  watchLimits?: Partial<WatchLimits>;
  /**
   * Bearer tokens of users besides the admin (kube-apiserver's token auth file, in code): a
   * TokenReview knows them, and RBAC decides what they may do (bind them by name or group).
   */
  users?: readonly LocalUser[];
  /**
   * How long a deleted namespace stays Terminating with its content before it is emptied
   * (the namespace controller's 5 s by default); tests that delete many namespaces shorten it.
   */
  namespaceDeletionGraceMs?: number;
}

export interface ControlPlane {
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** PEM of the CA the server's certificate chains to. */
  readonly ca: string;
  readonly kubeconfigPath: string;
  readonly dataDir: string;
  /**
   * What the data dir held when the plane opened it: nothing (a new cluster, `created`), or
   * `objects` from an earlier run (`reopened`). Started from another directory, a relative
   * data dir is a new, empty cluster: the command says which it got.
   */
  readonly opened: { readonly state: 'created' | 'reopened'; readonly objects: number };
  /** Resolves when the housekeeping loops have nothing left to do (for tests). */
  idle(): Promise<void>;
  /** Ends every open watch, as a restart would (for tests of clients' re-watch). */
  dropWatches(): void;
  close(): Promise<void>;
}

const BOOTSTRAP_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const log = options.log ?? silentLogger();
  const dataDir = options.dataDir;
  await mkdirPrivate(dataDir);
  const token = await loadOrCreateToken(join(dataDir, 'apiserver-token'));
  const host = options.host ?? '127.0.0.1';
  const tls = await loadOrCreateTls(join(dataDir, 'tls'), host);
  const store = await Store.open(join(dataDir, 'store'), { fsync: options.fsync ?? true });
  const held = store.count();
  const opened = { state: held === 0 ? 'created' : 'reopened', objects: held } as const;

  const registry = new Registry();
  const objects = new Objects(store, { servedTypes: () => registry.all() }, log);
  const hub = new WatchHub(options.watchWindow ?? 50_000, store.revision);
  const housekeeping = new Housekeeping(objects, registry, log, {
    ...(options.namespaceDeletionGraceMs !== undefined
      ? { namespaceDeletionGraceMs: options.namespaceDeletionGraceMs }
      : {}),
  });

  // Watchers see a change only once it is durable, and always in revision order.
  const pending: ChangeEvent[] = [];
  objects.listen({
    committed(event, _before, _after, durable) {
      pending.push(event);
      durable.then(
        () => {
          while (pending.length > 0 && (pending[0] as ChangeEvent).revision <= event.revision) {
            hub.publish(pending.shift() as ChangeEvent);
          }
        },
        (error: unknown) => {
          log.fatal({ err: error }, 'storage write failed; the control plane stops');
          void close();
        },
      );
    },
  });

  // One record that cannot be read must not keep the rest from being served: it is reported
  // and passed over (left in the store as it is, for a client to fix or delete).
  const invalid: InvalidRecord[] = [];
  // CRDs first, so that the kinds they define are known when their objects are loaded.
  for (const entry of store.list(storageKeyOf(CRD_TYPE))) {
    try {
      const crd = JSON.parse(entry.json) as KubeObject;
      if (crd.metadata.deletionTimestamp === undefined)
        registry.setCrd(entry.name, typesOfCrd(crd));
    } catch (error) {
      invalid.push({ type: CRD_TYPE, namespace: '', name: entry.name, problem: messageOf(error) });
    }
  }
  housekeeping.start(loadAll(store, registry, invalid), (object, type, error) =>
    invalid.push({
      type,
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name ?? '',
      problem: messageOf(error),
    }),
  );
  const aggregator = new ClusterRoleAggregator(objects, log);
  await bootstrap(objects);
  await bootstrapPolicy(objects);
  aggregator.schedule();
  await reportInvalid(objects, invalid, log);

  const access = await AccessControl.open(dataDir, objects, token, options.users);
  const api = new ApiServer(registry, objects, hub, new OpenApi(registry), {
    access,
    admission: new Admission(objects),
    tls,
    log,
    durable: () => store.flush(),
    invalidStoredObjects: invalid.length,
    ...(options.bookmarkIntervalMs !== undefined
      ? { bookmarkIntervalMs: options.bookmarkIntervalMs }
      : {}),
    ...(options.watchLimits !== undefined ? { watchLimits: options.watchLimits } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    api.server.once('error', reject);
    api.server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (api.server.address() as AddressInfo).port;
  await ensureKubernetesService(objects, port);
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const kubeconfigPath = join(dataDir, 'kubeconfig');
  await writePrivate(kubeconfigPath, kubeconfigYaml(url, token, tls.ca));
  log.info(
    { url, dataDir, ...opened, revision: store.revision, invalidRecords: invalid.length },
    'local control plane ready',
  );

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= (async () => {
      await api.close();
      await housekeeping.stop();
      await aggregator.stop();
      await store.close();
    })();
    return closing;
  }

  return {
    url,
    port,
    token,
    ca: tls.ca,
    kubeconfigPath,
    opened,
    dataDir,
    idle: async () => {
      await housekeeping.idle();
      await aggregator.idle();
    },
    dropWatches: () => api.dropWatches(),
    close,
  };
}

interface InvalidRecord {
  type: ResourceType;
  namespace: string;
  name: string;
  problem: string;
}

/** Every stored object with its type; what cannot be parsed or breaks the rules of metadata
 * (written before those were checked) goes to `invalid` instead, or as well. */
function* loadAll(
  store: Store,
  registry: Registry,
  invalid: InvalidRecord[],
): Generator<{ type: ResourceType; object: KubeObject }> {
  const seen = new Set<string>();
  for (const type of [...BUILTIN_TYPES, ...registry.all()]) {
    const key = storageKeyOf(type);
    if (seen.has(key)) continue;
    seen.add(key);
    for (const entry of store.list(key)) {
      const where = { type, namespace: entry.namespace, name: entry.name };
      let object: KubeObject;
      try {
        object = JSON.parse(entry.json) as KubeObject;
        if (typeof object.metadata !== 'object' || object.metadata === null)
          throw new Error('metadata is not an object');
      } catch (error) {
        invalid.push({ ...where, problem: messageOf(error) });
        continue;
      }
      const problem = metadataProblem(object);
      if (problem !== undefined) invalid.push({ ...where, problem });
      yield { type, object };
    }
  }
}

/** What the API would refuse in a stored object's metadata today, if anything. */
function metadataProblem(object: KubeObject): string | undefined {
  try {
    // In place: the object was parsed for this load alone, and decoding only normalises nulls.
    decodeMetadata(object.metadata);
    const causes = metadataCauses(object, BANNED_OWNERS);
    return causes.length === 0
      ? undefined
      : causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join('; ');
  } catch (error) {
    return messageOf(error);
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Says where each invalid record is: a log line, and a Warning Event in its namespace (in
 * `default` for cluster-scoped ones, or when its namespace is gone) that `kubectl get events`
 * shows beside the object.
 */
async function reportInvalid(
  objects: Objects,
  invalid: readonly InvalidRecord[],
  log: Logger,
): Promise<void> {
  const writes = [];
  for (const record of invalid) {
    const { type, namespace, name, problem } = record;
    log.warn(
      { resource: storageKeyOf(type), namespace, name, problem },
      'stored object is invalid; serving the rest',
    );
    const where =
      namespace !== '' && objects.find(NAMESPACE_TYPE, '', namespace) !== undefined
        ? namespace
        : 'default';
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    try {
      writes.push(
        objects.create(
          EVENT_TYPE,
          where,
          {
            metadata: { generateName: `${name || 'invalid'}.`.slice(0, 200) },
            involvedObject: {
              apiVersion: type.group === '' ? type.version : `${type.group}/${type.version}`,
              kind: type.kind,
              name,
              ...(namespace !== '' ? { namespace } : {}),
            },
            reason: 'InvalidStoredObject',
            message:
              `stored ${type.kind} cannot be read as it is (${problem}); fix or delete it`.slice(
                0,
                1024,
              ),
            type: 'Warning',
            source: { component: 'nrn-local' },
            reportingComponent: 'nrn-local',
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          },
          { fieldManager: 'nrn-local', fieldValidation: 'Ignore', dryRun: false, warnings: [] },
        ),
      );
    } catch (error) {
      log.warn({ err: error, namespace, name }, 'could not record an Event for an invalid object');
    }
  }
  await Promise.all(writes.map((w) => w.durable));
}

async function bootstrap(objects: Objects): Promise<void> {
  const writes = [];
  for (const name of BOOTSTRAP_NAMESPACES) {
    if (objects.find(NAMESPACE_TYPE, '', name) !== undefined) continue;
    writes.push(
      objects.create(
        NAMESPACE_TYPE,
        '',
        { metadata: { name } },
        {
          fieldManager: 'nrn-local',
          fieldValidation: 'Ignore',
          dryRun: false,
          warnings: [],
        },
      ),
    );
  }
  await Promise.all(writes.map((w) => w.durable));
}
