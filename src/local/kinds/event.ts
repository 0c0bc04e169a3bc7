// Event (core/v1): selectable by the object it is about, its reason and type; no object may
// name an Event as its owner.
import { STRUCT } from '../patch/field-types.js';
import type { KubeObject } from '../types.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const EVENT_TYPE = builtinType('', 'v1', 'Event', 'events', { shortNames: ['ev'] });

const involved = (o: KubeObject) => (o.involvedObject ?? {}) as Record<string, string | undefined>;

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
};
