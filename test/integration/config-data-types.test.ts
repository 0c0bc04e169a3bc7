// ConfigMap and Secret values that are not what their Go types hold (data a map[string]string,
// binaryData and a Secret's data a map[string][]byte), sent to the local control plane by raw
// HTTP and by kubectl on every write path: refused where kube-apiserver's decoding refuses them,
// in each path's words (create and update 400, JSON/merge/strategic patch 422 on `patch`, apply
// 400), and nothing stored.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { kubectlAt, uniqueName } from '../support/cluster.js';
import { type RawApi, rawApi } from '../support/raw-api.js';

let plane: ControlPlane;
let dataDir: string;
let api: RawApi;
let run: ReturnType<typeof kubectlAt>;
let ns: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-data-types-'));
  plane = await startControlPlane({ dataDir, fsync: false, bookmarkIntervalMs: 1000 });
  api = rawApi(plane);
  run = kubectlAt(plane.kubeconfigPath);
  ns = uniqueName('data-types');
  expect((await api.call('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status).toBe(
    201,
  );
});
afterAll(async () => {
  await plane?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

const cms = () => `/api/v1/namespaces/${ns}/configmaps`;
const secrets = () => `/api/v1/namespaces/${ns}/secrets`;
const cm = (name: string, body: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  ...body,
});
const secret = (name: string, body: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name },
  ...body,
});
const DECODE = (kind: string) => `${kind} in version "v1" cannot be handled as a ${kind}: `;

describe('create (POST) and update (PUT)', () => {
  it('refuses a ConfigMap value that is not a string with the decoder error, and stores nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [
        { a: 1 },
        'json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
      ],
      [
        { a: true },
        'json: cannot unmarshal bool into Go struct field ConfigMap.data of type string',
      ],
      [
        { a: { b: 'c' } },
        'json: cannot unmarshal object into Go struct field ConfigMap.data of type string',
      ],
      [
        { a: ['b'] },
        'json: cannot unmarshal array into Go struct field ConfigMap.data of type string',
      ],
      [
        'text',
        'json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string',
      ],
    ];
    for (const [data, error] of cases) {
      const answer = await api.call('POST', cms(), cm('bad', { data }));
      expect(answer.status, JSON.stringify(data)).toBe(400);
      expect(answer.json).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        reason: 'BadRequest',
        code: 400,
        message: `${DECODE('ConfigMap')}${error}`,
      });
    }
    const binary = await api.call('POST', cms(), cm('bad', { binaryData: { a: 'not base64!' } }));
    expect(binary.status).toBe(400);
    expect(binary.json.message).toBe(`${DECODE('ConfigMap')}illegal base64 data at input byte 3`);
    expect((await api.call('GET', `${cms()}/bad`)).status).toBe(404);
  });

  it('refuses a Secret value that is not base64 text, and stringData that is not a string', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { data: { a: 1 } },
        'json: cannot unmarshal number into Go struct field Secret.data of type []uint8',
      ],
      [{ data: { a: 'no!' } }, 'illegal base64 data at input byte 2'],
      [
        { data: { a: [1, 300] } },
        'json: cannot unmarshal number 300 into Go struct field Secret.data of type uint8',
      ],
      [
        { stringData: { a: 2 } },
        'json: cannot unmarshal number into Go struct field Secret.stringData of type string',
      ],
    ];
    for (const [body, error] of cases) {
      const answer = await api.call('POST', secrets(), secret('bad', body));
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json.message).toBe(`${DECODE('Secret')}${error}`);
    }
    expect((await api.call('GET', `${secrets()}/bad`)).status).toBe(404);
  });

  it('reads back what Go decodes: a null as "", a Secret value sent as bytes as base64', async () => {
    const made = await api.call('POST', cms(), cm('nulls', { data: { a: null, b: 'x' } }));
    expect(made.status).toBe(201);
    expect(made.json.data).toEqual({ a: '', b: 'x' });
    const bytes = await api.call('POST', secrets(), secret('bytes', { data: { a: [104, 105] } }));
    expect(bytes.status).toBe(201);
    expect(bytes.json.data).toEqual({ a: 'aGk=' });
  });

  it('refuses an update the same way and keeps what was stored', async () => {
    const made = await api.call('POST', cms(), cm('kept', { data: { a: 'b' } }));
    expect(made.status).toBe(201);
    const answer = await api.call('PUT', `${cms()}/kept`, { ...made.json, data: { a: 1 } });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toBe(
      `${DECODE('ConfigMap')}json: cannot unmarshal number into Go struct field ConfigMap.data of type string`,
    );
    expect((await api.call('GET', `${cms()}/kept`)).json.data).toEqual({ a: 'b' });
  });
});

describe('patches and server-side apply', () => {
  const patch = (name: string, type: string, body: unknown) =>
    api.call('PATCH', `${cms()}/${name}`, body, { 'Content-Type': type });

  it('answers a JSON or merge patch 422 on `patch`, quoting the patched document', async () => {
    await api.call('POST', cms(), cm('merged', { data: { a: 'b' } }));
    const error =
      'json: cannot unmarshal number into Go struct field ConfigMap.data of type string';
    for (const [type, body] of [
      ['application/merge-patch+json', { data: { a: 1 } }],
      ['application/json-patch+json', [{ op: 'add', path: '/data/c', value: 2 }]],
    ] as const) {
      const answer = await patch('merged', type, body);
      expect(answer.status, type).toBe(422);
      expect(answer.json.reason).toBe('Invalid');
      expect(answer.json.message).toMatch(/^ "" is invalid: patch: Invalid value: "\{.*\}": /);
      expect(answer.json.message.endsWith(error)).toBe(true);
      expect(answer.json.details.causes).toEqual([
        { reason: 'FieldValueInvalid', field: 'patch', message: expect.stringContaining(error) },
      ]);
    }
    expect((await api.call('GET', `${cms()}/merged`)).json.data).toEqual({ a: 'b' });
  });

  it('answers a strategic merge patch with the converter error, quoting the patch', async () => {
    await api.call('POST', cms(), cm('strategic', { data: { a: 'b' } }));
    const answer = await patch('strategic', 'application/strategic-merge-patch+json', {
      data: { a: 1 },
    });
    expect(answer.status).toBe(422);
    expect(answer.json.message).toBe(
      ' "" is invalid: patch: Invalid value: "map[data:map[a:1]]": cannot convert int64 to string',
    );
    const secretAnswer = await api.call('POST', secrets(), secret('smp', { data: { a: 'Yg==' } }));
    expect(secretAnswer.status).toBe(201);
    const bad = await api.call(
      'PATCH',
      `${secrets()}/smp`,
      { data: { a: '!!' } },
      { 'Content-Type': 'application/strategic-merge-patch+json' },
    );
    expect(bad.status).toBe(422);
    expect(bad.json.message).toBe(
      ' "" is invalid: patch: Invalid value: "map[data:map[a:!!]]": error decoding from json: illegal base64 data at input byte 0',
    );
    expect((await api.call('GET', `${cms()}/strategic`)).json.data).toEqual({ a: 'b' });
  });

  it('refuses an applied configuration whose values are not strings, naming each', async () => {
    const answer = await api.call(
      'PATCH',
      `${cms()}/applied?fieldManager=test`,
      cm('applied', { data: { a: 1, b: 'ok', c: true } }),
      { 'Content-Type': 'application/apply-patch+yaml' },
    );
    expect(answer.status).toBe(400);
    expect(answer.json.message).toBe(
      [
        `failed to create typed patch object (/applied; /v1, Kind=ConfigMap): errors:`,
        '  .data.a: expected string, got &value.valueUnstructured{Value:1}',
        '  .data.c: expected string, got &value.valueUnstructured{Value:true}',
      ].join('\n'),
    );
    const base64 = await api.call(
      'PATCH',
      `${secrets()}/applied?fieldManager=test`,
      secret('applied', { data: { a: 'no!' } }),
      { 'Content-Type': 'application/apply-patch+yaml' },
    );
    expect(base64.status).toBe(400);
    expect(base64.json.message).toBe(
      // Named as the applied configuration names itself (objectGVKNN(patchObj)): no namespace.
      'failed to convert new object (/applied; /v1, Kind=Secret) to proper version: error decoding from json: illegal base64 data at input byte 2',
    );
    expect((await api.call('GET', `${cms()}/applied`)).status).toBe(404);
    expect((await api.call('GET', `${secrets()}/applied`)).status).toBe(404);
  });
});

describe('through kubectl', () => {
  const yaml = (name: string, data: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n${data}`;

  it('kubectl apply (create, then patch) and apply --server-side refuse a number', async () => {
    const created = await run(['apply', '-f', '-'], yaml('k', '  replicas: 3\n'));
    expect(created.code).not.toBe(0);
    expect(created.stderr).toContain(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
    );
    expect((await run(['apply', '-f', '-'], yaml('k', '  replicas: "3"\n'))).code).toBe(0);
    const patched = await run(['apply', '-f', '-'], yaml('k', '  replicas: 4\n'));
    expect(patched.code).not.toBe(0);
    expect(patched.stderr).toContain('cannot convert int64 to string');
    const server = await run(['apply', '--server-side', '-f', '-'], yaml('k', '  replicas: 5\n'));
    expect(server.code).not.toBe(0);
    expect(server.stderr).toContain(
      '.data.replicas: expected string, got &value.valueUnstructured{Value:5}',
    );
    const merge = await run([
      '-n',
      ns,
      'patch',
      'configmap',
      'k',
      '--type=merge',
      '-p',
      '{"data":{"replicas":6}}',
    ]);
    expect(merge.code).not.toBe(0);
    expect(merge.stderr).toContain(
      'json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
    );
    const stored = await run([
      '-n',
      ns,
      'get',
      'configmap',
      'k',
      '-o',
      'jsonpath={.data.replicas}',
    ]);
    expect(stored.stdout).toBe('3');
  });
});
