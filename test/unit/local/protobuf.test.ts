import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseBody } from '../../../src/local/http.js';
import { decodeKubeProtobuf } from '../../../src/local/protobuf.js';
import { ApiError } from '../../../src/local/types.js';

/*
 * The fixtures are the request bodies kubectl v1.32.4 sent, byte for byte, captured by a small
 * HTTP server that saved each POST body, with KUBECONFIG pointing kubectl at it:
 *
 *   namespace.bin              kubectl create namespace team-a
 *   namespace-save-config.bin  kubectl create namespace annotated --save-config
 *   configmap.bin              kubectl create configmap app-config -n team-a --from-literal=a=b
 *                                '--from-literal=greeting=hello world'
 *   configmap-binary.bin       kubectl create configmap bin-config --from-file=blob=blob.dat
 *                                --from-literal=text=plain
 *                              (blob.dat: printf '\x00\x01\x02\xffbinary\x80')
 *   secret.bin                 kubectl create secret generic creds -n team-a
 *                                --from-literal=user=admin '--from-literal=password=s3cr3t!' --type=Opaque
 *   serviceaccount.bin         kubectl create serviceaccount builder -n team-a
 *   resourcequota.bin          kubectl create quota compute -n team-a
 *                                --hard=cpu=1,memory=1Gi,pods=10 --scopes=BestEffort
 *   deployment.bin             kubectl create deployment web --image=nginx
 *
 * Each expected object is what the same command printed with `--dry-run=client -o json`: the JSON
 * kubectl would have sent. kubectl sends no Lease, Event or LimitRange as protobuf, nor a full
 * ObjectMeta; those bodies are built below from the field numbers of Kubernetes' generated.proto.
 */
const fixture = (name: string): Buffer =>
  readFileSync(new URL(`../../fixtures/protobuf/${name}.bin`, import.meta.url));

function failure(decode: () => unknown): ApiError {
  try {
    decode();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

describe('decodeKubeProtobuf on bodies kubectl sent', () => {
  it.each<[string, Record<string, unknown>]>([
    [
      'namespace',
      {
        kind: 'Namespace',
        apiVersion: 'v1',
        metadata: { name: 'team-a', creationTimestamp: null },
        spec: {},
        status: {},
      },
    ],
    [
      'namespace-save-config',
      {
        kind: 'Namespace',
        apiVersion: 'v1',
        metadata: {
          name: 'annotated',
          creationTimestamp: null,
          annotations: {
            'kubectl.kubernetes.io/last-applied-configuration':
              '{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"annotated","creationTimestamp":null},"spec":{},"status":{}}\n',
          },
        },
        spec: {},
        status: {},
      },
    ],
    [
      'configmap',
      {
        kind: 'ConfigMap',
        apiVersion: 'v1',
        metadata: { name: 'app-config', namespace: 'team-a', creationTimestamp: null },
        data: { a: 'b', greeting: 'hello world' },
      },
    ],
    [
      'configmap-binary',
      {
        kind: 'ConfigMap',
        apiVersion: 'v1',
        metadata: { name: 'bin-config', creationTimestamp: null },
        data: { text: 'plain' },
        binaryData: { blob: 'AAEC/2JpbmFyeYA=' },
      },
    ],
    [
      'secret',
      {
        kind: 'Secret',
        apiVersion: 'v1',
        metadata: { name: 'creds', namespace: 'team-a', creationTimestamp: null },
        data: { password: 'czNjcjN0IQ==', user: 'YWRtaW4=' },
        type: 'Opaque',
      },
    ],
    [
      'serviceaccount',
      {
        kind: 'ServiceAccount',
        apiVersion: 'v1',
        metadata: { name: 'builder', namespace: 'team-a', creationTimestamp: null },
      },
    ],
    [
      'resourcequota',
      {
        kind: 'ResourceQuota',
        apiVersion: 'v1',
        metadata: { name: 'compute', namespace: 'team-a', creationTimestamp: null },
        spec: { hard: { cpu: '1', memory: '1Gi', pods: '10' }, scopes: ['BestEffort'] },
        status: {},
      },
    ],
    [
      'deployment',
      {
        kind: 'Deployment',
        apiVersion: 'apps/v1',
        metadata: { name: 'web', creationTimestamp: null, labels: { app: 'web' } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { creationTimestamp: null, labels: { app: 'web' } },
            spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {} }] },
          },
          strategy: {},
        },
        status: {},
      },
    ],
  ])('%s', (name, expected) => {
    const decoded = decodeKubeProtobuf(fixture(name));
    expect(decoded).toStrictEqual(expected);
    // Key order too: the object reads as Go's JSON would.
    expect(JSON.stringify(decoded)).toBe(JSON.stringify(expected));
  });
});

// A minimal protobuf writer for bodies kubectl does not send.
type Bytes = number[];
const utf8 = (text: string): Bytes => [...Buffer.from(text, 'utf8')];
function varint(value: number | bigint): Bytes {
  let rest = BigInt.asUintN(64, BigInt(value));
  const out: Bytes = [];
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    out.push(rest === 0n ? low : low | 0x80);
  } while (rest !== 0n);
  return out;
}
const int = (field: number, value: number | bigint): Bytes => [
  ...varint(field << 3),
  ...varint(value),
];
const len = (field: number, bytes: Bytes | string): Bytes => {
  const payload = typeof bytes === 'string' ? utf8(bytes) : bytes;
  return [...varint((field << 3) | 2), ...varint(payload.length), ...payload];
};
const msg = (field: number, ...parts: Bytes[]): Bytes => len(field, parts.flat());
const entry = (field: number, key: string, ...value: Bytes[]): Bytes =>
  msg(field, len(1, key), ...value);
const timestamp = (field: number, seconds: number | bigint, nanos = 0): Bytes =>
  msg(field, int(1, seconds), ...(nanos === 0 ? [] : [int(2, nanos)]));
const quantity = (field: number, text: string): Bytes => msg(field, len(1, text));
const MAGIC: Bytes = [0x6b, 0x38, 0x73, 0x00];
const body = (apiVersion: string, kind: string, raw: Bytes, trailer: Bytes[] = []): Buffer =>
  Buffer.from([
    ...MAGIC,
    ...msg(1, len(1, apiVersion), len(2, kind)),
    ...len(2, raw),
    ...trailer.flat(),
  ]);

/** 2023-11-14T22:13:20Z. */
const T = 1_700_000_000;

describe('decodeKubeProtobuf on hand-built bodies', () => {
  it('decodes every ObjectMeta field, dropping zero values of omitempty fields', () => {
    const metadata = msg(
      1,
      len(1, 'cfg-x1'),
      len(2, 'cfg-'),
      len(3, 'team-a'),
      len(4, ''),
      len(5, '6f1c2a8e-0000-4000-8000-000000000001'),
      len(6, '42'),
      int(7, 2 ** 40),
      timestamp(8, T, 500),
      timestamp(9, T + 100),
      int(10, 0),
      entry(11, 'app', len(2, 'web')),
      entry(11, 'tier', len(2, 'front')),
      entry(12, 'note', len(2, 'a "quoted" value')),
      msg(
        13,
        len(1, 'ReplicaSet'),
        len(3, 'web-abc'),
        len(4, 'owner-uid'),
        len(5, 'apps/v1'),
        int(6, 1),
        int(7, 0),
      ),
      len(14, 'example.com/cleanup'),
      len(14, 'example.com/audit'),
      msg(
        17,
        len(1, 'kubectl-create'),
        len(2, 'Update'),
        len(3, 'v1'),
        timestamp(4, T),
        len(6, 'FieldsV1'),
        msg(7, len(1, '{"f:data":{".":{},"f:a":{}}}')),
        len(8, ''),
      ),
      // A field this decoder does not know (a newer client's) is skipped.
      len(99, 'from the future'),
    );
    const raw = [...metadata, int(4, 0), entry(2, 'a', len(2, 'b')), entry(2, 'empty')].flat();
    expect(decodeKubeProtobuf(body('v1', 'ConfigMap', raw))).toStrictEqual({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: {
        name: 'cfg-x1',
        generateName: 'cfg-',
        namespace: 'team-a',
        uid: '6f1c2a8e-0000-4000-8000-000000000001',
        resourceVersion: '42',
        generation: 2 ** 40,
        // Time is whole seconds in JSON.
        creationTimestamp: '2023-11-14T22:13:20Z',
        deletionTimestamp: '2023-11-14T22:15:00Z',
        // A pointer in Go: zero, but set.
        deletionGracePeriodSeconds: 0,
        labels: { app: 'web', tier: 'front' },
        annotations: { note: 'a "quoted" value' },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: 'web-abc',
            uid: 'owner-uid',
            controller: true,
            blockOwnerDeletion: false,
          },
        ],
        finalizers: ['example.com/cleanup', 'example.com/audit'],
        managedFields: [
          {
            manager: 'kubectl-create',
            operation: 'Update',
            apiVersion: 'v1',
            time: '2023-11-14T22:13:20Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } },
          },
        ],
      },
      immutable: false,
      data: { a: 'b', empty: '' },
    });
  });

  it('decodes a Secret with immutable, stringData and raw bytes', () => {
    const raw = [
      msg(1, len(1, 'tls')),
      int(5, 1),
      entry(2, 'key', len(2, [0, 255, 10])),
      entry(4, 'plain', len(2, 'text')),
      len(3, 'kubernetes.io/tls'),
    ].flat();
    expect(decodeKubeProtobuf(body('v1', 'Secret', raw))).toStrictEqual({
      kind: 'Secret',
      apiVersion: 'v1',
      metadata: { name: 'tls' },
      immutable: true,
      data: { key: 'AP8K' },
      stringData: { plain: 'text' },
      type: 'kubernetes.io/tls',
    });
  });

  it('decodes a ServiceAccount with secrets and imagePullSecrets', () => {
    const raw = [
      msg(1, len(1, 'builder')),
      msg(2, len(3, 'builder-token'), len(1, '')),
      msg(3, len(1, 'registry')),
      int(4, 0),
    ].flat();
    expect(decodeKubeProtobuf(body('v1', 'ServiceAccount', raw))).toStrictEqual({
      kind: 'ServiceAccount',
      apiVersion: 'v1',
      metadata: { name: 'builder' },
      secrets: [{ name: 'builder-token' }],
      imagePullSecrets: [{ name: 'registry' }],
      automountServiceAccountToken: false,
    });
  });

  it('decodes a ResourceQuota with a scope selector and status', () => {
    const raw = [
      msg(1, len(1, 'q')),
      msg(
        2,
        entry(1, 'requests.cpu', quantity(2, '500m')),
        msg(3, msg(1, len(1, 'PriorityClass'), len(2, 'In'), len(3, 'high'), len(3, 'low'))),
      ),
      msg(3, entry(1, 'requests.cpu', quantity(2, '500m')), entry(2, 'requests.cpu', msg(2))),
    ].flat();
    expect(decodeKubeProtobuf(body('v1', 'ResourceQuota', raw))).toStrictEqual({
      kind: 'ResourceQuota',
      apiVersion: 'v1',
      metadata: { name: 'q' },
      spec: {
        hard: { 'requests.cpu': '500m' },
        scopeSelector: {
          matchExpressions: [
            { scopeName: 'PriorityClass', operator: 'In', values: ['high', 'low'] },
          ],
        },
      },
      // An empty Quantity is Go's zero Quantity, "0".
      status: { hard: { 'requests.cpu': '500m' }, used: { 'requests.cpu': '0' } },
    });
  });

  it('decodes a Pod: inline volume sources and probe handlers, IntOrString, packed numbers', () => {
    const raw = [
      ...msg(1, len(1, 'p')),
      ...msg(
        2,
        // volumes: a ConfigMap volume, its LocalObjectReference and VolumeSource inline.
        msg(1, len(1, 'cfg'), msg(2, msg(19, msg(1, len(1, 'app-config')), int(3, 0)))),
        msg(
          2,
          len(1, 'c'),
          len(2, 'nginx'),
          // readinessProbe: httpGet on a named port (IntOrString type 1), handler inline.
          msg(11, msg(1, msg(2, len(1, '/healthz'), msg(2, int(1, 1), len(3, 'http')))), int(3, 0)),
          // livenessProbe: tcpSocket on port 8080 (type 0), with a zero terminationGracePeriod.
          msg(10, msg(1, msg(3, msg(1, int(1, 0), int(2, 8080)))), int(7, 0)),
        ),
        // securityContext.supplementalGroups, packed.
        msg(14, len(4, [...varint(1000), ...varint(2000)]), int(5, 3000)),
      ),
    ];
    expect(decodeKubeProtobuf(body('v1', 'Pod', raw))).toStrictEqual({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'p' },
      spec: {
        volumes: [{ name: 'cfg', configMap: { name: 'app-config', defaultMode: 0 } }],
        containers: [
          {
            name: 'c',
            image: 'nginx',
            livenessProbe: { tcpSocket: { port: 8080 }, terminationGracePeriodSeconds: 0 },
            readinessProbe: { httpGet: { path: '/healthz', port: 'http' } },
          },
        ],
        securityContext: { supplementalGroups: [1000, 2000], fsGroup: 3000 },
      },
    });
  });

  it('decodes a LimitRange', () => {
    const raw = [
      msg(1, len(1, 'limits'), len(3, 'team-a')),
      msg(
        2,
        msg(
          1,
          len(1, 'Container'),
          entry(2, 'memory', quantity(2, '1Gi')),
          entry(3, 'cpu', quantity(2, '10m')),
          entry(4, 'cpu', quantity(2, '500m')),
          entry(5, 'cpu', quantity(2, '100m')),
          entry(6, 'cpu', quantity(2, '4')),
        ),
      ),
    ].flat();
    expect(decodeKubeProtobuf(body('v1', 'LimitRange', raw))).toStrictEqual({
      kind: 'LimitRange',
      apiVersion: 'v1',
      metadata: { name: 'limits', namespace: 'team-a' },
      spec: {
        limits: [
          {
            type: 'Container',
            max: { memory: '1Gi' },
            min: { cpu: '10m' },
            default: { cpu: '500m' },
            defaultRequest: { cpu: '100m' },
            maxLimitRequestRatio: { cpu: '4' },
          },
        ],
      },
    });
  });

  it('decodes an Event as Go writes it: zero times as null, reportingComponent always', () => {
    const raw = [
      msg(1, len(1, 'web-1.17a'), len(3, 'default')),
      msg(
        2,
        len(1, 'Pod'),
        len(2, 'default'),
        len(3, 'web-1'),
        len(4, 'pod-uid'),
        len(5, 'v1'),
        len(7, 'spec.containers{web}'),
      ),
      len(3, 'Pulled'),
      len(4, 'Successfully pulled image "nginx"'),
      msg(5, len(1, 'kubelet'), len(2, 'node-1')),
      timestamp(6, T, 999_999_999),
      msg(7),
      int(8, 3),
      len(9, 'Normal'),
      msg(10),
      msg(11, int(1, 2), timestamp(2, T + 1, 1_500)),
      len(12, ''),
      len(14, ''),
      len(15, 'kubelet-node-1'),
    ].flat();
    expect(decodeKubeProtobuf(body('v1', 'Event', raw))).toStrictEqual({
      kind: 'Event',
      apiVersion: 'v1',
      metadata: { name: 'web-1.17a', namespace: 'default' },
      involvedObject: {
        kind: 'Pod',
        namespace: 'default',
        name: 'web-1',
        uid: 'pod-uid',
        apiVersion: 'v1',
        fieldPath: 'spec.containers{web}',
      },
      reason: 'Pulled',
      message: 'Successfully pulled image "nginx"',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2023-11-14T22:13:20Z',
      lastTimestamp: null,
      count: 3,
      type: 'Normal',
      eventTime: null,
      series: { count: 2, lastObservedTime: '2023-11-14T22:13:21.000001Z' },
      reportingComponent: '',
      reportingInstance: 'kubelet-node-1',
    });
  });

  it('decodes a coordination.k8s.io/v1 Lease with MicroTime at microsecond precision', () => {
    const raw = [
      msg(1, len(1, 'leader'), len(3, 'kube-system')),
      msg(
        2,
        len(1, 'node-1_6f1c'),
        int(2, 15),
        timestamp(3, T, 123_456_789),
        timestamp(4, T + 10),
        int(5, 0),
      ),
    ].flat();
    expect(decodeKubeProtobuf(body('coordination.k8s.io/v1', 'Lease', raw))).toStrictEqual({
      kind: 'Lease',
      apiVersion: 'coordination.k8s.io/v1',
      metadata: { name: 'leader', namespace: 'kube-system' },
      spec: {
        holderIdentity: 'node-1_6f1c',
        leaseDurationSeconds: 15,
        acquireTime: '2023-11-14T22:13:20.123456Z',
        renewTime: '2023-11-14T22:13:30.000000Z',
        leaseTransitions: 0,
      },
    });
  });

  it('reads negative int64 and int32 values', () => {
    const raw = [msg(1, len(1, 'n'), int(10, -1)), int(8, -2)].flat();
    const event = decodeKubeProtobuf(body('v1', 'Event', raw));
    expect(event.metadata.deletionGracePeriodSeconds).toBe(-1);
    expect(event.count).toBe(-2);
  });

  it('accepts an envelope that names the protobuf content type', () => {
    const raw = msg(1, len(1, 'ns'));
    const decoded = decodeKubeProtobuf(
      body('v1', 'Namespace', raw, [len(3, ''), len(4, 'application/vnd.kubernetes.protobuf')]),
    );
    expect(decoded).toStrictEqual({
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { name: 'ns' },
    });
  });
});

describe('decodeKubeProtobuf errors', () => {
  it.each<[string, () => Buffer, number, RegExp]>([
    ['JSON sent as protobuf', () => Buffer.from('{"kind":"Namespace"}'), 400, /k8s\\x00/],
    ['an empty body', () => Buffer.alloc(0), 400, /k8s\\x00/],
    [
      'a kind it has no layout for (kubectl create priorityclass)',
      () => body('scheduling.k8s.io/v1', 'PriorityClass', msg(1, len(1, 'high'))),
      415,
      /PriorityClass \(scheduling\.k8s\.io\/v1\).*application\/json/,
    ],
    [
      'a known kind in another API version',
      () => body('v2', 'Namespace', []),
      415,
      /Namespace \(v2\)/,
    ],
    [
      'a body cut short',
      () => fixture('namespace').subarray(0, 30),
      400,
      /malformed.*past the end/,
    ],
    [
      'an envelope with no kind',
      () => Buffer.from([...MAGIC, ...len(2, [])]),
      400,
      /no apiVersion or kind/,
    ],
    [
      'a compressed raw object',
      () => body('v1', 'Namespace', [], [len(3, 'gzip')]),
      415,
      /content encoding "gzip"/,
    ],
    [
      'a JSON raw object',
      () => body('v1', 'Namespace', [], [len(4, 'application/json')]),
      415,
      /content type "application\/json"/,
    ],
    [
      'a string field sent as a varint',
      () => body('v1', 'Namespace', msg(1, int(1, 7))),
      400,
      /metadata\.name: wire type 0 where 2 was expected/,
    ],
    [
      'a varint longer than 10 bytes',
      () => body('v1', 'Namespace', [0x50, ...Array<number>(11).fill(0xff)]),
      400,
      /longer than 10 bytes/,
    ],
    ['a group (wire type 3)', () => body('v1', 'Namespace', [0x7b]), 400, /wire type 3/],
    ['field number 0', () => body('v1', 'Namespace', [0x02, 0x00]), 400, /field number 0/],
    [
      'fieldsV1 that is not JSON',
      () => body('v1', 'ConfigMap', msg(1, msg(17, msg(7, len(1, '{f:data'))))),
      400,
      /managedFields\[0\]\.fieldsV1: the field set is not valid JSON/,
    ],
    [
      'nanos out of range',
      () => body('coordination.k8s.io/v1', 'Lease', msg(2, timestamp(3, T, 1_000_000_000))),
      400,
      /spec\.acquireTime: nanos 1000000000/,
    ],
    [
      'a time past the year 9999',
      () => body('v1', 'Namespace', msg(1, timestamp(8, 253_402_300_800))),
      400,
      /outside the years 0001 to 9999/,
    ],
    [
      'an int64 too large for a JSON number',
      () => body('v1', 'Namespace', msg(1, int(7, 2n ** 60n))),
      400,
      /metadata\.generation: 1152921504606846976 does not fit/,
    ],
  ])('rejects %s', (_, make, code, message) => {
    const error = failure(() => decodeKubeProtobuf(make()));
    expect(error.code).toBe(code);
    expect(error.reason).toBe(code === 400 ? 'BadRequest' : 'UnsupportedMediaType');
    expect(error.message).toMatch(message);
  });
});

describe('parseBody', () => {
  it('decodes application/vnd.kubernetes.protobuf bodies', () => {
    expect(parseBody(fixture('namespace'), 'application/vnd.kubernetes.protobuf')).toStrictEqual({
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { name: 'team-a', creationTimestamp: null },
      spec: {},
      status: {},
    });
  });

  it('still answers 415 for CBOR', () => {
    const error = failure(() => parseBody(Buffer.from([0xa0]), 'application/cbor'));
    expect(error.code).toBe(415);
  });
});
