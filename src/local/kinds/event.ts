// Event (core/v1): selectable by every field label kube-apiserver supports for it (the object it is
// about, its reason, type, source and reporting component); no object may name an Event as its
// owner.
import { STRUCT } from '../patch/field-types.js';
import { MessageSpec, objectMeta, objectReference, one } from '../protobuf-messages.js';
import type { KubeObject } from '../types.js';
import { builtinType, type KindStrategy, type SelectableFields } from './strategy.js';

export const EVENT_TYPE = builtinType('', 'v1', 'Event', 'events', { shortNames: ['ev'] });

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

export const eventStrategy: KindStrategy = {
  type: EVENT_TYPE,
  selectableFields: CORE_FIELDS,
  fieldTypes: { involvedObject: STRUCT, source: STRUCT },
  bannedAsOwner: true,
  protobuf: eventMessage,
};
