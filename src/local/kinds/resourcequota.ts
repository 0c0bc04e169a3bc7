// ResourceQuota (core/v1): stored and served with its status subresource; nothing here
// enforces it (no pods run).
import { ATOMIC, MAP, STRUCT } from '../patch/field-types.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const resourceQuotaStrategy: KindStrategy = {
  type: builtinType('', 'v1', 'ResourceQuota', 'resourcequotas', {
    shortNames: ['quota'],
    hasStatus: true,
  }),
  fieldTypes: {
    spec: STRUCT,
    'spec.hard': MAP,
    'spec.scopes': ATOMIC,
    'spec.scopeSelector.matchExpressions': ATOMIC,
    status: STRUCT,
    'status.hard': MAP,
    'status.used': MAP,
  },
};
