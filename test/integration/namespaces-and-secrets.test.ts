// Namespace deletion and Secret stringData through kubectl, as on any cluster: a deleted
// namespace is Terminating with its content for the namespace controller's grace period, then
// emptied (with the controller's status conditions) and gone; the API server's own namespaces
// cannot be deleted; stringData is merged into data and never stored. Runs against "a cluster"
// (the local control plane unless KUBECONFIG names one), because kube-apiserver does all this.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, startCluster, type TestCluster, uniqueName } from '../support/cluster.js';

let cluster: TestCluster;
let dir: string;

async function ok(args: string[], input?: string): Promise<string> {
  const result = await kubectl(cluster, args, input !== undefined ? { input } : {});
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

beforeAll(async () => {
  cluster = await startCluster();
  dir = await mkdtemp(join(tmpdir(), 'nrn-ns-'));
});
afterAll(async () => {
  await cluster?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('deleting a namespace', () => {
  it('kubectl delete -f of a set holding its Namespace deletes all of it, exit 0', async () => {
    const ns = uniqueName('set');
    const file = join(dir, `${ns}.yaml`);
    await writeFile(
      file,
      [
        `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${ns}\ndata:\n  a: b\n`,
        `apiVersion: v1\nkind: Secret\nmetadata:\n  name: keys\n  namespace: ${ns}\nstringData:\n  k: v\n`,
      ].join('---\n'),
    );
    await ok(['apply', '-f', file]);
    const deleted = await kubectl(cluster, ['delete', '-f', file]);
    expect(deleted.stderr).toBe('');
    expect(deleted.code).toBe(0);
    expect(deleted.stdout.trim().split('\n')).toEqual([
      `namespace "${ns}" deleted`,
      'configmap "settings" deleted',
      'secret "keys" deleted',
    ]);
    await ok(['wait', '--for=delete', `namespace/${ns}`, '--timeout=60s']);
  });

  it('is Terminating with its content until emptied; the controller says what holds it', async () => {
    const ns = uniqueName('hold');
    await ok(['create', 'namespace', ns]);
    await ok(['-n', ns, 'create', 'configmap', 'free', '--from-literal=a=b']);
    await ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'held', namespace: ns, finalizers: ['example.com/hold'] },
      }),
    );
    await ok(['delete', 'namespace', ns, '--wait=false']);
    // At once: Terminating, its finalizer in spec, its content still there.
    expect(await ok(['get', 'namespace', ns, '-o', 'jsonpath={.status.phase}'])).toBe(
      'Terminating',
    );
    expect(await ok(['get', 'namespace', ns, '-o', 'jsonpath={.spec.finalizers}'])).toBe(
      '["kubernetes"]',
    );
    expect(await ok(['-n', ns, 'get', 'configmap', 'free', '-o', 'name'])).toBe('configmap/free\n');
    // After the grace, emptied but for what a finalizer holds, which the conditions name.
    const remains = 'jsonpath={.status.conditions[?(@.type=="NamespaceContentRemaining")].message}';
    await ok([
      'wait',
      '--for',
      `${remains}=Some resources are remaining: configmaps. has 1 resource instances`,
      `namespace/${ns}`,
      '--timeout=60s',
    ]);
    const conditions = JSON.parse(
      await ok(['get', 'namespace', ns, '-o', 'jsonpath={.status.conditions}']),
    ) as Array<{ type: string; status: string; reason: string; message: string }>;
    expect(conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered'],
      ['NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions'],
      ['NamespaceDeletionContentFailure', 'False', 'ContentDeleted'],
      ['NamespaceContentRemaining', 'True', 'SomeResourcesRemain'],
      ['NamespaceFinalizersRemaining', 'True', 'SomeFinalizersRemain'],
    ]);
    expect(conditions[4]?.message).toBe(
      'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    );
    expect((await kubectl(cluster, ['-n', ns, 'get', 'configmap', 'free'])).code).toBe(1);
    // New content is refused while it terminates.
    const refused = await kubectl(cluster, ['-n', ns, 'create', 'configmap', 'late']);
    expect(refused.stderr).toContain(
      `forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
    );
    await ok([
      '-n',
      ns,
      'patch',
      'configmap',
      'held',
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":null}}',
    ]);
    await ok(['wait', '--for=delete', `namespace/${ns}`, '--timeout=60s']);
  });

  for (const name of ['default', 'kube-system', 'kube-public']) {
    it(`refuses to delete ${name}, as NamespaceLifecycle does`, async () => {
      const result = await kubectl(cluster, ['delete', 'namespace', name]);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(
        `Error from server (Forbidden): namespaces "${name}" is forbidden: this namespace may not be deleted`,
      );
      expect(await ok(['get', 'namespace', name, '-o', 'jsonpath={.status.phase}'])).toBe('Active');
    });
  }
});

describe('Secret stringData', () => {
  it('is merged into data, over a key of the same name, and never stored', async () => {
    const ns = uniqueName('secret');
    await ok(['create', 'namespace', ns]);
    await ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's', namespace: ns },
        data: {
          kept: Buffer.from('old').toString('base64'),
          both: Buffer.from('data').toString('base64'),
        },
        stringData: { password: 'change-me', both: 'stringData' },
      }),
    );
    const secret = JSON.parse(await ok(['-n', ns, 'get', 'secret', 's', '-o', 'json'])) as {
      data: Record<string, string>;
      stringData?: unknown;
    };
    expect(secret.stringData).toBeUndefined();
    const decoded = Object.fromEntries(
      Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
    );
    expect(decoded).toEqual({ kept: 'old', both: 'stringData', password: 'change-me' });
    // A later update through stringData alone changes that key and keeps the rest.
    await ok([
      '-n',
      ns,
      'patch',
      'secret',
      's',
      '--type=merge',
      '-p',
      '{"stringData":{"password":"rotated"}}',
    ]);
    const after = await ok(['-n', ns, 'get', 'secret', 's', '-o', 'jsonpath={.data.password}']);
    expect(Buffer.from(after, 'base64').toString()).toBe('rotated');
    await ok(['delete', 'namespace', ns, '--wait=false']);
  });

  it('is refused as kube-apiserver refuses it: bad base64, a bad key, a TLS secret without its key', async () => {
    const ns = uniqueName('badsecret');
    await ok(['create', 'namespace', ns]);
    const apply = (secret: Record<string, unknown>) =>
      kubectl(cluster, ['apply', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 's', namespace: ns },
          ...secret,
        }),
      });
    expect((await apply({ data: { k: 'not base64!' } })).stderr).toContain(
      'illegal base64 data at input byte 3',
    );
    expect((await apply({ stringData: { 'bad key': 'v' } })).stderr).toContain(
      'Secret "s" is invalid: data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters',
    );
    expect(
      (await apply({ type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'c' } })).stderr,
    ).toContain('Secret "s" is invalid: data[tls.key]: Required value');
    // Immutable: its data no longer changes.
    expect((await apply({ immutable: true, stringData: { a: '1' } })).code).toBe(0);
    expect((await apply({ immutable: true, stringData: { a: '2' } })).stderr).toContain(
      'Secret "s" is invalid: data: Forbidden: field is immutable when `immutable` is set',
    );
    await ok(['delete', 'namespace', ns, '--wait=false']);
  });
});
