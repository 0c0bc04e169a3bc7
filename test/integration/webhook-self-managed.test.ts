// `run --webhook-certificate self-managed` on a cluster (the local control plane), as deploy/
// runs it: two replicas start at once with deploy/'s RBAC (the operator's ServiceAccount), one
// Secret holds the CA and the serving certificate, the CA is patched into the caBundle of
// deploy/'s ValidatingWebhookConfiguration, and both replicas' admission servers hand a TLS
// client the same certificate, which that CA verifies for the Service's name. Renewal: a
// serving certificate a third from its end is signed again by the same CA (the caBundle stays),
// a CA near its end is replaced while the old one stays in the bundle. The API server's call
// through clientConfig.service is not made here: the local plane has no Service endpoints (ADR
// 0003); what is tested is the certificate the call would meet. Last, `nrn-operator run` itself
// in two processes, as deploy/ runs it.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { connect as tlsConnect } from 'node:tls';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitPemBundle } from '../../src/admission/certificates.js';
import {
  type AdmissionServer,
  clusterWebhookConfiguration,
  type SelfManagedCertificate,
  serviceDnsNames,
  startAdmissionServer,
  startSelfManagedCertificate,
  WEBHOOK_CONFIGURATION_NAME,
  WEBHOOK_TLS_SECRET,
} from '../../src/admission/index.js';
import { connect, defineResource, type Kube, Secrets } from '../../src/kube/index.js';
import { applyCrds, OPERATOR_NAME } from '../../src/operator.js';
import { type StartedCluster, startCluster, uniqueName } from '../support/cluster.js';
import {
  type OperatorProcess,
  startOperatorProcess,
  terminate,
} from '../support/operator-processes.js';
import { until } from '../support/wait.js';

const Configurations = defineResource({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
});
const DAY_MS = 24 * 3600 * 1000;

/** The certificate a TLS server at `port` presents for `servername`, verified by `ca`. */
function handshake(port: number, ca: string, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca, servername }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.once('error', reject);
  });
}

const fingerprintOf = (pem: string) => {
  const der = Buffer.from(pem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
  return createHash('sha256').update(der).digest('hex').toUpperCase().match(/../g)?.join(':') ?? '';
};

describe('the self-managed webhook certificate', () => {
  const ns = uniqueName('webhook-certs');
  const log = pino({ level: 'silent' });
  let cluster: StartedCluster;
  let admin: Kube;
  let operator: Kube;
  const started: SelfManagedCertificate[] = [];
  const servers: AdmissionServer[] = [];
  const start = (now?: () => number) =>
    startSelfManagedCertificate({
      kube: operator,
      log,
      namespace: ns,
      serviceName: OPERATOR_NAME,
      fieldManager: OPERATOR_NAME,
      ...(now !== undefined ? { now } : {}),
    }).then((c) => {
      started.push(c);
      return c;
    });
  const stored = async () => {
    const secret = (await admin
      .resource(Secrets)
      .get({ namespace: ns, name: WEBHOOK_TLS_SECRET })) as unknown as {
      type: string;
      data: Record<string, string>;
    };
    const field = (key: string) => Buffer.from(secret.data[key] ?? '', 'base64').toString();
    return { type: secret.type, cert: field('tls.crt'), ca: field('ca.crt') };
  };
  const caBundles = async () => {
    const configuration = (await admin
      .resource(Configurations)
      .get({ name: WEBHOOK_CONFIGURATION_NAME })) as unknown as {
      webhooks: { clientConfig: { caBundle?: string } }[];
    };
    return configuration.webhooks.map((w) =>
      Buffer.from(w.clientConfig.caBundle ?? '', 'base64').toString(),
    );
  };

  beforeAll(async () => {
    // The operator acts as deploy/'s ServiceAccount, bound by deploy/rbac.yaml, in `ns`.
    cluster = await startCluster({ operatorNamespace: ns });
    admin = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    operator = await connect({ kubeconfigPath: cluster.operatorKubeconfigPath, log });
    await applyCrds(admin);
    // deploy/'s configuration, moved to `ns` as kustomize's namespace would move it.
    await admin.resource(Configurations).create(
      clusterWebhookConfiguration({
        namespace: ns,
        serviceName: OPERATOR_NAME,
        servicePort: 443,
        serviceAccount: OPERATOR_NAME,
      }) as never,
    );
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await Promise.all(started.map((c) => c.stop()));
    await operator?.close();
    await admin?.close();
    await cluster?.close();
  });

  it('two replicas starting at once keep one Secret, patch its CA into the caBundle, and serve the same certificate', async () => {
    const [first, second] = await Promise.all([start(), start()]);
    if (first === undefined || second === undefined) throw new Error('not started');
    const secret = await stored();
    expect(secret.type).toBe('kubernetes.io/tls');
    expect(first.ca()).toBe(secret.ca);
    expect(second.ca()).toBe(secret.ca);
    expect(await caBundles()).toEqual([secret.ca, secret.ca]);
    for (const replica of [first, second]) {
      expect(await readFile(replica.files.certFile, 'utf8')).toBe(secret.cert);
    }

    // Each replica's admission server, as `run` starts it on the files it was given.
    for (const replica of [first, second]) {
      servers.push(
        await startAdmissionServer({ kube: operator, log, tls: replica.files, port: 0 }),
      );
    }
    const [name] = serviceDnsNames(OPERATOR_NAME, ns);
    expect(name).toBe(`${OPERATOR_NAME}.${ns}.svc`);
    const seen = await Promise.all(
      servers.map((s) => handshake(s.port, secret.ca, name as string)),
    );
    expect(seen).toEqual([fingerprintOf(secret.cert), fingerprintOf(secret.cert)]);
    // Verified for the Service's name, and for no other.
    await expect(handshake(servers[0]?.port ?? 0, secret.ca, 'elsewhere.example')).rejects.toThrow(
      /altnames|Hostname/i,
    );
  });

  it('a later replica reads the Secret, and puts back a caBundle someone removed', async () => {
    const before = await stored();
    await admin
      .resource(Configurations)
      .patch(
        { name: WEBHOOK_CONFIGURATION_NAME },
        [{ op: 'remove', path: '/webhooks/1/clientConfig/caBundle' }],
        { type: 'json' },
      );
    const third = await start();
    expect(third.ca()).toBe(before.ca);
    expect(await readFile(third.files.certFile, 'utf8')).toBe(before.cert);
    expect(await stored()).toEqual(before);
    expect(await caBundles()).toEqual([before.ca, before.ca]);
  });

  it('renews a serving certificate a third from its end with the same CA, and every replica serves it', async () => {
    const before = await stored();
    const later = await start(() => Date.now() + 250 * DAY_MS);
    const after = await stored();
    expect(after.cert).not.toBe(before.cert);
    expect(after.ca).toBe(before.ca);
    expect(await readFile(later.files.certFile, 'utf8')).toBe(after.cert);
    // A replica that started before takes it up at its next check.
    const first = started[0] as SelfManagedCertificate;
    await first.check();
    expect(await readFile(first.files.certFile, 'utf8')).toBe(after.cert);
    expect(await caBundles()).toEqual([before.ca, before.ca]);
  });

  it('replaces a CA near its end, trusting the old one beside the new until it ends', async () => {
    const before = await stored();
    await start(() => Date.now() + 9 * 365 * DAY_MS);
    const after = await stored();
    const [next, retiring, ...more] = splitPemBundle(after.ca);
    expect(more).toEqual([]);
    expect(next).not.toBe(splitPemBundle(before.ca)[0]);
    expect(retiring).toBe(splitPemBundle(before.ca)[0]);
    expect(await caBundles()).toEqual([after.ca, after.ca]);
  });
});

describe('nrn-operator run --webhook-certificate self-managed', () => {
  const ns = uniqueName('webhook-run');
  const children: OperatorProcess[] = [];
  let cluster: StartedCluster;
  let admin: Kube;

  beforeAll(async () => {
    cluster = await startCluster({ operatorNamespace: ns });
    admin = await connect({
      kubeconfigPath: cluster.kubeconfigPath,
      log: pino({ level: 'silent' }),
    });
    await applyCrds(admin);
    await admin.resource(Configurations).create(
      clusterWebhookConfiguration({
        namespace: ns,
        serviceName: OPERATOR_NAME,
        servicePort: 443,
        serviceAccount: OPERATOR_NAME,
      }) as never,
    );
  });

  afterAll(async () => {
    for (const child of children) await terminate(child.child);
    await admin?.close();
    await cluster?.close();
  });

  it('two replicas, leader and standby, serve the one certificate of the Secret', {
    timeout: 120_000,
  }, async () => {
    // As deploy/ sets them (env), on ports of their own: both replicas share this machine.
    const saved = { ...process.env };
    process.env.NRN_WEBHOOK_CERTIFICATE = 'self-managed';
    process.env.NRN_WEBHOOK_PORT = '0';
    process.env.LOG_FORMAT = 'json';
    try {
      for (let i = 0; i < 2; i++) {
        children.push(startOperatorProcess({ environment: cluster.operatorKubeconfigPath }, ns));
      }
    } finally {
      process.env = saved;
    }
    const listening = await Promise.all(
      children.map((c) =>
        c.waitForLog((line) => line.msg === 'admission webhook listening', 60_000),
      ),
    );
    const secret = (await admin
      .resource(Secrets)
      .get({ namespace: ns, name: WEBHOOK_TLS_SECRET })) as unknown as {
      data: Record<string, string>;
    };
    const ca = Buffer.from(secret.data['ca.crt'] ?? '', 'base64').toString();
    const cert = Buffer.from(secret.data['tls.crt'] ?? '', 'base64').toString();
    const [name] = serviceDnsNames(OPERATOR_NAME, ns);
    const seen = await Promise.all(
      listening.map((line) =>
        handshake(Number(new URL(String(line.url)).port), ca, name as string),
      ),
    );
    expect(seen).toEqual([fingerprintOf(cert), fingerprintOf(cert)]);
    // Not the leader's alone: one replica leads, the other (a standby) serves it too.
    const leads = (c: OperatorProcess) => c.logs.some((l) => l.msg === 'leadership acquired');
    await until(() => children.some(leads), 60_000);
    const leaders = children.filter(leads);
    expect(leaders).toHaveLength(1);
    // One made it; the other read it.
    const made = children.flatMap((c) =>
      c.logs.filter((l) => l.msg === 'webhook certificate made'),
    );
    expect(made).toHaveLength(1);
  });
});
