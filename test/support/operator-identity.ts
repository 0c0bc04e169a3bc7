// The operator's own identity in the integration suite, as it runs in a cluster: the
// nrn-operator ServiceAccount of deploy/serviceaccount.yaml, bound by the roles of
// deploy/rbac.yaml (read from those files, so the suite tests what ships), and a kubeconfig
// holding a token of it from the TokenRequest API (`kubectl create token`). Tests keep the
// admin kubeconfig for setup and assertions; only the operator's client (and the facade's)
// uses this one, so a right the code needs and deploy/rbac.yaml lacks fails the suite with
// the API server's 403.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type Logger, pino } from 'pino';
import { connect } from '../../src/kube/index.js';
import {
  createOperatorIdentity as createIdentity,
  DEPLOY_NAMESPACE,
  operatorUsername,
} from '../../src/operator-identity.js';
import type { LogLine } from './operator-processes.js';

/** The namespace deploy/ runs the operator in; tests run theirs in namespaces of their own. */
export { DEPLOY_NAMESPACE };

const run = promisify(execFile);

/**
 * Applies deploy/'s identity in `namespace` with the admin kubeconfig, asks for a token of the
 * ServiceAccount, and writes to `path` the admin kubeconfig with that token as its only
 * credentials (same server, same CA): the product's own steps (src/operator-identity.ts, what
 * `nrn-operator local` does). Gives the token too: a pod's service account file holds it.
 */
export async function createOperatorIdentity(
  adminKubeconfigPath: string,
  namespace: string,
  path: string,
): Promise<{ readonly kubeconfigPath: string; readonly token: string }> {
  const admin = await connect({
    kubeconfigPath: adminKubeconfigPath,
    log: pino({ level: 'silent' }),
  });
  let token: string;
  try {
    ({ token } = await createIdentity(admin, {
      adminKubeconfigPath,
      path,
      namespace,
      fieldManager: 'nrn-test-setup',
      // An hour, as `kubectl create token` asks by default: no test lasts longer.
      expirationSeconds: 3600,
    }));
  } finally {
    admin.close();
  }
  // A kubeconfig that still reached the server as the admin would hide every missing right.
  const { stdout: whoami } = await run(
    'kubectl',
    ['--kubeconfig', path, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
    { timeout: 60_000 },
  );
  const expected = operatorUsername(namespace);
  if (whoami !== expected) throw new Error(`${path} acts as ${whoami}, not ${expected}`);
  return { kubeconfigPath: path, token };
}

/** The lines of an operator process (`nrn-operator run`) that tell of a refusal (a 403). */
export const refusalsIn = (logs: readonly LogLine[]): string[] =>
  logs.map((line) => JSON.stringify(line)).filter((line) => /forbidden/i.test(line));

/**
 * The operator's logger in a test: prints nothing, and keeps every warning or error that tells
 * of a refusal (a 403 from the API server), which the operator logs and retries rather than
 * fails on: a test asserts there were none.
 */
export function refusalLog(): { readonly log: Logger; refusals(): readonly string[] } {
  const refusals: string[] = [];
  const log = pino(
    { level: 'warn' },
    {
      write: (line: string) => {
        if (!/forbidden/i.test(line)) return;
        const { msg, err } = JSON.parse(line) as { msg?: string; err?: { message?: string } };
        refusals.push(`${msg}: ${err?.message ?? line.slice(0, 1000)}`);
      },
    },
  );
  return { log, refusals: () => refusals };
}
