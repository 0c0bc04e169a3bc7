// NRN: the spec's hierarchical resource name. Owns parsing, formatting, ordering and the
// matching rules of docs/interface.md ("NRN"); every other module goes through here.

export const NRN_LEVELS = ['organization', 'account', 'namespace', 'application', 'scope'] as const;
export type NrnLevel = (typeof NRN_LEVELS)[number];

/** The spec's regular expression, verbatim. The parser below is tested to accept exactly it. */
export const NRN_PATTERN =
  '^organization=[0-9*]+(:account=[0-9*]+)?(:namespace=[0-9*]+)?(:application=[0-9*]+)?(:scope=[0-9*]+)?$';
export const NRN_REGEX = new RegExp(NRN_PATTERN);

/** An NRN with digits only: what a stored resource (application, scope) is named by. */
export const CONCRETE_NRN_PATTERN =
  '^organization=[0-9]+(:account=[0-9]+)?(:namespace=[0-9]+)?(:application=[0-9]+)?(:scope=[0-9]+)?$';

export interface NrnSegment {
  readonly level: NrnLevel;
  /** Digits, `*`, or a mix: `*` stands for any run of digits (so `*` alone is any id). */
  readonly value: string;
}

export type Nrn = readonly NrnSegment[];

const VALUE = /^[0-9*]+$/;

/** Parses an NRN, or returns undefined when the string is not one. */
export function parseNrn(text: string): Nrn | undefined {
  const parts = text.split(':');
  const segments: NrnSegment[] = [];
  let nextLevel = 0;
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq < 0) return undefined;
    const level = NRN_LEVELS.indexOf(part.slice(0, eq) as NrnLevel);
    const value = part.slice(eq + 1);
    // Levels appear in order, each at most once, and organization always comes first.
    if (level < nextLevel || (segments.length === 0 && level !== 0)) return undefined;
    if (!VALUE.test(value)) return undefined;
    segments.push({ level: NRN_LEVELS[level] as NrnLevel, value });
    nextLevel = level + 1;
  }
  return segments;
}

export function formatNrn(nrn: Nrn): string {
  return nrn.map((s) => `${s.level}=${s.value}`).join(':');
}

/** Appends a level, e.g. an application's NRN + `scope=<id>`. */
export function childNrn(parent: string, level: NrnLevel, id: number | string): string {
  return `${parent}:${level}=${id}`;
}

const isConcrete = (value: string): boolean => !value.includes('*');

function compareValues(a: string, b: string): number {
  // Ids compare as numbers (9 before 10); wildcards sort after every concrete id.
  const ca = isConcrete(a);
  const cb = isConcrete(b);
  if (ca && cb) {
    const byNumber = BigInt(a) - BigInt(b);
    if (byNumber !== 0n) return byNumber < 0n ? -1 : 1;
    return a.length - b.length; // "007" after "7": distinct strings never compare equal
  }
  if (ca !== cb) return ca ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Total order: level by level, an ancestor before its descendants, ids numerically. */
export function compareNrn(a: Nrn, b: Nrn): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const sa = a[i] as NrnSegment;
    const sb = b[i] as NrnSegment;
    const byLevel = NRN_LEVELS.indexOf(sa.level) - NRN_LEVELS.indexOf(sb.level);
    if (byLevel !== 0) return byLevel;
    const byValue = compareValues(sa.value, sb.value);
    if (byValue !== 0) return byValue;
  }
  return a.length - b.length;
}

/**
 * Whether two segment values can name one id. Either side may hold `*` (a run of digits,
 * possibly empty), so this asks whether the two patterns share a word: a small DP over
 * positions, where a star may absorb what the other side has at that point.
 */
export function valuesOverlap(a: string, b: string): boolean {
  if (isConcrete(a) && isConcrete(b)) return a === b;
  const memo = new Map<number, boolean>();
  const width = b.length + 1;
  const go = (i: number, j: number): boolean => {
    const key = i * width + j;
    const cached = memo.get(key);
    if (cached !== undefined) return cached;
    let result: boolean;
    if (i === a.length && j === b.length) result = true;
    else if (i < a.length && a[i] === '*') result = go(i + 1, j) || (j < b.length && go(i, j + 1));
    else if (j < b.length && b[j] === '*') result = go(i, j + 1) || (i < a.length && go(i + 1, j));
    else result = i < a.length && j < b.length && a[i] === b[j] && go(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return go(0, 0);
}

function sameSegment(a: NrnSegment, b: NrnSegment): boolean {
  return a.level === b.level && valuesOverlap(a.value, b.value);
}

function prefixMatches(prefix: Nrn, of: Nrn): boolean {
  return prefix.length <= of.length && prefix.every((s, i) => sameSegment(s, of[i] as NrnSegment));
}

/**
 * The list filter of docs/interface.md: an NRN `owned` by a service matches query `query` when
 * it is the query or one of its ancestors (what is visible at the query), or, when the query
 * ends in `*`, when it lies anywhere below the query.
 */
export function nrnMatches(query: Nrn, owned: Nrn): boolean {
  if (prefixMatches(owned, query)) return true;
  return query.at(-1)?.value.endsWith('*') === true && prefixMatches(query, owned);
}

/** The `entity_nrn` filter: the same levels, each value matching (`*` any id). */
export function nrnEquals(query: Nrn, owned: Nrn): boolean {
  return query.length === owned.length && prefixMatches(query, owned);
}
