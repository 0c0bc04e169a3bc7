// `kubectl get` tables as kube-apiserver prints them: the same columns for a list, one object
// (`get KIND NAME`, which asks a GET of the object as=Table), `-o wide` and `-w` (a list and a
// watch with fieldSelector=metadata.name=NAME), for a CRD's printer columns and for each
// built-in kind's printer (pkg/printers/internalversion/printers.go), with --show-kind and -A.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCrdFiles } from '../../src/api/index.js';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { kubectlAt, uniqueName } from '../support/cluster.js';
import { type RawApi, rawApi } from '../support/raw-api.js';
import { until } from '../support/wait.js';

let plane: ControlPlane;
let dataDir: string;
let call: RawApi['call'];
let run: ReturnType<typeof kubectlAt>;
const ns = uniqueName('tables');

const TABLE_ACCEPT =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

async function ok(args: string[], input?: string): Promise<string> {
  const result = await run(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

/**
 * A printed table's lines, each cut into its cells where the header's columns begin (kubectl
 * aligns every column, and pads them with 3 spaces; an empty cell is blank).
 */
function lines(out: string): string[][] {
  const all = out.trimEnd().split('\n');
  const starts = [...(all[0] ?? '').matchAll(/(?:^|\s{2,})(\S)/g)].map(
    (m) => (m.index ?? 0) + m[0].length - 1,
  );
  return all.map((line) =>
    starts.map((start, i) => line.slice(start, starts[i + 1] ?? line.length).trim()),
  );
}

const header = (out: string) => lines(out)[0];

const scope = (name: string) =>
  JSON.stringify({
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'Scope',
    metadata: { name, namespace: ns },
    spec: {
      name,
      type: 'web_pool',
      application_id: 42,
      requested_spec: { memory_in_gb: 1, cpu_profile: 'standard' },
    },
  });

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-tables-'));
  plane = await startControlPlane({ dataDir, fsync: false, bookmarkIntervalMs: 1000 });
  ({ call } = rawApi(plane));
  run = kubectlAt(plane.kubeconfigPath);
  for (const [, text] of renderCrdFiles()) {
    const res = await call(
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      text,
      { 'Content-Type': 'application/yaml' },
    );
    expect(res.status).toBe(201);
  }
  await ok(['wait', '--for=condition=Established', '--timeout=30s', 'crd/scopes.platform.nrn.dev']);
  await ok(['create', 'namespace', ns]);
}, 60_000);

afterAll(async () => {
  await plane?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('a custom resource', () => {
  it('shows one object with the columns of its list, plain and wide', async () => {
    await ok(['apply', '-f', '-'], scope('alpha'));
    await ok(['apply', '-f', '-'], scope('beta'));
    const list = await ok(['get', 'scopes', '-n', ns]);
    const one = await ok(['get', 'scope', 'alpha', '-n', ns]);
    expect(header(list)).toEqual(['NAME', 'ID', 'TYPE', 'STATUS', 'READY', 'CLASS', 'AGE']);
    expect(header(one)).toEqual(header(list));
    expect(lines(one)).toHaveLength(2);
    expect(lines(one)[1]?.slice(0, 3)).toEqual(['alpha', '', 'web_pool']);

    const wideList = await ok(['get', 'scopes', '-n', ns, '-o', 'wide']);
    const wideOne = await ok(['get', 'scope', 'alpha', '-n', ns, '-o', 'wide']);
    const wideHeader = ['NAME', 'ID', 'TYPE', 'STATUS', 'READY', 'CLASS', 'APP', 'DOMAIN', 'AGE'];
    expect(header(wideList)).toEqual(wideHeader);
    expect(header(wideOne)).toEqual(wideHeader);
    expect(lines(wideOne)[1]?.[6]).toBe('42');
  });

  it('answers a GET of one object as=Table with a Table of one row', async () => {
    const path = `/apis/platform.nrn.dev/v1alpha1/namespaces/${ns}/scopes/alpha`;
    const plain = await call('GET', path);
    const table = await call('GET', path, undefined, { Accept: TABLE_ACCEPT });
    expect(table.status).toBe(200);
    expect(table.json.kind).toBe('Table');
    expect(table.json.apiVersion).toBe('meta.k8s.io/v1');
    expect(table.json.metadata).toEqual({ resourceVersion: plain.json.metadata.resourceVersion });
    expect(table.json.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
      'Name',
      'ID',
      'Type',
      'Status',
      'Ready',
      'Class',
      'App',
      'Domain',
      'Age',
    ]);
    expect(table.json.rows).toHaveLength(1);
    expect(table.json.rows[0].cells.slice(0, 3)).toEqual(['alpha', null, 'web_pool']);
    expect(table.json.rows[0].object).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: plain.json.metadata,
    });
    const full = await call('GET', `${path}?includeObject=Object`, undefined, {
      Accept: TABLE_ACCEPT,
    });
    expect(full.json.rows[0].object).toEqual(plain.json);
    const bad = await call('GET', `${path}?includeObject=All`, undefined, {
      Accept: TABLE_ACCEPT,
    });
    expect(bad.status).toBe(400);
  });

  it('watches one object with the columns of its list', async () => {
    const child = spawn(
      'kubectl',
      ['--kubeconfig', plane.kubeconfigPath, 'get', 'scope', 'beta', '-n', ns, '-w'],
      { timeout: 30_000 },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    try {
      await until(() => out.split('\n').length >= 3, 15_000);
      await ok(['label', 'scope', 'beta', '-n', ns, 'seen=yes']);
      await until(() => out.split('\n').length >= 4, 15_000);
    } finally {
      child.kill();
    }
    const printed = lines(out);
    expect(printed[0]).toEqual(['NAME', 'ID', 'TYPE', 'STATUS', 'READY', 'CLASS', 'AGE']);
    // The object itself, then its change: rows of the same columns, no second header.
    expect(printed.slice(1).map((row) => row.slice(0, 3))).toEqual([
      ['beta', '', 'web_pool'],
      ['beta', '', 'web_pool'],
    ]);
  });
});

describe('built-in kinds', () => {
  beforeAll(async () => {
    await ok(['create', 'configmap', 'conf', '-n', ns, '--from-literal=a=1', '--from-literal=b=2']);
    await ok(['create', 'secret', 'generic', 'sec', '-n', ns, '--from-literal=k=v']);
    await ok(['create', 'serviceaccount', 'robot', '-n', ns]);
    await ok(['create', 'quota', 'quota', '-n', ns, '--hard=cpu=2,limits.memory=2Gi,pods=3']);
    await ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: 'limits', namespace: ns },
        spec: { limits: [{ type: 'Container', default: { cpu: '1' } }] },
      }),
    );
    await ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'leader', namespace: ns },
        spec: { holderIdentity: 'me-1' },
      }),
    );
  });

  // Every kind: the header of a list, of one object and of one object wide, and its row.
  it.each<[string, string, string[], string[]]>([
    ['configmap', 'conf', ['NAME', 'DATA', 'AGE'], ['conf', '2']],
    ['secret', 'sec', ['NAME', 'TYPE', 'DATA', 'AGE'], ['sec', 'Opaque', '1']],
    ['serviceaccount', 'robot', ['NAME', 'SECRETS', 'AGE'], ['robot', '0']],
    ['resourcequota', 'quota', ['NAME', 'REQUEST', 'LIMIT', 'AGE'], ['quota']],
    ['lease', 'leader', ['NAME', 'HOLDER', 'AGE'], ['leader', 'me-1']],
    // Without a printer in kube: the default convertor's Name and Created At.
    ['limitrange', 'limits', ['NAME', 'CREATED AT'], ['limits']],
  ])('%s prints %s with its printer’s columns', async (kind, name, columns, cells) => {
    const list = await ok(['get', kind, '-n', ns]);
    const one = await ok(['get', kind, name, '-n', ns]);
    const wide = await ok(['get', kind, name, '-n', ns, '-o', 'wide']);
    expect(header(list)).toEqual(columns);
    expect(header(one)).toEqual(columns);
    expect(header(wide)).toEqual(columns);
    const row = lines(one)[1] ?? [];
    expect(row.slice(0, cells.length)).toEqual(cells);
    if (columns.at(-1) === 'AGE') expect(row.at(-1)).toMatch(/^\d+s$/);
    if (columns.at(-1) === 'CREATED AT') expect(row.at(-1)).toMatch(/^\d{4}-\d\d-\d\dT[\d:]+Z$/);
  });

  it('prints a namespace’s phase, and a CRD with the default convertor', async () => {
    expect(lines(await ok(['get', 'namespace', ns]))).toEqual([
      ['NAME', 'STATUS', 'AGE'],
      [ns, 'Active', expect.stringMatching(/^\d+s$/)],
    ]);
    const crd = lines(await ok(['get', 'crd', 'scopes.platform.nrn.dev']));
    expect(crd[0]).toEqual(['NAME', 'CREATED AT']);
    expect(crd[1]?.[0]).toBe('scopes.platform.nrn.dev');
  });

  it('prints a quota’s requests and limits from its status', async () => {
    await ok([
      'patch',
      'resourcequota',
      'quota',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: { hard: { cpu: '2', 'limits.memory': '2Gi', pods: '3' }, used: { pods: '1' } },
      }),
    ]);
    expect(lines(await ok(['get', 'quota', 'quota', '-n', ns]))[1]?.slice(0, 3)).toEqual([
      'quota',
      'cpu: 0/2, pods: 1/3',
      'limits.memory: 0/2Gi',
    ]);
  });

  it('prints Events, through either API, with their wide columns', async () => {
    await ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'core-event', namespace: ns },
        involvedObject: { kind: 'ConfigMap', name: 'conf', namespace: ns, fieldPath: 'data' },
        reason: 'Tested',
        message: '  spaced out  ',
        type: 'Normal',
        source: { component: 'tester', host: 'node-1' },
        firstTimestamp: new Date(Date.now() - 3 * 3600_000).toISOString().replace(/\.\d+/, ''),
        lastTimestamp: new Date(Date.now() - 3600_000).toISOString().replace(/\.\d+/, ''),
        count: 3,
      }),
    );
    const columns = ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'];
    const wideColumns = [
      'LAST SEEN',
      'TYPE',
      'REASON',
      'OBJECT',
      'SUBOBJECT',
      'SOURCE',
      'MESSAGE',
      'FIRST SEEN',
      'COUNT',
      'NAME',
    ];
    const row = ['60m', 'Normal', 'Tested', 'configmap/conf', 'spaced out'];
    const wideRow = [
      '60m',
      'Normal',
      'Tested',
      'configmap/conf',
      'data',
      'tester, node-1',
      'spaced out',
      '3h',
      '3',
      'core-event',
    ];
    for (const kind of ['events', 'events.v1.events.k8s.io']) {
      expect(lines(await ok(['get', kind, '-n', ns]))).toEqual([columns, row]);
      expect(lines(await ok(['get', kind, 'core-event', '-n', ns]))).toEqual([columns, row]);
      expect(lines(await ok(['get', kind, 'core-event', '-n', ns, '-o', 'wide']))).toEqual([
        wideColumns,
        wideRow,
      ]);
    }
  });

  it('prefixes names with their kind (--show-kind) and adds the namespace (-A)', async () => {
    expect(lines(await ok(['get', 'configmap', 'conf', '-n', ns, '--show-kind']))).toEqual([
      ['NAME', 'DATA', 'AGE'],
      ['configmap/conf', '2', expect.stringMatching(/^\d+s$/)],
    ]);
    const all = lines(await ok(['get', 'secrets', '-A']));
    expect(all[0]).toEqual(['NAMESPACE', 'NAME', 'TYPE', 'DATA', 'AGE']);
    expect(all.find((row) => row[0] === ns)?.slice(0, 4)).toEqual([ns, 'sec', 'Opaque', '1']);
    // Two kinds: a table each, blank line between, names prefixed with their kind.
    const [cms, sas] = (await ok(['get', 'configmap,serviceaccount', '-n', ns])).split('\n\n');
    expect(lines(cms ?? '')).toEqual([
      ['NAME', 'DATA', 'AGE'],
      ['configmap/conf', '2', expect.stringMatching(/^\d+s$/)],
    ]);
    expect(header(sas ?? '')).toEqual(['NAME', 'SECRETS', 'AGE']);
    expect(lines(sas ?? '').map((row) => row[0])).toContain('serviceaccount/robot');
  });
});
