// The two long-running commands as parts started in order: `local` (API server, client, CRDs,
// metrics, operator, admission webhook and its registration, facade) and `run` (client,
// metrics, operator, admission webhook, facade), and how a failure of each part is named by
// the flag that fixes it.
import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  type AdmissionServer,
  DEFAULT_WEBHOOK_PORT,
  loadOrCreateWebhookTls,
  registerWebhook,
  type SelfManagedCertificate,
  startAdmissionServer,
  startSelfManagedCertificate,
  WEBHOOK_TLS_SECRET,
} from './admission/index.js';
import type { KindAllowlist } from './domain/scope-classes/kinds.js';
import {
  type Authenticator,
  type AuthMode,
  DEFAULT_FACADE_PORT,
  type Facade,
  type FacadeOptions,
  KubernetesAuthenticator,
  NoAuthenticator,
  StaticAuthenticator,
  type StreamLimits,
  startFacade,
  type TlsFiles,
} from './facade/index.js';
import { connect, type Kube } from './kube/index.js';
import { startControlPlane } from './local/index.js';
import { DataDirInUseError } from './local/storage/lock.js';
import { createLogger, type Logger, type LogOptions } from './log.js';
import {
  type ObservabilityServer,
  OperatorMetrics,
  startObservabilityServer,
} from './observability.js';
import { applyCrds, DEFAULT_OPERATOR_NAMESPACE, OPERATOR_NAME, startOperator } from './operator.js';
import { createOperatorIdentity, operatorUsername } from './operator-identity.js';
import { messageOf, Parts } from './parts.js';
import { DEFAULT_HEAP_GROWTH_PERCENT, setHeapGrowth } from './runtime/index.js';
import { installDefaultScopeClasses } from './scope-classes-install.js';
import { readTlsPair } from './util/serving-tls.js';

/** Where /metrics, /healthz and /readyz listen; unset parts take the defaults. */
export interface MetricsAddress {
  host?: string;
  port?: number;
}

/** Where the admission webhook listens, and its certificate (`run`: files; `local` makes its own). */
export interface WebhookAddress {
  host?: string;
  port?: number;
  /** `run`: files (`tls`; none: not served) or self-managed (a Secret the operator keeps). */
  certificate?: 'files' | 'self-managed';
  tls?: TlsFiles;
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
  /** Bounds of GET /watch; the facade's defaults where left out. */
  streams?: Partial<StreamLimits>;
}

export interface LocalOptions {
  dataDir: string;
  /** Level and format of the logs on stderr; unset: info, pretty on a terminal. */
  log?: LogOptions;
  apiPort: number;
  host: string;
  operator: boolean;
  facade?: FacadeAddress;
  /** Serve /metrics, /healthz, /readyz with the operator; undefined: not served. */
  metrics?: MetricsAddress;
  /** Scopes a second a changed ScopeClass reaches. */
  scopeClassRolloutRate?: number;
  /** The kinds a ScopeClass may template (ADR 0029); the default setting where left out. */
  scopeClassKinds?: KindAllowlist;
  /** The admission webhook's port (0: any free one); it is served with the operator. */
  webhookPort?: number;
  /** How far V8's heap grows past what is live (ADR 0026); undefined: the default. */
  heapGrowthPercent?: number;
}

/** `nrn-operator local`: runs until SIGINT or SIGTERM, then stops cleanly. */
export async function runLocal(options: LocalOptions): Promise<number> {
  const log = createLogger(options.log);
  setHeapGrowth(options.heapGrowthPercent ?? DEFAULT_HEAP_GROWTH_PERCENT);
  const dataDir = resolve(options.dataDir);
  // Stopped in reverse: callers (facade, operator) before the API server they need.
  const parts = new Parts();
  const plane = await parts.start(
    'API server',
    () => startControlPlane({ dataDir, port: options.apiPort, host: options.host, log }),
    {
      describe: (error) => dataDirOrPort(error, options.dataDir, options.apiPort),
      close: (p) => () => p.close(),
    },
  );
  // A relative data dir started from elsewhere is a new, empty cluster: say which this is.
  const { state, objects } = plane.opened;
  process.stdout.write(
    state === 'created'
      ? `nrn-operator local: data dir ${dataDir} created (a new, empty cluster)\n`
      : `nrn-operator local: data dir ${dataDir} reopened (${objects} objects)\n`,
  );
  let admin: Kube | undefined;
  let kube: Kube | undefined;
  let observability: ObservabilityServer | undefined;
  let facade: Facade | undefined;
  let webhook: AdmissionServer | undefined;
  if (options.operator || options.facade !== undefined) {
    // Through the kubeconfig, as against any cluster: neither reaches into src/local. The
    // admin's installs what a platform team installs on a cluster (CRDs, deploy/'s identity,
    // default classes, the webhook's registration); the operator and facade act as deploy/'s
    // ServiceAccount, so a right deploy/rbac.yaml lacks fails here as there (ADR 0030).
    const connected = await parts.start(
      'client',
      () => connect({ kubeconfigPath: plane.kubeconfigPath, log }),
      { close: (k) => () => k.close() },
    );
    admin = connected;
    await parts.start('CRDs', () => applyCrds(connected));
    const identity = await parts.start('operator identity', () =>
      createOperatorIdentity(connected, {
        adminKubeconfigPath: plane.kubeconfigPath,
        path: join(dataDir, 'operator.kubeconfig'),
        fieldManager: OPERATOR_NAME,
      }),
    );
    kube = await parts.start(
      'operator client',
      () => connect({ kubeconfigPath: identity.kubeconfigPath, log }),
      { close: (k) => () => k.close() },
    );
    // Only into a cluster just made: a platform team that edited or deleted one keeps its choice.
    if (state === 'created') {
      const installed = await parts.start('default ScopeClasses', () =>
        installDefaultScopeClasses(connected, { fieldManager: OPERATOR_NAME }),
      );
      process.stdout.write(
        `nrn-operator local: installed the default ScopeClasses ${installed.join(', ')} (deploy/scopeclasses/; yours to edit or delete, never installed again)\n`,
      );
    }
  }
  if (options.operator && kube !== undefined && admin !== undefined) {
    const connected = kube;
    const installer = admin;
    const metrics = new OperatorMetrics();
    if (options.facade !== undefined) metrics.requireReady(() => facade !== undefined);
    const address = options.metrics;
    if (address !== undefined) {
      observability = await parts.start(
        'metrics',
        () => startObservabilityServer({ metrics, log, ...address }),
        {
          describe: (error) => portFailure(error, '--metrics-port', address.port),
          close: (o) => () => o.close(),
        },
      );
    }
    await parts.start(
      'operator',
      () =>
        startOperator({
          kube: connected,
          log,
          namespace: DEFAULT_OPERATOR_NAMESPACE,
          leaderElection: true,
          metrics,
          ...(options.scopeClassRolloutRate !== undefined
            ? { scopeClassRolloutRate: options.scopeClassRolloutRate }
            : {}),
          ...(options.scopeClassKinds !== undefined
            ? { scopeClassKinds: options.scopeClassKinds }
            : {}),
        }),
      { close: (operator) => () => operator.stop() },
    );
    webhook = await startLocalWebhook(
      parts,
      { serve: connected, register: installer },
      dataDir,
      options.webhookPort ?? 0,
      log,
      options.scopeClassKinds,
    );
  } else if (options.metrics !== undefined) {
    log.warn("metrics are the operator's; --no-operator serves none");
  }
  let tokenAt = '';
  if (options.facade !== undefined && kube !== undefined) {
    const address = options.facade;
    const connected = kube;
    const auth = await parts.start(
      'facade auth',
      () =>
        address.auth === undefined || address.auth === 'static'
          ? localTokenAuth(dataDir, address.tokenFile)
          : authenticator(address, connected).then((a) => ({
              authenticator: a,
              tokenPath: undefined,
            })),
      { describe: (error) => fileFailure(error, '--facade-token-file', address.tokenFile) },
    );
    facade = await startFacadePart(parts, address, {
      kube: connected,
      log,
      auth: auth.authenticator,
      namespace: DEFAULT_OPERATOR_NAMESPACE,
    });
    if (auth.tokenPath !== undefined) tokenAt = ` (token in ${auth.tokenPath})`;
  }
  // Listening before the ready line: whoever reads it may signal at once (tests, scripts).
  const stopped = parts.stopOnSignal(log);
  // KUBECONFIG stays last: test/support (and scripts) read the path after it to the line's end.
  const metricsAt = observability !== undefined ? `; metrics at ${observability.url}` : '';
  const facadeAt = facade !== undefined ? `; facade at ${facade.url}${tokenAt}` : '';
  // Each part with where it is: the operator has no address of its own, it only runs.
  const operatorAt = options.operator ? `; operator running as ${operatorUsername()}` : '';
  const webhookAt = webhook !== undefined ? `; admission webhook at ${webhook.url}` : '';
  process.stdout.write(
    `nrn-operator local ready: API server at ${plane.url}${operatorAt}${webhookAt}${metricsAt}${facadeAt}; KUBECONFIG=${plane.kubeconfigPath}\n`,
  );
  const clean = await stopped;
  log.info({ clean }, 'stopped');
  return clean ? 0 : 1;
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
  /** Level and format of the logs on stderr; unset: info, pretty on a terminal. */
  log?: LogOptions;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  leaderElection: boolean;
  baseDomain?: string;
  /** Scopes a second a changed ScopeClass reaches. */
  scopeClassRolloutRate?: number;
  /** The kinds a ScopeClass may template (ADR 0029); the default setting where left out. */
  scopeClassKinds?: KindAllowlist;
  metrics: MetricsAddress;
  facade?: FacadeAddress;
  /** The admission webhook; served only with a certificate (the API server calls it by HTTPS). */
  webhook?: WebhookAddress;
  /** How far V8's heap grows past what is live (ADR 0026); undefined: the default. */
  heapGrowthPercent?: number;
}

/** `nrn-operator run`: the operator against the current kubeconfig or the in-cluster config. */
export async function runOperator(options: RunOptions): Promise<number> {
  const log: Logger = createLogger(options.log);
  setHeapGrowth(options.heapGrowthPercent ?? DEFAULT_HEAP_GROWTH_PERCENT);
  const parts = new Parts();
  const kube = await parts.start(
    'client',
    () =>
      connect({
        log,
        ...(options.kubeconfig !== undefined ? { kubeconfigPath: options.kubeconfig } : {}),
        ...(options.context !== undefined ? { context: options.context } : {}),
      }),
    {
      describe: (error) =>
        options.kubeconfig !== undefined
          ? `--kubeconfig ${options.kubeconfig} cannot be used: ${messageOf(error)}`
          : undefined,
      close: (k) => () => k.close(),
    },
  );
  // Never the kubeconfig's namespace: every replica must find the same Lease and id counter,
  // whatever context each was started with.
  const namespace = options.namespace ?? process.env.POD_NAMESPACE ?? DEFAULT_OPERATOR_NAMESPACE;
  const metrics = new OperatorMetrics();
  let facade: Facade | undefined;
  if (options.facade !== undefined) metrics.requireReady(() => facade !== undefined);
  // The Service sends the API server's webhook calls to ready pods only: not before it listens.
  let admission: AdmissionServer | undefined;
  const webhook = options.webhook;
  const servesWebhook = webhook?.certificate === 'self-managed' || webhook?.tls !== undefined;
  if (servesWebhook) metrics.requireReady(() => admission !== undefined);
  // Before the operator, so that /healthz answers (and /readyz says 503) while it lists.
  await parts.start(
    'metrics',
    () => startObservabilityServer({ metrics, log, ...options.metrics }),
    {
      describe: (error) => portFailure(error, '--metrics-port', options.metrics.port),
      close: (o) => () => o.close(),
    },
  );
  // Its stop() turns /readyz to 503 while it drains.
  await parts.start(
    'operator',
    () =>
      startOperator({
        kube,
        log,
        namespace,
        metrics,
        leaderElection: options.leaderElection,
        ...(options.baseDomain !== undefined ? { baseDomain: options.baseDomain } : {}),
        ...(options.scopeClassRolloutRate !== undefined
          ? { scopeClassRolloutRate: options.scopeClassRolloutRate }
          : {}),
        ...(options.scopeClassKinds !== undefined
          ? { scopeClassKinds: options.scopeClassKinds }
          : {}),
      }),
    { close: (operator) => () => operator.stop() },
  );
  if (webhook?.certificate === 'self-managed') {
    const certificate = await parts.start(
      'webhook certificate',
      () =>
        startSelfManagedCertificate({
          kube,
          log,
          namespace,
          serviceName: OPERATOR_NAME,
          fieldManager: OPERATOR_NAME,
        }),
      {
        describe: (error) =>
          `--webhook-certificate self-managed cannot keep Secret ${namespace}/${WEBHOOK_TLS_SECRET}: ${messageOf(error)}`,
        close: (c: SelfManagedCertificate) => () => c.stop(),
      },
    );
    admission = await startRunWebhook(
      parts,
      kube,
      webhook,
      certificate.files,
      log,
      options.scopeClassKinds,
    );
  } else if (webhook?.tls !== undefined) {
    admission = await startRunWebhook(
      parts,
      kube,
      webhook,
      webhook.tls,
      log,
      options.scopeClassKinds,
    );
  } else {
    // deploy/ gives it a certificate; without one the API server could not call it.
    log.info('no --webhook-tls-cert/--webhook-tls-key: the admission webhook is not served');
  }
  if (options.facade !== undefined) {
    const address = options.facade;
    const auth = await parts.start('facade auth', () => authenticator(address, kube), {
      describe: (error) => fileFailure(error, '--facade-token-file', address.tokenFile),
    });
    facade = await startFacadePart(parts, address, {
      kube,
      log,
      auth,
      namespace,
      ...(options.baseDomain !== undefined ? { baseDomain: options.baseDomain } : {}),
    });
  }
  return (await parts.stopOnSignal(log)) ? 0 : 1;
}

/** The facade, its TLS files read first so that a bad one is named by its own flag, not the port's. */
async function startFacadePart(
  parts: Parts,
  address: FacadeAddress,
  options: Pick<FacadeOptions, 'kube' | 'log' | 'auth' | 'namespace' | 'baseDomain'>,
): Promise<Facade> {
  const tls = address.tls;
  if (tls !== undefined) {
    await parts.start('facade TLS', () => readTlsPair(tls), {
      describe: (error) => tlsFailure(error, tls),
    });
  }
  const port = address.port ?? DEFAULT_FACADE_PORT;
  return parts.start(
    'facade',
    () =>
      startFacade({
        ...options,
        host: address.host ?? '127.0.0.1',
        port,
        ...(tls !== undefined ? { tls } : {}),
        ...(address.streams !== undefined ? { streams: address.streams } : {}),
      }),
    {
      describe: (error) => portFailure(error, '--facade-port', port),
      close: (f) => () => f.close(),
    },
  );
}

/**
 * `local`'s webhook: its CA and certificate in DIR/webhook, served on 127.0.0.1, and the
 * ValidatingWebhookConfiguration applied with this start's URL and CA. failurePolicy Ignore:
 * the configuration outlives the process in the data dir (a later `--no-operator` start, or
 * the moments of a stop, would otherwise refuse every write of our kinds), and every rule it
 * serves is also the reconcilers', so a call that fails loses an early answer, never a rule.
 */
async function startLocalWebhook(
  parts: Parts,
  kube: { readonly serve: Kube; readonly register: Kube },
  dataDir: string,
  port: number,
  log: Logger,
  scopeClassKinds?: KindAllowlist,
): Promise<AdmissionServer> {
  const tls = await parts.start('webhook TLS', () => loadOrCreateWebhookTls(dataDir), {
    describe: (error) =>
      `--data-dir ${dataDir} cannot hold the webhook's certificate: ${messageOf(error)}`,
  });
  const server = await parts.start(
    'admission webhook',
    () =>
      startAdmissionServer({
        kube: kube.serve,
        log,
        host: '127.0.0.1',
        port,
        tls: { certFile: tls.certFile, keyFile: tls.keyFile },
        ...(scopeClassKinds !== undefined ? { scopeClassKinds } : {}),
      }),
    {
      describe: (error) => portFailure(error, '--webhook-port', port),
      close: (w) => () => w.close(),
    },
  );
  await parts.start('webhook registration', () =>
    registerWebhook(kube.register, { url: server.url, caBundle: tls.ca }, 'Ignore', OPERATOR_NAME),
  );
  return server;
}

/** `run`'s webhook: deploy/ registers it (a Service in front, its CA from cert-manager or a Secret). */
async function startRunWebhook(
  parts: Parts,
  kube: Kube,
  address: WebhookAddress,
  tls: TlsFiles,
  log: Logger,
  scopeClassKinds?: KindAllowlist,
): Promise<AdmissionServer> {
  await parts.start('webhook TLS', () => readTlsPair(tls), {
    describe: (error) => webhookTlsFailure(error, tls),
  });
  const port = address.port ?? DEFAULT_WEBHOOK_PORT;
  return parts.start(
    'admission webhook',
    () =>
      startAdmissionServer({
        kube,
        log,
        host: address.host ?? '0.0.0.0',
        port,
        tls,
        ...(scopeClassKinds !== undefined ? { scopeClassKinds } : {}),
      }),
    {
      describe: (error) => portFailure(error, '--webhook-port', port),
      close: (w) => () => w.close(),
    },
  );
}

function webhookTlsFailure(error: unknown, tls: TlsFiles): string {
  const path = (error as NodeJS.ErrnoException).path;
  if (path === tls.keyFile) return fileFailure(error, '--webhook-tls-key', tls.keyFile) as string;
  if (path === tls.certFile)
    return fileFailure(error, '--webhook-tls-cert', tls.certFile) as string;
  return `--webhook-tls-cert ${tls.certFile} and --webhook-tls-key ${tls.keyFile} are not a usable pair: ${messageOf(error)}`;
}

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
