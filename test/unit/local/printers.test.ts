// The built-in kinds' printers (src/local/kinds/printers.ts) against what kube-apiserver's
// pkg/printers/internalversion/printers.go prints: column definitions and wide cells.
import { describe, expect, it } from 'vitest';
import {
  CONFIG_MAP_TABLE,
  EVENT_TABLE,
  EVENTS_V1_EVENT_TABLE,
  LEASE_TABLE,
  NAMESPACE_TABLE,
  RESOURCE_QUOTA_TABLE,
  SECRET_TABLE,
  SERVICE_ACCOUNT_TABLE,
} from '../../../src/local/kinds/printers.js';
import {
  ageSince,
  CREATION_TIMESTAMP_DESCRIPTION,
  isZeroTime,
  NAME_DESCRIPTION,
  type TableColumns,
  toTable,
} from '../../../src/local/table.js';
import type { KubeObject } from '../../../src/local/types.js';

const NOW = new Date('2024-05-01T12:00:00Z');
const CREATED = '2024-05-01T11:00:00Z';

const obj = (fields: Record<string, unknown>, name = 'x'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Thing',
  metadata: { name, namespace: 'default', creationTimestamp: CREATED, resourceVersion: '7' },
  ...fields,
});

const shape = (t: TableColumns) => t.definitions.map((d) => [d.name, d.type, d.format, d.priority]);

describe('column definitions', () => {
  it.each<[string, TableColumns, Array<[string, string, string, number]>]>([
    [
      'ConfigMap',
      CONFIG_MAP_TABLE,
      [
        ['Name', 'string', 'name', 0],
        ['Data', 'string', '', 0],
        ['Age', 'string', '', 0],
      ],
    ],
    [
      'Secret',
      SECRET_TABLE,
      [
        ['Name', 'string', 'name', 0],
        ['Type', 'string', '', 0],
        ['Data', 'string', '', 0],
        ['Age', 'string', '', 0],
      ],
    ],
    [
      'Namespace',
      NAMESPACE_TABLE,
      [
        ['Name', 'string', 'name', 0],
        ['Status', 'string', '', 0],
        ['Age', 'string', '', 0],
      ],
    ],
    [
      'ServiceAccount',
      SERVICE_ACCOUNT_TABLE,
      [
        ['Name', 'string', 'name', 0],
        ['Secrets', 'string', '', 0],
        ['Age', 'string', '', 0],
      ],
    ],
    [
      'Lease',
      LEASE_TABLE,
      [
        ['Name', 'string', 'name', 0],
        ['Holder', 'string', '', 0],
        ['Age', 'string', '', 0],
      ],
    ],
    [
      'ResourceQuota',
      RESOURCE_QUOTA_TABLE,
      [
        ['Name', 'string', 'name', 0],
        ['Request', 'string', '', 0],
        ['Limit', 'string', '', 0],
        ['Age', 'string', '', 0],
      ],
    ],
    [
      'Event',
      EVENT_TABLE,
      [
        ['Last Seen', 'string', '', 0],
        ['Type', 'string', '', 0],
        ['Reason', 'string', '', 0],
        ['Object', 'string', '', 0],
        ['Subobject', 'string', '', 1],
        ['Source', 'string', '', 1],
        ['Message', 'string', '', 0],
        ['First Seen', 'string', '', 1],
        ['Count', 'string', '', 1],
        ['Name', 'string', 'name', 1],
      ],
    ],
  ])('%s has its printer’s columns', (_kind, table, columns) => {
    expect(shape(table)).toEqual(columns);
  });

  it('describes Name and Age with ObjectMeta’s docs, and the rest with their fields’', () => {
    const [name, data, age] = CONFIG_MAP_TABLE.definitions;
    expect(name?.description).toBe(NAME_DESCRIPTION);
    expect(age?.description).toBe(CREATION_TIMESTAMP_DESCRIPTION);
    expect(data?.description).toMatch(/^Data contains the configuration data\. /);
    expect(NAMESPACE_TABLE.definitions[1]?.description).toBe('The status of the namespace');
    expect(EVENT_TABLE.definitions[3]?.description).toBe('The object that this event is about.');
    expect(EVENTS_V1_EVENT_TABLE.definitions).toBe(EVENT_TABLE.definitions);
  });
});

describe('cells', () => {
  it('counts a ConfigMap’s data and binaryData keys together, as a number', () => {
    expect(
      CONFIG_MAP_TABLE.cells(obj({ data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } }), NOW),
    ).toEqual(['x', 3, '60m']);
    expect(CONFIG_MAP_TABLE.cells(obj({}), NOW)).toEqual(['x', 0, '60m']);
  });

  it('prints a Secret’s type and key count, a ServiceAccount’s secrets, a Namespace’s phase', () => {
    expect(SECRET_TABLE.cells(obj({ type: 'Opaque', data: { k: 'dg==' } }), NOW)).toEqual([
      'x',
      'Opaque',
      1,
      '60m',
    ]);
    expect(
      SERVICE_ACCOUNT_TABLE.cells(obj({ secrets: [{ name: 'a' }, { name: 'b' }] }), NOW),
    ).toEqual(['x', 2, '60m']);
    expect(NAMESPACE_TABLE.cells(obj({ status: { phase: 'Terminating' } }), NOW)).toEqual([
      'x',
      'Terminating',
      '60m',
    ]);
  });

  it('prints a Lease’s holder, empty without one', () => {
    expect(LEASE_TABLE.cells(obj({ spec: { holderIdentity: 'me' } }), NOW)).toEqual([
      'x',
      'me',
      '60m',
    ]);
    expect(LEASE_TABLE.cells(obj({ spec: {} }), NOW)).toEqual(['x', '', '60m']);
  });

  it('prints an object without a creation time as <unknown>', () => {
    const undated: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'u' } };
    expect(CONFIG_MAP_TABLE.cells(undated, NOW)).toEqual(['u', 0, '<unknown>']);
  });

  it('splits a ResourceQuota’s status.hard into requests and limits, sorted, used/hard', () => {
    const quota = obj({
      status: {
        hard: {
          pods: '10',
          'limits.memory': '2Gi',
          cpu: '2',
          'limits.cpu': '4',
          'requests.memory': '1Gi',
        },
        used: { pods: '3', 'limits.cpu': '500m', cpu: '1' },
      },
    });
    expect(RESOURCE_QUOTA_TABLE.cells(quota, NOW)).toEqual([
      'x',
      'cpu: 1/2, pods: 3/10, requests.memory: 0/1Gi',
      'limits.cpu: 500m/4, limits.memory: 0/2Gi',
      '60m',
    ]);
    // Without a status (no quota controller has run), both are empty, as on a real server.
    expect(RESOURCE_QUOTA_TABLE.cells(obj({ spec: { hard: { pods: '1' } } }), NOW)).toEqual([
      'x',
      '',
      '',
      '60m',
    ]);
  });
});

describe('Event cells (printEvent, wide)', () => {
  const core = obj(
    {
      involvedObject: { kind: 'ConfigMap', name: 'c1', fieldPath: 'data' },
      reason: 'Tested',
      message: '  hello  ',
      type: 'Normal',
      source: { component: 'tester', host: 'node1' },
      firstTimestamp: '2024-05-01T09:00:00Z',
      lastTimestamp: '2024-05-01T11:30:00Z',
      count: 3,
    },
    'e1',
  );

  it('prints last seen, type, reason, kind/name, subobject, source, trimmed message, first seen, count, name', () => {
    expect(EVENT_TABLE.cells(core, NOW)).toEqual([
      '30m',
      'Normal',
      'Tested',
      'configmap/c1',
      'data',
      'tester, node1',
      'hello',
      '3h',
      3,
      'e1',
    ]);
  });

  it('falls back to eventTime, the series, the reporting controller, and a count of 1', () => {
    const singleton = obj({
      involvedObject: { kind: 'Node' },
      eventTime: '2024-05-01T11:58:00.123456Z',
      reportingComponent: 'ctl',
      reportingInstance: '',
      firstTimestamp: null,
      lastTimestamp: null,
    });
    // 1 min 59.877 s ago: Go's Duration truncates to whole seconds.
    expect(EVENT_TABLE.cells(singleton, NOW)).toEqual([
      '119s',
      '',
      '',
      'node',
      '',
      'ctl',
      '',
      '119s',
      1,
      'x',
    ]);
    const series = obj({
      involvedObject: { kind: 'Pod', name: 'p' },
      eventTime: '2024-05-01T10:00:00.000000Z',
      series: { count: 7, lastObservedTime: '2024-05-01T11:59:50.000000Z' },
      reportingComponent: 'ctl',
      reportingInstance: 'ctl-1',
    });
    const cells = EVENT_TABLE.cells(series, NOW);
    expect([cells[0], cells[5], cells[7], cells[8]]).toEqual(['10s', 'ctl, ctl-1', '120m', 7]);
  });

  it('prints an events.k8s.io/v1 Event as the core Event it is stored as', () => {
    const v1: KubeObject = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: core.metadata,
      regarding: core.involvedObject,
      reason: core.reason,
      note: core.message,
      type: core.type,
      deprecatedSource: core.source,
      deprecatedFirstTimestamp: core.firstTimestamp,
      deprecatedLastTimestamp: core.lastTimestamp,
      deprecatedCount: core.count,
    };
    expect(EVENTS_V1_EVENT_TABLE.cells(v1, NOW)).toEqual(EVENT_TABLE.cells(core, NOW));
  });
});

describe('ageSince and isZeroTime', () => {
  it.each<[unknown, boolean, string]>([
    [undefined, true, '<unknown>'],
    [null, true, '<unknown>'],
    ['', true, '<unknown>'],
    ['0001-01-01T00:00:00Z', true, '<unknown>'],
    ['2024-05-01T11:59:00Z', false, '60s'],
    ['2024-05-01T11:59:00.5Z', false, '59s'],
  ])('%j', (value, zero, age) => {
    expect(isZeroTime(value)).toBe(zero);
    expect(ageSince(value, NOW)).toBe(age);
  });
});

describe('a printer’s Table', () => {
  it('is a Table of one row per object, with the object’s metadata', () => {
    const table = toTable([obj({ data: { a: 'b' } }, 'one')], CONFIG_MAP_TABLE, {
      now: NOW,
      resourceVersion: '7',
    });
    expect(table).toMatchObject({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '7' },
      columnDefinitions: CONFIG_MAP_TABLE.definitions,
      rows: [
        {
          cells: ['one', 1, '60m'],
          object: { kind: 'PartialObjectMetadata', metadata: { name: 'one' } },
        },
      ],
    });
  });
});
