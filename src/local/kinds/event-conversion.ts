// One Event, two APIs: the conversion between core/v1 Event (how every Event is stored, whichever
// API wrote it) and events.k8s.io/v1 Event, field by field. kube-apiserver converts both through
// its internal core Event (pkg/apis/events/v1/conversion.go: Convert_v1_Event_To_core_Event and
// back): `regarding` is `involvedObject`, `note` is `message`, `deprecatedSource`,
// `deprecatedFirstTimestamp`, `deprecatedLastTimestamp` and `deprecatedCount` are `source`,
// `firstTimestamp`, `lastTimestamp` and `count`, and `reportingController` is core/v1's
// `reportingComponent` (the Go field is ReportingController in both); every other field has one
// name in both (staging/src/k8s.io/api/events/v1/types.go, .../core/v1/types.go).
import type { KubeObject } from '../types.js';

export const CORE_EVENT_API_VERSION = 'v1';
export const EVENTS_V1_API_VERSION = 'events.k8s.io/v1';

/** Each type's fields in its Go struct's order, so that a converted object reads as Go writes it. */
const CORE_FIELDS = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'series',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
] as const;

const EVENTS_V1_FIELDS = [
  'eventTime',
  'series',
  'reportingController',
  'reportingInstance',
  'action',
  'reason',
  'regarding',
  'related',
  'note',
  'type',
  'deprecatedSource',
  'deprecatedFirstTimestamp',
  'deprecatedLastTimestamp',
  'deprecatedCount',
] as const;

/** events.k8s.io/v1 name → core/v1 name, where they differ. */
const RENAMED: Readonly<Record<string, string>> = {
  regarding: 'involvedObject',
  note: 'message',
  deprecatedSource: 'source',
  deprecatedFirstTimestamp: 'firstTimestamp',
  deprecatedLastTimestamp: 'lastTimestamp',
  deprecatedCount: 'count',
  reportingController: 'reportingComponent',
};
const coreNameOf = (eventsName: string) => RENAMED[eventsName] ?? eventsName;
const eventsNameOf: Readonly<Record<string, string>> = Object.fromEntries(
  EVENTS_V1_FIELDS.map((name) => [coreNameOf(name), name]),
);

const HEADER = new Set(['kind', 'apiVersion', 'metadata']);
const CORE_SET: ReadonlySet<string> = new Set(CORE_FIELDS);
const EVENTS_V1_SET: ReadonlySet<string> = new Set(EVENTS_V1_FIELDS);

/**
 * `from` in the other version's shape. A field is carried when it is present (the built-in kinds
 * are schemaless here: no zero value is filled in that the client did not send). A field this
 * server does not know stays as it is, unless it bears a name of the target version: Go would
 * have dropped it when decoding the source (an unknown field), and here it would take the place
 * of the converted one.
 */
function convert(
  from: KubeObject,
  apiVersion: string,
  fields: readonly string[],
  sourceName: (targetName: string) => string,
  sourceFields: ReadonlySet<string>,
  targetFields: ReadonlySet<string>,
): KubeObject {
  const out: KubeObject = { kind: 'Event', apiVersion, metadata: from.metadata };
  for (const name of fields) {
    const source = sourceName(name);
    if (Object.hasOwn(from, source)) out[name] = from[source];
  }
  for (const [key, value] of Object.entries(from)) {
    if (HEADER.has(key) || sourceFields.has(key) || targetFields.has(key)) continue;
    out[key] = value;
  }
  return out;
}

/**
 * A stored (core/v1) Event as events.k8s.io/v1 shows it. A new object, sharing `metadata` and the
 * nested values with `core`, which is not changed; an object already in that version is returned
 * as it is.
 */
export function toEventsV1(core: KubeObject): KubeObject {
  if (core.apiVersion === EVENTS_V1_API_VERSION) return core;
  return convert(
    core,
    EVENTS_V1_API_VERSION,
    EVENTS_V1_FIELDS,
    coreNameOf,
    CORE_SET,
    EVENTS_V1_SET,
  );
}

/** An events.k8s.io/v1 Event as it is stored (core/v1); the same sharing as toEventsV1. */
export function toCoreEvent(event: KubeObject): KubeObject {
  if (event.apiVersion !== EVENTS_V1_API_VERSION) return event;
  return convert(
    event,
    CORE_EVENT_API_VERSION,
    CORE_FIELDS,
    (name) => eventsNameOf[name] ?? name,
    EVENTS_V1_SET,
    CORE_SET,
  );
}
