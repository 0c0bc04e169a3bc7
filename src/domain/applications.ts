// Applications as the rest of the operator and the facade look them up: by id (the oldest
// valid claimant owns it) through the Application informer's index, and their slug.
import type { ApplicationSpec, ApplicationStatus } from '../api/index.js';
import { type Informer, type KubeObject, rawResource } from '../kube/index.js';
import { claimOwner } from './claims.js';
import { slugify } from './names.js';

/** Index of the Application informer: spec.id as a string. */
export const APP_ID_INDEX = 'application-id';

/** Applications without schemas: an invalid spec must still be read, to be reported. */
export const RawApplications = rawResource('Application');

export type ApplicationObject = KubeObject<ApplicationSpec, ApplicationStatus>;

export function indexApplications(informer: Informer<ApplicationSpec, ApplicationStatus>): void {
  informer.addIndex(APP_ID_INDEX, (app) => (app.spec ? [String(app.spec.id)] : []));
}

/**
 * The application that owns id `id`: the oldest valid one claiming it (the informer's cache
 * holds only objects its schema accepts). Undefined when none does.
 */
export function applicationById(
  informer: Informer<ApplicationSpec, ApplicationStatus>,
  id: number,
): ApplicationObject | undefined {
  return claimOwner(informer, APP_ID_INDEX, String(id));
}

/** The slug an application has: its own, or derived from its name. */
export function applicationSlug(spec: ApplicationSpec): string {
  return spec.slug ?? slugify(spec.name);
}
