// `run --webhook-certificate self-managed`: the webhook's CA and serving certificate, made by
// the operator itself when no cert-manager is there. They live in one Secret of the operator's
// namespace, so that every replica serves the same certificate: the first replica to start
// creates it (a create that meets AlreadyExists reads the winner's), a renewal replaces it with
// a compare-and-swap PUT (a Conflict reads the other replica's). Each replica writes the pair
// to files it serves (the admission server reads them again every minute, as it reads
// cert-manager's) and patches the CA into the ValidatingWebhookConfiguration's caBundle.
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import {
  defineResource,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type JsonPatchOperation,
  type Kube,
  type KubeObject,
  Secrets,
} from '../kube/index.js';
import type { TlsFiles } from '../util/serving-tls.js';
import {
  describeCertificate,
  issueCa,
  issueServingCertificate,
  type PemPair,
  splitPemBundle,
} from './certificates.js';
import { WEBHOOK_CONFIGURATION_NAME } from './registration.js';

/** The Secret both replicas share (kubernetes.io/tls, plus ca.crt and ca.key). */
export const WEBHOOK_TLS_SECRET = 'nrn-operator-webhook-tls';

const DAY_MS = 24 * 3600 * 1000;
/** The serving certificate's life; renewed when a third of it is left (as cert-manager's default). */
export const SERVING_VALIDITY_MS = 365 * DAY_MS;
/** The CA's life; a new one is made when less than two serving lives are left. */
export const CA_VALIDITY_MS = 10 * 365 * DAY_MS;
/** How often each replica looks at the Secret and the configuration. */
export const DEFAULT_CHECK_EVERY_MS = 3600_000;
/** After a failed check (the configuration not applied yet, the API server away): sooner. */
const RETRY_EVERY_MS = 60_000;
/** How many times a lost race (AlreadyExists, Conflict) is read and tried again in one check. */
const MAX_RACES = 5;

const ValidatingWebhookConfigurations = defineResource({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
});

export interface SelfManagedCertificateOptions {
  readonly kube: Pick<Kube, 'resource'>;
  readonly log: Logger;
  /** The operator's namespace: the Secret's and the Service's. */
  readonly namespace: string;
  /** The Service the API server calls (clientConfig.service.name). */
  readonly serviceName: string;
  /** The field manager of the caBundle patch. */
  readonly fieldManager: string;
  readonly secretName?: string;
  readonly configurationName?: string;
  /** Where the served files are written; a new temporary directory when unset. */
  readonly dir?: string;
  readonly checkEveryMs?: number;
  /** The clock renewal reads (tests move it). */
  readonly now?: () => number;
}

export interface SelfManagedCertificate {
  /** The CA bundle (PEM) the configuration trusts: the current CA first, a retiring one after. */
  readonly ca: () => string;
  /** The files to serve (tls.crt, tls.key), rewritten on renewal. */
  readonly files: TlsFiles;
  /** One check now: the Secret read (made or renewed when due), files written, caBundle patched. */
  check(): Promise<void>;
  stop(): Promise<void>;
}

/** What the Secret holds, as PEM. */
interface Stored {
  readonly caBundle: string;
  readonly caKey: string;
  readonly cert: string;
  readonly key: string;
}

/**
 * The DNS names kube-apiserver checks: it calls a clientConfig.service at
 * `<name>.<namespace>.svc` and verifies that server name (staging/src/k8s.io/apiserver/pkg/util/
 * webhook/client.go: `serverName := svc.Name + "." + svc.Namespace + ".svc"`); the longer form
 * serves a client inside the cluster that uses the full name.
 */
export function serviceDnsNames(serviceName: string, namespace: string): string[] {
  return [
    `${serviceName}.${namespace}.svc`,
    `${serviceName}.${namespace}.svc.cluster.local`,
    `${serviceName}.${namespace}`,
    serviceName,
  ];
}

/** Reads or makes the Secret, writes the files, patches the caBundle; then checks every hour. */
export async function startSelfManagedCertificate(
  options: SelfManagedCertificateOptions,
): Promise<SelfManagedCertificate> {
  const { kube, log, namespace } = options;
  const secretName = options.secretName ?? WEBHOOK_TLS_SECRET;
  const configurationName = options.configurationName ?? WEBHOOK_CONFIGURATION_NAME;
  const now = options.now ?? Date.now;
  const dnsNames = serviceDnsNames(options.serviceName, namespace);
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'nrn-operator-webhook-')));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const files: TlsFiles = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
  const secrets = kube.resource(Secrets);
  const configurations = kube.resource(ValidatingWebhookConfigurations);
  let current: Stored | undefined;

  const toSecret = (stored: Stored, resourceVersion?: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: secretName,
      namespace,
      labels: {
        'app.kubernetes.io/name': 'nrn-operator',
        'app.kubernetes.io/part-of': 'nrn-operator',
      },
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
    },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': b64(stored.cert),
      'tls.key': b64(stored.key),
      'ca.crt': b64(stored.caBundle),
      'ca.key': b64(stored.caKey),
    },
  });

  /** The Secret as stored, made or renewed when due; a lost race reads the winner's. */
  async function settleSecret(): Promise<Stored> {
    for (let race = 0; race < MAX_RACES; race++) {
      let secret: KubeObject | undefined;
      try {
        secret = await secrets.get({ namespace, name: secretName });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      const stored = secret === undefined ? undefined : readStored(secret);
      const plan = renewal(stored, dnsNames, now());
      // renewal() keeps only what is stored.
      if (plan === 'keep') return stored as Stored;
      const next = await issue(stored, plan, dnsNames, now());
      try {
        if (secret === undefined) {
          await secrets.create(toSecret(next) as never);
          log.info({ secret: `${namespace}/${secretName}` }, 'webhook certificate made');
        } else {
          // resourceVersion: compare-and-swap, so two replicas renewing at once keep one.
          await secrets.replace(toSecret(next, secret.metadata.resourceVersion) as never);
          log.info({ secret: `${namespace}/${secretName}`, plan }, 'webhook certificate renewed');
        }
        return next;
      } catch (error) {
        if (!isAlreadyExists(error) && !isConflict(error)) throw error;
        // Another replica made or renewed it first: read theirs.
      }
    }
    throw new Error(`Secret ${namespace}/${secretName} kept changing under ${MAX_RACES} tries`);
  }

  async function writeFiles(stored: Stored): Promise<void> {
    const [cert, key] = await Promise.all([
      readFile(files.certFile, 'utf8').catch(() => ''),
      readFile(files.keyFile, 'utf8').catch(() => ''),
    ]);
    if (cert === stored.cert && key === stored.key) return;
    // Each file whole (write then rename): the server's reload never reads half of one.
    await writeAtomically(files.keyFile, stored.key);
    await writeAtomically(files.certFile, stored.cert);
  }

  /**
   * The CA into every webhook of the configuration that has none or another: a JSON patch
   * whose `test` of each webhook's name keeps it from landing on a webhook the list no longer
   * holds at that index. deploy/ applies the configuration without a caBundle, so a later
   * `kubectl apply` leaves this one alone.
   */
  async function patchCaBundle(caBundle: string): Promise<'patched' | 'unchanged' | 'absent'> {
    let configuration: KubeObject;
    try {
      configuration = await configurations.get({ name: configurationName });
    } catch (error) {
      if (isNotFound(error)) return 'absent';
      throw error;
    }
    const wanted = b64(caBundle);
    const webhooks = (configuration as unknown as { webhooks?: unknown }).webhooks;
    const operations: JsonPatchOperation[] = [];
    (Array.isArray(webhooks) ? webhooks : []).forEach((webhook: unknown, i) => {
      const { name, clientConfig } = (webhook ?? {}) as {
        name?: unknown;
        clientConfig?: { caBundle?: unknown };
      };
      if (typeof name !== 'string' || clientConfig?.caBundle === wanted) return;
      operations.push(
        { op: 'test', path: `/webhooks/${i}/name`, value: name },
        { op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: wanted },
      );
    });
    if (operations.length === 0) return 'unchanged';
    await configurations.patch({ name: configurationName }, operations, {
      type: 'json',
      fieldManager: options.fieldManager,
    });
    log.info({ configuration: configurationName }, 'webhook CA written into caBundle');
    return 'patched';
  }

  async function check(): Promise<void> {
    const stored = await settleSecret();
    await writeFiles(stored);
    current = stored;
    const patched = await patchCaBundle(stored.caBundle);
    if (patched === 'absent') {
      throw new Error(
        `ValidatingWebhookConfiguration ${configurationName} is not there to take the CA (deploy/ applies it)`,
      );
    }
  }

  // The first check makes what is served: a failure here fails the start, except a missing
  // configuration, which deploy/ may apply after the Deployment (retried in a minute).
  try {
    current = await settleSecret();
    await writeFiles(current);
  } catch (error) {
    if (ownDir) await rm(dir, { recursive: true, force: true });
    throw error;
  }
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running: Promise<void> | undefined;
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = check()
        .then(() => schedule(options.checkEveryMs ?? DEFAULT_CHECK_EVERY_MS))
        .catch((error: unknown) => {
          log.warn({ err: error }, 'webhook certificate check failed; retrying in a minute');
          schedule(RETRY_EVERY_MS);
        });
    }, ms);
    timer.unref();
  };
  await patchCaBundle(current?.caBundle ?? '')
    .then((result) => {
      if (result === 'absent') {
        log.warn(
          { configuration: configurationName },
          'no ValidatingWebhookConfiguration to take the webhook CA yet; retrying in a minute',
        );
        schedule(RETRY_EVERY_MS);
      } else schedule(options.checkEveryMs ?? DEFAULT_CHECK_EVERY_MS);
    })
    .catch((error: unknown) => {
      log.warn({ err: error }, 'webhook CA not written into caBundle; retrying in a minute');
      schedule(RETRY_EVERY_MS);
    });

  return {
    ca: () => current?.caBundle ?? '',
    files,
    check,
    stop: async () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running?.catch(() => {});
      if (ownDir) await rm(dir, { recursive: true, force: true });
    },
  };
}

type Plan = 'keep' | 'new-ca' | 'new-serving';

/** What a check does with what is stored: keep it, sign a new serving certificate, or a new CA. */
function renewal(stored: Stored | undefined, dnsNames: readonly string[], now: number): Plan {
  if (stored === undefined) return 'new-ca';
  const ca = splitPemBundle(stored.caBundle)[0];
  if (ca === undefined) return 'new-ca';
  let caEnds: number;
  let serving: ReturnType<typeof describeCertificate>;
  try {
    caEnds = describeCertificate(ca).notAfter.getTime();
    serving = describeCertificate(stored.cert);
  } catch {
    // Edited into something unreadable: made again, as if it were missing.
    return 'new-ca';
  }
  if (caEnds - now < 2 * SERVING_VALIDITY_MS) return 'new-ca';
  const life = serving.notAfter.getTime() - serving.notBefore.getTime();
  if (serving.notAfter.getTime() - now < life / 3) return 'new-serving';
  // A Service renamed (or a namespace changed) needs its names in the certificate.
  if (dnsNames.some((name) => !serving.dnsNames.includes(name))) return 'new-serving';
  return 'keep';
}

/**
 * The next Stored. A new CA keeps the old one after it in the bundle while it is still valid:
 * a replica that has not read the new Secret yet serves a certificate the old CA signed, and
 * the API server must trust both until every replica has moved.
 */
async function issue(
  stored: Stored | undefined,
  plan: Exclude<Plan, 'keep'>,
  dnsNames: readonly string[],
  now: number,
): Promise<Stored> {
  if (plan === 'new-serving' && stored !== undefined) {
    const ca: PemPair = { cert: splitPemBundle(stored.caBundle)[0] ?? '', key: stored.caKey };
    const serving = await issueServingCertificate(ca, dnsNames, SERVING_VALIDITY_MS, now);
    return { caBundle: stored.caBundle, caKey: stored.caKey, ...serving };
  }
  const ca = await issueCa(CA_VALIDITY_MS, now);
  const serving = await issueServingCertificate(ca, dnsNames, SERVING_VALIDITY_MS, now);
  const retiring =
    stored === undefined ? undefined : stillValid(splitPemBundle(stored.caBundle)[0], now);
  return {
    caBundle: retiring === undefined ? ca.cert : `${ca.cert}\n${retiring}`,
    caKey: ca.key,
    ...serving,
  };
}

function stillValid(pem: string | undefined, now: number): string | undefined {
  if (pem === undefined) return undefined;
  try {
    return describeCertificate(pem).notAfter.getTime() > now ? pem : undefined;
  } catch {
    return undefined;
  }
}

/** The Secret's four values; undefined when one is missing (made again). */
function readStored(secret: KubeObject): Stored | undefined {
  const data = (secret as unknown as { data?: Record<string, unknown> }).data ?? {};
  const field = (key: string) => {
    const value = data[key];
    return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : undefined;
  };
  const [cert, key, caBundle, caKey] = ['tls.crt', 'tls.key', 'ca.crt', 'ca.key'].map(field);
  if (!cert || !key || !caBundle || !caKey) return undefined;
  return { cert, key, caBundle, caKey };
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

async function writeAtomically(path: string, content: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, content, { mode: 0o600 });
  await rename(temporary, path);
}
