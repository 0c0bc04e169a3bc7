// Runs the operator for a benchmark in its own process, as `nrn-operator run` does (Lease-based
// leader election, namespace nrn-system), and reports what the CLI keeps to itself: the
// client's request and connection counts (Kube.stats), how many scope reconciles ran, and what
// the operator's own informers hold, through the hooks startOperator gives metrics.
// bench/reconcile.ts compiles it (and what it imports) to JavaScript first, so the process
// measured is what `node dist/...` runs, without tsx's loader.
// Prints `READY` once leading; for each `STATS` line on stdin prints `STATS <requests>
// <connections> <scopeReconciles> <servicesCached> <servicesReconciled> <serviceQueue>
// <heapUsed> <heapTotal> <eventsQueued>`, and for a `GC` line the same after collecting garbage (needs
// --expose-gc); for `SNAP <file>` writes a heap snapshot there, then prints `SNAPPED`; stops
// on SIGTERM.
//   node bench/support/operator.js KUBECONFIG      (or node --import tsx ... operator.ts)
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { connect, rawResource } from '../../src/kube/index.js';
import { createLogger, type LogLevel } from '../../src/log.js';
import type { ObservedOperator } from '../../src/observability.js';
import { applyCrds, DEFAULT_OPERATOR_NAMESPACE, startOperator } from '../../src/operator.js';
import { DEFAULT_HEAP_GROWTH_PERCENT, setHeapGrowth } from '../../src/runtime/index.js';
import { installDefaultScopeClasses } from '../../src/scope-classes-install.js';

const [kubeconfigPath] = process.argv.slice(2);
// As `nrn-operator run` does (its --heap-growth), or BENCH_HEAP_GROWTH to compare another.
setHeapGrowth(Number(process.env.BENCH_HEAP_GROWTH ?? DEFAULT_HEAP_GROWTH_PERCENT));
if (kubeconfigPath === undefined) throw new Error('usage: operator.ts KUBECONFIG');

let scopeReconciles = 0;
let observed: ObservedOperator | undefined;

const log = createLogger({
  level: (process.env.LOG_LEVEL as LogLevel | undefined) ?? 'warn',
  format: 'json',
});
const kube = await connect({ kubeconfigPath, log });
await applyCrds(kube);
// The classes `nrn-operator local` installs, and one that makes five templated resources
// besides the envelope for the scopes labelled bench.nrn.dev/class=templated.
// Compiled into node_modules/.cache, this module is not beside deploy/: the benchmarks run
// from the repository (npm run bench:*).
await installDefaultScopeClasses(kube, {
  fieldManager: 'bench',
  dir: join(process.cwd(), 'deploy', 'scopeclasses'),
});
await kube.resource(rawResource('ScopeClass')).apply(templatedClass(), {
  fieldManager: 'bench',
  force: true,
});
const operator = await startOperator({
  kube,
  log,
  namespace: DEFAULT_OPERATOR_NAMESPACE,
  leaderElection: true,
  metrics: {
    reconciled: ({ controller }) => {
      if (controller === 'scopes') scopeReconciles++;
    },
    observe: (o) => {
      observed = o;
    },
  },
});
await operator.manager.elector?.elected();
process.stdout.write('READY\n');

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  input += chunk;
  for (let i = input.indexOf('\n'); i >= 0; i = input.indexOf('\n')) {
    const command = input.slice(0, i).trim();
    input = input.slice(i + 1);
    if (command === 'GC') {
      // Twice: the first pass can leave what finalizers free for the second.
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      gc?.();
    }
    if (command === 'GC' || command === 'STATS') printStats();
    if (command.startsWith('SNAP ')) {
      writeHeapSnapshot(command.slice('SNAP '.length));
      process.stdout.write('SNAPPED\n');
    }
  }
});

function printStats(): void {
  const { requests, connections } = kube.stats;
  let cached = 0;
  let reconciled = 0;
  for (const cache of observed?.caches ?? []) {
    for (const object of cache.list()) {
      if (object.kind !== 'Service') continue;
      cached++;
      if ((object.status as { status?: string } | undefined)?.status !== undefined) reconciled++;
    }
  }
  const queue = observed?.controllers.find((c) => c.name === 'services')?.queue.length ?? 0;
  const { heapUsed, heapTotal } = process.memoryUsage();
  process.stdout.write(
    `STATS ${requests} ${connections} ${scopeReconciles} ${cached} ${reconciled} ${queue} ${heapUsed} ${heapTotal} ${observed?.events.backlog ?? 0}\n`,
  );
}
process.once('SIGTERM', () => {
  void (async () => {
    await operator.stop();
    kube.close();
    process.exit(0);
  })();
});

function templatedClass() {
  const labels = { app: '${scope.slug}', tier: "${has(scope.tier) ? scope.tier : 'none'}" };
  return {
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'ScopeClass',
    metadata: { name: 'bench-templated' },
    spec: {
      scope_type: 'web_pool',
      match: { labels: { 'bench.nrn.dev/class': 'templated' } },
      namespace: {
        name: 'nrn-scope-${scope.id}',
        cpu_profiles: {
          standard: { limit: '2', request: '1', default_limit: '500m', default_request: '100m' },
          intensive: { limit: '8', request: '4', default_limit: '2', default_request: '500m' },
        },
        quota: { memory: true, cpu: true, local_storage: true },
        limit_range: { default_memory_gb: 0.5, default_request_memory_gb: 0.25 },
        service_account: 'scope-runtime',
      },
      resources: [
        {
          name: 'config',
          manifest: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'scope', labels },
            data: { nrn: '${scope.nrn}', domain: '${scope.domain}', app: '${application.slug}' },
          },
        },
        {
          name: 'web',
          manifest: {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: '${scope.slug}', labels },
            spec: {
              selector: { matchLabels: { app: '${scope.slug}' } },
              template: {
                metadata: { labels: { app: '${scope.slug}' } },
                spec: {
                  containers: [
                    {
                      name: 'web',
                      image: 'nginx:1.27',
                      resources: {
                        limits: {
                          memory:
                            "${string(int(double(scope.requested_spec.memory_in_gb) * 512.0)) + 'Mi'}",
                        },
                      },
                    },
                  ],
                },
              },
            },
          },
        },
        {
          name: 'service',
          manifest: {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: '${scope.slug}', labels },
            spec: { selector: { app: '${scope.slug}' }, ports: [{ port: 80, targetPort: 8080 }] },
          },
        },
        {
          name: 'autoscaler',
          manifest: {
            apiVersion: 'autoscaling/v2',
            kind: 'HorizontalPodAutoscaler',
            metadata: { name: '${scope.slug}', labels },
            spec: {
              scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: '${scope.slug}' },
              minReplicas: 1,
              maxReplicas: '${int(double(scope.requested_spec.memory_in_gb) * 2.0)}',
            },
          },
        },
        {
          name: 'budget',
          manifest: {
            apiVersion: 'policy/v1',
            kind: 'PodDisruptionBudget',
            metadata: { name: '${scope.slug}', labels },
            spec: { minAvailable: 1, selector: { matchLabels: { app: '${scope.slug}' } } },
          },
        },
      ],
    },
  };
}
