// Where the operator finds its cluster and how it proves who it is: an explicit kubeconfig,
// KUBECONFIG or ~/.kube/config, else the pod's service account, as client-node's KubeConfig
// reads them. KubeConfig is loaded in a child process (the loader): its module pulls in
// client-node's whole generated API (~60 MiB of RSS) of which we use nothing, and that memory
// leaves with the loader (a worker thread left ~26 MiB of it behind in the process). The
// loader stays only for an exec or auth-provider plugin that must be asked again.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export interface LoadKubeConfigOptions {
  /** A kubeconfig file to use; wins over KUBECONFIG and the default file. */
  readonly path?: string;
  /** A context of that kubeconfig other than its current one. */
  readonly context?: string;
}

/** TLS options of a connection to the API server (node:tls names). */
export interface TlsMaterial {
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  pfx?: string | Buffer;
  passphrase?: string;
  rejectUnauthorized?: boolean;
  servername?: string;
}

/** What a connection to the cluster needs from the kubeconfig. */
export interface ClusterAccess {
  readonly server: string;
  /** The namespace of the context (the pod's, in a cluster), if it names one. */
  readonly namespace: string | undefined;
  readonly tls: TlsMaterial;
  /** Auth headers as first read. */
  readonly headers: Readonly<Record<string, string>>;
  /** Reads the credentials again (a plugin, a rotated token file); absent when they are fixed. */
  readonly refresh: (() => Promise<Record<string, string>>) | undefined;
  /** Ends the plugin's loader, if one is kept. */
  close(): void;
}

/** What the loader reads off one `applyToHTTPSOptions`. */
interface Material extends TlsMaterial {
  headers: Record<string, string>;
  auth?: string;
}

type Loaded =
  | {
      readonly ok: true;
      readonly cluster: { readonly name: string; readonly server: string } | undefined;
      readonly namespace: string | undefined;
      /** An auth provider that only reads a token file (in-cluster): re-read here, no plugin. */
      readonly tokenFile: string | undefined;
      /** An exec or auth-provider plugin: the loader stays to be asked again. */
      readonly plugin: boolean;
      readonly material: Material;
    }
  | { readonly ok: false; readonly error: string };

type Refreshed = { readonly id: number; readonly material?: Material; readonly error?: string };

// The loader's program, run by `node -e` with client-node's URL, the kubeconfig path and the
// context as arguments: a string, because a test runner's transform of our own modules would
// rewrite the import() in a function's source.
const LOADER_SOURCE = `
const [clientNode, path, context] = process.argv.slice(1);
const flat = (value) => (Array.isArray(value) ? value.join(', ') : String(value));
// The operator gone, nothing is left to answer.
process.on('disconnect', () => process.exit(0));
async function main() {
  const { KubeConfig } = await import(clientNode);
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  if (context) kc.setCurrentContext(context);
  const ask = async () => {
    const o = { headers: {} };
    await kc.applyToHTTPSOptions(o);
    // A per-call agent (or a proxy's) that the operator's own pool replaces.
    o.agent?.destroy?.();
    const m = { headers: {} };
    for (const [k, v] of Object.entries(o.headers ?? {})) if (v !== undefined) m.headers[k] = flat(v);
    for (const k of ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername', 'auth']) {
      if (o[k] !== undefined) m[k] = o[k];
    }
    return m;
  };
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  const tokenFile = user?.exec === undefined ? user?.authProvider?.config?.tokenFile : undefined;
  const plugin = user?.exec !== undefined || (user?.authProvider !== undefined && tokenFile === undefined);
  const loaded = {
    ok: true,
    cluster: cluster === null ? undefined : { name: cluster.name, server: cluster.server },
    namespace: kc.getContextObject(kc.getCurrentContext())?.namespace,
    tokenFile,
    plugin,
    material: await ask(),
  };
  // Disconnecting once the message is out ends the loader.
  if (!plugin) return process.send(loaded, () => process.disconnect());
  process.send(loaded);
  process.on('message', (id) => {
    ask().then(
      (material) => process.send({ id, material }),
      (error) => process.send({ id, error: String(error?.message ?? error) }),
    );
  });
}
main().catch((error) => {
  process.send({ ok: false, error: String(error?.message ?? error) }, () => process.disconnect());
});
`;

/** How long a plugin may take to answer before the request that waits for it fails. */
const PLUGIN_TIMEOUT_MS = 60_000;

/** Reads the kubeconfig (or the in-cluster config) into what a connection needs. */
export async function loadClusterAccess(
  options: LoadKubeConfigOptions = {},
): Promise<ClusterAccess> {
  const { loaded, loader } = await startLoader(options);
  const cluster = loaded.cluster;
  if (cluster === undefined || cluster.server === '') {
    loader?.kill();
    throw new Error('no cluster in the kubeconfig: set KUBECONFIG or pass a kubeconfig path');
  }
  // loadFromDefault's last resort is an unauthenticated http://localhost:8080: an operator
  // talking to that is misconfigured, so say so instead of failing on every request.
  if (cluster.name === 'cluster' && cluster.server === 'http://localhost:8080') {
    loader?.kill();
    throw new Error('no kubeconfig found and not running in a cluster');
  }
  const { headers, auth: _auth, ...tls } = loaded.material;
  const plugin = loader !== undefined ? new PluginCredentials(loader, options) : undefined;
  return {
    server: cluster.server,
    namespace: loaded.namespace,
    tls,
    headers: headersOf(loaded.material),
    refresh:
      plugin !== undefined
        ? () => plugin.refresh()
        : loaded.tokenFile !== undefined
          ? tokenFileRefresh(loaded.tokenFile, headers)
          : undefined,
    close: () => plugin?.close(),
  };
}

/** Runs KubeConfig in a loader: its first answer, and the loader if a plugin keeps it. */
async function startLoader(
  options: LoadKubeConfigOptions,
): Promise<{ loaded: Extract<Loaded, { ok: true }>; loader: ChildProcess | undefined }> {
  const clientNode = pathToFileURL(
    createRequire(import.meta.url).resolve('@kubernetes/client-node'),
  ).href;
  // The operator's environment (KUBECONFIG, HOME, the pod's), not its node flags, from the
  // command line or NODE_OPTIONS (a profiler, an inspector port, a heap bound).
  const loader = spawn(
    process.execPath,
    ['-e', LOADER_SOURCE, '--', clientNode, options.path ?? '', options.context ?? ''],
    {
      env: { ...process.env, NODE_OPTIONS: undefined },
      // stdout is the operator's (logs); Buffers cross the channel as Buffers.
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    },
  );
  let loaded: Loaded;
  try {
    loaded = await new Promise<Loaded>((resolve, reject) => {
      loader.once('message', (message) => resolve(message as Loaded));
      loader.once('error', reject);
      loader.once('exit', (code, signal) =>
        reject(new Error(`the kubeconfig loader exited (${signal ?? code})`)),
      );
    });
  } catch (error) {
    loader.kill();
    throw error;
  }
  if (!loaded.ok) throw new Error(`kubeconfig: ${loaded.error}`);
  if (!loaded.plugin) return { loaded, loader: undefined };
  // A loader kept for a plugin must not hold the operator's process open.
  loader.unref();
  loader.channel?.unref();
  return { loaded, loader };
}

/**
 * Asks the loader's KubeConfig again (it runs the plugin once its credentials expire). A
 * loader that has died is started anew, which reads the kubeconfig afresh.
 */
class PluginCredentials {
  private loader: ChildProcess | undefined;
  private next = 0;
  private closed = false;
  private readonly waiting = new Map<number, (answer: Refreshed) => void>();

  constructor(
    loader: ChildProcess,
    private readonly options: LoadKubeConfigOptions,
  ) {
    this.attach(loader);
  }

  async refresh(): Promise<Record<string, string>> {
    if (this.closed) throw new Error('kubeconfig credentials: closed');
    const loader = this.loader;
    if (loader === undefined) {
      const { loaded, loader: fresh } = await startLoader(this.options);
      if (fresh !== undefined) this.attach(fresh);
      return headersOf(loaded.material);
    }
    const answer = await new Promise<Refreshed>((resolve) => {
      const id = this.next++;
      const timer = setTimeout(
        () => this.settle({ id, error: `no answer within ${PLUGIN_TIMEOUT_MS} ms` }),
        PLUGIN_TIMEOUT_MS,
      );
      timer.unref();
      this.waiting.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      // Held open while an answer is awaited, so that the answer is read.
      loader.channel?.ref();
      loader.send(id);
    });
    if (this.waiting.size === 0) loader.channel?.unref();
    if (answer.material === undefined) {
      throw new Error(`kubeconfig credentials: ${answer.error ?? 'no answer'}`);
    }
    return headersOf(answer.material);
  }

  close(): void {
    this.closed = true;
    this.loader?.kill();
  }

  private attach(loader: ChildProcess): void {
    this.loader = loader;
    const stopped = (why: string) => {
      if (this.loader === loader) this.loader = undefined;
      for (const id of [...this.waiting.keys()]) this.settle({ id, error: why });
    };
    loader.on('message', (answer: Refreshed) => this.settle(answer));
    loader.once('exit', () => stopped('the kubeconfig loader stopped'));
    // A send to a loader that has just died fails here, not as an uncaught error.
    loader.on('error', (error) => stopped(error.message));
  }

  private settle(answer: Refreshed): void {
    this.waiting.get(answer.id)?.(answer);
    this.waiting.delete(answer.id);
  }
}

/**
 * The service account's token is rotated on disk by the kubelet: read again on each refresh,
 * as client-node's and client-go's token-file auth do.
 */
function tokenFileRefresh(
  path: string,
  first: Readonly<Record<string, string>>,
): () => Promise<Record<string, string>> {
  return async () => {
    const token = await readFile(path, 'utf8');
    return token === '' ? { ...first } : { ...first, Authorization: `Bearer ${token}` };
  };
}

/** The auth headers of what the loader read: a kubeconfig's username and password as Basic. */
function headersOf({ headers, auth }: Material): Record<string, string> {
  if (auth === undefined || headers.Authorization !== undefined) return { ...headers };
  return { ...headers, Authorization: `Basic ${Buffer.from(auth).toString('base64')}` };
}
