// Event (core/v1): selectable by the object it is about, its reason and type; no object may
// name an Event as its owner.
import { STRUCT } from '../patch/field-types.js';
import { MessageSpec, objectMeta, objectReference, one } from '../protobuf-messages.js';
import type { KubeObject } from '../types.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const EVENT_TYPE = builtinType('', 'v1', 'Event', 'events', { shortNames: ['ev'] });

const involved = (o: KubeObject) => (o.involvedObject ?? {}) as Record<string, string | undefined>;

/** Its generated.proto message, field by field. */
const eventMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, one('involvedObject', objectReference)],
  [3, one('reason', 'string')],
  [4, one('message', 'string')],
  [
    5,
    one(
      'source',
      new MessageSpec([
        [1, one('component', 'string')],
        [2, one('host', 'string')],
      ]),
    ),
  ],
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
  selectableFields: {
    'involvedObject.kind': (o) => involved(o).kind,
    'involvedObject.name': (o) => involved(o).name,
    'involvedObject.namespace': (o) => involved(o).namespace,
    'involvedObject.uid': (o) => involved(o).uid,
    reason: (o) => o.reason as string | undefined,
    type: (o) => o.type as string | undefined,
  },
  fieldTypes: { involvedObject: STRUCT, source: STRUCT },
  bannedAsOwner: true,
  protobuf: eventMessage,
};
