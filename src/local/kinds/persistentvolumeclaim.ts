// PersistentVolumeClaim (core/v1): stored with its official schema, volumeMode defaulted to
// Filesystem (SetDefaults_PersistentVolumeClaimSpec) and its status Pending on create. No
// volume is ever bound here.
import { ATOMIC, byKey, MAP, STRUCT } from '../patch/field-types.js';
import { selectorFieldTypes } from './pod-spec.js';
import { orDefault, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = {
  spec: STRUCT,
  'spec.accessModes': ATOMIC,
  'spec.resources.limits': MAP,
  'spec.resources.requests': MAP,
  ...selectorFieldTypes('spec.selector'),
  status: STRUCT,
  'status.accessModes': ATOMIC,
  'status.capacity': MAP,
  'status.conditions': byKey('type'),
};

export const persistentVolumeClaimStrategy: KindStrategy = {
  type: withSchema(
    builtinType('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', {
      shortNames: ['pvc'],
      hasStatus: true,
    }),
    fieldTypes,
  ),
  fieldTypes,
  prepare(object, old) {
    orDefault(struct(object, 'spec'), 'volumeMode', 'Filesystem');
    if (old === undefined) object.status = { phase: 'Pending' };
  },
};
