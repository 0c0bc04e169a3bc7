// Node (core/v1, cluster-scoped): stored with its official schema. No kubelet registers one
// here; a Node written by a client is kept as written, its status too.
import { ATOMIC, byKey, MAP, STRUCT } from '../patch/field-types.js';
import { withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = {
  spec: STRUCT,
  'spec.taints': ATOMIC,
  'spec.podCIDRs': { list: 'set' } as const,
  status: STRUCT,
  'status.addresses': byKey('type'),
  'status.conditions': byKey('type'),
  'status.capacity': MAP,
  'status.allocatable': MAP,
  'status.images': ATOMIC,
};

export const nodeStrategy: KindStrategy = {
  type: withSchema(
    builtinType('', 'v1', 'Node', 'nodes', {
      namespaced: false,
      shortNames: ['no'],
      hasStatus: true,
    }),
    fieldTypes,
  ),
  fieldTypes,
  selectableFields: {
    'spec.unschedulable': (o) =>
      String((o.spec as { unschedulable?: boolean } | undefined)?.unschedulable ?? false),
  },
};
