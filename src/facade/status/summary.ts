// One scope or service as the status calls show it: its ResourceSummary, worked out once per
// object version together with everything the calls sort, filter and place it by (its JSON, the
// text `q` searches, its sort key, its place in the NRN tree), so a request or a stream event
// only reads what is already there.
import type {
  Condition,
  ResourceSummary,
  ScopeSpec,
  ScopeStatus,
  ServiceSpec,
  ServiceStatus,
  StatusFilters,
  StatusKind,
} from '../../api/index.js';
import type { KubeObject } from '../../kube/index.js';

export type ScopeObject = KubeObject<ScopeSpec, ScopeStatus>;
export type ServiceObject = KubeObject<ServiceSpec, ServiceStatus>;

/** Longest message (and NRN) a summary carries: keeps every event small whatever a status holds. */
export const MAX_SUMMARY_TEXT = 1024;

/** A summary and what the calls read of it; immutable, replaced when the object changes. */
export interface Entry {
  /** `kind/namespace/name`: unique across both kinds. */
  readonly key: string;
  readonly summary: ResourceSummary;
  /** The summary as JSON, written once: every page and every stream concatenates it. */
  readonly json: string;
  /** Lower-cased name, slug, NRN and message, for `q`. */
  readonly text: string;
  /** Failures first (stalled, then failed), then by NRN (ids as numbers) and name. */
  readonly sortKey: string;
  /** The NRN prefixes at organization, account, namespace and application level it sits under. */
  readonly places: readonly string[];
  /** The object's resourceVersion: an update that did not change it changes nothing. */
  readonly resourceVersion: string | undefined;
}

export function entryKey(kind: StatusKind, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

const clip = (text: string): string =>
  text.length > MAX_SUMMARY_TEXT ? `${text.slice(0, MAX_SUMMARY_TEXT - 1)}…` : text;

function condition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

interface Common {
  readonly kind: StatusKind;
  readonly object: KubeObject<unknown, ScopeStatus | ServiceStatus>;
  readonly nrn: string;
  readonly type: string;
  readonly id?: number | undefined;
  readonly applicationId?: number | undefined;
}

function summarise(c: Common): Entry {
  const { metadata } = c.object;
  const status = c.object.status;
  const conditions = status?.conditions;
  const ready = condition(conditions, 'Ready');
  const stalledCondition = condition(conditions, 'Stalled');
  const stalled = stalledCondition?.status === 'True';
  const shown = stalled ? stalledCondition : ready;
  const observed = status?.observedGeneration ?? 0;
  const namespace = metadata.namespace ?? '';
  const name = metadata.name ?? '';
  const nrn = clip(c.nrn);
  const summary: ResourceSummary = {
    kind: c.kind,
    namespace,
    name,
    ...(c.id !== undefined ? { id: c.id } : {}),
    ...(status?.slug !== undefined ? { slug: status.slug } : {}),
    nrn,
    ...(c.applicationId !== undefined ? { application_id: c.applicationId } : {}),
    type: c.type,
    status: status?.status ?? 'unknown',
    ready: ready?.status ?? 'Unknown',
    ...(shown?.reason !== undefined ? { reason: shown.reason } : {}),
    ...(shown?.message ? { message: clip(shown.message) } : {}),
    stalled,
    paused: condition(conditions, 'Paused')?.status === 'True',
    reconciling: condition(conditions, 'Reconciling')?.status === 'True',
    stale: metadata.generation !== undefined && observed < metadata.generation,
    ...(ready?.lastTransitionTime !== undefined ? { since: ready.lastTransitionTime } : {}),
  };
  const rank = stalled ? 0 : summary.status === 'failed' ? 1 : 2;
  return {
    key: entryKey(c.kind, namespace, name),
    summary,
    json: JSON.stringify(summary),
    text: [name, summary.slug ?? '', nrn, summary.message ?? ''].join('\n').toLowerCase(),
    // Spaces apart: a space sorts before `:`, so an NRN comes before the NRNs under it. Joined,
    // not concatenated: join makes a flat string, where a concatenation is a rope V8 flattens
    // on the first comparison, a cost every page would pay for entries new since the last one.
    sortKey: [rank, sortableNrn(nrn), c.kind, namespace, name].join(' '),
    places: placesOf(nrn),
    resourceVersion: metadata.resourceVersion,
  };
}

/**
 * A scope's summary. Its NRN is the one the operator wrote; before that, its application's
 * (`applicationNrn`), so a new scope is already placed under its application.
 */
export function scopeEntry(object: ScopeObject, applicationNrn?: string): Entry {
  return summarise({
    kind: 'scope',
    object,
    nrn: object.status?.nrn ?? applicationNrn ?? '',
    type: object.spec?.type ?? '',
    id: object.status?.id,
    applicationId: object.spec?.application_id,
  });
}

/** A service's summary: it sits at its owning entity's NRN. */
export function serviceEntry(object: ServiceObject): Entry {
  const nrn = object.spec?.entity_nrn ?? '';
  const app = /(?:^|:)application=([0-9]{1,15})(?::|$)/.exec(nrn)?.[1];
  return summarise({
    kind: 'service',
    object,
    nrn,
    type: object.spec?.type ?? '',
    applicationId: app !== undefined ? Number(app) : undefined,
  });
}

/** Ids padded so that string order is numeric order (9 before 10). */
export function sortableNrn(nrn: string): string {
  return nrn.replace(/=([0-9]{1,15})(?=:|$)/g, (_, id: string) => `=${id.padStart(15, '0')}`);
}

const TREE_LEVELS = new Set(['organization', 'account', 'namespace', 'application']);

/** The prefixes of an NRN down to its application segment, shortest first. */
export function placesOf(nrn: string): string[] {
  if (nrn === '') return [];
  const places: string[] = [];
  const parts = nrn.split(':');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (!TREE_LEVELS.has(part.slice(0, part.indexOf('=')))) break;
    // Flat strings (see sortKey): they are hashed as map keys on every tree request.
    places.push(parts.slice(0, i + 1).join(':'));
  }
  return places;
}

/** The filters of a request, ready to test entries against. */
export type Matcher = (entry: Entry) => boolean;

export function matcher(filters: StatusFilters): Matcher {
  const { kind, nrn, type, status } = filters;
  const q = filters.q?.toLowerCase();
  return (entry) => {
    const s = entry.summary;
    if (kind !== undefined && s.kind !== kind) return false;
    if (status !== undefined && s.status !== status) return false;
    if (type !== undefined && s.type !== type) return false;
    if (nrn !== undefined && s.nrn !== nrn && !s.nrn.startsWith(`${nrn}:`)) return false;
    if (q !== undefined && !entry.text.includes(q)) return false;
    return true;
  };
}

/** True when no filter narrows more than the NRN does (what the tree's empty nodes depend on). */
export function narrowsBeyondNrn(filters: StatusFilters): boolean {
  return (
    filters.kind !== undefined ||
    filters.type !== undefined ||
    filters.status !== undefined ||
    filters.q !== undefined
  );
}
