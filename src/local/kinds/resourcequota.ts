// ResourceQuota (core/v1): stored and served with its status subresource; nothing here
// enforces it (no pods run).
import { ATOMIC, MAP, STRUCT } from '../patch/field-types.js';
import { list, MessageSpec, map, objectMeta, one } from '../protobuf-messages.js';
import { RESOURCE_QUOTA_TABLE } from './printers.js';
import { builtinType, type KindStrategy } from './strategy.js';

const scopeSelector = new MessageSpec([
  [
    1,
    list(
      'matchExpressions',
      new MessageSpec([
        [1, one('scopeName', 'string', true)],
        [2, one('operator', 'string', true)],
        [3, list('values', 'string')],
      ]),
    ),
  ],
]);

/** Its generated.proto message, field by field. */
const resourceQuotaMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [
    2,
    one(
      'spec',
      new MessageSpec([
        [1, map('hard', 'quantity')],
        [2, list('scopes', 'string')],
        [3, one('scopeSelector', scopeSelector)],
      ]),
    ),
  ],
  [
    3,
    one(
      'status',
      new MessageSpec([
        [1, map('hard', 'quantity')],
        [2, map('used', 'quantity')],
      ]),
    ),
  ],
]);

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
  protobuf: resourceQuotaMessage,
  table: RESOURCE_QUOTA_TABLE,
};
