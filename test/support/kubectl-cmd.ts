// What the kubectl-cmd-*.test.ts files share: kubernetes/kubernetes' test/cmd/*.sh replayed with
// the real kubectl against a started cluster. The scripts' helpers become these: `ok` is a command
// the script runs under errexit, `fails` one it runs as `$(! kubectl ...)`, and `get` is
// kube::test::get_object_assert's go-template read of one field.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { type KubectlResult, kubectl, startCluster, type TestCluster } from './cluster.js';

export interface CmdSuite {
  readonly cluster: TestCluster;
  /** kubectl, whatever its exit: stdout and stderr as the script's `2>&1` would join them. */
  run(args: string[], input?: string): Promise<KubectlResult & { output: string }>;
  /** A command the script runs under errexit: its stdout, or a thrown error with its stderr. */
  ok(args: string[], input?: string): Promise<string>;
  /** A command the script expects to fail (`$(! kubectl ... 2>&1)`): its joined output. */
  fails(args: string[], input?: string): Promise<string>;
  /** kube::test::get_object_assert: `kubectl get <args> -o go-template=<template>`. */
  get(args: string[], template: string): Promise<string>;
  /** Writes a file the script would read from hack/testdata, and returns its path. */
  file(name: string, ...objects: unknown[]): Promise<string>;
  close(): Promise<void>;
}

export async function startCmdSuite(): Promise<CmdSuite> {
  const cluster = await startCluster();
  const dir = await mkdtemp(join(tmpdir(), 'nrn-kubectl-cmd-'));
  // A discovery cache of the suite's own: kubectl's default one is keyed by host and port, and
  // a port a past run used may come back with that run's resources cached for hours.
  const cacheDir = `--cache-dir=${join(dir, 'kube-cache')}`;
  const run = async (args: string[], input?: string) => {
    const result = await kubectl(
      cluster,
      [cacheDir, ...args],
      input !== undefined ? { input } : {},
    );
    return { ...result, output: result.stdout + result.stderr };
  };
  return {
    cluster,
    run,
    async ok(args, input) {
      const result = await run(args, input);
      if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
      return result.stdout;
    },
    async fails(args, input) {
      const result = await run(args, input);
      if (result.code === 0)
        throw new Error(`kubectl ${args.join(' ')} succeeded: ${result.stdout}`);
      return result.output;
    },
    async get(args, template) {
      const result = await run(['get', ...args, '-o', `go-template=${template}`]);
      if (result.code !== 0) throw new Error(`kubectl get ${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    },
    async file(name, ...objects) {
      const path = join(dir, name);
      await writeFile(path, objects.map((o) => stringify(o)).join('---\n'));
      return path;
    },
    async close() {
      await cluster.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** hack/testdata/pod.yaml and its kin: a pod of one pause container. */
export const pod = (
  name: string,
  options: { labels?: Record<string, string>; namespace?: string; image?: string } = {},
) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
    ...(options.labels !== undefined ? { labels: options.labels } : {}),
  },
  spec: {
    containers: [
      { name: 'kubernetes-pause', image: options.image ?? 'registry.k8s.io/pause:3.10' },
    ],
  },
});

export const namespace = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name },
});

/** Polls until `check` holds: kube::test::wait_object_assert's loop. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
