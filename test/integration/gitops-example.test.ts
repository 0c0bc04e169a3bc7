// examples/gitops/ as Argo CD and Flux would sync it, done with kubectl against a cluster with
// the operator running: the layers applied in their order (server-side, as both tools apply
// with ServerSideApply), each Ready before the next; then no difference between the folder and
// the live objects although the operator has written status, finalizers and labels; then a
// scope removed from the folder and pruned as the tools prune, its children going with it (also
// with kubectl's ApplySet, and while the operator is down); and, against `nrn-operator local`
// with its admission webhook, a bad manifest in a commit refused at apply.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Kube } from '../../src/kube/index.js';
import { type Operator, startOperator } from '../../src/operator.js';
import { kubectl, type StartedCluster, startCluster, uniqueName } from '../support/cluster.js';
import { refusalLog } from '../support/operator-identity.js';
import { startLocalProcess, terminate } from '../support/operator-processes.js';
import { sleep } from '../support/wait.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const EXAMPLE = join(ROOT, 'examples/gitops');
/** The example's own namespace (examples/gitops/platform/namespace.yaml). */
const NS = 'team-a';
/** Flux's order (examples/gitops/flux/kustomizations.yaml) and Argo CD's waves 1 to 3. */
const LAYERS = ['platform', 'applications', 'workloads'] as const;
/** What each layer makes that has a Ready condition, as `kubectl wait` arguments. */
const READY: Record<(typeof LAYERS)[number], string[][]> = {
  platform: [
    ['scopeclasses.platform.nrn.dev', '--all'],
    ['servicespecifications.platform.nrn.dev', '--all', '-n', NS],
  ],
  applications: [['applications.platform.nrn.dev', '--all', '-n', NS]],
  workloads: [
    ['scopes.platform.nrn.dev', '--all', '-n', NS],
    ['services.platform.nrn.dev', '--all', '-n', NS],
  ],
};

interface Live {
  metadata: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    generation?: number;
    deletionTimestamp?: string;
  };
  status?: {
    status?: string;
    observedGeneration?: number;
    inventory?: Child[];
  };
}

interface Child {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

describe('examples/gitops: sync order, drift and pruning', () => {
  let cluster: StartedCluster;
  let operatorKube: Kube;
  let operator: Operator;
  let startTheOperator: () => Promise<void>;
  let work: string;
  const operatorLog = refusalLog();

  const k = async (args: string[]) => {
    const result = await kubectl(cluster, args, { timeoutMs: 90_000 });
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const get = async (what: string, ns?: string): Promise<Live> =>
    JSON.parse(await k(['get', what, ...(ns !== undefined ? ['-n', ns] : []), '-o', 'json']));
  /** `kubectl get` arguments naming an entry of a scope's `status.inventory`. */
  const childArgs = (child: Child) => {
    const group = child.apiVersion.includes('/') ? `.${child.apiVersion.split('/')[0]}` : '';
    return [
      `${child.kind.toLowerCase()}${group}/${child.name}`,
      ...(child.namespace !== undefined ? ['-n', child.namespace] : []),
    ];
  };
  /** `kubectl get` of an object that should be gone: true once the API server says NotFound. */
  const gone = async (args: string[]) => {
    const result = await kubectl(cluster, ['get', ...args]);
    if (result.code === 0) return false;
    if (/NotFound|not found/.test(result.stderr)) return true;
    throw new Error(`kubectl get ${args.join(' ')}: ${result.stderr}`);
  };

  /** Polls until the API server says NotFound: deletions finish in the background. */
  const untilGone = async (args: string[], timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await gone(args))) {
      if (Date.now() > deadline) throw new Error(`${args.join(' ')} still there`);
      await sleep(200);
    }
  };

  beforeAll(async () => {
    const opNs = uniqueName('operator-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    // Wave 0 / the first Kustomization: the CRDs, established before anything uses them.
    await k(['apply', '--server-side', '-f', join(ROOT, 'crds')]);
    await k(['wait', '--for=condition=Established', '--timeout=60s', '-f', join(ROOT, 'crds')]);
    operatorKube = await connect({
      kubeconfigPath: cluster.operatorKubeconfigPath,
      log: operatorLog.log,
    });
    startTheOperator = async () => {
      operator = await startOperator({
        kube: operatorKube,
        log: operatorLog.log,
        namespace: opNs,
        leaderElection: { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 },
      });
      await operator.manager.elector?.elected();
    };
    await startTheOperator();
    work = await mkdtemp(join(tmpdir(), 'nrn-gitops-'));
  }, 120_000);
  afterAll(async () => {
    if (cluster !== undefined && cluster.kind !== 'local') {
      // The finalizers need the operator: delete while it still runs.
      await kubectl(cluster, ['delete', '-k', join(EXAMPLE, 'workloads'), '--timeout=60s']);
      await kubectl(cluster, ['delete', 'namespace', NS, '--wait=false']);
    }
    expect(await operator?.stop()).toBe(true);
    expect(operatorLog.refusals()).toEqual([]);
    operatorKube?.close();
    await cluster?.close();
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  it('applies the layers in order, each Ready before the next', async () => {
    for (const layer of LAYERS) {
      await k(['apply', '--server-side', '-k', join(EXAMPLE, layer)]);
      for (const target of READY[layer]) {
        // The condition kstatus and Flux's `wait: true` read; an older status does not count
        // (kubectl compares the condition's observedGeneration with the object's generation).
        await k(['wait', '--for=condition=Ready', '--timeout=60s', ...target]);
      }
    }
    const scopes = JSON.parse(await k(['get', 'scopes.platform.nrn.dev', '-n', NS, '-o', 'json']))
      .items as Live[];
    expect(scopes.map((s) => s.status?.status)).toEqual(['active', 'active']);
    // Each carries its Argo CD wave, from its layer's kustomization.yaml.
    expect(scopes.map((s) => s.metadata.annotations?.['argocd.argoproj.io/sync-wave'])).toEqual([
      '3',
      '3',
    ]);
  });

  it('shows no difference, client- or server-side, from what the operator wrote', async () => {
    // What the operator writes into objects that Git owns: status (a subresource), its
    // finalizer, and the scope-id label. None of it is in the folder's manifests.
    const scope = await get('scope.platform.nrn.dev/checkout-web', NS);
    expect(scope.metadata.finalizers).toEqual(['platform.nrn.dev/scope-cleanup']);
    expect(scope.metadata.labels?.['platform.nrn.dev/scope-id']).toMatch(/^\d+$/);
    expect(scope.status?.observedGeneration).toBe(scope.metadata.generation);
    const service = await get('service.platform.nrn.dev/checkout-db', NS);
    expect(service.metadata.finalizers).toEqual(['platform.nrn.dev/service-cleanup']);

    for (const layer of LAYERS) {
      for (const mode of [['--server-side'], []]) {
        const diff = await kubectl(cluster, ['diff', ...mode, '-k', join(EXAMPLE, layer)], {
          timeoutMs: 60_000,
        });
        // kubectl diff: 0 no difference, 1 a difference, >1 an error (stderr says which). Its
        // stderr may also carry a warning ("keeps changing, diffing without lock") when a
        // status is written meanwhile, which is no difference.
        expect({ layer, mode, code: diff.code, out: diff.stdout }, diff.stderr).toEqual({
          layer,
          mode,
          code: 0,
          out: '',
        });
      }
    }
  });

  it("puts none of a scope's own labels or annotations on its children", async () => {
    // Argo CD (label tracking) and Flux mark what they apply with labels and annotations; a
    // child that carried them would look like part of the sync and be pruned by the tool.
    const scope = await get('scope.platform.nrn.dev/checkout-web', NS);
    for (const child of scope.status?.inventory ?? []) {
      const live = JSON.parse(await k(['get', ...childArgs(child), '-o', 'json'])) as Live;
      expect(live.metadata.labels?.['app.kubernetes.io/part-of']).toBeUndefined();
      expect(live.metadata.annotations?.['argocd.argoproj.io/sync-wave']).toBeUndefined();
    }
  });

  it('prunes a scope removed from the folder, and its children with it', async () => {
    const pruned = await get('scope.platform.nrn.dev/checkout-jobs', NS);
    const inventory = pruned.status?.inventory ?? [];
    expect(inventory.map((c) => c.kind)).toContain('Namespace');

    // The folder without the scope, as Git would have it after the commit.
    const layer = join(work, 'workloads');
    await cp(join(EXAMPLE, 'workloads'), layer, { recursive: true });
    await rm(join(layer, 'scope-worker.yaml'));
    const kustomization = join(layer, 'kustomization.yaml');
    const text = await readFile(kustomization, 'utf8');
    await writeFile(kustomization, text.replace(/^ {2}- scope-worker\.yaml\n/m, ''));
    expect(await readFile(kustomization, 'utf8')).not.toContain('scope-worker');

    // What Argo CD's prune does (PrunePropagationPolicy=foreground, its default); Flux deletes
    // with Background, which the operator's finalizer makes come to the same.
    await k(['apply', '--server-side', '-k', layer]);
    await k([
      'delete',
      'scope.platform.nrn.dev/checkout-jobs',
      '-n',
      NS,
      '--cascade=foreground',
      '--timeout=60s',
    ]);
    expect(await gone(['scope.platform.nrn.dev/checkout-jobs', '-n', NS])).toBe(true);
    for (const child of inventory) {
      const args = childArgs(child);
      // The namespace goes once emptied (the namespace controller's own finalizer).
      await untilGone(args);
    }

    // The rest stays as it was: the scope left in Git is active and the folder still matches.
    const kept = await get('scope.platform.nrn.dev/checkout-web', NS);
    expect(kept.status?.status).toBe('active');
    const diff = await kubectl(cluster, ['diff', '--server-side', '-k', layer]);
    expect(diff.code).toBe(0);
  });

  it("prunes with kubectl's own ApplySet: the service removed from the folder goes", async () => {
    // kubectl's --prune with an ApplySet (alpha in kubectl 1.32, behind KUBECTL_APPLYSET=true;
    // KEP-3659): the parent ConfigMap lists the group-kinds, the objects carry its id as a
    // label, and what has the label but is no longer in the build is deleted. The nearest a
    // plain kubectl comes to a GitOps tool's inventory.
    const layer = join(work, 'applyset');
    await cp(join(EXAMPLE, 'workloads'), layer, { recursive: true });
    const applyset = (extra: string[] = []) =>
      run(
        'kubectl',
        [
          '--kubeconfig',
          cluster.kubeconfigPath,
          'apply',
          '--server-side',
          '-k',
          layer,
          '-n',
          NS,
          '--prune',
          '--applyset=configmap/nrn-workloads',
          ...extra,
        ],
        { env: { ...process.env, KUBECTL_APPLYSET: 'true' }, timeout: 60_000 },
      );
    await applyset();
    const service = await get('service.platform.nrn.dev/checkout-db', NS);
    expect(Object.keys(service.metadata.labels ?? {})).toContain('applyset.kubernetes.io/part-of');

    await rm(join(layer, 'service-db.yaml'));
    const kustomization = join(layer, 'kustomization.yaml');
    const text = await readFile(kustomization, 'utf8');
    await writeFile(kustomization, text.replace(/^ {2}- service-db\.yaml\n/m, ''));
    const { stdout } = await applyset();
    expect(stdout).toContain('service.platform.nrn.dev/checkout-db pruned');
    // Gone once the operator has removed its finalizer.
    await untilGone(['service.platform.nrn.dev/checkout-db', '-n', NS]);
    const kept = await get('scope.platform.nrn.dev/checkout-web', NS);
    expect(kept.status?.status).toBe('active');
  });

  it('keeps a scope pruned while the operator is down, children and all, until it runs again', async () => {
    const scope = await get('scope.platform.nrn.dev/checkout-web', NS);
    const inventory = scope.status?.inventory ?? [];
    expect(inventory.length).toBeGreaterThan(0);
    expect(await operator.stop()).toBe(true);

    // The tool's delete returns at once (--wait=false: Argo CD and Flux do not block on it).
    await k(['delete', 'scope.platform.nrn.dev/checkout-web', '-n', NS, '--wait=false']);
    const held = await get('scope.platform.nrn.dev/checkout-web', NS);
    expect(held.metadata.deletionTimestamp).toBeDefined();
    expect(held.metadata.finalizers).toContain('platform.nrn.dev/scope-cleanup');
    for (const child of inventory) expect(await gone(childArgs(child))).toBe(false);

    await startTheOperator();
    await untilGone(['scope.platform.nrn.dev/checkout-web', '-n', NS]);
    for (const child of inventory) {
      const args = childArgs(child);
      await untilGone(args);
    }
  });
});

describe('examples/gitops: the admission webhook in a sync (nrn-operator local)', () => {
  let local: Awaited<ReturnType<typeof startLocalProcess>> | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    if (local !== undefined) await terminate(local.child);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('refuses the bad manifest a commit adds, at apply, and leaves the rest of the layer as it was', {
    timeout: 120_000,
  }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'nrn-gitops-webhook-'));
    // `local` registers its webhook (failurePolicy Ignore there) and installs the CRDs.
    local = await startLocalProcess(join(dir, 'data'), ['--no-facade']);
    const kubeconfig = local.kubeconfigPath;
    const kc = async (args: string[]) => {
      try {
        const { stdout, stderr } = await run('kubectl', ['--kubeconfig', kubeconfig, ...args], {
          timeout: 60_000,
        });
        return { code: 0, stdout, stderr };
      } catch (error) {
        const e = error as { code?: number; stdout?: string; stderr?: string };
        return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
      }
    };
    for (const layer of LAYERS) {
      expect((await kc(['apply', '--server-side', '-k', join(EXAMPLE, layer)])).code).toBe(0);
    }
    const waited = await kc([
      'wait',
      '--for=condition=Ready',
      '--timeout=60s',
      'scopes.platform.nrn.dev',
      '--all',
      '-n',
      NS,
    ]);
    expect(waited.code).toBe(0);

    // The commit: a second scope whose name makes the slug checkout-web already holds.
    const layer = join(dir, 'workloads');
    await cp(join(EXAMPLE, 'workloads'), layer, { recursive: true });
    await writeFile(
      join(layer, 'scope-copy.yaml'),
      (await readFile(join(layer, 'scope-web.yaml'), 'utf8')).replace(
        'name: checkout-web',
        'name: checkout-web-copy',
      ),
    );
    const kustomization = join(layer, 'kustomization.yaml');
    await writeFile(
      kustomization,
      (await readFile(kustomization, 'utf8')).replace(
        '  - service-db.yaml\n',
        '  - service-db.yaml\n  - scope-copy.yaml\n',
      ),
    );
    const sync = await kc(['apply', '--server-side', '-k', layer]);
    expect(sync.code).toBe(1);
    expect(sync.stderr).toContain(
      'admission webhook "validate.platform.nrn.dev" denied the request: spec.name: slug checkout-web is already used by scope team-a/checkout-web',
    );
    // Nothing refused is stored; what was already right stays applied and active.
    const copy = await kc(['get', 'scope.platform.nrn.dev/checkout-web-copy', '-n', NS]);
    expect(copy.stderr).toContain('NotFound');
    const kept = JSON.parse(
      (await kc(['get', 'scope.platform.nrn.dev/checkout-web', '-n', NS, '-o', 'json'])).stdout,
    ) as Live;
    expect(kept.status?.status).toBe('active');
  });
});
