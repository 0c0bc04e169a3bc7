// ClusterRoleBinding (rbac.authorization.k8s.io/v1): subjects granted a ClusterRole everywhere;
// defaulted and checked as pkg/apis/rbac/v1/defaults.go and ValidateClusterRoleBinding do.

import { confirmBindingWrite } from '../auth/escalation.js';
import { invalid } from '../meta.js';
import { ATOMIC, STRUCT } from '../patch/field-types.js';
import { bindingCauses, bindingMessage, defaultBinding, RBAC_GROUP } from './rbac-shared.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const CLUSTER_ROLE_BINDING_TYPE = builtinType(
  RBAC_GROUP,
  'v1',
  'ClusterRoleBinding',
  'clusterrolebindings',
  { namespaced: false, nameRule: 'path' },
);

export const clusterRoleBindingStrategy: KindStrategy = {
  type: CLUSTER_ROLE_BINDING_TYPE,
  fieldTypes: { subjects: ATOMIC, roleRef: STRUCT },
  prepare(object, old) {
    defaultBinding(object);
    // policybased storage: who binds a role must hold it (or the bind verb).
    confirmBindingWrite(
      'clusterrolebindings',
      object.metadata.name ?? '',
      '',
      (object.roleRef ?? {}) as { kind?: string; name?: string },
    );
    const causes = bindingCauses(object, old, false);
    if (causes.length > 0) {
      throw invalid(CLUSTER_ROLE_BINDING_TYPE, object.metadata.name ?? '', causes);
    }
  },
  protobuf: bindingMessage,
};
