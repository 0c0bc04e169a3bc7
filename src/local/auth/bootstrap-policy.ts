// The cluster roles and bindings kube-apiserver bootstraps that people bind to, as
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go makes them (its rendered form:
// bootstrappolicy/testdata/cluster-roles.yaml and cluster-role-bindings.yaml): cluster-admin,
// the aggregated admin/edit/view and their system:aggregate-to-* parts, discovery, basic-user,
// public-info-viewer, auth-delegator, monitoring. Made when missing at start, as the RBAC
// post-start hook does; the controllers' own roles (system:controller:*, system:node...) are not.
import { CLUSTER_ROLE_TYPE } from '../kinds/clusterrole.js';
import { CLUSTER_ROLE_BINDING_TYPE } from '../kinds/clusterrolebinding.js';
import type { Objects, Written } from '../objects.js';
import type { KubeObject } from '../types.js';
import type { PolicyRule } from './rbac.js';

const RW = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const READ = ['get', 'list', 'watch'];
const ALL = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({
  apiGroups,
  resources,
  verbs,
});
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({
  nonResourceURLs,
  verbs,
});

const AGGREGATE = 'rbac.authorization.k8s.io/aggregate-to-';

interface RoleSpec {
  name: string;
  rules?: PolicyRule[];
  aggregateFrom?: string;
  labels?: Record<string, string>;
}

const ROLES: RoleSpec[] = [
  { name: 'admin', aggregateFrom: 'admin' },
  {
    name: 'cluster-admin',
    rules: [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])],
  },
  { name: 'edit', aggregateFrom: 'edit', labels: { [`${AGGREGATE}admin`]: 'true' } },
  {
    name: 'system:aggregate-to-admin',
    labels: { [`${AGGREGATE}admin`]: 'true' },
    rules: [
      rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
      rule(ALL, ['rbac.authorization.k8s.io'], ['rolebindings', 'roles']),
    ],
  },
  {
    name: 'system:aggregate-to-edit',
    labels: { [`${AGGREGATE}edit`]: 'true' },
    rules: [
      rule(
        READ,
        [''],
        ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy'],
      ),
      rule(['impersonate'], [''], ['serviceaccounts']),
      rule(RW, [''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy']),
      rule(['create'], [''], ['pods/eviction']),
      rule(
        RW,
        [''],
        [
          'configmaps',
          'events',
          'persistentvolumeclaims',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'secrets',
          'serviceaccounts',
          'services',
          'services/proxy',
        ],
      ),
      rule(['create'], [''], ['serviceaccounts/token']),
      rule(
        RW,
        ['apps'],
        [
          'daemonsets',
          'deployments',
          'deployments/rollback',
          'deployments/scale',
          'replicasets',
          'replicasets/scale',
          'statefulsets',
          'statefulsets/scale',
        ],
      ),
      rule(RW, ['autoscaling'], ['horizontalpodautoscalers']),
      rule(RW, ['batch'], ['cronjobs', 'jobs']),
      rule(
        RW,
        ['extensions'],
        [
          'daemonsets',
          'deployments',
          'deployments/rollback',
          'deployments/scale',
          'ingresses',
          'networkpolicies',
          'replicasets',
          'replicasets/scale',
          'replicationcontrollers/scale',
        ],
      ),
      rule(RW, ['policy'], ['poddisruptionbudgets']),
      rule(RW, ['networking.k8s.io'], ['ingresses', 'networkpolicies']),
      rule(ALL, ['coordination.k8s.io'], ['leases']),
    ],
  },
  {
    name: 'system:aggregate-to-view',
    labels: { [`${AGGREGATE}view`]: 'true' },
    rules: [
      rule(
        READ,
        [''],
        [
          'configmaps',
          'endpoints',
          'persistentvolumeclaims',
          'persistentvolumeclaims/status',
          'pods',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'serviceaccounts',
          'services',
          'services/status',
        ],
      ),
      rule(
        READ,
        [''],
        [
          'bindings',
          'events',
          'limitranges',
          'namespaces/status',
          'pods/log',
          'pods/status',
          'replicationcontrollers/status',
          'resourcequotas',
          'resourcequotas/status',
        ],
      ),
      rule(READ, [''], ['namespaces']),
      rule(READ, ['discovery.k8s.io'], ['endpointslices']),
      rule(
        READ,
        ['apps'],
        [
          'controllerrevisions',
          'daemonsets',
          'daemonsets/status',
          'deployments',
          'deployments/scale',
          'deployments/status',
          'replicasets',
          'replicasets/scale',
          'replicasets/status',
          'statefulsets',
          'statefulsets/scale',
          'statefulsets/status',
        ],
      ),
      rule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
      rule(READ, ['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
      rule(
        READ,
        ['extensions'],
        [
          'daemonsets',
          'daemonsets/status',
          'deployments',
          'deployments/scale',
          'deployments/status',
          'ingresses',
          'ingresses/status',
          'networkpolicies',
          'replicasets',
          'replicasets/scale',
          'replicasets/status',
          'replicationcontrollers/scale',
        ],
      ),
      rule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      rule(READ, ['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies']),
    ],
  },
  {
    name: 'system:auth-delegator',
    rules: [
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    ],
  },
  {
    name: 'system:basic-user',
    rules: [
      rule(
        ['create'],
        ['authorization.k8s.io'],
        ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      ),
      rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ],
  },
  {
    name: 'system:discovery',
    rules: [
      urls(
        ['get'],
        [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      ),
    ],
  },
  {
    name: 'system:monitoring',
    rules: [
      urls(
        ['get'],
        [
          '/healthz',
          '/healthz/*',
          '/livez',
          '/livez/*',
          '/metrics',
          '/metrics/slis',
          '/readyz',
          '/readyz/*',
        ],
      ),
    ],
  },
  {
    name: 'system:public-info-viewer',
    rules: [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])],
  },
  { name: 'view', aggregateFrom: 'view', labels: { [`${AGGREGATE}edit`]: 'true' } },
];

/** cluster-role-bindings.yaml: each binds the role of its name to groups. */
const BINDINGS: Record<string, string[]> = {
  'cluster-admin': ['system:masters'],
  'system:basic-user': ['system:authenticated'],
  'system:discovery': ['system:authenticated'],
  'system:monitoring': ['system:monitoring'],
  'system:public-info-viewer': ['system:authenticated', 'system:unauthenticated'],
};

const bootstrapMeta = (name: string, labels: Record<string, string> = {}) => ({
  name,
  annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
  labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults', ...labels },
});

export function bootstrapClusterRoles(): KubeObject[] {
  return ROLES.map((r) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: bootstrapMeta(r.name, r.labels),
    ...(r.aggregateFrom !== undefined
      ? {
          aggregationRule: {
            clusterRoleSelectors: [{ matchLabels: { [`${AGGREGATE}${r.aggregateFrom}`]: 'true' } }],
          },
        }
      : {}),
    ...(r.rules !== undefined ? { rules: r.rules } : {}),
  }));
}

export function bootstrapClusterRoleBindings(): KubeObject[] {
  return Object.entries(BINDINGS).map(([name, groups]) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: bootstrapMeta(name),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: groups.map((g) => ({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Group',
      name: g,
    })),
  }));
}

/** Makes each missing bootstrap role and binding; one a user changed or deleted... is made again
 * only if deleted, as the post-start hook's reconcile adds back what is missing. */
export async function bootstrapPolicy(objects: Objects): Promise<void> {
  const writes: Written[] = [];
  const options = {
    fieldManager: 'nrn-local',
    fieldValidation: 'Ignore' as const,
    dryRun: false,
    warnings: [],
  };
  for (const [type, items] of [
    [CLUSTER_ROLE_TYPE, bootstrapClusterRoles()],
    [CLUSTER_ROLE_BINDING_TYPE, bootstrapClusterRoleBindings()],
  ] as const) {
    for (const item of items) {
      if (objects.find(type, '', item.metadata.name as string) !== undefined) continue;
      writes.push(objects.create(type, '', item, options));
    }
  }
  await Promise.all(writes.map((w) => w.durable));
}
