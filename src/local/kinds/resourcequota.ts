// ResourceQuota (core/v1): stored and served with its status subresource; nothing here
// enforces it (no pods run).
import { builtinType, type KindStrategy } from './strategy.js';

export const resourceQuotaStrategy: KindStrategy = {
  type: builtinType('', 'v1', 'ResourceQuota', 'resourcequotas', {
    shortNames: ['quota'],
    hasStatus: true,
  }),
};
