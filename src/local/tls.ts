// TLS for the local control plane: a private CA and a serving certificate for the loopback
// names, made on first start and kept in the data directory. kubectl sends a bearer token
// only over TLS, so the API is served over HTTPS even on 127.0.0.1.
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import forge from 'node-forge';
import { chmodPrivate, mkdirPrivate, writePrivate } from './private.js';

export interface TlsMaterial {
  /** PEM of the CA that signed the serving certificate: what clients trust. */
  ca: string;
  cert: string;
  key: string;
}

const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000;

function newCertificate(
  subject: string,
  publicKey: forge.pki.PublicKey,
  serial: string,
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serial;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + TEN_YEARS_MS);
  cert.setSubject([{ name: 'commonName', value: subject }]);
  return cert;
}

const randomSerial = () => `01${forge.util.bytesToHex(forge.random.getBytesSync(15))}`;

/** The names the serving certificate must cover for a given bind address. */
export function servingNames(host: string): string[] {
  return [...new Set(['127.0.0.1', '::1', 'localhost', host])].filter(
    (h) => h !== '0.0.0.0' && h !== '::',
  );
}

/** A new CA and a serving certificate it signed, for `names` (IPs and DNS names). */
export function issueTls(names: string[]): TlsMaterial {
  const caKeys = forge.pki.rsa.generateKeyPair({ bits: 2048 });
  const ca = newCertificate('nrn-local-ca', caKeys.publicKey, randomSerial());
  ca.setIssuer(ca.subject.attributes);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());

  const keys = forge.pki.rsa.generateKeyPair({ bits: 2048 });
  const cert = newCertificate('nrn-local-apiserver', keys.publicKey, randomSerial());
  cert.setIssuer(ca.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: names.map((n) => (isIP(n) ? { type: 7, ip: n } : { type: 2, value: n })),
    },
  ]);
  cert.sign(caKeys.privateKey, forge.md.sha256.create());
  return {
    ca: forge.pki.certificateToPem(ca),
    cert: forge.pki.certificateToPem(cert),
    key: forge.pki.privateKeyToPem(keys.privateKey),
  };
}

/** Loads the TLS files of `dir`, making them when missing or when `host` is not covered. */
export async function loadOrCreateTls(dir: string, host: string): Promise<TlsMaterial> {
  await mkdirPrivate(dir);
  const names = servingNames(host);
  const paths = {
    ca: join(dir, 'ca.crt'),
    cert: join(dir, 'apiserver.crt'),
    key: join(dir, 'apiserver.key'),
  };
  try {
    const [ca, cert, key] = await Promise.all(
      [paths.ca, paths.cert, paths.key].map((p) => readFile(p, 'utf8')),
    );
    const covered = forge.pki.certificateFromPem(cert as string).getExtension('subjectAltName') as {
      altNames?: Array<{ ip?: string; value?: string }>;
    } | null;
    const known = new Set((covered?.altNames ?? []).map((a) => a.ip ?? a.value));
    if (names.every((n) => known.has(n))) {
      // Files from an older start, or copied in, may be more open than 0600.
      for (const p of [paths.ca, paths.cert, paths.key]) await chmodPrivate(p);
      return { ca: ca as string, cert: cert as string, key: key as string };
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const material = issueTls(names);
  await writePrivate(paths.key, material.key);
  await writePrivate(paths.cert, material.cert);
  await writePrivate(paths.ca, material.ca);
  return material;
}
