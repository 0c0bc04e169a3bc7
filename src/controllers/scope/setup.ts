// Scopes in the operator: the Scope informer with acceptance's indexes, the applications they
// wait for, the scope classes that say what each becomes (compiled once per generation), the
// id allocator, the provisioners, the informers of what they make (a change to a child wakes
// its scope), and the two controllers: scopes, and the classes' status.
import { indexApplications } from '../../domain/applications.js';
import { ClassCatalog } from '../../domain/scope-classes/catalog.js';
import {
  IdAllocator,
  indexScopes,
  indexScopeTypes,
  SCOPE_TYPE_INDEX,
} from '../../domain/scopes/index.js';
import { Applications, keyOf, ScopeClasses, Scopes } from '../../kube/index.js';
import { generationChanged } from '../../runtime/index.js';
import { ChildInformers } from '../provisioners/class/informers.js';
import { ClassProvisioner } from '../provisioners/class/provisioner.js';
import { reportRemovals } from '../provisioners/class/removals.js';
import { ScopeWebhookProvisioner } from '../provisioners/scope-webhook/provisioner.js';
import { SCOPE_CLASS_INDEX, ScopeClassReconciler } from '../scope-class/reconciler.js';
import type { KindSetup, SetupContext } from '../setup.js';
import { ScopeReconciler, scopeKeyOfChild } from './reconciler.js';
import { RolloutLimiter } from './rollout.js';

export function setupScopes(context: SetupContext): KindSetup {
  const { kube, log, events } = context;
  const scopes = kube.informer(Scopes, context.informerOptions);
  const applications = kube.informer(Applications, context.informerOptions);
  const classes = kube.informer(ScopeClasses, context.informerOptions);
  indexScopes(scopes);
  indexScopeTypes(scopes);
  indexApplications(applications);
  const catalog = new ClassCatalog(classes.cache);
  const children = new ChildInformers(kube, {
    log,
    ...(context.informerOptions.resyncMs !== undefined
      ? { resyncMs: context.informerOptions.resyncMs }
      : {}),
  });
  const classReconciler = new ScopeClassReconciler({
    kube,
    log,
    classes,
    scopes,
    catalog,
    events,
    ...(context.scopeClassKinds !== undefined ? { kinds: context.scopeClassKinds } : {}),
  });
  const classController = classReconciler.controller();
  const controller = new ScopeReconciler({
    kube,
    log,
    scopes,
    applications,
    events,
    ids: new IdAllocator(kube, { namespace: context.namespace }),
    classes: catalog,
    provisioners: {
      namespace: new ClassProvisioner(
        kube,
        children,
        reportRemovals(events, log),
        context.scopeClassKinds,
      ),
      webhook: new ScopeWebhookProvisioner(kube, {
        namespace: context.namespace,
        ...(context.webhookCalls !== undefined ? { observe: context.webhookCalls } : {}),
      }),
    },
    rollout: new RolloutLimiter(context.scopeClassRolloutRate),
    onMissingRight: (className, right, generation) => {
      classReconciler.missingRight(className, right, generation);
      classController.enqueue(className);
    },
    onProvisioned: (className, scope) => {
      if (classReconciler.provisioned(className, scope)) classController.enqueue(className);
    },
    onRenderFailed: (className, scope, problem, generation) => {
      classReconciler.renderFailed(className, scope, problem, generation);
      classController.enqueue(className);
    },
    baseDomain: context.baseDomain,
  }).controller();
  // A class added, changed or removed may change what any scope of its type becomes, and
  // wakes the scopes it serves (status.scopeClass), failed ones included: those it failed try
  // again under its new generation (ADR 0032), whatever scope type it names now.
  controller.watch(
    classes,
    (scopeClass) => {
      const keys = new Set<string>();
      for (const s of scopes.byIndex(SCOPE_TYPE_INDEX, scopeClass.spec?.scope_type ?? '')) {
        keys.add(keyOf(s.metadata));
      }
      for (const s of scopes.byIndex(SCOPE_CLASS_INDEX, scopeClass.metadata.name)) {
        keys.add(keyOf(s.metadata));
      }
      return keys;
    },
    generationChanged,
  );
  children.onInformer((informer) => controller.watch(informer, scopeKeyOfChild));
  return {
    informers: [scopes, applications, classes, children],
    controllers: [controller, classController],
    caches: [scopes.cache, classes.cache],
  };
}
