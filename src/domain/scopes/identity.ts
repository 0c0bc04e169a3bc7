// A scope's identity — id, slug, domain, NRN — computed in one place for whoever accepts the
// scope (the facade on POST /scope, the reconciler for a scope applied with kubectl), and read
// back from status, which is its record once written.
import { type ApplicationSpec, childNrn, type ScopeStatus } from '../../api/index.js';
import type { KubeObject } from '../../kube/index.js';
import { applicationSlug } from '../applications.js';
import { SCOPE_ID_LABEL, scopeDomain, slugify } from '../names.js';

export interface Identity {
  readonly id: number;
  readonly slug: string;
  readonly domain: string;
  readonly nrn: string;
}

/** The identity of scope `name` of application `app`, given the id allocated to it. */
export function identify(
  app: ApplicationSpec,
  name: string,
  id: number,
  baseDomain: string,
): Identity {
  const slug = slugify(name);
  return {
    id,
    slug,
    domain: scopeDomain(applicationSlug(app), slug, id, baseDomain),
    nrn: childNrn(app.nrn, 'scope', id),
  };
}

/** The identity a status records, when it records all of it. */
export function recordedIdentity(status: ScopeStatus): Identity | undefined {
  const { id, slug, domain, nrn } = status;
  if (id === undefined || slug === undefined || domain === undefined || nrn === undefined) {
    return undefined;
  }
  return { id, slug, domain, nrn };
}

/** The slug a scope has, or will have once accepted. */
export function slugOf(scope: { spec?: { name?: string }; status?: { slug?: string } }): string {
  return scope.status?.slug ?? slugify(scope.spec?.name ?? '');
}

/** The id the label mirroring status.id holds, when it holds a valid one. */
export function idOfLabel(scope: KubeObject): number | undefined {
  const raw = scope.metadata.labels?.[SCOPE_ID_LABEL];
  if (raw === undefined || !/^[0-9]+$/.test(raw)) return undefined;
  const id = Number(raw);
  return Number.isSafeInteger(id) ? id : undefined;
}

/**
 * Whether anyone has begun accepting the scope: its status, or the id label the facade sets
 * when it creates a scope and before it writes the status, is there. A cached copy of such a
 * scope may be behind the acceptance.
 */
export function acceptanceBegun(scope: KubeObject<unknown, unknown>): boolean {
  return scope.status !== undefined || scope.metadata.labels?.[SCOPE_ID_LABEL] !== undefined;
}
