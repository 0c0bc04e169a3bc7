// LimitRange (core/v1): stored and served; nothing here applies it (no pods run).
import { ATOMIC, STRUCT } from '../patch/field-types.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const limitRangeStrategy: KindStrategy = {
  type: builtinType('', 'v1', 'LimitRange', 'limitranges', { shortNames: ['limits'] }),
  fieldTypes: {
    spec: STRUCT,
    // `Limits []LimitRangeItem json:"limits"`: no patch strategy, so replaced whole.
    'spec.limits': ATOMIC,
  },
};
