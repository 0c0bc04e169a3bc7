// Role (rbac.authorization.k8s.io/v1): namespaced rules; checked as ValidateRole does.

import { confirmRoleWrite } from '../auth/escalation.js';
import { invalid } from '../meta.js';
import { ATOMIC } from '../patch/field-types.js';
import { RBAC_GROUP, roleMessage, ruleCauses } from './rbac-shared.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const ROLE_TYPE = builtinType(RBAC_GROUP, 'v1', 'Role', 'roles', { nameRule: 'path' });

export const roleStrategy: KindStrategy = {
  type: ROLE_TYPE,
  // `rules` carries no patchStrategy: a strategic merge patch replaces it whole.
  fieldTypes: { rules: ATOMIC },
  prepare(object) {
    // policybased storage: who writes a role must hold its rules (or the escalate verb).
    confirmRoleWrite('roles', object.metadata.name ?? '', object.rules, false);
    const causes = ruleCauses(object.rules, true);
    if (causes.length > 0) throw invalid(ROLE_TYPE, object.metadata.name ?? '', causes);
  },
  protobuf: roleMessage,
};
