// Which Scopes may attach to an Application: those of its own namespace, and those of the
// namespaces its spec.scope_namespaces grants (consent on the referenced side, as Gateway
// API's ReferenceGrant). The one rule the admission webhook (refused at apply) and the Scope
// reconciler (pending, ApplicationNotGranted) both call. ADR 0033.
import type { ScopeSpec, ScopeStatus } from '../../api/index.js';
import type { KubeObject } from '../../kube/index.js';
import type { ApplicationObject } from '../applications.js';
import { recordedIdentity } from './identity.js';

/** The reason a scope waits under, and the webhook refuses with. */
export const NOT_GRANTED_REASON = 'ApplicationNotGranted';

/** True when a Scope in `scopeNamespace` may attach to `app`. */
export function grantsScopeNamespace(app: ApplicationObject, scopeNamespace: string): boolean {
  const own = app.metadata.namespace ?? '';
  if (scopeNamespace === own) return true;
  return app.spec?.scope_namespaces?.includes(scopeNamespace) === true;
}

/**
 * Why a Scope in `scopeNamespace` may not attach to `app` (and how its owners grant), or
 * undefined when it may. It does not say where the application is, nor its name: the Scope's
 * author may be a tenant probing ids, and the facade's POST /scope tells them no more.
 */
export function attachmentRefusal(
  app: ApplicationObject,
  scopeNamespace: string,
): string | undefined {
  if (grantsScopeNamespace(app, scopeNamespace)) return undefined;
  return (
    `application ${app.spec?.id ?? '?'} does not grant namespace ${scopeNamespace}: ` +
    `a Scope attaches only to an application ` +
    `of its own namespace, or to one whose spec.scope_namespaces lists the Scope's namespace ` +
    `(its owners add ${scopeNamespace} there)`
  );
}

/**
 * True when `scope` counts among `app`'s scopes (it holds a slug, a listing shows it as the
 * application's): it is of the application's namespace, or it has been attached (its identity
 * is on record, and stays, as its domain does, ADR 0033). A scope of another namespace counts
 * from the moment it attaches, not from its creation: a tenant cannot take an application's
 * slugs by naming it, nor take, once granted, one a scope of the application already holds.
 */
export function countsForApplication(
  app: ApplicationObject,
  scope: KubeObject<ScopeSpec, ScopeStatus>,
): boolean {
  return (
    (scope.metadata.namespace ?? '') === (app.metadata.namespace ?? '') ||
    (scope.status !== undefined && recordedIdentity(scope.status) !== undefined)
  );
}
