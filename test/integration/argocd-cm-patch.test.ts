// deploy/argocd/README.md's kubectl way in: `kubectl patch --type merge --patch-file` of
// deploy/argocd/argocd-cm.yaml onto an Argo CD's argocd-cm adds the health checks and keeps
// every key it had.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { HEALTH_KINDS } from '../../scripts/generate-argocd-cm.js';
import { kubectl, type StartedCluster, startCluster } from '../support/cluster.js';

const ARGOCD = join(import.meta.dirname, '../../deploy/argocd');
const PATCH = join(ARGOCD, 'argocd-cm.yaml');

// The patch names namespace argocd, which a cluster the suite does not own may really run.
const external = (process.env.KUBECONFIG ?? '') !== '';
if (external)
  console.error(
    'argocd-cm-patch.test.ts: skipped: KUBECONFIG names a cluster that may run Argo CD',
  );

describe.skipIf(external)('kubectl patch of argocd-cm with deploy/argocd/argocd-cm.yaml', () => {
  let cluster: StartedCluster;
  const k = async (args: string[], input?: string): Promise<string> => {
    const result = await kubectl(cluster, args, input !== undefined ? { input } : {});
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };

  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterAll(async () => {
    await cluster?.close();
  });

  it('adds a health check per kind and keeps the keys argocd-cm had', async () => {
    await k(['create', 'namespace', 'argocd']);
    await k([
      'create',
      'configmap',
      'argocd-cm',
      '-n',
      'argocd',
      '--from-literal=url=https://argocd.example.com',
    ]);
    await k([
      '-n',
      'argocd',
      'patch',
      'configmap',
      'argocd-cm',
      '--type',
      'merge',
      '--patch-file',
      PATCH,
    ]);
    const live = JSON.parse(
      await k(['-n', 'argocd', 'get', 'configmap', 'argocd-cm', '-o', 'json']),
    ) as {
      metadata: { labels?: Record<string, string> };
      data: Record<string, string>;
    };
    const patch = parse(readFileSync(PATCH, 'utf8')) as { data: Record<string, string> };
    expect(live.data.url).toBe('https://argocd.example.com');
    expect(live.metadata.labels).toMatchObject({ 'app.kubernetes.io/part-of': 'argocd' });
    for (const kind of HEALTH_KINDS) {
      const key = `resource.customizations.health.platform.nrn.dev_${kind}`;
      expect(live.data[key]).toBe(patch.data[key]);
      expect(live.data[key]).toBe(
        readFileSync(
          join(ARGOCD, 'resource_customizations/platform.nrn.dev', kind, 'health.lua'),
          'utf8',
        ),
      );
    }
  });
});
