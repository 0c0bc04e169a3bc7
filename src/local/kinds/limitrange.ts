// LimitRange (core/v1): stored and served; nothing here applies it (no pods run).
import { ATOMIC, STRUCT } from '../patch/field-types.js';
import { list, MessageSpec, map, objectMeta, one } from '../protobuf-messages.js';
import { builtinType, type KindStrategy } from './strategy.js';

const limitRangeItem = new MessageSpec([
  [1, one('type', 'string')],
  [2, map('max', 'quantity')],
  [3, map('min', 'quantity')],
  [4, map('default', 'quantity')],
  [5, map('defaultRequest', 'quantity')],
  [6, map('maxLimitRequestRatio', 'quantity')],
]);

/** Its generated.proto message, field by field. */
const limitRangeMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, one('spec', new MessageSpec([[1, list('limits', limitRangeItem)]]))],
]);

export const limitRangeStrategy: KindStrategy = {
  type: builtinType('', 'v1', 'LimitRange', 'limitranges', { shortNames: ['limits'] }),
  fieldTypes: {
    spec: STRUCT,
    // `Limits []LimitRangeItem json:"limits"`: no patch strategy, so replaced whole.
    'spec.limits': ATOMIC,
  },
  protobuf: limitRangeMessage,
};
