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
  KubernetesAuthenticator,
  NoAuthenticator,
  StaticAuthenticator,
  startFacade,
  type TlsFiles,
} from './facade/index.js';
import { connect, type Kube } from './kube/index.js';
import { startControlPlane } from './local/index.js';
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
  const plane = await startControlPlane({
    dataDir,
    port: options.apiPort,
    host: options.host,
    log,
  });
  const parts = ['API server'];
  let kube: Kube | undefined;
  let operator: Operator | undefined;
  let observability: ObservabilityServer | undefined;
  let facade: Facade | undefined;
  if (options.operator || options.facade !== undefined) {
    // Through the kubeconfig, as against any cluster: neither reaches into src/local.
    kube = await connect({ kubeconfigPath: plane.kubeconfigPath, log });
    await applyCrds(kube);
  }
  if (options.operator && kube !== undefined) {
    const metrics = new OperatorMetrics();
    if (options.facade !== undefined) metrics.requireReady(() => facade !== undefined);
    if (options.metrics !== undefined) {
      observability = await startObservabilityServer({ metrics, log, ...options.metrics });
    }
    try {
      operator = await startOperator({
        kube,
        log,
        namespace: DEFAULT_OPERATOR_NAMESPACE,
        leaderElection: true,
        metrics,
      });
    } catch (error) {
      await observability?.close();
      throw error;
    }
    parts.push('operator');
  } else if (options.metrics !== undefined) {
    log.warn("metrics are the operator's; --no-operator serves none");
  }
  let tokenAt = '';
  if (options.facade !== undefined && kube !== undefined) {
    const auth =
      options.facade.auth === undefined || options.facade.auth === 'static'
        ? await localTokenAuth(dataDir, options.facade.tokenFile)
        : { authenticator: await authenticator(options.facade, kube), tokenPath: undefined };
    try {
      facade = await startFacade({
        kube,
        log,
        auth: auth.authenticator,
        namespace: DEFAULT_OPERATOR_NAMESPACE,
        host: options.facade.host ?? '127.0.0.1',
        port: options.facade.port ?? DEFAULT_FACADE_PORT,
        ...(options.facade.tls !== undefined ? { tls: options.facade.tls } : {}),
      });
    } catch (error) {
      // A facade that cannot listen (port taken) must not leave the rest running headless.
      await operator?.stop();
      await observability?.close();
      kube.close();
      await plane.close();
      throw error;
    }
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
  const kube = await connect({
    log,
    ...(options.kubeconfig !== undefined ? { kubeconfigPath: options.kubeconfig } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
  });
  // Never the kubeconfig's namespace: every replica must find the same Lease and id counter,
  // whatever context each was started with.
  const namespace = options.namespace ?? process.env.POD_NAMESPACE ?? DEFAULT_OPERATOR_NAMESPACE;
  const metrics = new OperatorMetrics();
  let facade: Facade | undefined;
  if (options.facade !== undefined) metrics.requireReady(() => facade !== undefined);
  // Before the operator, so that /healthz answers (and /readyz says 503) while it lists.
  const observability = await startObservabilityServer({ metrics, log, ...options.metrics });
  let operator: Operator;
  try {
    operator = await startOperator({
      kube,
      log,
      namespace,
      metrics,
      leaderElection: options.leaderElection,
      ...(options.baseDomain !== undefined ? { baseDomain: options.baseDomain } : {}),
    });
  } catch (error) {
    await observability.close();
    kube.close();
    throw error;
  }
  try {
    if (options.facade !== undefined) {
      facade = await startFacade({
        kube,
        log,
        auth: await authenticator(options.facade, kube),
        namespace,
        host: options.facade.host ?? '127.0.0.1',
        port: options.facade.port ?? DEFAULT_FACADE_PORT,
        ...(options.facade.tls !== undefined ? { tls: options.facade.tls } : {}),
        ...(options.baseDomain !== undefined ? { baseDomain: options.baseDomain } : {}),
      });
    }
  } catch (error) {
    await operator.stop();
    await observability.close();
    kube.close();
    throw error;
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
