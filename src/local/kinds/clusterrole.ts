// ClusterRole (rbac.authorization.k8s.io/v1): rules, or an aggregationRule whose rules the
// aggregation controller (auth/aggregation.ts) fills in; checked as ValidateClusterRole does.

import { confirmRoleWrite } from '../auth/escalation.js';
import { invalid } from '../meta.js';
import { ATOMIC, STRUCT } from '../patch/field-types.js';
import type { StatusCause } from '../types.js';
import { clusterRoleMessage, RBAC_GROUP, ruleCauses } from './rbac-shared.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const CLUSTER_ROLE_TYPE = builtinType(RBAC_GROUP, 'v1', 'ClusterRole', 'clusterroles', {
  namespaced: false,
  nameRule: 'path',
});

export const clusterRoleStrategy: KindStrategy = {
  type: CLUSTER_ROLE_TYPE,
  fieldTypes: {
    rules: ATOMIC,
    aggregationRule: STRUCT,
    'aggregationRule.clusterRoleSelectors': ATOMIC,
  },
  prepare(object) {
    // policybased storage: who writes a role must hold its rules (or the escalate verb).
    confirmRoleWrite(
      'clusterroles',
      object.metadata.name ?? '',
      object.rules,
      object.aggregationRule !== undefined && object.aggregationRule !== null,
    );
    const causes: StatusCause[] = ruleCauses(object.rules, false);
    const rule = object.aggregationRule as { clusterRoleSelectors?: unknown } | null | undefined;
    if (rule !== undefined && rule !== null) {
      const selectors = rule.clusterRoleSelectors;
      if (!Array.isArray(selectors) || selectors.length === 0) {
        causes.push({
          reason: 'FieldValueRequired',
          field: 'aggregationRule.clusterRoleSelectors',
          message:
            'Required value: at least one clusterRoleSelector required if aggregationRule is non-nil',
        });
      }
    }
    if (causes.length > 0) throw invalid(CLUSTER_ROLE_TYPE, object.metadata.name ?? '', causes);
  },
  protobuf: clusterRoleMessage,
};
