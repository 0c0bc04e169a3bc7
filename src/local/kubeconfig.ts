// The kubeconfig the local control plane writes for kubectl and client-node (its server,
// the CA to trust, the bearer token), and the token itself.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { chmodPrivate, writePrivate } from './private.js';

// Re-exported: the control plane's assembly (index.ts) takes it from here with the kubeconfig.
export { writePrivate };

export const CONTEXT = 'nrn-local';

export function kubeconfigYaml(
  server: string,
  token: string,
  caPem: string,
  namespace = 'default',
): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: CONTEXT,
        cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') },
      },
    ],
    users: [{ name: CONTEXT, user: { token } }],
    contexts: [{ name: CONTEXT, context: { cluster: CONTEXT, user: CONTEXT, namespace } }],
    'current-context': CONTEXT,
    preferences: {},
  });
}

/** The token kept in `path`, made on first start so that kubeconfigs outlive restarts. */
export async function loadOrCreateToken(path: string): Promise<string> {
  try {
    const existing = (await readFile(path, 'utf8')).trim();
    if (existing !== '') {
      await chmodPrivate(path);
      return existing;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = randomBytes(32).toString('base64url');
  await writePrivate(path, `${token}\n`);
  return token;
}
