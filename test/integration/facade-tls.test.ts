// The facade over HTTPS, as a pod serves it with a mounted kubernetes.io/tls Secret: the
// certificate in the files is the one a client sees, a renewed one is served without a
// restart, a broken renewal leaves the working one in place, and a bad pair stops startup.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Facade, NoAuthenticator, startFacade } from '../../src/facade/index.js';
import { connect, type Kube } from '../../src/kube/index.js';
import { issueTls, type TlsMaterial } from '../../src/local/tls.js';
import { silentLogger } from '../../src/log.js';
import { applyCrds } from '../../src/operator.js';
import { type StartedCluster, startCluster, uniqueName } from '../support/cluster.js';
import { refusalLog } from '../support/operator-identity.js';
import { sleep } from '../support/wait.js';

const log = silentLogger();
const facadeLog = refusalLog();

describe('facade: HTTPS with its own certificate', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  /** The facade's client: deploy/'s ServiceAccount, with the rights of deploy/rbac.yaml. */
  let facadeKube: Kube;
  let facadeNs: string;
  let dir: string;
  let facade: Facade | undefined;
  const files = () => ({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') });
  const install = async (pair: { cert: string; key: string }) => {
    await writeFile(files().certFile, pair.cert);
    await writeFile(files().keyFile, pair.key);
  };
  /** The fingerprint of the certificate the facade presents now. */
  const served = (url: string, ca: string) =>
    new Promise<string>((resolve, reject) => {
      const { hostname, port } = new URL(url);
      const socket = tlsConnect({ host: hostname, port: Number(port), ca }, () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.end();
      });
      socket.once('error', reject);
    });
  const fingerprint = async (pair: TlsMaterial) =>
    new (await import('node:crypto')).X509Certificate(pair.cert).fingerprint256;

  beforeAll(async () => {
    facadeNs = uniqueName('facade-tls');
    cluster = await startCluster({ operatorNamespace: facadeNs });
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    await applyCrds(kube);
    facadeKube = await connect({
      kubeconfigPath: cluster.operatorKubeconfigPath,
      log: facadeLog.log,
    });
    dir = await mkdtemp(join(tmpdir(), 'nrn-facade-tls-'));
  });
  afterAll(async () => {
    await facade?.close();
    // Whatever the facade did, deploy/rbac.yaml allowed.
    expect(facadeLog.refusals()).toEqual([]);
    facadeKube?.close();
    kube?.close();
    await cluster?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves its certificate, takes a renewed one without a restart, keeps it over a broken one', async () => {
    const first = issueTls(['127.0.0.1']);
    await install(first);
    facade = await startFacade({
      kube: facadeKube,
      log: facadeLog.log,
      namespace: facadeNs,
      host: '127.0.0.1',
      port: 0,
      auth: new NoAuthenticator(),
      tls: { ...files(), reloadMs: 50 },
    });
    expect(facade.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const answer = await request(`${facade.url}/service`, {
      dispatcher: new Agent({ connect: { ca: first.ca } }),
    });
    expect(answer.statusCode).toBe(200);
    expect(await answer.body.json()).toEqual({ paging: { limit: 30, offset: 0 }, results: [] });
    expect(await served(facade.url, first.ca)).toBe(await fingerprint(first));
    // Plain HTTP on the HTTPS port gets no answer from the API.
    await expect(fetch(`${facade.url.replace('https:', 'http:')}/service`)).rejects.toThrow();

    // Renewed (as cert-manager or kubelet replace the Secret's files): served within a reload.
    const second = issueTls(['127.0.0.1']);
    await install(second);
    const deadline = Date.now() + 5_000;
    while ((await served(facade.url, second.ca).catch(() => '')) !== (await fingerprint(second))) {
      if (Date.now() > deadline) throw new Error('the renewed certificate was not served');
      await sleep(50);
    }

    // A key that does not match the certificate: refused, and the working pair stays.
    await writeFile(files().keyFile, issueTls(['127.0.0.1']).key);
    await sleep(300);
    expect(await served(facade.url, second.ca)).toBe(await fingerprint(second));
    await facade.close();
    facade = undefined;
  });

  it('refuses to start with a certificate and key that do not match, or are missing', async () => {
    const options = {
      kube: facadeKube,
      log: facadeLog.log,
      namespace: facadeNs,
      host: '127.0.0.1',
      port: 0,
      auth: new NoAuthenticator(),
    };
    await writeFile(files().certFile, issueTls(['127.0.0.1']).cert);
    await writeFile(files().keyFile, issueTls(['127.0.0.1']).key);
    await expect(startFacade({ ...options, tls: files() })).rejects.toThrow(/key values mismatch/);
    await expect(
      startFacade({ ...options, tls: { ...files(), keyFile: join(dir, 'missing.key') } }),
    ).rejects.toThrow(/ENOENT/);
  });
});
