// PersistentVolume (core/v1, cluster-scoped): stored with its official schema, defaulted as
// SetDefaults_PersistentVolume (reclaim policy Retain, volumeMode Filesystem) with its status
// Pending on create. kubectl apply --prune's default allowlist names it, so it must resolve.
// No provisioner or binder runs here.
import { ATOMIC, MAP, STRUCT } from '../patch/field-types.js';
import { orDefault, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = {
  spec: STRUCT,
  'spec.accessModes': ATOMIC,
  'spec.capacity': MAP,
  'spec.mountOptions': ATOMIC,
  status: STRUCT,
};

export const persistentVolumeStrategy: KindStrategy = {
  type: withSchema(
    builtinType('', 'v1', 'PersistentVolume', 'persistentvolumes', {
      namespaced: false,
      shortNames: ['pv'],
      hasStatus: true,
    }),
    fieldTypes,
  ),
  fieldTypes,
  prepare(object, old) {
    const spec = struct(object, 'spec');
    orDefault(spec, 'persistentVolumeReclaimPolicy', 'Retain');
    orDefault(spec, 'volumeMode', 'Filesystem');
    if (old === undefined) object.status = { phase: 'Pending' };
  },
};
