// The kinds the operator reads and writes: our four custom resources, derived from src/api's
// KINDS (names and zod schemas, one definition per kind), and the built-in kinds the
// provisioners and leader election use.

import type { z } from 'zod';
import { GROUP, KINDS, VERSION } from '../api/index.js';
import { defineResource, type ResourceType } from './client.js';

type KindName = keyof typeof KINDS;

/** A kind of src/api, its objects checked against its schemas as they are read. */
function ours<Spec, Status>(info: {
  readonly kind: string;
  readonly plural: string;
  readonly spec: z.ZodType<Spec>;
  readonly status: z.ZodType<Status>;
  readonly namespaced?: boolean;
}): ResourceType<Spec, Status> {
  const { kind, plural, spec, status } = info;
  return defineResource({
    group: GROUP,
    version: VERSION,
    namespaced: info.namespaced !== false,
    kind,
    plural,
    spec,
    status,
  });
}

export const Scopes = ours(KINDS.Scope);
export const Services = ours(KINDS.Service);
export const Applications = ours(KINDS.Application);
export const ServiceSpecifications = ours(KINDS.ServiceSpecification);
export const ScopeClasses = ours(KINDS.ScopeClass);

/**
 * Kind `name` of src/api without schemas: a reconciler must still read an object whose spec
 * is invalid, to report it.
 */
export function rawResource(name: KindName): ResourceType {
  const info: { kind: string; plural: string; namespaced?: boolean } = KINDS[name];
  const { kind, plural } = info;
  return defineResource({
    group: GROUP,
    version: VERSION,
    namespaced: info.namespaced !== false,
    kind,
    plural,
  });
}

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
export const NetworkPolicies = defineResource({
  group: 'networking.k8s.io',
  version: 'v1',
  kind: 'NetworkPolicy',
  plural: 'networkpolicies',
  namespaced: true,
});
export const Leases = defineResource({
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
});
