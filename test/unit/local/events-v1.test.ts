// The events.k8s.io/v1 view of core/v1 Events on its own: the conversion both ways (every field,
// Go's field order, fields it does not know), the field labels each API selects by, and the
// protobuf body client-go's new recorder would send.
import { describe, expect, it } from 'vitest';
import { eventStrategy, eventsV1EventStrategy } from '../../../src/local/kinds/event.js';
import { toCoreEvent, toEventsV1 } from '../../../src/local/kinds/event-conversion.js';
import { decodeKubeProtobuf } from '../../../src/local/protobuf.js';
import { parseFieldSelector } from '../../../src/local/selectors.js';
import type { KubeObject } from '../../../src/local/types.js';

/** A core/v1 Event with every field set, in Go's field order. */
const CORE: KubeObject = {
  kind: 'Event',
  apiVersion: 'v1',
  metadata: { name: 'web.1', namespace: 'team-a' },
  involvedObject: { kind: 'Scope', namespace: 'team-a', name: 'web', uid: 'u-1' },
  reason: 'Provisioned',
  message: 'active',
  source: { component: 'nrn-operator', host: 'node-1' },
  firstTimestamp: '2025-03-01T10:00:00Z',
  lastTimestamp: '2025-03-01T10:01:00Z',
  count: 2,
  type: 'Normal',
  eventTime: '2025-03-01T10:00:00.000001Z',
  series: { count: 2, lastObservedTime: '2025-03-01T10:01:00.000000Z' },
  action: 'Provision',
  related: { kind: 'Namespace', name: 'web-ns' },
  reportingComponent: 'nrn.dev/operator',
  reportingInstance: 'operator-0',
};

/** The same Event as events.k8s.io/v1 shows it, in its Go field order. */
const EVENTS_V1: KubeObject = {
  kind: 'Event',
  apiVersion: 'events.k8s.io/v1',
  metadata: { name: 'web.1', namespace: 'team-a' },
  eventTime: '2025-03-01T10:00:00.000001Z',
  series: { count: 2, lastObservedTime: '2025-03-01T10:01:00.000000Z' },
  reportingController: 'nrn.dev/operator',
  reportingInstance: 'operator-0',
  action: 'Provision',
  reason: 'Provisioned',
  regarding: { kind: 'Scope', namespace: 'team-a', name: 'web', uid: 'u-1' },
  related: { kind: 'Namespace', name: 'web-ns' },
  note: 'active',
  type: 'Normal',
  deprecatedSource: { component: 'nrn-operator', host: 'node-1' },
  deprecatedFirstTimestamp: '2025-03-01T10:00:00Z',
  deprecatedLastTimestamp: '2025-03-01T10:01:00Z',
  deprecatedCount: 2,
};

const copyOf = (o: KubeObject): KubeObject => structuredClone(o);

describe('Event conversion', () => {
  it('renames each field, in the order Go writes the other version', () => {
    const core = copyOf(CORE);
    const converted = toEventsV1(core);
    expect(JSON.stringify(converted)).toBe(JSON.stringify(EVENTS_V1));
    expect(JSON.stringify(toCoreEvent(converted))).toBe(JSON.stringify(CORE));
    expect(core).toStrictEqual(CORE);
  });

  it('carries what is present and fills in nothing', () => {
    const sparse = { kind: 'Event', apiVersion: 'v1', metadata: { name: 'a' }, reason: 'R' };
    expect(toEventsV1(sparse)).toStrictEqual({
      kind: 'Event',
      apiVersion: 'events.k8s.io/v1',
      metadata: { name: 'a' },
      reason: 'R',
    });
  });

  it('keeps fields neither version knows, and drops the other version’s names', () => {
    const core = { ...copyOf(CORE), note: 'not a core field', extra: { x: 1 } };
    expect(toEventsV1(core)).toMatchObject({ note: 'active', extra: { x: 1 } });
    const events = { ...copyOf(EVENTS_V1), message: 'not an events.k8s.io field' };
    const stored = toCoreEvent(events);
    expect(stored.message).toBe('active');
    expect(Object.keys(stored)).toEqual(Object.keys(CORE));
  });

  it('leaves an object already in the version asked for as it is', () => {
    const events = copyOf(EVENTS_V1);
    expect(toEventsV1(events)).toBe(events);
    const core = copyOf(CORE);
    expect(toCoreEvent(core)).toBe(core);
  });
});

describe('Event field labels', () => {
  const core = copyOf(CORE);
  const withoutSource = { ...copyOf(CORE), source: {} };
  const select = (fields: typeof eventStrategy.selectableFields, selector: string) =>
    parseFieldSelector(selector, fields);

  it.each([
    ['involvedObject.uid=u-1', true],
    ['involvedObject.kind=Scope,involvedObject.name=web', true],
    ['reportingComponent=nrn.dev/operator', true],
    ['source=nrn-operator', true],
    ['source=nrn.dev/operator', false],
  ])('core/v1 %s matches: %s', (selector, expected) => {
    expect(select(eventStrategy.selectableFields, selector)(core)).toBe(expected);
  });

  it('reads source as the reporting component when source.component is empty', () => {
    const match = select(eventStrategy.selectableFields, 'source=nrn.dev/operator');
    expect(match(withoutSource)).toBe(true);
  });

  it.each([
    ['regarding.uid=u-1', true],
    ['regarding.kind=Scope,regarding.name=web', true],
    ['reportingController=nrn.dev/operator', true],
    ['source=nrn-operator', true],
    ['type=Normal,reason=Provisioned', true],
    ['type=Warning', false],
  ])('events.k8s.io/v1 %s matches: %s, on either shape', (selector, expected) => {
    const match = select(eventsV1EventStrategy.selectableFields, selector);
    expect(match(core)).toBe(expected);
    expect(match(toEventsV1(core))).toBe(expected);
  });

  it.each([
    [eventStrategy, 'regarding.name', 'field label not supported: regarding.name'],
    [eventStrategy, 'note', 'field label not supported: note'],
    [
      eventsV1EventStrategy,
      'involvedObject.name',
      'field label not supported: involvedObject.name',
    ],
    [eventsV1EventStrategy, 'reportingComponent', 'field label not supported: reportingComponent'],
  ])('refuses a label the other version has', (strategy, label, message) => {
    expect(() => select(strategy.selectableFields, `${label}=x`)).toThrow(message);
  });
});

// A minimal protobuf writer (the same wire format as protobuf.test.ts).
type Bytes = number[];
function varint(value: number): Bytes {
  let rest = value;
  const out: Bytes = [];
  do {
    const low = rest & 0x7f;
    rest = Math.floor(rest / 128);
    out.push(rest === 0 ? low : low | 0x80);
  } while (rest !== 0);
  return out;
}
const int = (field: number, value: number): Bytes => [...varint(field << 3), ...varint(value)];
const len = (field: number, bytes: Bytes | string): Bytes => {
  const payload = typeof bytes === 'string' ? [...Buffer.from(bytes, 'utf8')] : bytes;
  return [...varint((field << 3) | 2), ...varint(payload.length), ...payload];
};
const msg = (field: number, ...parts: Bytes[]): Bytes => len(field, parts.flat());
const timestamp = (field: number, seconds: number, nanos = 0): Bytes =>
  msg(field, int(1, seconds), ...(nanos === 0 ? [] : [int(2, nanos)]));
const body = (apiVersion: string, kind: string, raw: Bytes): Buffer =>
  Buffer.from([
    0x6b,
    0x38,
    0x73,
    0x00,
    ...msg(1, len(1, apiVersion), len(2, kind)),
    ...len(2, raw),
  ]);

/** 2023-11-14T22:13:20Z. */
const T = 1_700_000_000;

describe('events.k8s.io/v1 Event as protobuf', () => {
  it('decodes what the new recorder sends, as Go writes it in JSON', () => {
    const raw = [
      msg(1, len(1, 'web.17a'), len(3, 'team-a')),
      timestamp(2, T, 123_456_000),
      msg(3, int(1, 2), timestamp(2, T + 1)),
      len(4, 'nrn.dev/operator'),
      len(5, 'operator-0'),
      len(6, 'Reconcile'),
      len(7, 'Reconciled'),
      msg(8, len(1, 'Scope'), len(2, 'team-a'), len(3, 'web'), len(5, 'platform.nrn.dev/v1alpha1')),
      len(10, 'reconciled'),
      len(11, 'Normal'),
      msg(12),
      msg(13),
      msg(14),
    ].flat();
    const decoded = decodeKubeProtobuf(body('events.k8s.io/v1', 'Event', raw));
    const expected = {
      kind: 'Event',
      apiVersion: 'events.k8s.io/v1',
      metadata: { name: 'web.17a', namespace: 'team-a' },
      eventTime: '2023-11-14T22:13:20.123456Z',
      series: { count: 2, lastObservedTime: '2023-11-14T22:13:21.000000Z' },
      reportingController: 'nrn.dev/operator',
      reportingInstance: 'operator-0',
      action: 'Reconcile',
      reason: 'Reconciled',
      regarding: {
        kind: 'Scope',
        namespace: 'team-a',
        name: 'web',
        apiVersion: 'platform.nrn.dev/v1alpha1',
      },
      note: 'reconciled',
      type: 'Normal',
      deprecatedSource: {},
      deprecatedFirstTimestamp: null,
      deprecatedLastTimestamp: null,
    };
    expect(decoded).toStrictEqual(expected);
    expect(JSON.stringify(decoded)).toBe(JSON.stringify(expected));
  });
});
