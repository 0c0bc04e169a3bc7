// A server's own TLS (the facade's, the admission webhook's): a certificate and key read from
// files (a kubernetes.io/tls Secret mounted in the pod, as cert-manager writes one), and read
// again while serving, so that a renewed certificate is served without a restart and a broken
// renewal never replaces a working one.
import { readFile } from 'node:fs/promises';
import { createSecureContext, type Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** How often the files are read again; 0 turns it off. */
  readonly reloadMs?: number;
}

export interface TlsPair {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Kubelet updates a mounted Secret within about a minute; this follows at the same pace. */
export const DEFAULT_TLS_RELOAD_MS = 60_000;

/** Reads the pair and checks that the key matches the certificate (throws with the reason). */
export async function readTlsPair(files: TlsFiles): Promise<TlsPair> {
  const [cert, key] = await Promise.all([readFile(files.certFile), readFile(files.keyFile)]);
  createSecureContext({ cert, key });
  return { cert, key };
}

/**
 * Reads the files every `reloadMs` and gives `server` the pair when it changed and is valid;
 * an invalid pair is logged and the one in use stays. Returns the function that stops it.
 */
export function reloadTls(
  server: TlsServer,
  files: TlsFiles,
  current: TlsPair,
  log: Logger,
): () => void {
  const every = files.reloadMs ?? DEFAULT_TLS_RELOAD_MS;
  if (every <= 0) return () => {};
  let serving = current;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    readTlsPair(files)
      .then((next) => {
        if (next.cert.equals(serving.cert) && next.key.equals(serving.key)) return;
        server.setSecureContext({ cert: next.cert, key: next.key });
        serving = next;
        log.info({ certFile: files.certFile }, 'serving certificate reloaded');
      })
      .catch((error: unknown) => {
        // Mid-rotation the two files can disagree for a moment: the next read settles it.
        log.warn({ err: error, certFile: files.certFile }, 'serving certificate not reloaded');
      })
      .finally(() => {
        running = false;
      });
  }, every);
  timer.unref();
  return () => clearInterval(timer);
}
