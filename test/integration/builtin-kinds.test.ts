// The built-in kinds the local control plane only stores (kinds/ strategies over
// builtin-schemas/), driven by kubectl as users drive a cluster: the repo's own deploy/
// kustomization applied, `get all`, `diff`, `apply --prune`, and kube's refusals (a 422 from
// the kind's validation, an unknown field under Strict field validation).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { kubectl, startCluster, type TestCluster, uniqueName } from '../support/cluster.js';

const ROOT = join(import.meta.dirname, '../..');
let cluster: TestCluster;

async function ok(args: string[], input?: string): Promise<string> {
  const result = await kubectl(cluster, args, input !== undefined ? { input } : {});
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

const deployment = (ns: string, name: string, image: string, labels = { app: name }) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns, labels: { set: 'pruned' } },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels }, spec: { containers: [{ name: 'main', image }] } },
  },
});

const service = (ns: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: ns, labels: { set: 'pruned' } },
  spec: { selector: { app: name }, ports: [{ port: 80 }] },
});

const list = (...items: unknown[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });

beforeAll(async () => {
  cluster = await startCluster();
  await ok(['apply', '-f', join(ROOT, 'crds')]);
}, 60_000);

afterAll(async () => {
  await cluster?.close();
});

describe('kubectl apply -k deploy/', () => {
  it('stores every object of the kustomization, and get all lists the workloads', async () => {
    const result = await kubectl(cluster, ['apply', '-k', join(ROOT, 'deploy')]);
    expect(result.stderr).not.toContain('error calculating patch');
    expect(result.code, result.stderr).toBe(0);
    // The RBAC kinds of deploy/rbac.yaml are served too (kinds/clusterrole.ts...): nothing skipped.
    const items = parseAllDocuments(await ok(['kustomize', join(ROOT, 'deploy')]))
      .map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } })
      .filter((o) => o !== null);
    expect(items.map((o) => o.kind)).toEqual(
      expect.arrayContaining([
        'Namespace',
        'ServiceAccount',
        'Deployment',
        'Service',
        'PodDisruptionBudget',
      ]),
    );
    for (const o of items) {
      const args = ['get', o.kind, o.metadata.name, '-o', 'name'];
      if (o.metadata.namespace !== undefined) args.push('-n', o.metadata.namespace);
      expect((await ok(args)).trim().length).toBeGreaterThan(0);
    }
    // Again, unchanged: kubectl computes a patch of each from the OpenAPI v3 schema and the
    // last applied configuration, and has nothing to send.
    const again = await kubectl(cluster, ['apply', '-k', join(ROOT, 'deploy')]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    expect(again.stdout).toContain('deployment.apps/nrn-operator unchanged');
    const all = await ok(['get', 'all', '-n', 'nrn-system']);
    expect(all).toContain('deployment.apps/nrn-operator');
    expect(all).toContain('service/nrn-operator');
  });

  it('defaults the Deployment and the Service as kube-apiserver does', async () => {
    const d = JSON.parse(
      await ok(['get', 'deploy', 'nrn-operator', '-n', 'nrn-system', '-o', 'json']),
    );
    expect(d.spec.progressDeadlineSeconds).toBe(600);
    expect(d.spec.revisionHistoryLimit).toBe(5);
    const pod = d.spec.template.spec;
    expect(pod).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      schedulerName: 'default-scheduler',
    });
    expect(pod.containers[0].terminationMessagePath).toBe('/dev/termination-log');
    expect(pod.containers[0].livenessProbe.successThreshold).toBe(1);
    const s = JSON.parse(
      await ok(['get', 'svc', 'nrn-operator', '-n', 'nrn-system', '-o', 'json']),
    );
    expect(s.spec).toMatchObject({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
    });
    expect(s.spec.clusterIP).toMatch(/^10\.\d+\.\d+\.\d+$/);
  });
});

describe('workloads through kubectl', () => {
  const ns = uniqueName('builtin');

  beforeAll(async () => {
    await ok(['create', 'namespace', ns]);
  });

  it('applies defaults and shows a changed Deployment in kubectl diff', async () => {
    await ok(['apply', '-f', '-'], JSON.stringify(deployment(ns, 'web', 'nginx')));
    const d = JSON.parse(await ok(['get', 'deploy', 'web', '-n', ns, '-o', 'json']));
    expect(d.spec).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: {
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
      },
    });
    expect(d.spec.template.spec).toMatchObject({ terminationGracePeriodSeconds: 30 });
    expect(d.spec.template.spec.containers[0].imagePullPolicy).toBe('Always');
    const same = await kubectl(cluster, ['diff', '-f', '-'], {
      input: JSON.stringify(deployment(ns, 'web', 'nginx')),
    });
    expect(same.code, same.stderr).toBe(0);
    const changed = await kubectl(cluster, ['diff', '-f', '-'], {
      input: JSON.stringify(deployment(ns, 'web', 'nginx:1.27')),
    });
    expect(changed.code, changed.stderr).toBe(1);
    expect(changed.stdout).toMatch(/^-\s+- image: nginx$/m);
    expect(changed.stdout).toMatch(/^\+\s+- image: nginx:1\.27$/m);
  });

  it('merges containers by name in a strategic merge patch and in server-side apply', async () => {
    const two = deployment(ns, 'pair', 'nginx') as unknown as {
      spec: { template: { spec: { containers: unknown[] } } };
    };
    two.spec.template.spec.containers.push({
      name: 'side',
      image: 'busybox:1.36',
      ports: [{ containerPort: 9000 }],
    });
    await ok(['create', '-f', '-'], JSON.stringify(two));
    await ok([
      'patch',
      'deploy',
      'pair',
      '-n',
      ns,
      '--type',
      'strategic',
      '-p',
      JSON.stringify({
        spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } },
      }),
    ]);
    const applied = JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'pair', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'pair' } },
        template: {
          metadata: { labels: { app: 'pair' } },
          spec: { containers: [{ name: 'side', image: 'busybox:1.37' }] },
        },
      },
    });
    // Owned item by item, by name: the conflict names the one container's image.
    const conflict = await kubectl(
      cluster,
      ['apply', '--server-side', '--field-manager', 'tuner', '-f', '-'],
      {
        input: applied,
      },
    );
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain(
      'Apply failed with 1 conflict: conflict with "kubectl-create" using apps/v1: .spec.template.spec.containers[name="side"].image',
    );
    await ok(
      ['apply', '--server-side', '--force-conflicts', '--field-manager', 'tuner', '-f', '-'],
      applied,
    );
    const d = JSON.parse(await ok(['get', 'deploy', 'pair', '-n', ns, '-o', 'json']));
    const containers = d.spec.template.spec.containers as Array<{
      name: string;
      image: string;
      ports?: unknown[];
    }>;
    expect(containers.map((c) => [c.name, c.image])).toEqual([
      ['main', 'nginx:1.27'],
      ['side', 'busybox:1.37'],
    ]);
    expect(containers[1]?.ports).toEqual([{ containerPort: 9000, protocol: 'TCP' }]);
  });

  it('prunes a Service dropped from the set with apply --prune -l', async () => {
    await ok(
      ['apply', '--prune', '-l', 'set=pruned', '-n', ns, '-f', '-'],
      list(service(ns, 'a'), service(ns, 'b')),
    );
    const out = await ok(
      ['apply', '--prune', '-l', 'set=pruned', '-n', ns, '-f', '-'],
      list(service(ns, 'a'), deployment(ns, 'web', 'nginx')),
    );
    expect(out).toContain('service/b pruned');
    const names = await ok(['get', 'svc', '-n', ns, '-o', 'name']);
    expect(names.trim().split('\n').sort()).toEqual(['service/a']);
  });

  it('refuses an invalid Deployment with kube-apiserver 422 message', async () => {
    const bad = deployment(ns, 'bad', 'nginx', { app: 'other' });
    const result = await kubectl(cluster, ['create', '-f', '-'], { input: JSON.stringify(bad) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'The Deployment "bad" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`',
    );
  });

  it('refuses an unknown field under Strict field validation, and warns of it under Warn', async () => {
    const body = deployment(ns, 'strict', 'nginx') as unknown as { spec: Record<string, unknown> };
    body.spec.replica = 2;
    const strict = await kubectl(cluster, ['create', '--validate=strict', '-f', '-'], {
      input: JSON.stringify(body),
    });
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('strict decoding error: unknown field "spec.replica"');
    const warn = await kubectl(cluster, ['create', '--validate=warn', '-f', '-'], {
      input: JSON.stringify(body),
    });
    expect(warn.code, warn.stderr).toBe(0);
    expect(warn.stderr).toContain('unknown field "spec.replica"');
  });
});
