// The real kubectl against "a cluster" (the local control plane here): every verb a platform
// team uses on our kinds, as they would type it.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kubectl, startCluster, type TestCluster, uniqueName } from '../support/cluster.js';

const CRDS = join(import.meta.dirname, '../../crds');
let cluster: TestCluster;
let ns: string;

const scopeYaml = (
  name: string,
  extra: { labels?: Record<string, string>; spec?: Record<string, unknown> } = {},
) =>
  JSON.stringify({
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'Scope',
    metadata: { name, namespace: ns, ...(extra.labels ? { labels: extra.labels } : {}) },
    spec: {
      name,
      type: 'web_pool',
      application_id: 10,
      requested_spec: { memory_in_gb: 1, cpu_profile: 'standard' },
      ...extra.spec,
    },
  });

async function ok(args: string[], input?: string): Promise<string> {
  const result = await kubectl(cluster, args, input !== undefined ? { input } : {});
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

beforeAll(async () => {
  cluster = await startCluster();
  ns = uniqueName('kubectl');
  await ok(['apply', '-f', CRDS]);
  await ok([
    'wait',
    '--for=condition=Established',
    '--timeout=30s',
    'crd/scopes.platform.nrn.dev',
    'crd/services.platform.nrn.dev',
  ]);
  await ok(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
  );
}, 60_000);

afterAll(async () => {
  await kubectl(cluster, ['delete', 'namespace', ns, '--wait=false']);
  await cluster?.close();
});

describe('kubectl against the cluster', () => {
  it('applies the CRDs again with nothing to change', async () => {
    const out = await ok(['apply', '-f', CRDS]);
    expect(out.trim().split('\n')).toEqual([
      'customresourcedefinition.apiextensions.k8s.io/applications.platform.nrn.dev unchanged',
      'customresourcedefinition.apiextensions.k8s.io/scopeclasses.platform.nrn.dev unchanged',
      'customresourcedefinition.apiextensions.k8s.io/scopes.platform.nrn.dev unchanged',
      'customresourcedefinition.apiextensions.k8s.io/services.platform.nrn.dev unchanged',
      'customresourcedefinition.apiextensions.k8s.io/servicespecifications.platform.nrn.dev unchanged',
    ]);
  });

  it('creates, configures and leaves unchanged with client-side apply', async () => {
    expect(await ok(['apply', '-f', '-'], scopeYaml('web'))).toBe(
      'scope.platform.nrn.dev/web created\n',
    );
    expect(await ok(['apply', '-f', '-'], scopeYaml('web'))).toBe(
      'scope.platform.nrn.dev/web unchanged\n',
    );
    const changed = scopeYaml('web', { spec: { requested_spec: { memory_in_gb: 2 } } });
    expect(await ok(['apply', '-f', '-'], changed)).toBe('scope.platform.nrn.dev/web configured\n');
    const got = parse(await ok(['get', 'scope', 'web', '-n', ns, '-o', 'yaml']));
    expect(got.spec.requested_spec).toEqual({ memory_in_gb: 2 });
    expect(got.metadata.generation).toBe(2);
    expect(got.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toContain(
      '"memory_in_gb":2',
    );
  });

  it('refuses a duplicate create, an unknown field and a value past its bound', async () => {
    await ok(['create', '-f', '-'], scopeYaml('dup'));
    const again = await kubectl(cluster, ['create', '-f', '-'], { input: scopeYaml('dup') });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('scopes.platform.nrn.dev "dup" already exists');

    const unknown = await kubectl(cluster, ['apply', '-f', '-'], {
      input: scopeYaml('typo', { spec: { nmae: 'x' } }),
    });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('unknown field "spec.nmae"');

    const tooLong = await kubectl(cluster, ['apply', '-f', '-'], {
      input: scopeYaml('long', { spec: { name: 'x'.repeat(61) } }),
    });
    expect(tooLong.code).not.toBe(0);
    expect(tooLong.stderr).toContain('spec.name');
    expect(tooLong.stderr).toMatch(/Too long/);
  });

  it('prints the printer columns, and finds kinds by short name and category', async () => {
    await ok(['apply', '-f', '-'], scopeYaml('cols'));
    const table = await ok(['get', 'scopes', '-n', ns]);
    expect(table.split('\n')[0]?.split(/\s+/)).toEqual([
      'NAME',
      'ID',
      'TYPE',
      'STATUS',
      'READY',
      'CLASS',
      'AGE',
    ]);
    expect(table).toMatch(/^cols\s+web_pool\s+\d+s\s*$/m);
    const wide = await ok(['get', 'scopes', '-n', ns, '-o', 'wide']);
    expect(wide.split('\n')[0]).toContain('DOMAIN');
    expect(await ok(['get', 'nscope', 'cols', '-n', ns, '-o', 'name'])).toBe(
      'scope.platform.nrn.dev/cols\n',
    );
    const all = await ok(['get', 'nrn', '-n', ns, '-o', 'name']);
    expect(all).toContain('scope.platform.nrn.dev/cols');
  });

  it('selects by label with every operator', async () => {
    await ok(['apply', '-f', '-'], scopeYaml('lab-a', { labels: { tier: 'a', team: 'x' } }));
    await ok(['apply', '-f', '-'], scopeYaml('lab-b', { labels: { tier: 'b' } }));
    await ok(['apply', '-f', '-'], scopeYaml('lab-c', { labels: { other: 'y' } }));
    const names = async (selector: string) =>
      (await ok(['get', 'scopes', '-n', ns, '-l', selector, '-o', 'name']))
        .split('\n')
        .filter((l) => l.includes('lab-'))
        .map((l) => l.replace('scope.platform.nrn.dev/', ''));
    expect(await names('tier=a')).toEqual(['lab-a']);
    expect(await names('tier==b')).toEqual(['lab-b']);
    expect(await names('tier in (a,b)')).toEqual(['lab-a', 'lab-b']);
    expect(await names('tier notin (a),tier')).toEqual(['lab-b']);
    expect(await names('tier!=a,other')).toEqual(['lab-c']);
    expect(await names('!tier,other')).toEqual(['lab-c']);
    expect(await names('team')).toEqual(['lab-a']);
  });

  it('patches status through the subresource, and wait sees the condition and the jsonpath', async () => {
    await ok(['apply', '-f', '-'], scopeYaml('waiter'));
    const ready = kubectl(cluster, [
      'wait',
      '-n',
      ns,
      '--for=condition=Ready',
      '--timeout=20s',
      'scope/waiter',
    ]);
    const active = kubectl(cluster, [
      'wait',
      '-n',
      ns,
      '--for=jsonpath={.status.status}=active',
      '--timeout=20s',
      'scope/waiter',
    ]);
    await new Promise((r) => setTimeout(r, 500));
    const status = {
      status: {
        status: 'active',
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Provisioned',
            message: 'ok',
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        ],
      },
    };
    await ok([
      'patch',
      'scope',
      'waiter',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(status),
    ]);
    const [r, a] = await Promise.all([ready, active]);
    expect(r.stdout).toBe('scope.platform.nrn.dev/waiter condition met\n');
    expect(a.stdout).toBe('scope.platform.nrn.dev/waiter condition met\n');
    // A write to the main resource leaves status alone; status writes leave generation alone.
    const got = parse(await ok(['get', 'scope', 'waiter', '-n', ns, '-o', 'yaml']));
    expect(got.status.status).toBe('active');
    expect(got.metadata.generation).toBe(1);
  });

  it('streams changes to get -w', async () => {
    await ok(['apply', '-f', '-'], scopeYaml('watched'));
    const child = spawn('kubectl', [
      '--kubeconfig',
      cluster.kubeconfigPath,
      'get',
      'scopes',
      '-n',
      ns,
      '-w',
      '--output-watch-events',
      '--field-selector',
      'metadata.name=watched',
    ]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    try {
      await until(() => out.includes('ADDED'));
      await ok(['label', 'scope', 'watched', '-n', ns, 'seen=yes']);
      await until(() => out.includes('MODIFIED'));
      await ok(['delete', 'scope', 'watched', '-n', ns]);
      await until(() => out.includes('DELETED'));
      expect(out.split('\n')[0]?.split(/\s+/)).toEqual([
        'EVENT',
        'NAME',
        'ID',
        'TYPE',
        'STATUS',
        'READY',
        'CLASS',
        'AGE',
      ]);
    } finally {
      child.kill();
    }
  });

  it('holds a delete while a finalizer stands, and completes it when the finalizer is released', async () => {
    const manifest = JSON.parse(scopeYaml('held'));
    manifest.metadata.finalizers = ['platform.nrn.dev/test'];
    await ok(['apply', '-f', '-'], JSON.stringify(manifest));
    const deleting = kubectl(cluster, ['delete', 'scope', 'held', '-n', ns, '--timeout=20s']);
    await until(async () => {
      const got = await kubectl(cluster, [
        'get',
        'scope',
        'held',
        '-n',
        ns,
        '-o',
        'jsonpath={.metadata.deletionTimestamp}',
      ]);
      return got.stdout !== '';
    });
    expect((await kubectl(cluster, ['get', 'scope', 'held', '-n', ns])).code).toBe(0);
    await ok([
      'patch',
      'scope',
      'held',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    ]);
    const deleted = await deleting;
    expect(deleted.stdout).toBe('scope.platform.nrn.dev "held" deleted\n');
    const gone = await kubectl(cluster, ['get', 'scope', 'held', '-n', ns]);
    expect(gone.stderr).toContain('NotFound');
  });

  it('explains our kinds from the OpenAPI document', async () => {
    const out = await ok(['explain', 'scopes.spec']);
    expect(out).toContain('KIND:       Scope');
    expect(out).toContain('requested_spec');
    expect(out).toMatch(/name\s+<string> -required-/);
    const field = await ok(['explain', 'scopes.spec.type']);
    expect(field).toContain('web_pool');
  });

  it('applies server-side, reports a conflict between managers, and forces it', async () => {
    const manifest = scopeYaml('ssa', { labels: { owner: 'one' } });
    expect(
      await ok(['apply', '--server-side', '--field-manager=team-one', '-f', '-'], manifest),
    ).toBe('scope.platform.nrn.dev/ssa serverside-applied\n');
    const other = scopeYaml('ssa', { labels: { owner: 'two' } });
    const conflict = await kubectl(
      cluster,
      ['apply', '--server-side', '--field-manager=team-two', '-f', '-'],
      { input: other },
    );
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain('conflict');
    expect(conflict.stderr).toContain('team-one');
    expect(conflict.stderr).toContain('.metadata.labels.owner');
    await ok(
      ['apply', '--server-side', '--field-manager=team-two', '--force-conflicts', '-f', '-'],
      other,
    );
    const got = parse(
      await ok(['get', 'scope', 'ssa', '-n', ns, '-o', 'yaml', '--show-managed-fields']),
    );
    expect(got.metadata.labels.owner).toBe('two');
    expect(got.metadata.managedFields.map((m: { manager: string }) => m.manager).sort()).toEqual([
      'team-one',
      'team-two',
    ]);
  });

  it('creates built-in kinds with kubectl create, which sends protobuf', async () => {
    const extra = uniqueName('typed');
    expect(await ok(['create', 'namespace', extra])).toBe(`namespace/${extra} created\n`);
    await ok([
      'create',
      'configmap',
      'conf',
      '-n',
      extra,
      '--from-literal=a=b',
      '--from-literal=c=d',
    ]);
    await ok(['create', 'secret', 'generic', 'sec', '-n', extra, '--from-literal=token=s3cret']);
    await ok(['create', 'serviceaccount', 'robot', '-n', extra]);
    await ok(['create', 'quota', 'q', '-n', extra, '--hard=cpu=2,memory=1Gi']);
    const conf = parse(await ok(['get', 'configmap', 'conf', '-n', extra, '-o', 'yaml']));
    expect(conf.data).toEqual({ a: 'b', c: 'd' });
    const sec = parse(await ok(['get', 'secret', 'sec', '-n', extra, '-o', 'yaml']));
    expect(Buffer.from(sec.data.token, 'base64').toString()).toBe('s3cret');
    const quota = parse(await ok(['get', 'resourcequota', 'q', '-n', extra, '-o', 'yaml']));
    expect(quota.spec.hard).toEqual({ cpu: '2', memory: '1Gi' });
    expect(await ok(['get', 'serviceaccount', 'robot', '-n', extra, '-o', 'name'])).toBe(
      'serviceaccount/robot\n',
    );
    const again = await kubectl(cluster, ['create', 'namespace', extra]);
    expect(again.stderr).toContain(`namespaces "${extra}" already exists`);
    await ok(['delete', 'namespace', extra, '--wait=false']);
  });

  it('removes the dependents of a deleted owner, and the contents of a deleted namespace', async () => {
    const gcNs = uniqueName('gc');
    await ok(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: gcNs } }),
    );
    const owner = JSON.parse(scopeYaml('owner'));
    owner.metadata.namespace = gcNs;
    await ok(['apply', '-f', '-'], JSON.stringify(owner));
    const uid = await ok(['get', 'scope', 'owner', '-n', gcNs, '-o', 'jsonpath={.metadata.uid}']);
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'child',
        namespace: gcNs,
        ownerReferences: [
          { apiVersion: 'platform.nrn.dev/v1alpha1', kind: 'Scope', name: 'owner', uid },
        ],
      },
      data: { a: 'b' },
    };
    await ok(['apply', '-f', '-'], JSON.stringify(configMap));
    await ok(['delete', 'scope', 'owner', '-n', gcNs]);
    await until(
      async () => (await kubectl(cluster, ['get', 'configmap', 'child', '-n', gcNs])).code !== 0,
    );

    await ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'left', namespace: gcNs },
        data: { a: 'b' },
      }),
    );
    await ok(['delete', 'namespace', gcNs, '--timeout=30s']);
    const gone = await kubectl(cluster, ['get', 'namespace', gcNs]);
    expect(gone.stderr).toContain('NotFound');
  });
});

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
