// RoleBinding (rbac.authorization.k8s.io/v1): subjects granted a Role or ClusterRole in one
// namespace; defaulted and checked as pkg/apis/rbac/v1/defaults.go and ValidateRoleBinding do.

import { confirmBindingWrite } from '../auth/escalation.js';
import { invalid } from '../meta.js';
import { ATOMIC, STRUCT } from '../patch/field-types.js';
import { bindingCauses, bindingMessage, defaultBinding, RBAC_GROUP } from './rbac-shared.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const ROLE_BINDING_TYPE = builtinType(RBAC_GROUP, 'v1', 'RoleBinding', 'rolebindings', {
  nameRule: 'path',
});

export const roleBindingStrategy: KindStrategy = {
  type: ROLE_BINDING_TYPE,
  fieldTypes: { subjects: ATOMIC, roleRef: STRUCT },
  prepare(object, old) {
    defaultBinding(object);
    // policybased storage: who binds a role must hold it (or the bind verb).
    confirmBindingWrite(
      'rolebindings',
      object.metadata.name ?? '',
      object.metadata.namespace ?? '',
      (object.roleRef ?? {}) as { kind?: string; name?: string },
    );
    const causes = bindingCauses(object, old, true);
    if (causes.length > 0) throw invalid(ROLE_BINDING_TYPE, object.metadata.name ?? '', causes);
  },
  protobuf: bindingMessage,
};
