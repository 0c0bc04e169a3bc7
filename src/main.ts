// Wires the long-running processes: config -> logger -> control plane -> operator and its
// metrics server -> facade, and the signals that stop them.
import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  type Authenticator,
  type AuthMode,
  DEFAULT_FACADE_PORT,
  type Facade,
  type FacadeOptions,
  KubernetesAuthenticator,
  NoAuthenticator,
  StaticAuthenticator,
  startFacade,
  type TlsFiles,
} from './facade/index.js';
import { readTlsPair } from './facade/tls.js';
import { connect, type Kube } from './kube/index.js';
import { startControlPlane } from './local/index.js';
import { DataDirInUseError } from './local/storage/lock.js';
import { createLogger, type Logger } from './log.js';
import {
  type ObservabilityServer,
  OperatorMetrics,
  startObservabilityServer,
} from './observability.js';
import { applyCrds, DEFAULT_OPERATOR_NAMESPACE, type Operator, startOperator } from './operator.js';
import { stopOnSignal } from './runtime/index.js';

/** Where /metrics, /healthz and /readyz listen; unset parts take the defaults. */
export interface MetricsAddress {
  host?: string;
  port?: number;
}

/** Where and how the facade serves; undefined in the options: no facade. */
export interface FacadeAddress {
  host?: string;
  port?: number;
  auth?: AuthMode;
  /** static auth: the token file; `local` writes its own when none is given. */
  tokenFile?: string;
  /** HTTPS with this certificate and key (PEM files, read again while serving). */
  tls?: TlsFiles;
}

export interface LocalOptions {
  dataDir: string;
  apiPort: number;
  host: string;
  operator: boolean;
  facade?: FacadeAddress;
  /** Serve /metrics, /healthz, /readyz with the operator; undefined: not served. */
  metrics?: MetricsAddress;
}

/** `nrn-operator local`: runs until SIGINT or SIGTERM, then stops cleanly. */
export async function runLocal(options: LocalOptions): Promise<number> {
  const log = createLogger();
  const dataDir = resolve(options.dataDir);
  const rollback = new Rollback();
  const plane = await step(
    rollback,
    (error) => dataDirOrPort(error, options.dataDir, options.apiPort),
    () => startControlPlane({ dataDir, port: options.apiPort, host: options.host, log }),
  );
  rollback.push(() => plane.close());
  const parts = ['API server'];
  let kube: Kube | undefined;
  let operator: Operator | undefined;
  let observability: ObservabilityServer | undefined;
  let facade: Facade | undefined;
  if (options.operator || options.facade !== undefined) {
    // Through the kubeconfig, as against any cluster: neither reaches into src/local.
    kube = await step(rollback, undefined, () =>
      connect({ kubeconfigPath: plane.kubeconfigPath, log }),
    );
    const connected = kube;
    rollback.push(() => connected.close());
    await step(rollback, undefined, () => applyCrds(connected));
  }
  if (options.operator && kube !== undefined) {
    const metrics = new OperatorMetrics();
    if (options.facade !== undefined) metrics.requireReady(() => facade !== undefined);
    const address = options.metrics;
    if (address !== undefined) {
      const started = await step(
        rollback,
        (error) => portFailure(error, '--metrics-port', address.port),
        () => startObservabilityServer({ metrics, log, ...address }),
      );
      observability = started;
      rollback.push(() => started.close());
    }
    const connected = kube;
    const started = await step(rollback, undefined, () =>
      startOperator({
        kube: connected,
        log,
        namespace: DEFAULT_OPERATOR_NAMESPACE,
        leaderElection: true,
        metrics,
      }),
    );
    operator = started;
    rollback.push(async () => {
      await started.stop();
    });
    parts.push('operator');
  } else if (options.metrics !== undefined) {
    log.warn("metrics are the operator's; --no-operator serves none");
  }
  let tokenAt = '';
  if (options.facade !== undefined && kube !== undefined) {
    const address = options.facade;
    const connected = kube;
    const auth = await step(
      rollback,
      (error) => fileFailure(error, '--facade-token-file', address.tokenFile),
      () =>
        address.auth === undefined || address.auth === 'static'
          ? localTokenAuth(dataDir, address.tokenFile)
          : authenticator(address, connected).then((a) => ({
              authenticator: a,
              tokenPath: undefined,
            })),
    );
    facade = await startFacadeStep(rollback, address, {
      kube: connected,
      log,
      auth: auth.authenticator,
      namespace: DEFAULT_OPERATOR_NAMESPACE,
    });
    if (auth.tokenPath !== undefined) tokenAt = ` (token in ${auth.tokenPath})`;
  }
  // KUBECONFIG stays last: test/support (and scripts) read the path after it to the line's end.
  const metricsAt = observability !== undefined ? `; metrics at ${observability.url}` : '';
  const facadeAt = facade !== undefined ? `; facade at ${facade.url}${tokenAt}` : '';
  process.stdout.write(
    `nrn-operator local ready: ${parts.join(', ')} at ${plane.url}${metricsAt}${facadeAt}; KUBECONFIG=${plane.kubeconfigPath}\n`,
  );
  const signal = await new Promise<NodeJS.Signals>((done) => {
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
  log.info({ signal }, 'stopping');
  // Callers first, then the operator: both still need the API server, which goes last.
  await facade?.close();
  const clean = (await operator?.stop()) ?? true;
  await observability?.close();
  kube?.close();
  await plane.close();
  if (!clean) log.warn('operator did not drain in time');
  log.info('stopped');
  return 0;
}

/**
 * Static auth for `local`: the token file given, or DIR/token, made on the first start (0600)
 * holding one token allowed everything, kept across restarts so scripts keep working.
 */
async function localTokenAuth(
  dataDir: string,
  tokenFile: string | undefined,
): Promise<{ authenticator: Authenticator; tokenPath: string | undefined }> {
  if (tokenFile !== undefined) {
    return { authenticator: await StaticAuthenticator.fromFile(tokenFile), tokenPath: undefined };
  }
  const tokenPath = join(dataDir, 'token');
  let token: string;
  try {
    token = (await readFile(tokenPath, 'utf8')).trim();
    // A token file loosened by hand (or by a copy) is narrowed again, as the plane's own are.
    await chmod(tokenPath, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    token = randomBytes(32).toString('base64url');
    await writeFile(tokenPath, `${token}\n`, { mode: 0o600, flag: 'wx' });
    process.stdout.write(`nrn-operator local: facade token (kept in ${tokenPath}): ${token}\n`);
  }
  return {
    authenticator: new StaticAuthenticator({
      tokens: [{ name: 'local', token, operations: ['*'] }],
    }),
    tokenPath,
  };
}

async function authenticator(facade: FacadeAddress, kube: Kube): Promise<Authenticator> {
  switch (facade.auth ?? 'kubernetes') {
    case 'none':
      return new NoAuthenticator();
    case 'static':
      if (facade.tokenFile === undefined) throw new Error('facade auth static needs a token file');
      return StaticAuthenticator.fromFile(facade.tokenFile);
    case 'kubernetes':
      return new KubernetesAuthenticator(kube.reviews);
  }
}

export interface RunOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  leaderElection: boolean;
  baseDomain?: string;
  metrics: MetricsAddress;
  facade?: FacadeAddress;
}

/** `nrn-operator run`: the operator against the current kubeconfig or the in-cluster config. */
export async function runOperator(options: RunOptions): Promise<number> {
  const log: Logger = createLogger();
  const rollback = new Rollback();
  const kube = await step(
    rollback,
    (error) =>
      options.kubeconfig !== undefined
        ? `--kubeconfig ${options.kubeconfig} cannot be used: ${messageOf(error)}`
        : undefined,
    () =>
      connect({
        log,
        ...(options.kubeconfig !== undefined ? { kubeconfigPath: options.kubeconfig } : {}),
        ...(options.context !== undefined ? { context: options.context } : {}),
      }),
  );
  rollback.push(() => kube.close());
  // Never the kubeconfig's namespace: every replica must find the same Lease and id counter,
  // whatever context each was started with.
  const namespace = options.namespace ?? process.env.POD_NAMESPACE ?? DEFAULT_OPERATOR_NAMESPACE;
  const metrics = new OperatorMetrics();
  let facade: Facade | undefined;
  if (options.facade !== undefined) metrics.requireReady(() => facade !== undefined);
  // Before the operator, so that /healthz answers (and /readyz says 503) while it lists.
  const observability = await step(
    rollback,
    (error) => portFailure(error, '--metrics-port', options.metrics.port),
    () => startObservabilityServer({ metrics, log, ...options.metrics }),
  );
  rollback.push(() => observability.close());
  const operator = await step(rollback, undefined, () =>
    startOperator({
      kube,
      log,
      namespace,
      metrics,
      leaderElection: options.leaderElection,
      ...(options.baseDomain !== undefined ? { baseDomain: options.baseDomain } : {}),
    }),
  );
  rollback.push(async () => {
    await operator.stop();
  });
  if (options.facade !== undefined) {
    const address = options.facade;
    const auth = await step(
      rollback,
      (error) => fileFailure(error, '--facade-token-file', address.tokenFile),
      () => authenticator(address, kube),
    );
    facade = await startFacadeStep(rollback, address, {
      kube,
      log,
      auth,
      namespace,
      ...(options.baseDomain !== undefined ? { baseDomain: options.baseDomain } : {}),
    });
  }
  // The operator, not its manager: its stop() also turns /readyz to 503 while it drains.
  const { clean } = await stopOnSignal(
    {
      stop: async () => {
        await facade?.close();
        return operator.stop();
      },
    },
    { log },
  );
  await observability.close();
  kube.close();
  return clean ? 0 : 1;
}

/**
 * A start-up failure the user fixes with a flag: its message is one line naming the flag and its
 * value, that src/cli prints alone (no stack) after everything started before it was closed.
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** What a start-up has started so far, closed newest first when a later part fails. */
class Rollback {
  private readonly closers: (() => void | Promise<void>)[] = [];

  push(close: () => void | Promise<void>): void {
    this.closers.push(close);
  }

  async run(): Promise<void> {
    // Each closer runs even when one before it fails: whatever is left open keeps the process up.
    for (const close of this.closers.reverse())
      await Promise.resolve()
        .then(close)
        .catch(() => {});
  }
}

/**
 * One start-up step: when it fails, what started before it is closed, and the failure becomes a
 * StartupError with `describe`'s line (the error's own message when it names no flag).
 */
async function step<T>(
  rollback: Rollback,
  describe: ((error: unknown) => string | undefined) | undefined,
  start: () => Promise<T>,
): Promise<T> {
  try {
    return await start();
  } catch (error) {
    await rollback.run();
    if (error instanceof StartupError) throw error;
    throw new StartupError(describe?.(error) ?? messageOf(error), { cause: error });
  }
}

/** The facade, its TLS files read first so that a bad one is named by its own flag, not the port's. */
async function startFacadeStep(
  rollback: Rollback,
  address: FacadeAddress,
  options: Pick<FacadeOptions, 'kube' | 'log' | 'auth' | 'namespace' | 'baseDomain'>,
): Promise<Facade> {
  const tls = address.tls;
  if (tls !== undefined) {
    await step(
      rollback,
      (error) => tlsFailure(error, tls),
      () => readTlsPair(tls),
    );
  }
  const port = address.port ?? DEFAULT_FACADE_PORT;
  const facade = await step(
    rollback,
    (error) => portFailure(error, '--facade-port', port),
    () =>
      startFacade({
        ...options,
        host: address.host ?? '127.0.0.1',
        port,
        ...(tls !== undefined ? { tls } : {}),
      }),
  );
  rollback.push(() => facade.close());
  return facade;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
const codeOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code;

/** A listener that could not bind, named by its flag; undefined for any other failure. */
function portFailure(error: unknown, flag: string, port: number | undefined): string | undefined {
  const code = codeOf(error);
  if (code === 'EADDRINUSE') {
    return `${flag} ${port} is in use (EADDRINUSE); pick another or 0 for any free port`;
  }
  // Ports below 1024 need privileges; a host that is not this machine's cannot be bound either.
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    return `${flag} ${port} cannot be listened on (${code}); pick another or 0 for any free port`;
  }
  return undefined;
}

/** A file that could not be read (or parsed), named by its flag. */
function fileFailure(error: unknown, flag: string, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  const code = codeOf(error);
  return code !== undefined
    ? `${flag} ${path} is unreadable (${code})`
    : `${flag} ${path} is not usable: ${messageOf(error)}`;
}

function tlsFailure(error: unknown, tls: TlsFiles): string {
  const path = (error as NodeJS.ErrnoException).path;
  if (path === tls.keyFile) return fileFailure(error, '--facade-tls-key', tls.keyFile) as string;
  if (path === tls.certFile) return fileFailure(error, '--facade-tls-cert', tls.certFile) as string;
  // Both read, but they do not make a pair (not PEM, or a key of another certificate).
  return `--facade-tls-cert ${tls.certFile} and --facade-tls-key ${tls.keyFile} are not a usable pair: ${messageOf(error)}`;
}

/** The control plane's start: its data dir locked by another process, or its port taken. */
function dataDirOrPort(error: unknown, dataDir: string, port: number): string | undefined {
  if (error instanceof DataDirInUseError) {
    return `--data-dir ${dataDir} is in use by ${error.holder === undefined ? 'another process' : `process ${error.holder}`}`;
  }
  const code = codeOf(error);
  const path = (error as NodeJS.ErrnoException).path;
  if (code !== undefined && path !== undefined) {
    return `--data-dir ${dataDir} cannot be used: ${path} (${code})`;
  }
  return portFailure(error, '--api-port', port);
}
