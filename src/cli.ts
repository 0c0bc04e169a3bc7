#!/usr/bin/env node
// The `nrn-operator` command: dispatches the command src/command-line parsed to what runs it.
import { writeSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { allCrds, renderCrdFiles } from './api/index.js';
import { parseCommandLine } from './command-line.js';
import { kindAllowlist } from './domain/scope-classes/kinds.js';
import type { FacadeAddress, WebhookAddress } from './main.js';

/**
 * Runs `start` (local or run); a start-up failure is one line naming the flag to change, and
 * exit 1: src/main has closed what it had started, so the process ends.
 */
async function startOrExplain(command: string, start: () => Promise<number>): Promise<number> {
  const { StartupError } = await import('./parts.js');
  try {
    return await start();
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    const line = `nrn-operator ${command}: ${error.message.replace(/\s*\n\s*/g, '; ')}\n`;
    // At exit, so that it is the last line: pino writes stderr asynchronously, and the rollback's
    // log lines may still be on their way now; at exit they are all out (nothing left pending).
    process.once('exit', () => writeSync(2, line));
    return 1;
  }
}

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

/** The facade's flags, as `local` and `run` take them. */
function facadeAddress(flags: {
  'facade-port': number;
  'facade-host': string;
  'facade-auth': FacadeAddress['auth'];
  'facade-token-file'?: string | undefined;
  'facade-tls-cert'?: string | undefined;
  'facade-tls-key'?: string | undefined;
  'facade-max-streams': number;
  'facade-max-streams-per-caller': number;
  'facade-stream-buffer': number;
}): FacadeAddress {
  const certFile = flags['facade-tls-cert'];
  const keyFile = flags['facade-tls-key'];
  return {
    port: flags['facade-port'],
    host: flags['facade-host'],
    streams: {
      maxStreams: flags['facade-max-streams'],
      maxStreamsPerCaller: flags['facade-max-streams-per-caller'],
      pendingBytes: flags['facade-stream-buffer'],
    },
    ...(flags['facade-auth'] !== undefined ? { auth: flags['facade-auth'] } : {}),
    ...(flags['facade-token-file'] !== undefined ? { tokenFile: flags['facade-token-file'] } : {}),
    // The schema has refused one without the other.
    ...(certFile !== undefined && keyFile !== undefined ? { tls: { certFile, keyFile } } : {}),
  };
}

/** `run`'s webhook flags; the schema has refused a certificate without its key. */
function webhookAddress(flags: {
  'webhook-port': number;
  'webhook-host': string;
  'webhook-certificate': 'files' | 'self-managed';
  'webhook-tls-cert'?: string | undefined;
  'webhook-tls-key'?: string | undefined;
}): WebhookAddress {
  const certFile = flags['webhook-tls-cert'];
  const keyFile = flags['webhook-tls-key'];
  return {
    port: flags['webhook-port'],
    host: flags['webhook-host'],
    certificate: flags['webhook-certificate'],
    ...(certFile !== undefined && keyFile !== undefined ? { tls: { certFile, keyFile } } : {}),
  };
}

async function version(): Promise<string> {
  const { createRequire } = await import('node:module');
  const pkg = createRequire(import.meta.url)('../package.json') as { version: string };
  return pkg.version;
}

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandLine(argv, process.env);
  if (parsed.outcome === 'print') {
    process.stdout.write(parsed.text);
    return 0;
  }
  if (parsed.outcome === 'refuse') {
    process.stderr.write(parsed.text);
    return 2;
  }
  const { invocation } = parsed;
  switch (invocation.command) {
    case 'local': {
      const flags = invocation.flags;
      const { runLocal } = await import('./main.js');
      return startOrExplain('local', () =>
        runLocal({
          dataDir: flags['data-dir'],
          apiPort: flags['api-port'],
          host: flags.host,
          operator: !flags['no-operator'],
          scopeClassRolloutRate: flags['scope-class-rollout-rate'],
          scopeClassKinds: kindAllowlist(
            flags['scope-class-namespaced-kinds'],
            flags['scope-class-cluster-kinds'],
          ),
          heapGrowthPercent: flags['heap-growth'],
          webhookPort: flags['webhook-port'],
          log: { level: flags['log-level'], format: flags['log-format'] },
          ...(flags['no-facade'] ? {} : { facade: facadeAddress(flags) }),
          ...(flags['metrics-port'] !== undefined
            ? { metrics: { host: flags['metrics-host'], port: flags['metrics-port'] } }
            : {}),
        }),
      );
    }
    case 'run': {
      const flags = invocation.flags;
      const { runOperator } = await import('./main.js');
      return startOrExplain('run', () =>
        runOperator({
          leaderElection: !flags['no-leader-election'],
          scopeClassRolloutRate: flags['scope-class-rollout-rate'],
          scopeClassKinds: kindAllowlist(
            flags['scope-class-namespaced-kinds'],
            flags['scope-class-cluster-kinds'],
          ),
          heapGrowthPercent: flags['heap-growth'],
          log: { level: flags['log-level'], format: flags['log-format'] },
          metrics: { host: flags['metrics-host'], port: flags['metrics-port'] },
          namespace: flags.namespace,
          webhook: webhookAddress(flags),
          ...(flags['no-facade'] ? {} : { facade: facadeAddress(flags) }),
          ...(flags.kubeconfig !== undefined ? { kubeconfig: flags.kubeconfig } : {}),
          ...(flags.context !== undefined ? { context: flags.context } : {}),
          ...(flags['base-domain'] !== undefined ? { baseDomain: flags['base-domain'] } : {}),
        }),
      );
    }
    case 'crds':
      process.stdout.write(
        allCrds()
          .map((crd) => stringify(crd, { lineWidth: 0 }))
          .join('---\n'),
      );
      return 0;
    case 'generate crds':
      await generateCrds(invocation.flags.out);
      return 0;
    case 'version':
      process.stdout.write(`${await version()}\n`);
      return 0;
  }
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
