// How scopes and applications are named beyond their spec: slugs, the scope's domain, the
// labels that carry an NRN, and the labels and annotations the operator puts on what it makes.
import { createHash } from 'node:crypto';

export const LABEL_PREFIX = 'platform.nrn.dev';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'nrn-operator';
export const SCOPE_ID_LABEL = `${LABEL_PREFIX}/scope-id`;
export const SCOPE_UID_LABEL = `${LABEL_PREFIX}/scope-uid`;
export const SCOPE_NAMESPACE_LABEL = `${LABEL_PREFIX}/scope-namespace`;
export const SCOPE_NAME_LABEL = `${LABEL_PREFIX}/scope-name`;
export const NRN_LABEL = `${LABEL_PREFIX}/nrn`;
export const NRN_ANNOTATION = `${LABEL_PREFIX}/nrn`;
/** On what the operator makes for a scope: the scope's `namespace/name`, exactly. */
export const SCOPE_ANNOTATION = `${LABEL_PREFIX}/scope`;
/**
 * On an object the operator made for a scope and then let go of (a namespace a class change
 * left behind, a child kept by an `orphan` deletion policy): the scope's uid, in place of
 * SCOPE_UID_LABEL, so nothing the operator does for any scope deletes it, and the scope that
 * let it go may take it back. ORPHANED_ANNOTATION says when and why.
 */
export const ORPHANED_FROM_LABEL = `${LABEL_PREFIX}/orphaned-from-scope`;
export const ORPHANED_ANNOTATION = `${LABEL_PREFIX}/orphaned`;
/**
 * On a Scope or Service: a new value asks a `failed` one to try again. The value acted on is
 * recorded in `status.observedRetry` (the annotation is left in place, so a GitOps tool that
 * holds it in its manifests does not put it back and loop).
 */
export const RETRY_ANNOTATION = `${LABEL_PREFIX}/retry`;
/**
 * Put on a Secret a Service names in `spec.secret_attributes_ref`, so the operator can watch
 * those Secrets alone (by this label) instead of every Secret of the cluster.
 */
export const ATTRIBUTES_SECRET_LABEL = `${LABEL_PREFIX}/attributes-secret`;

export const DEFAULT_BASE_DOMAIN = 'nrn.local';
const MAX_DOMAIN = 60;
const MAX_SLUG = 60;
const MAX_LABEL_VALUE = 63;

/** A DNS label from free text: lowercase, runs of anything else turned into one dash. */
export function slugify(text: string, max = MAX_SLUG): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, max)
    .replace(/^-+|-+$/g, '');
  // A name of only symbols still needs a slug; the hash keeps distinct names apart.
  return slug === '' ? `s-${shortHash(text, 8)}` : slug;
}

export function shortHash(text: string, length: number): string {
  // Hex of only the bytes needed: a slice of the whole digest's hex would be a V8 sliced string
  // that keeps all 64 characters alive for as long as the hash is held (one per child object).
  const hex = createHash('sha256')
    .update(text)
    .digest()
    .toString('hex', 0, Math.ceil(length / 2));
  return hex.length === length ? hex : hex.slice(0, length);
}

/**
 * `<app-slug>-<scope-slug>-<hash>.<base domain>`, at most 60 characters. The slugs are cut
 * (the scope's first, it is the longer-lived part of the app's name) so the hash, which keeps
 * the domain unique when cutting makes two alike, always survives.
 */
export function scopeDomain(
  appSlug: string,
  scopeSlug: string,
  scopeId: number,
  baseDomain = DEFAULT_BASE_DOMAIN,
): string {
  const hash = shortHash(`${appSlug}/${scopeSlug}/${scopeId}`, 5);
  const suffix = `-${hash}.${baseDomain}`;
  const room = MAX_DOMAIN - suffix.length;
  if (room < 3) throw new Error(`base domain ${baseDomain} leaves no room for a scope domain`);
  let app = appSlug;
  let scope = scopeSlug;
  // One dash joins them; each keeps at least one character.
  while (app.length + 1 + scope.length > room) {
    if (scope.length >= app.length && scope.length > 1) scope = scope.slice(0, -1);
    else if (app.length > 1) app = app.slice(0, -1);
    else break;
  }
  app = app.replace(/-+$/, '') || app.slice(0, 1);
  scope = scope.replace(/-+$/, '') || scope.slice(0, 1);
  return `${app}-${scope}${suffix}`;
}

/**
 * An NRN as a label value (`=` and `:` are not allowed there): `organization-1.account-2...`;
 * too long for a label (63), it becomes `sha256-<40 hex>` of the NRN, still selectable by
 * whoever computes it. The exact NRN is always in the annotation beside it.
 */
export function nrnLabelValue(nrn: string): string {
  const safe = nrn.replaceAll('=', '-').replaceAll(':', '.');
  return safe.length <= MAX_LABEL_VALUE ? safe : `sha256-${shortHash(nrn, 40)}`;
}

/** A valid label value: 63 characters at most, alphanumeric at both ends, `-_.` inside. */
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/**
 * `text` as a label value: itself when it is one, else `h-<40 hex>` of it (a scope's name may
 * be 253 characters). Still selectable by whoever computes it; the exact text goes in an
 * annotation beside it.
 */
export function labelValue(text: string): string {
  return LABEL_VALUE.test(text) ? text : `h-${shortHash(text, 40)}`;
}

/** The namespace the namespace provisioner makes for scope `id`. */
export function scopeNamespaceName(id: number): string {
  return `nrn-scope-${id}`;
}

/** metadata.creationTimestamp, then name: who came first when two claim one thing. */
export function olderFirst(
  a: { metadata: { creationTimestamp?: string; name: string; namespace?: string } },
  b: { metadata: { creationTimestamp?: string; name: string; namespace?: string } },
): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ka = `${a.metadata.namespace ?? ''}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * On a Scope: `disabled` stops the operator applying, repairing or pruning the scope's
 * children (maintenance by hand); the scope says so in a `Paused` condition.
 */
export const RECONCILE_ANNOTATION = `${LABEL_PREFIX}/reconcile`;
