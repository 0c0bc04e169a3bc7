// The Scope review: a scope attaches only to an application that grants its namespace
// (domain/scopes' attachmentRefusal), and its slug is unique within its application
// (slugHolder). The same rules the Scope reconciler (ApplicationNotGranted, DuplicateSlug) and
// the facade's POST /scope (409) ask, read from the same shared informer caches.
import type { ApplicationSpec, ApplicationStatus, ScopeSpec, ScopeStatus } from '../api/index.js';
import { applicationById } from '../domain/applications.js';
import {
  attachmentRefusal,
  describeSlugHolder,
  NOT_GRANTED_REASON,
  slugHolder,
  slugOf,
} from '../domain/scopes/index.js';
import type { Informer, KubeObject } from '../kube/index.js';
import { ADMIT, type AdmissionRequest, objectOf, refuse, type Verdict } from './review.js';

type ScopeInformer = Informer<ScopeSpec, ScopeStatus>;
type ApplicationInformer = Informer<ApplicationSpec, ApplicationStatus>;

export function reviewScope(
  scopes: ScopeInformer,
  applications: ApplicationInformer,
  request: AdmissionRequest,
): Verdict {
  const object = objectOf(request.object);
  if (object === undefined) return ADMIT;
  const spec = object.spec as Partial<ScopeSpec> | undefined;
  const applicationId = spec?.application_id;
  if (typeof applicationId !== 'number' || typeof spec?.name !== 'string') return ADMIT;
  const scope = object as unknown as KubeObject<ScopeSpec, ScopeStatus>;
  const slug = slugOf(scope);
  let holder: KubeObject<ScopeSpec, ScopeStatus> | undefined;
  const app = applicationById(applications, applicationId);
  if (request.operation === 'CREATE') {
    // Judged at create only: application_id never changes, and an update refused after a
    // grant is withdrawn could not even remove the scope's finalizer. An application not
    // there yet is admitted: the reconciler judges the scope when it comes.
    const refusal =
      app === undefined
        ? undefined
        : attachmentRefusal(app, request.namespace ?? object.metadata.namespace ?? '');
    if (refusal !== undefined) {
      return refuse(NOT_GRANTED_REASON, `spec.application_id: ${refusal}`);
    }
    holder = slugHolder(scopes, applicationId, slug, undefined, app);
  } else {
    // An update that keeps the slug is admitted whatever stands: refusing a scope already in
    // conflict its metadata writes (a finalizer removed) would hold its deletion. One that
    // takes a new slug is judged as the reconciler judges it: an older holder keeps it.
    const old = objectOf(request.oldObject) as KubeObject<ScopeSpec, ScopeStatus> | undefined;
    if (object.metadata.deletionTimestamp !== undefined) return ADMIT;
    if (old !== undefined && slugOf(old) === slug && old.spec?.application_id === applicationId) {
      return ADMIT;
    }
    holder = slugHolder(scopes, applicationId, slug, scope, app);
  }
  // A cache behind a delete and re-create may still hold this very object.
  if (
    holder === undefined ||
    (holder.metadata.name === object.metadata.name &&
      (holder.metadata.namespace ?? '') === (request.namespace ?? object.metadata.namespace ?? ''))
  ) {
    return ADMIT;
  }
  return refuse(
    'DuplicateSlug',
    `spec.name: slug ${slug} is already used by scope ${describeSlugHolder(holder)} of application ${applicationId}`,
  );
}
