// Wires the long-running processes: config -> logger -> control plane (-> operator -> facade,
// as they land) and the signals that stop them.
import { resolve } from 'node:path';
import { startControlPlane } from './local/index.js';
import { createLogger } from './log.js';

export interface LocalOptions {
  dataDir: string;
  apiPort: number;
  host: string;
  operator: boolean;
  facade: boolean;
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
  if (options.operator) log.warn('the operator is not part of this build yet; running without it');
  if (options.facade) log.warn('the facade is not part of this build yet; running without it');
  process.stdout.write(
    `nrn-operator local ready: ${parts.join(', ')} at ${plane.url}; KUBECONFIG=${plane.kubeconfigPath}\n`,
  );
  const signal = await new Promise<NodeJS.Signals>((done) => {
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
  log.info({ signal }, 'stopping');
  await plane.close();
  log.info('stopped');
  return 0;
}
