// LimitRange (core/v1): stored and served; nothing here applies it (no pods run).
import { builtinType, type KindStrategy } from './strategy.js';

export const limitRangeStrategy: KindStrategy = {
  type: builtinType('', 'v1', 'LimitRange', 'limitranges', { shortNames: ['limits'] }),
};
