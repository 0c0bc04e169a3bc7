// The namespace provisioner with the informers of what it makes: only objects the operator
// labelled (a cluster's other namespaces are none of its business), and only their metadata,
// since it compares labels and annotations alone.

import { MANAGED_BY, MANAGED_BY_LABEL } from '../../../domain/names.js';
import {
  type Informer,
  type Kube,
  LimitRanges,
  metadataOnly,
  Namespaces,
  ResourceQuotas,
  ServiceAccounts,
} from '../../../kube/index.js';
import type { SetupContext } from '../../setup.js';
import { NamespaceProvisioner } from './provisioner.js';

export function setupNamespaceProvisioner(
  kube: Kube,
  informerOptions: SetupContext['informerOptions'],
): { provisioner: NamespaceProvisioner; informers: readonly Informer[] } {
  const managed = {
    ...informerOptions,
    labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
    transform: metadataOnly,
  };
  const children = {
    Namespace: kube.informer(Namespaces, managed),
    ResourceQuota: kube.informer(ResourceQuotas, managed),
    LimitRange: kube.informer(LimitRanges, managed),
    ServiceAccount: kube.informer(ServiceAccounts, managed),
  };
  const provisioner = new NamespaceProvisioner(kube, {
    namespace: (name) => children.Namespace.cache.get(undefined, name),
    inNamespace: (kind, namespace, name) => children[kind].cache.get(namespace, name),
  });
  return { provisioner, informers: Object.values(children) };
}
