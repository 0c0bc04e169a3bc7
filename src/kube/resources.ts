// The kinds the operator reads and writes: our four custom resources, with their zod schemas,
// and the built-in kinds the provisioners and leader election use.
import {
  ApplicationSpec,
  ApplicationStatus,
  GROUP,
  ScopeSpec,
  ScopeStatus,
  ServiceSpec,
  ServiceSpecificationSpec,
  ServiceSpecificationStatus,
  ServiceStatus,
  VERSION,
} from '../api/index.js';
import { defineResource } from './client.js';

const custom = { group: GROUP, version: VERSION, namespaced: true } as const;

export const Scopes = defineResource({
  ...custom,
  kind: 'Scope',
  plural: 'scopes',
  spec: ScopeSpec,
  status: ScopeStatus,
});
export const Services = defineResource({
  ...custom,
  kind: 'Service',
  plural: 'services',
  spec: ServiceSpec,
  status: ServiceStatus,
});
export const Applications = defineResource({
  ...custom,
  kind: 'Application',
  plural: 'applications',
  spec: ApplicationSpec,
  status: ApplicationStatus,
});
export const ServiceSpecifications = defineResource({
  ...custom,
  kind: 'ServiceSpecification',
  plural: 'servicespecifications',
  spec: ServiceSpecificationSpec,
  status: ServiceSpecificationStatus,
});

const core = { group: '', version: 'v1' } as const;

export const Namespaces = defineResource({
  ...core,
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
});
export const Secrets = defineResource({
  ...core,
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
});
export const ConfigMaps = defineResource({
  ...core,
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
});
export const Events = defineResource({
  ...core,
  kind: 'Event',
  plural: 'events',
  namespaced: true,
});
export const ServiceAccounts = defineResource({
  ...core,
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  namespaced: true,
});
export const ResourceQuotas = defineResource({
  ...core,
  kind: 'ResourceQuota',
  plural: 'resourcequotas',
  namespaced: true,
});
export const LimitRanges = defineResource({
  ...core,
  kind: 'LimitRange',
  plural: 'limitranges',
  namespaced: true,
});
export const Leases = defineResource({
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
});
