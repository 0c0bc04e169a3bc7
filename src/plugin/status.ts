// How the plugin reads one of our objects' status: the word shown (the lifecycle value, or
// for kinds without one what kstatus says), whether it is fine, in progress or failed, the
// reason a failure gives, and the colour of each — colour only on a terminal without NO_COLOR.
import { computeKStatus, type KStatusObject } from '../domain/kstatus.js';

/** An object of any kind as the API returns it, read without a schema: nothing is assumed. */
export interface Obj {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly generation?: number;
    readonly creationTimestamp?: string;
    readonly deletionTimestamp?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec?: Readonly<Record<string, unknown>>;
  readonly status?: Readonly<Record<string, unknown>>;
  readonly [field: string]: unknown;
}

export interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

/** ok: nothing to do; progress: the operator works or waits; failed: it has given up. */
export type Health = 'ok' | 'progress' | 'failed';

export function conditionsOf(object: Obj): Condition[] {
  const raw = object.status?.conditions;
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (c): c is Condition =>
      typeof c === 'object' &&
      c !== null &&
      typeof c.type === 'string' &&
      typeof c.status === 'string',
  );
}

export const conditionOf = (object: Obj, type: string): Condition | undefined =>
  conditionsOf(object).find((c) => c.type === type);

export const isPaused = (object: Obj): boolean => conditionOf(object, 'Paused')?.status === 'True';

/** status.status where the kind has one (Scope, Service), else kstatus' answer as a word. */
export function statusWord(object: Obj): string {
  const lifecycle = object.status?.status;
  const word =
    typeof lifecycle === 'string' && lifecycle !== ''
      ? lifecycle
      : KSTATUS_WORDS[computeKStatus(object as KStatusObject).status];
  return isPaused(object) ? `${word}, paused` : word;
}

const KSTATUS_WORDS = {
  Current: 'ready',
  InProgress: 'reconciling',
  Failed: 'failed',
  Terminating: 'deleting',
  NotFound: 'gone',
  Unknown: 'unknown',
} as const;

/**
 * kstatus decides (the rules of kubectl wait and Flux), so a stale status — a spec the
 * operator has not yet seen — is in progress whatever its lifecycle word says.
 */
export function healthOf(object: Obj): Health {
  const { status } = computeKStatus(object as KStatusObject);
  if (status === 'Failed') return 'failed';
  if (status === 'Current' && !isPaused(object)) return 'ok';
  return 'progress';
}

/** Why it is not fine, in the operator's words; undefined when it is. */
export function reasonOf(object: Obj): { reason: string; message: string } | undefined {
  if (healthOf(object) === 'ok') return undefined;
  const paused = conditionOf(object, 'Paused');
  const pick =
    [conditionOf(object, 'Stalled'), paused, conditionOf(object, 'Reconciling')].find(
      (c) => c?.status === 'True',
    ) ?? conditionOf(object, 'Ready');
  if (pick === undefined) {
    return { reason: 'NotObserved', message: 'the operator has written no status yet' };
  }
  const generation = object.metadata.generation;
  const observed = object.status?.observedGeneration;
  const message =
    typeof generation === 'number' && typeof observed === 'number' && observed < generation
      ? `the operator has not yet seen generation ${generation} (status is of ${observed})`
      : (pick.message ?? '');
  return { reason: pick.reason ?? pick.type, message };
}

const COLOURS: Record<Health, string> = { ok: '32', progress: '33', failed: '31' };

/** Paints text by health; the word itself always says it, so nothing is lost without colour. */
export type Painter = (text: string, health: Health) => string;

export function painter(colour: boolean): Painter {
  return colour ? (text, health) => `\u001b[${COLOURS[health]}m${text}\u001b[0m` : (text) => text;
}

/** Colour when stdout is a terminal and NO_COLOR (https://no-color.org) is unset or empty. */
export function wantsColour(
  stream: { readonly isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}

/** kubectl's AGE: the largest unit or two (45s, 3m12s, 5h, 2d3h, 400d). */
export function age(since: string | undefined, now: number): string {
  if (since === undefined) return '<unknown>';
  const at = Date.parse(since);
  if (Number.isNaN(at)) return '<unknown>';
  const s = Math.max(0, Math.floor((now - at) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  return `${d}d`;
}

/** One line of a message the operator or an agent wrote: bounded, control characters out. */
export function oneLine(text: string, max = 200): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: what is stripped is exactly those.
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
