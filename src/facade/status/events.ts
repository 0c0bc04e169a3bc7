// The last Events about one scope or service, for the detail call: read from the core/v1 Events
// API in the object's namespace, selected by the object they are about (kind, name and, when
// known, uid, so a recreated object does not inherit its predecessor's), newest first.
import type { ResourceEvent } from '../../api/index.js';
import { Events, type Kube } from '../../kube/index.js';

export const LAST_EVENTS = 10;
/** One page is plenty: an object's Events are few (repeats are counted, not listed again). */
const PAGE = 500;
const TIMEOUT_MS = 5_000;
const MAX_TEXT = 1024;

export interface EventsAbout {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
}

export type ReadEvents = (about: EventsAbout) => Promise<ResourceEvent[]>;

export function eventReader(kube: Pick<Kube, 'resource'>): ReadEvents {
  const events = kube.resource(Events);
  return async (about) => {
    const selector = [
      `involvedObject.kind=${about.kind}`,
      `involvedObject.name=${about.name}`,
      ...(about.uid !== undefined ? [`involvedObject.uid=${about.uid}`] : []),
    ].join(',');
    const list = await events.listRaw({
      namespace: about.namespace,
      fieldSelector: selector,
      limit: PAGE,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    return list.items
      .map(toResourceEvent)
      .sort((a, b) => (Date.parse(b.last_seen) || 0) - (Date.parse(a.last_seen) || 0))
      .slice(0, LAST_EVENTS);
  };
}

const text = (value: unknown): string =>
  typeof value === 'string' ? value.slice(0, MAX_TEXT) : '';

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};

function toResourceEvent(raw: unknown): ResourceEvent {
  const e = record(raw);
  const series = record(e.series);
  const source = record(e.source);
  const lastSeen =
    text(series.lastObservedTime) ||
    text(e.lastTimestamp) ||
    text(e.eventTime) ||
    text(record(e.metadata).creationTimestamp);
  const count = typeof e.count === 'number' ? e.count : series.count;
  return {
    type: text(e.type) || 'Normal',
    reason: text(e.reason),
    message: text(e.message),
    ...(typeof count === 'number' ? { count } : {}),
    last_seen: lastSeen,
    source: text(e.reportingComponent) || text(source.component),
  };
}
