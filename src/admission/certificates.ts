// The webhook's CA and serving certificates, one maker for both modes that make their own:
// `local`'s (a CA and a certificate for 127.0.0.1 in the data dir, made on first start and
// kept) and `run --webhook-certificate self-managed`'s (self-managed.ts: a CA and a
// certificate for the Service's DNS names, kept in a Secret). Keys are made by node:crypto
// (native, fast) and signed with node-forge, as src/local/tls.ts signs the API server's.
import { generateKeyPair, generateKeyPairSync } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import forge from 'node-forge';

export interface WebhookTls {
  /** PEM of the CA: the configuration's caBundle. */
  readonly ca: string;
  readonly certFile: string;
  readonly keyFile: string;
}

const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000;

function rsaKeys(): { publicKey: forge.pki.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const key = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  return { privateKey: key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e) };
}

function certificate(
  subject: string,
  publicKey: forge.pki.PublicKey,
  validMs = TEN_YEARS_MS,
  now = Date.now(),
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = `01${forge.util.bytesToHex(forge.random.getBytesSync(15))}`;
  cert.validity.notBefore = new Date(now - 60_000);
  cert.validity.notAfter = new Date(now + validMs);
  cert.setSubject([{ name: 'commonName', value: subject }]);
  return cert;
}

/** A new CA and a certificate it signed for 127.0.0.1 and localhost. */
export function issueWebhookTls(): { ca: string; cert: string; key: string } {
  const caKeys = rsaKeys();
  const ca = certificate('nrn-operator-webhook-ca', caKeys.publicKey);
  ca.setIssuer(ca.subject.attributes);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());
  const keys = rsaKeys();
  const cert = certificate('nrn-operator-webhook', keys.publicKey);
  cert.setIssuer(ca.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    // kube-apiserver checks the URL's host against the SANs (Go's crypto/x509: no CN fallback).
    {
      name: 'subjectAltName',
      altNames: [
        { type: 7, ip: '127.0.0.1' },
        { type: 2, value: 'localhost' },
      ],
    },
  ]);
  cert.sign(caKeys.privateKey, forge.md.sha256.create());
  return {
    ca: forge.pki.certificateToPem(ca),
    cert: forge.pki.certificateToPem(cert),
    key: forge.pki.privateKeyToPem(keys.privateKey),
  };
}

/** DIR/webhook/{ca.crt,tls.crt,tls.key}: read when there, else made (0600, in a 0700 dir). */
export async function loadOrCreateWebhookTls(dataDir: string): Promise<WebhookTls> {
  const dir = join(dataDir, 'webhook');
  const paths = { ca: join(dir, 'ca.crt'), cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
  try {
    const ca = await readFile(paths.ca, 'utf8');
    await Promise.all([readFile(paths.cert), readFile(paths.key)]);
    return { ca, certFile: paths.cert, keyFile: paths.key };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const made = issueWebhookTls();
  await writeFile(paths.key, made.key, { mode: 0o600 });
  await writeFile(paths.cert, made.cert, { mode: 0o600 });
  await writeFile(paths.ca, made.ca, { mode: 0o600 });
  return { ca: made.ca, certFile: paths.cert, keyFile: paths.key };
}

/** A PEM certificate and its PEM key. */
export interface PemPair {
  readonly cert: string;
  readonly key: string;
}

const generateKeyPairAsync = promisify(generateKeyPair);

/** As rsaKeys, off the event loop: a renewal runs while the webhook serves. */
async function rsaKeysAsync(): Promise<{
  publicKey: forge.pki.PublicKey;
  privateKey: forge.pki.rsa.PrivateKey;
}> {
  const { privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const key = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  return { privateKey: key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e) };
}

/** A new self-signed CA, valid `validMs` from `now`. */
export async function issueCa(validMs: number, now = Date.now()): Promise<PemPair> {
  const keys = await rsaKeysAsync();
  const ca = certificate('nrn-operator-webhook-ca', keys.publicKey, validMs, now);
  ca.setIssuer(ca.subject.attributes);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(keys.privateKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(ca), key: forge.pki.privateKeyToPem(keys.privateKey) };
}

/** A serving certificate for `dnsNames`, signed by `ca`, valid `validMs` from `now`. */
export async function issueServingCertificate(
  ca: PemPair,
  dnsNames: readonly string[],
  validMs: number,
  now = Date.now(),
): Promise<PemPair> {
  const caCert = forge.pki.certificateFromPem(ca.cert);
  const caKey = forge.pki.privateKeyFromPem(ca.key);
  const keys = await rsaKeysAsync();
  const cert = certificate(dnsNames[0] ?? 'nrn-operator-webhook', keys.publicKey, validMs, now);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    // Go's crypto/x509 checks the SANs only (no CN fallback).
    { name: 'subjectAltName', altNames: dnsNames.map((value) => ({ type: 2, value })) },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return {
    cert: forge.pki.certificateToPem(cert),
    key: forge.pki.privateKeyToPem(keys.privateKey),
  };
}

/** What a PEM certificate says of itself: its validity and DNS names. */
export function describeCertificate(pem: string): {
  notBefore: Date;
  notAfter: Date;
  dnsNames: string[];
} {
  const cert = forge.pki.certificateFromPem(pem);
  const san = cert.getExtension('subjectAltName') as
    | { altNames?: { type: number; value?: string }[] }
    | undefined;
  const dnsNames = (san?.altNames ?? [])
    .filter((n) => n.type === 2 && typeof n.value === 'string')
    .map((n) => n.value as string);
  return { notBefore: cert.validity.notBefore, notAfter: cert.validity.notAfter, dnsNames };
}

/** The certificates of a PEM bundle, each as PEM, in order. */
export function splitPemBundle(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
}
