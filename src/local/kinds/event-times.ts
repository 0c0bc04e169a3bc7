// A core/v1 Event as kube-apiserver stores it: decoded into its Go type and encoded again, so
// its times are metav1.Time (RFC 3339 to the second, UTC) or MicroTime (to the microsecond), a
// zero time is `null`, and the fields without `omitempty` are always there
// (staging/src/k8s.io/api/core/v1/types.go, Event).
import { badRequest, type KubeObject } from '../types.js';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** The instant a time field holds, as metav1.Time's UnmarshalJSON reads it (null: zero). */
function instant(value: unknown, field: string): { ms: number; micros: number } | null {
  if (value === null || value === undefined || value === '') return null;
  const match = typeof value === 'string' ? RFC3339.exec(value) : null;
  const ms = match ? Date.parse(value as string) : Number.NaN;
  if (match === null || Number.isNaN(ms)) {
    throw badRequest(
      `Event in version "v1" cannot be handled as a Event: ${field}: parsing time ${JSON.stringify(
        typeof value === 'string' ? value : String(value),
      )} as "2006-01-02T15:04:05Z07:00": cannot parse as RFC 3339`,
    );
  }
  // Date keeps milliseconds; the digits past them are the microseconds MicroTime keeps.
  const fraction = (match[7] ?? '.').slice(1).padEnd(6, '0').slice(0, 6);
  return { ms: Math.floor(ms / 1000) * 1000, micros: Number(fraction) };
}

const seconds = (at: { ms: number }) => `${new Date(at.ms).toISOString().slice(0, 19)}Z`;
const micros = (at: { ms: number; micros: number }) =>
  `${new Date(at.ms).toISOString().slice(0, 19)}.${String(at.micros).padStart(6, '0')}Z`;

/** Normalises a core/v1 Event in place, as the typed round trip would. */
export function normaliseEvent(event: KubeObject): void {
  for (const field of ['firstTimestamp', 'lastTimestamp'] as const) {
    const at = instant(event[field], field);
    event[field] = at === null ? null : seconds(at);
  }
  const eventTime = instant(event.eventTime, 'eventTime');
  event.eventTime = eventTime === null ? null : micros(eventTime);
  const series = event.series;
  if (typeof series === 'object' && series !== null && !Array.isArray(series)) {
    const record = series as Record<string, unknown>;
    const last = instant(record.lastObservedTime, 'series.lastObservedTime');
    record.lastObservedTime = last === null ? null : micros(last);
  }
  // Structs and strings without omitempty: always encoded.
  if (typeof event.involvedObject !== 'object' || event.involvedObject === null) {
    event.involvedObject = {};
  }
  if (typeof event.source !== 'object' || event.source === null) event.source = {};
  event.reportingComponent ??= '';
  event.reportingInstance ??= '';
}
