// The Scope informer's indexes — by application, by `<application>/<slug>`, by id — and the
// slug rule they serve: a slug is unique within its application, and the older scope keeps it.
import type { ScopeSpec, ScopeStatus } from '../../api/index.js';
import { type Informer, type KubeObject, keyOf } from '../../kube/index.js';
import type { ApplicationObject } from '../applications.js';
import { olderFirst, SCOPE_ID_LABEL } from '../names.js';
import { countsForApplication } from './grants.js';
import { slugOf } from './identity.js';

type ScopeObject = KubeObject<ScopeSpec, ScopeStatus>;
type ScopeInformer = Informer<ScopeSpec, ScopeStatus>;

/** spec.application_id as a string. */
export const SCOPE_APP_INDEX = 'scope-application-id';
/** `<application_id>/<slug>`, the slug as assigned or to be. */
export const SCOPE_SLUG_INDEX = 'scope-application-slug';
/** The scope id: status, else the label mirroring it (a scope the facade is accepting). */
export const SCOPE_ID_INDEX = 'scope-id';

/** The indexes by application and by slug, which acceptance reads. */
export function indexScopes(informer: ScopeInformer): void {
  informer.addIndex(SCOPE_APP_INDEX, (scope) =>
    scope.spec ? [String(scope.spec.application_id)] : [],
  );
  informer.addIndex(SCOPE_SLUG_INDEX, (scope) =>
    scope.spec ? [slugKey(scope.spec.application_id, slugOf(scope))] : [],
  );
}

/** spec.type: the scopes a ScopeClass of that type may serve. */
export const SCOPE_TYPE_INDEX = 'scope-type';

/** The index by type, which class changes read. */
export function indexScopeTypes(informer: ScopeInformer): void {
  informer.addIndex(SCOPE_TYPE_INDEX, (scope) => (scope.spec ? [scope.spec.type] : []));
}

/** The index by id, which GET /scope/{id} reads. */
export function indexScopeIds(informer: ScopeInformer): void {
  informer.addIndex(SCOPE_ID_INDEX, (scope) => {
    const id = scope.status?.id ?? scope.metadata.labels?.[SCOPE_ID_LABEL];
    return id === undefined ? [] : [String(id)];
  });
}

/**
 * The scope of application `applicationId` that holds `slug`, from the cache: for a scope not
 * created yet, any that has it; for `self`, an older one (the older of two keeps the slug).
 * Given the application, a scope that does not count among its scopes (of a namespace it does
 * not grant, never attached) holds nothing.
 */
export function slugHolder(
  scopes: ScopeInformer,
  applicationId: number,
  slug: string,
  self?: ScopeObject,
  app?: ApplicationObject,
): ScopeObject | undefined {
  const holders = scopes
    .byIndex(SCOPE_SLUG_INDEX, slugKey(applicationId, slug))
    .filter((holder) => app === undefined || countsForApplication(app, holder));
  if (self === undefined) return holders[0];
  const key = keyOf(self.metadata);
  return holders
    .filter((other) => keyOf(other.metadata) !== key && olderFirst(other, self) < 0)
    .sort(olderFirst)[0];
}

/**
 * The scope holding a slug, as a refusal names it: `team-a/10-web (id 3)`. The id is status's,
 * else the label the facade sets before it writes status.
 */
export function describeSlugHolder(holder: ScopeObject): string {
  const id = holder.status?.id ?? holder.metadata.labels?.[SCOPE_ID_LABEL];
  return `${keyOf(holder.metadata)}${id !== undefined ? ` (id ${id})` : ''}`;
}

function slugKey(applicationId: number, slug: string): string {
  return `${applicationId}/${slug}`;
}
