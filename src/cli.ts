#!/usr/bin/env node
// The `nrn-operator` command: parses the command line and dispatches to a subcommand.
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { allCrds, renderCrdFiles } from './api/index.js';
import type { FacadeAddress } from './main.js';

const USAGE = `Usage: nrn-operator <command> [options]

Commands:
  local [--data-dir DIR] [--api-port P] [--host H] [--no-operator] [--no-facade]
        [--metrics-port P] [--metrics-host H] [FACADE OPTIONS]
                             run the local control plane (a Kubernetes API server, durable
                             in DIR, default .data/local), the operator and the facade; writes
                             DIR/kubeconfig, and DIR/token (the facade's bearer token, static
                             auth). /metrics, /healthz, /readyz are served only with
                             --metrics-port (0: any free port; the address is printed)
  run [--kubeconfig F] [--context C] [--namespace NS] [--base-domain D] [--no-leader-election]
      [--metrics-port P] [--metrics-host H] [--no-facade] [FACADE OPTIONS]
                             run the operator and the facade against the current kubeconfig
                             (or in-cluster); the Lease and scope id counter live in NS
                             (default nrn-system). /metrics, /healthz, /readyz on port P
                             (default 8081)
  crds                       print the CustomResourceDefinitions (kubectl apply -f -)
  generate crds [--out DIR]  write one file per CRD into DIR (default: crds)
  version                    print the version

Facade options (local, run):
  --facade-port P            default 8080 (0: any free port; the address is printed)
  --facade-host H            default 127.0.0.1; in a pod use 0.0.0.0
  --facade-auth MODE         kubernetes (TokenReview + SubjectAccessReview; run's default),
                             static (--facade-token-file; local's default, with DIR/token),
                             none (refused unless the facade is bound to loopback)
  --facade-token-file F      static auth: YAML {tokens: [{name, token | sha256, operations}]}
  --facade-tls-cert F        serve HTTPS with this PEM certificate (chain) and
  --facade-tls-key F         this PEM key; both or neither. Read again every minute, so a
                             renewed certificate (a mounted kubernetes.io/tls Secret) is
                             served without a restart

--metrics-host H (local, run) defaults to 127.0.0.1; in a pod use 0.0.0.0 so that the
kubelet's probes and Prometheus reach it.
`;

async function generateCrds(outDir: string): Promise<void> {
  const files = renderCrdFiles();
  await mkdir(outDir, { recursive: true });
  // Remove files of kinds that no longer exist, so the folder mirrors the schemas exactly.
  for (const name of await readdir(outDir)) {
    if (name.endsWith('.yaml') && !files.has(name)) await rm(join(outDir, name));
  }
  for (const [name, text] of files) await writeFile(join(outDir, name), text);
  process.stdout.write(`wrote ${files.size} CRDs to ${outDir}\n`);
}

/** The port `text` names, or undefined after saying why not. */
function portOption(name: string, text: string): number | undefined {
  const port = Number(text);
  if (text.trim() !== '' && Number.isInteger(port) && port >= 0 && port <= 65535) return port;
  process.stderr.write(`nrn-operator: ${name} must be a port number\n`);
  return undefined;
}

const AUTH_MODES = ['kubernetes', 'static', 'none'] as const;

/** The facade's flags, or 'invalid' after saying why. */
function facadeOptions(values: {
  'facade-port'?: string;
  'facade-host'?: string;
  'facade-auth'?: string;
  'facade-token-file'?: string;
  'facade-tls-cert'?: string;
  'facade-tls-key'?: string;
}): FacadeAddress | 'invalid' {
  const out: FacadeAddress = {};
  if (values['facade-port'] !== undefined) {
    const port = portOption('--facade-port', values['facade-port']);
    if (port === undefined) return 'invalid';
    out.port = port;
  }
  const auth = values['facade-auth'];
  if (auth !== undefined) {
    const mode = AUTH_MODES.find((m) => m === auth);
    if (mode === undefined) {
      process.stderr.write(`nrn-operator: --facade-auth must be one of ${AUTH_MODES.join(', ')}\n`);
      return 'invalid';
    }
    out.auth = mode;
  }
  if (values['facade-host'] !== undefined) out.host = values['facade-host'];
  if (values['facade-token-file'] !== undefined) out.tokenFile = values['facade-token-file'];
  const certFile = values['facade-tls-cert'];
  const keyFile = values['facade-tls-key'];
  if ((certFile === undefined) !== (keyFile === undefined)) {
    process.stderr.write('nrn-operator: --facade-tls-cert and --facade-tls-key go together\n');
    return 'invalid';
  }
  if (certFile !== undefined && keyFile !== undefined) out.tls = { certFile, keyFile };
  return out;
}

async function version(): Promise<string> {
  const { createRequire } = await import('node:module');
  const pkg = createRequire(import.meta.url)('../package.json') as { version: string };
  return pkg.version;
}

export async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      'data-dir': { type: 'string' },
      'api-port': { type: 'string' },
      host: { type: 'string' },
      'no-operator': { type: 'boolean' },
      'no-facade': { type: 'boolean' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      namespace: { type: 'string' },
      'base-domain': { type: 'string' },
      'no-leader-election': { type: 'boolean' },
      'metrics-port': { type: 'string' },
      'metrics-host': { type: 'string' },
      'facade-port': { type: 'string' },
      'facade-host': { type: 'string' },
      'facade-auth': { type: 'string' },
      'facade-token-file': { type: 'string' },
      'facade-tls-cert': { type: 'string' },
      'facade-tls-key': { type: 'string' },
    },
  });
  const [command, sub] = positionals;
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  // Host and port left out fall back to src/observability's defaults (127.0.0.1:8081).
  const metricsHost = values['metrics-host'] !== undefined ? { host: values['metrics-host'] } : {};
  let metricsPort: { port: number } | undefined;
  if (values['metrics-port'] !== undefined) {
    const port = portOption('--metrics-port', values['metrics-port']);
    if (port === undefined) return 2;
    metricsPort = { port };
  }
  const facade = facadeOptions(values);
  if (facade === 'invalid') return 2;
  switch (command) {
    case 'local': {
      const port = portOption('--api-port', values['api-port'] ?? '6443');
      if (port === undefined) return 2;
      const { runLocal } = await import('./main.js');
      return runLocal({
        dataDir: values['data-dir'] ?? '.data/local',
        apiPort: port,
        host: values.host ?? '127.0.0.1',
        operator: !values['no-operator'],
        ...(values['no-facade'] ? {} : { facade }),
        // Off unless asked for: several local planes often run side by side (tests, benchmarks).
        ...(metricsPort !== undefined ? { metrics: { ...metricsHost, ...metricsPort } } : {}),
      });
    }
    case 'run': {
      const { runOperator } = await import('./main.js');
      return runOperator({
        leaderElection: !values['no-leader-election'],
        metrics: { ...metricsHost, ...metricsPort },
        ...(values['no-facade'] ? {} : { facade }),
        ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
        ...(values.context !== undefined ? { context: values.context } : {}),
        ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
        ...(values['base-domain'] !== undefined ? { baseDomain: values['base-domain'] } : {}),
      });
    }
    case 'crds':
      process.stdout.write(
        allCrds()
          .map((crd) => stringify(crd, { lineWidth: 0 }))
          .join('---\n'),
      );
      return 0;
    case 'generate':
      if (sub !== 'crds') break;
      await generateCrds(values.out ?? 'crds');
      return 0;
    case 'version':
      process.stdout.write(`${await version()}\n`);
      return 0;
  }
  process.stderr.write(`nrn-operator: unknown command "${positionals.join(' ')}"\n\n${USAGE}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
