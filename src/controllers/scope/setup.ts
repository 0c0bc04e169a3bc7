// Scopes in the operator: the Scope informer with acceptance's indexes, the applications they
// wait for, the id allocator, the namespace provisioner and its children's informers (a change
// to a child wakes its scope), and the controller.
import { indexApplications } from '../../domain/applications.js';
import { IdAllocator, indexScopes } from '../../domain/scopes/index.js';
import { Applications, Scopes } from '../../kube/index.js';
import { setupNamespaceProvisioner } from '../provisioners/namespace/setup.js';
import type { KindSetup, SetupContext } from '../setup.js';
import { ScopeReconciler, scopeKeyOfChild } from './reconciler.js';

export function setupScopes(context: SetupContext): KindSetup {
  const { kube, log, events } = context;
  const scopes = kube.informer(Scopes, context.informerOptions);
  const applications = kube.informer(Applications, context.informerOptions);
  indexScopes(scopes);
  indexApplications(applications);
  const { provisioner, informers: children } = setupNamespaceProvisioner(
    kube,
    context.informerOptions,
  );
  const controller = new ScopeReconciler({
    kube,
    log,
    scopes,
    applications,
    events,
    ids: new IdAllocator(kube, { namespace: context.namespace }),
    provisioner,
    baseDomain: context.baseDomain,
  }).controller();
  for (const informer of children) controller.watch(informer, scopeKeyOfChild);
  return {
    informers: [scopes, applications, ...children],
    controllers: [controller],
    caches: [scopes.cache],
  };
}
