// Event, served by two APIs from one store as kube-apiserver serves it (pkg/registry/core/event
// for both, pkg/registry/events/rest/storage_events.go): core/v1, how every Event is stored, and
// events.k8s.io/v1, a view of the same objects converted field by field (event-conversion.ts).
// Each API selects by its own field labels, read from the stored object; no object may name a
// core/v1 Event as its owner.
import { STRUCT } from '../patch/field-types.js';
import { MessageSpec, objectMeta, objectReference, one } from '../protobuf-messages.js';
import { convertedFieldLabels } from '../selectors.js';
import type { KubeObject } from '../types.js';
import { CORE_EVENT_API_VERSION, toCoreEvent, toEventsV1 } from './event-conversion.js';
import { normaliseEvent } from './event-times.js';
import { EVENT_TABLE, EVENTS_V1_EVENT_TABLE } from './printers.js';
import { builtinType, type KindStrategy, type SelectableFields } from './strategy.js';

export const EVENT_TYPE = builtinType('', CORE_EVENT_API_VERSION, 'Event', 'events', {
  shortNames: ['ev'],
});

/**
 * events.k8s.io/v1 Event: stored as core/v1 Event, so that an Event written through one API is
 * read, listed and watched through the other. Its short name is core's too (the registry's
 * ShortNames, pkg/registry/core/event/storage); kubectl resolves `ev` to core, the group it
 * meets first.
 */
export const EVENTS_V1_EVENT_TYPE = {
  ...builtinType('events.k8s.io', 'v1', 'Event', 'events', { shortNames: ['ev'] }),
  storedAs: {
    group: EVENT_TYPE.group,
    resource: EVENT_TYPE.resource,
    fromStorage: toEventsV1,
    toStorage: toCoreEvent,
  },
};

const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;
const involved = (o: KubeObject, field: string): string | undefined => {
  const ref = o.involvedObject;
  return typeof ref === 'object' && ref !== null
    ? text((ref as Record<string, unknown>)[field])
    : undefined;
};
const sourceComponent = (o: KubeObject): string | undefined => {
  const source = o.source;
  return typeof source === 'object' && source !== null
    ? text((source as Record<string, unknown>).component)
    : undefined;
};

/**
 * core/v1's field labels (AddFieldLabelConversionsForEvent, pkg/apis/core/v1/conversion.go) and
 * the values kube-apiserver selects them by (ToSelectableFields, pkg/registry/core/event/
 * strategy.go): `reportingComponent` is core/v1's name of ReportingController, and `source` is
 * `source.component`, or the reporting controller when that is empty.
 */
const CORE_FIELDS: SelectableFields = {
  'involvedObject.kind': (o) => involved(o, 'kind'),
  'involvedObject.namespace': (o) => involved(o, 'namespace'),
  'involvedObject.name': (o) => involved(o, 'name'),
  'involvedObject.uid': (o) => involved(o, 'uid'),
  'involvedObject.apiVersion': (o) => involved(o, 'apiVersion'),
  'involvedObject.resourceVersion': (o) => involved(o, 'resourceVersion'),
  'involvedObject.fieldPath': (o) => involved(o, 'fieldPath'),
  reason: (o) => text(o.reason),
  reportingComponent: (o) => text(o.reportingComponent),
  source: (o) => sourceComponent(o) || text(o.reportingComponent),
  type: (o) => text(o.type),
};

/**
 * events.k8s.io/v1's field labels, each the core/v1 field it is converted to before matching
 * (AddFieldLabelConversionsForEvent, pkg/apis/events/v1/conversion.go); `metadata.name` and
 * `metadata.namespace` are every kind's.
 */
const EVENTS_V1_LABELS: Readonly<Record<string, string>> = {
  reason: 'reason',
  'regarding.kind': 'involvedObject.kind',
  'regarding.namespace': 'involvedObject.namespace',
  'regarding.name': 'involvedObject.name',
  'regarding.uid': 'involvedObject.uid',
  'regarding.apiVersion': 'involvedObject.apiVersion',
  'regarding.resourceVersion': 'involvedObject.resourceVersion',
  'regarding.fieldPath': 'involvedObject.fieldPath',
  reportingController: 'reportingComponent',
  source: 'source',
  type: 'type',
};

const eventSource = new MessageSpec([
  [1, one('component', 'string')],
  [2, one('host', 'string')],
]);

/** core/v1 Event's generated.proto message, field by field. */
const eventMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, one('involvedObject', objectReference)],
  [3, one('reason', 'string')],
  [4, one('message', 'string')],
  [5, one('source', eventSource)],
  [6, one('firstTimestamp', 'time')],
  [7, one('lastTimestamp', 'time')],
  [8, one('count', 'int32')],
  [9, one('type', 'string')],
  [10, one('eventTime', 'microTime')],
  [
    11,
    one(
      'series',
      new MessageSpec([
        [1, one('count', 'int32')],
        [2, one('lastObservedTime', 'microTime')],
      ]),
    ),
  ],
  [12, one('action', 'string')],
  [13, one('related', objectReference)],
  [14, one('reportingComponent', 'string', true)],
  [15, one('reportingInstance', 'string', true)],
]);

/** events.k8s.io/v1 Event's (staging/src/k8s.io/api/events/v1/generated.proto). */
const eventsV1Message = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, one('eventTime', 'microTime', true)],
  [
    3,
    one(
      'series',
      new MessageSpec([
        [1, one('count', 'int32', true)],
        [2, one('lastObservedTime', 'microTime', true)],
      ]),
    ),
  ],
  [4, one('reportingController', 'string')],
  [5, one('reportingInstance', 'string')],
  [6, one('action', 'string')],
  [7, one('reason', 'string')],
  [8, one('regarding', objectReference)],
  [9, one('related', objectReference)],
  [10, one('note', 'string')],
  [11, one('type', 'string')],
  [12, one('deprecatedSource', eventSource)],
  [13, one('deprecatedFirstTimestamp', 'time')],
  [14, one('deprecatedLastTimestamp', 'time')],
  [15, one('deprecatedCount', 'int32')],
]);

export const eventStrategy: KindStrategy = {
  type: EVENT_TYPE,
  prepare: normaliseEvent,
  selectableFields: CORE_FIELDS,
  fieldTypes: { involvedObject: STRUCT, source: STRUCT },
  bannedAsOwner: true,
  protobuf: eventMessage,
  table: EVENT_TABLE,
};

/** apimachinery's BannedOwners names core/v1 Event only, so this one may own (as there). */
export const eventsV1EventStrategy: KindStrategy = {
  type: EVENTS_V1_EVENT_TYPE,
  selectableFields: convertedFieldLabels(CORE_FIELDS, EVENTS_V1_LABELS, toCoreEvent),
  fieldTypes: { regarding: STRUCT, deprecatedSource: STRUCT },
  protobuf: eventsV1Message,
  table: EVENTS_V1_EVENT_TABLE,
};
