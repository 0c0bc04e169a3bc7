// examples/gitops/ holds together: the Flux Kustomizations and the Argo CD Application name
// folders that exist, Flux's dependsOn chain and Argo CD's sync waves give the same order, and
// each manifest has the fields its API requires (Flux's Kustomization v1: interval, prune and
// sourceRef, https://fluxcd.io/flux/components/kustomize/kustomizations/; GitRepository v1:
// interval and url; an Argo CD Application: project, destination and a source). Flux and Argo
// CD are not run here (no cluster of theirs offline); applying the folder to a cluster as they
// would is test/integration/gitops-example.test.ts.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

const ROOT = join(import.meta.dirname, '../..');
const EXAMPLE = join(ROOT, 'examples/gitops');

interface FluxKustomization {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string };
  spec: {
    interval: string;
    path: string;
    prune: boolean;
    wait?: boolean;
    timeout?: string;
    dependsOn?: { name: string }[];
    sourceRef: { kind: string; name: string };
  };
}

interface ArgoApplication {
  apiVersion: string;
  kind: string;
  metadata: { annotations?: Record<string, string> };
  spec: {
    project: string;
    destination: { server?: string; name?: string };
    sources: { repoURL: string; path: string; targetRevision: string }[];
    syncPolicy: { automated?: { prune?: boolean }; syncOptions?: string[] };
  };
}

const readAll = async (path: string) =>
  parseAllDocuments(await readFile(path, 'utf8')).map((d) => d.toJS() as unknown);

/** The Argo CD wave a layer's kustomization.yaml gives everything in it. */
async function wave(folder: string): Promise<number> {
  const path = join(ROOT, folder, 'kustomization.yaml');
  if (!existsSync(path)) return 0;
  const k = parse(await readFile(path, 'utf8')) as {
    commonAnnotations?: Record<string, string>;
  };
  return Number(k.commonAnnotations?.['argocd.argoproj.io/sync-wave'] ?? 0);
}

describe('examples/gitops', () => {
  it('Flux: every layer names a folder of the repository, in a dependsOn chain Argo CD waves agree with', async () => {
    const [source] = (await readAll(join(EXAMPLE, 'flux/gitrepository.yaml'))) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string };
      spec: { interval: string; url: string };
    }[];
    expect(source?.apiVersion).toBe('source.toolkit.fluxcd.io/v1');
    expect(source?.kind).toBe('GitRepository');
    expect(source?.spec.interval).toMatch(/^\d+[smh]$/);
    expect(source?.spec.url).toMatch(/^https:\/\//);

    const layers = (await readAll(
      join(EXAMPLE, 'flux/kustomizations.yaml'),
    )) as FluxKustomization[];
    const byName = new Map(layers.map((l) => [l.metadata.name, l]));
    const order: string[] = [];
    for (const layer of layers) {
      expect(layer.apiVersion).toBe('kustomize.toolkit.fluxcd.io/v1');
      expect(layer.kind).toBe('Kustomization');
      expect(layer.spec.interval).toMatch(/^\d+[smh]$/);
      expect(typeof layer.spec.prune).toBe('boolean');
      expect(layer.spec.sourceRef).toEqual({ kind: 'GitRepository', name: source?.metadata.name });
      // The path is relative to the repository root, as Flux reads it.
      expect(existsSync(join(ROOT, layer.spec.path))).toBe(true);
      // Each layer is Ready only once what it applied is Current: what the next one waits for.
      expect(layer.spec.wait).toBe(true);
      const deps = layer.spec.dependsOn ?? [];
      expect(deps.length).toBeLessThanOrEqual(1);
      for (const dep of deps) expect(byName.has(dep.name)).toBe(true);
      // Listed in order: each depends on the one before it.
      expect(deps[0]?.name).toBe(order.at(-1));
      order.push(layer.metadata.name);
    }
    // The CRDs are never pruned; every other layer is.
    expect(layers.map((l) => [l.metadata.name, l.spec.prune])).toEqual([
      ['nrn-crds', false],
      ['nrn-operator', true],
      ['nrn-platform', true],
      ['nrn-applications', true],
      ['nrn-workloads', true],
    ]);
    // Argo CD's waves rise along Flux's chain, one wave per layer after the operator.
    const waves = await Promise.all(layers.map((l) => wave(l.spec.path)));
    expect(waves).toEqual([0, 0, 1, 2, 3]);
  });

  it('Argo CD: one Application over the CRDs, the operator and the example, with the recommended options', async () => {
    const [app] = (await readAll(join(EXAMPLE, 'argocd-application.yaml'))) as ArgoApplication[];
    expect(app?.apiVersion).toBe('argoproj.io/v1alpha1');
    expect(app?.kind).toBe('Application');
    expect(app?.spec.project).toBe('default');
    expect(app?.spec.destination.server).toBe('https://kubernetes.default.svc');
    expect(app?.spec.sources.map((s) => s.path)).toEqual(['crds', 'deploy', 'examples/gitops']);
    for (const source of app?.spec.sources ?? []) {
      expect(existsSync(join(ROOT, source.path))).toBe(true);
    }
    expect(app?.metadata.annotations?.['argocd.argoproj.io/compare-options']).toBe(
      'ServerSideDiff=true',
    );
    expect(app?.spec.syncPolicy.automated?.prune).toBe(true);
    expect(app?.spec.syncPolicy.syncOptions).toEqual([
      'ServerSideApply=true',
      'PruneLast=true',
      'PrunePropagationPolicy=foreground',
    ]);
    // The example's top kustomization renders every layer, each in its own wave.
    const top = parse(await readFile(join(EXAMPLE, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
    };
    expect(top.resources).toEqual(['platform', 'applications', 'workloads']);
  });
});
