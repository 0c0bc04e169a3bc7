import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  BUILTIN_TABLE_COLUMNS,
  CREATION_TIMESTAMP_DESCRIPTION,
  humanDuration,
  NAME_DESCRIPTION,
  type PrinterColumn,
  parseIncludeObject,
  parseRfc3339,
  tableColumns,
  toTable,
} from '../../../src/local/table.js';
import { ApiError, type KubeObject } from '../../../src/local/types.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;

describe('humanDuration', () => {
  it.each<[number, string]>([
    [-2 * SECOND - 1, '<invalid>'],
    [-2 * SECOND, '<invalid>'],
    // Less than two seconds in the future is clock skew.
    [-2 * SECOND + 1, '0s'],
    [-1, '0s'],
    [0, '0s'],
    [999, '0s'],
    [SECOND, '1s'],
    [2 * MINUTE - 1, '119s'],
    [2 * MINUTE, '2m'],
    [2 * MINUTE + 30 * SECOND, '2m30s'],
    [10 * MINUTE - 1, '9m59s'],
    [10 * MINUTE, '10m'],
    [10 * MINUTE + 59 * SECOND, '10m'],
    [3 * HOUR - 1, '179m'],
    [3 * HOUR, '3h'],
    [3 * HOUR + 30 * MINUTE, '3h30m'],
    [8 * HOUR - 1, '7h59m'],
    [8 * HOUR, '8h'],
    [48 * HOUR - 1, '47h'],
    [48 * HOUR, '2d'],
    [2 * DAY + 5 * HOUR, '2d5h'],
    [8 * DAY - 1, '7d23h'],
    [8 * DAY, '8d'],
    [2 * YEAR - 1, '729d'],
    [2 * YEAR, '2y'],
    [2 * YEAR + 10 * DAY, '2y10d'],
    [8 * YEAR - 1, '7y364d'],
    [8 * YEAR, '8y'],
    [100 * YEAR + 200 * DAY, '100y'],
  ])('%d ms → %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('parseRfc3339', () => {
  it.each<[string, number | undefined]>([
    ['2024-05-01T10:00:00Z', Date.UTC(2024, 4, 1, 10)],
    ['2024-05-01T10:00:00.250Z', Date.UTC(2024, 4, 1, 10) + 250],
    ['2024-05-01T12:30:00+02:30', Date.UTC(2024, 4, 1, 10)],
    ['2024-05-01T07:00:00-03:00', Date.UTC(2024, 4, 1, 10)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['0001-01-01T00:00:00Z', -62135596800000],
    ['2023-02-29T00:00:00Z', undefined],
    ['2024-05-01 10:00:00Z', undefined],
    ['2024-05-01T10:00:00', undefined],
    ['2024-05-01T24:00:00Z', undefined],
    ['yesterday', undefined],
  ])('%s', (text, ms) => {
    expect(parseRfc3339(text)).toBe(ms);
  });
});

const NOW = new Date('2024-06-01T12:00:00Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString().replace('.000Z', 'Z');

async function scopeColumns(): Promise<PrinterColumn[]> {
  const text = await readFile(
    join(import.meta.dirname, '../../../crds/scopes.platform.nrn.dev.yaml'),
    'utf8',
  );
  const crd = parse(text) as {
    spec: { versions: Array<{ additionalPrinterColumns: PrinterColumn[] }> };
  };
  return crd.spec.versions[0]?.additionalPrinterColumns ?? [];
}

const scope = (name: string, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'platform.nrn.dev/v1alpha1',
  kind: 'Scope',
  metadata: {
    name,
    namespace: 'team-a',
    uid: `uid-${name}`,
    resourceVersion: '12',
    creationTimestamp: ago(5 * MINUTE),
    labels: { app: 'web' },
  },
  spec: { name, type: 'web_pool', application_id: 7, requested_spec: {} },
  ...(status !== undefined ? { status } : {}),
});

const ready = scope('web-1', {
  status: 'active',
  id: 42,
  domain: 'web-1.example.com',
  conditions: [
    { type: 'Progressing', status: 'False', reason: 'Done' },
    { type: 'Ready', status: 'True', reason: 'Provisioned' },
  ],
});
const fresh = scope('web-2');

describe('toTable for a custom resource (the Scope printer columns)', () => {
  it('has the Name column, then the CRD columns with their priority and description', async () => {
    const table = toTable([], await scopeColumns(), { now: NOW });
    expect(table.columnDefinitions).toEqual([
      { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
      col('ID', 'integer', '.status.id'),
      col('Type', 'string', '.spec.type'),
      col('Status', 'string', '.status.status'),
      col('Ready', 'string', '.status.conditions[?(@.type=="Ready")].status'),
      col('Class', 'string', '.status.scopeClass'),
      col('App', 'integer', '.spec.application_id', 1),
      col('Domain', 'string', '.status.domain', 1),
      col('Age', 'date', '.metadata.creationTimestamp'),
    ]);
    expect(table.rows).toEqual([]);
  });

  it('formats the cells like the server: values, the Ready condition, the age; null where missing', async () => {
    const table = toTable([ready, fresh], await scopeColumns(), {
      now: NOW,
      resourceVersion: '99',
      continue: 'token',
      remainingItemCount: 3,
    });
    expect(table).toMatchObject({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '99', continue: 'token', remainingItemCount: 3 },
    });
    const rows = table.rows as Array<{ cells: unknown[] }>;
    expect(rows.map((r) => r.cells)).toEqual([
      ['web-1', 42, 'web_pool', 'active', 'True', null, 7, 'web-1.example.com', '5m'],
      ['web-2', null, 'web_pool', null, null, null, 7, null, '5m'],
    ]);
  });

  it('sends PartialObjectMetadata rows by default, as kubectl gets them', async () => {
    const table = toTable([ready], await scopeColumns(), { now: NOW });
    expect((table.rows as unknown[])[0]).toEqual({
      cells: expect.any(Array),
      object: {
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: ready.metadata,
      },
    });
    const beta = toTable([ready], await scopeColumns(), {
      now: NOW,
      groupVersion: 'meta.k8s.io/v1beta1',
    });
    expect(beta.apiVersion).toBe('meta.k8s.io/v1beta1');
    expect((beta.rows as Array<{ object: { apiVersion: string } }>)[0]?.object.apiVersion).toBe(
      'meta.k8s.io/v1beta1',
    );
  });

  it('carries the whole object with includeObject=Object and none with None', async () => {
    const columns = await scopeColumns();
    const whole = toTable([ready], columns, { now: NOW, includeObject: 'Object' });
    expect((whole.rows as unknown[])[0]).toEqual({ cells: expect.any(Array), object: ready });
    const none = toTable([ready], columns, { now: NOW, includeObject: 'None' });
    expect((none.rows as unknown[])[0]).toEqual({ cells: expect.any(Array) });
  });

  it('omits the column definitions, not the cells, for the events after a watch has sent them', async () => {
    const table = toTable([ready], await scopeColumns(), {
      now: NOW,
      omitHeaders: true,
      resourceVersion: '12',
    });
    expect(table.columnDefinitions).toEqual([]);
    expect((table.rows as Array<{ cells: unknown[] }>)[0]?.cells).toHaveLength(9);
    expect(table.metadata).toEqual({ resourceVersion: '12' });
  });
});

function col(name: string, type: string, jsonPath: string, priority = 0) {
  return {
    name,
    type,
    format: '',
    description: `Custom resource definition column (in JSONPath format): ${jsonPath}`,
    priority,
  };
}

describe('tableColumns cells', () => {
  const cellsOf = (columns: PrinterColumn[], object: Record<string, unknown>) =>
    tableColumns(columns).cells(
      { apiVersion: 'x/v1', kind: 'X', metadata: { name: 'x' }, ...object } as KubeObject,
      NOW,
    );

  it('keeps the first value only when a path finds several', () => {
    const columns = [{ name: 'Item', type: 'string', jsonPath: '.spec.items[*].name' }];
    expect(cellsOf(columns, { spec: { items: [{ name: 'a' }, { name: 'b' }] } })).toEqual([
      'x',
      'a',
    ]);
  });

  it.each<[string, unknown, unknown]>([
    ['integer', 3, 3],
    ['integer', 3.9, 3],
    ['integer', '3', null],
    ['number', 2.5, 2.5],
    ['number', 2, 2],
    ['number', 'x', null],
    ['boolean', true, true],
    ['boolean', 'true', null],
    ['string', 'text', 'text'],
    ['string', 12, '12'],
    ['string', 1.25, '1.25'],
    ['string', true, 'true'],
    ['string', { b: [1], a: 'z' }, '{"a":"z","b":[1]}'],
    ['string', null, '<no value>'],
    ['integer', null, null],
    ['date', ago(30 * SECOND), '30s'],
    ['date', ago(3 * DAY + 4 * HOUR), '3d4h'],
    ['date', new Date(NOW.getTime() + 10 * SECOND).toISOString(), '<invalid>'],
    ['date', 'last tuesday', '<invalid>'],
    ['date', '', '<unknown>'],
    ['date', '0001-01-01T00:00:00Z', '<unknown>'],
    ['date', 1717243200, null],
    ['array', [1], null],
  ])('a %s column shows %j as %j', (type, value, cell) => {
    const columns = [{ name: 'V', type, jsonPath: '.spec.v' }];
    expect(cellsOf(columns, { spec: { v: value } })).toEqual(['x', cell]);
  });

  it('shows null for a value the path cannot reach or fails on', () => {
    const columns = [
      { name: 'Missing', type: 'string', jsonPath: '.spec.missing' },
      { name: 'Past the end', type: 'string', jsonPath: '.spec.list[5]' },
      { name: 'Not a list', type: 'integer', jsonPath: '.spec.v[0]' },
    ];
    expect(cellsOf(columns, { spec: { list: [1], v: 2 } })).toEqual(['x', null, null, null]);
  });

  it('keeps a column description and format when the CRD gives them', () => {
    const columns = [
      { name: 'N', type: 'integer', format: 'int32', description: 'How many.', jsonPath: '.n' },
    ];
    expect(tableColumns(columns).definitions[1]).toEqual({
      name: 'N',
      type: 'integer',
      format: 'int32',
      description: 'How many.',
      priority: 0,
    });
  });

  it('stops at a column whose path does not compile, as the server falls back', () => {
    const columns = [
      { name: 'Good', type: 'string', jsonPath: '.a' },
      { name: 'Bad', type: 'string', jsonPath: '.b[' },
      { name: 'After', type: 'string', jsonPath: '.c' },
    ];
    expect(tableColumns(columns).definitions.map((d) => d.name)).toEqual(['Name', 'Good']);
    expect(cellsOf(columns, { a: 'A', c: 'C' })).toEqual(['x', 'A']);
  });
});

describe('toTable without printer columns', () => {
  const configMap: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'settings',
      namespace: 'default',
      creationTimestamp: '2024-05-01T10:00:00+02:00',
    },
  };

  it('gives a CRD version without columns Name and Age', () => {
    const table = toTable(
      [{ ...configMap, metadata: { ...configMap.metadata, creationTimestamp: ago(HOUR) } }],
      [],
      {
        now: NOW,
      },
    );
    expect(table.columnDefinitions).toEqual([
      { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
      {
        name: 'Age',
        type: 'date',
        format: '',
        description: CREATION_TIMESTAMP_DESCRIPTION,
        priority: 0,
      },
    ]);
    expect((table.rows as Array<{ cells: unknown[] }>)[0]?.cells).toEqual(['settings', '60m']);
  });

  it('gives a built-in kind the default convertor: Name and Created At, as an RFC 3339 UTC time', () => {
    const table = toTable([configMap, { ...configMap, metadata: { name: 'undated' } }], undefined, {
      now: NOW,
    });
    expect(table.columnDefinitions).toEqual(BUILTIN_TABLE_COLUMNS.definitions);
    expect(BUILTIN_TABLE_COLUMNS.definitions.map((d) => [d.name, d.type, d.description])).toEqual([
      ['Name', 'string', NAME_DESCRIPTION],
      ['Created At', 'date', CREATION_TIMESTAMP_DESCRIPTION],
    ]);
    expect((table.rows as Array<{ cells: unknown[] }>).map((r) => r.cells)).toEqual([
      ['settings', '2024-05-01T08:00:00Z'],
      ['undated', '0001-01-01T00:00:00Z'],
    ]);
  });

  it('takes columns made by tableColumns as they are', async () => {
    const columns = tableColumns(await scopeColumns());
    expect(toTable([ready], columns, { now: NOW }).columnDefinitions).toBe(columns.definitions);
  });
});

describe('parseIncludeObject', () => {
  it.each<[string | null, string]>([
    [null, 'Metadata'],
    ['', 'Metadata'],
    ['Metadata', 'Metadata'],
    ['Object', 'Object'],
    ['None', 'None'],
  ])('%j → %s', (raw, value) => {
    expect(parseIncludeObject(raw)).toBe(value);
  });

  it('refuses anything else with the server message', () => {
    expect(() => parseIncludeObject('metadata')).toThrow(ApiError);
    expect(() => parseIncludeObject('metadata')).toThrow(
      `Unable to convert to Table as requested: includeObject: Invalid value: "metadata": must be 'Metadata', 'Object', 'None', or empty`,
    );
  });
});
