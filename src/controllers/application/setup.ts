// Applications in the operator: their informer, indexed by id, and their controller.
import { indexApplications } from '../../domain/applications.js';
import { Applications } from '../../kube/index.js';
import type { KindSetup, SetupContext } from '../setup.js';
import { ApplicationReconciler } from './reconciler.js';

export function setupApplications(context: SetupContext): KindSetup {
  const { kube, log, events } = context;
  const applications = kube.informer(Applications, context.informerOptions);
  indexApplications(applications);
  const controller = new ApplicationReconciler({ kube, log, applications, events }).controller();
  return { informers: [applications], controllers: [controller], caches: [applications.cache] };
}
