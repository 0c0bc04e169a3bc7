// The string formats a CRD schema may name, checked as the API server's format registry
// (kube-openapi strfmt) checks them. Formats outside this list are ignored, as the server
// strips them from the schema.

import { RE2JS } from 're2js';

type Check = (s: string) => boolean;

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// strfmt's DateTimePattern; its '.' before the fraction really is "any character".
const TIME = /^(\d{2}):(\d{2}):(\d{2})(.[0-9]+)?(z|([+-]\d{2}:\d{2}))$/;
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$/u;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const MAC =
  /^(?:[0-9a-f]{2}(?:([:-])[0-9a-f]{2})(?:\1[0-9a-f]{2}){4}|[0-9a-f]{2}([:-])[0-9a-f]{2}(?:\2[0-9a-f]{2}){6}|[0-9a-f]{2}([:-])[0-9a-f]{2}(?:\3[0-9a-f]{2}){18}|[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}|[0-9a-f]{4}(?:\.[0-9a-f]{4}){3}|[0-9a-f]{4}(?:\.[0-9a-f]{4}){9})$/i;
const HEX_COLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const BYTE = '(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])';
const RGB_COLOR = new RegExp(`^rgb\\(\\s*${BYTE}\\s*,\\s*${BYTE}\\s*,\\s*${BYTE}\\s*\\)$`);
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const OBJECT_ID = /^[0-9a-fA-F]{24}$/;
const EMAIL_ADDR =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@([A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*|\[[^\]\\]*\])$/;
// RE2 (linear time), not RegExp: on a value any client may send, RegExp takes quadratic time
// on a long run of digits and overflows its backtracking stack on "1m1m1m...".
const GO_DURATION = RE2JS.compile('^[-+]?((\\d+\\.?\\d*|\\.\\d+)(ns|us|µs|μs|ms|s|m|h))+$');
const DURATION_UNITS = [
  ['ns', 'nano'],
  ['us', 'µs', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
];
const HOST_FORBIDDEN = /[\s<>"{}|\\^`]/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Go's time.Parse("2006-01-02"): a real calendar day. */
function isDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  const days = month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
  return day <= days;
}

/** strfmt.IsDateTime: a date, a "T", then hh:mm:ss[.frac](Z|±hh:mm). */
function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0] ?? '')) return false;
  const m = TIME.exec(parts[1] ?? '');
  if (!m) return false;
  return (m[1] ?? '') <= '23' && (m[2] ?? '') <= '59' && (m[3] ?? '') <= '59';
}

/** Go's net.ParseIP for an IPv6 text form (with an optional embedded IPv4 tail). */
function isIPv6Text(s: string): boolean {
  if (!s.includes(':') || s.includes('%')) return false;
  let groups = s.split(':');
  const last = groups[groups.length - 1] ?? '';
  if (last.includes('.')) {
    // An IPv4 tail stands for the last two groups.
    if (!IPV4.test(last)) return false;
    groups = groups.slice(0, -1).concat(['0', '0']);
  }
  const gap = s.indexOf('::');
  if (gap !== s.lastIndexOf('::')) return false;
  const valid = (g: string) => /^[0-9a-fA-F]{1,4}$/.test(g);
  if (gap === -1) return groups.length === 8 && groups.every(valid);
  const [head = '', tail = ''] = groups.join(':').split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  // "::" must stand for at least one group.
  return headGroups.length + tailGroups.length < 8 && [...headGroups, ...tailGroups].every(valid);
}

const isIP = (s: string) => IPV4.test(s) || isIPv6Text(s);

function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Go's url.ParseRequestURI: an absolute URI or an absolute path. */
function isRequestURI(s: string): boolean {
  if (s === '' || hasControl(s)) return false;
  if (s === '*') return true;
  if (/%(?![0-9a-fA-F]{2})/.test(s)) return false;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(s);
  const rest = scheme ? s.slice(scheme[0].length) : s;
  if (!rest.startsWith('/')) return scheme !== null;
  if (scheme && rest.startsWith('//')) {
    const authority = rest.slice(2).split(/[/?]/, 1)[0] ?? '';
    const host = authority.slice(authority.lastIndexOf('@') + 1);
    if (HOST_FORBIDDEN.test(host)) return false;
    const port = host.startsWith('[')
      ? host.slice(host.indexOf(']') + 1)
      : /:[^:]*$/.exec(host)?.[0];
    if (port !== undefined && port !== '' && !/^:\d*$/.test(port)) return false;
  }
  return true;
}

const isAsciiDigit = (c: string) => c >= '0' && c <= '9';
const isUnitLetter = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === 'µ';
const isRe2Space = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r';

/**
 * The units of strfmt's durationMatcher `(\d+)\s*([A-Za-zµ]+)`, match after match as Go's
 * FindAllStringSubmatch finds them, in one pass: the RegExp retried the pattern at every digit
 * of a run (quadratic time on "111...1.."), and even RE2 takes seconds on 3 MiB of digits.
 */
function* looseUnits(s: string): Generator<string> {
  let i = 0;
  while (i < s.length) {
    if (!isAsciiDigit(s.charAt(i))) {
      i++;
      continue;
    }
    // A match can only start at the first digit of a run: a later one sees the same tail.
    while (i < s.length && isAsciiDigit(s.charAt(i))) i++;
    while (i < s.length && isRe2Space(s.charAt(i))) i++;
    const start = i;
    while (i < s.length && isUnitLetter(s.charAt(i))) i++;
    if (i > start) yield s.slice(start, i);
  }
}

/** Go's time.ParseDuration, then strfmt's looser "3 days" reading. */
function isDuration(s: string): boolean {
  if (s === '0' || GO_DURATION.test(s)) return true;
  for (const found of looseUnits(s)) {
    const unit = found.toLowerCase();
    const known = DURATION_UNITS.some((variants) =>
      variants.some((v, i) => v === unit || (i === variants.length - 1 && unit.startsWith(v))),
    );
    if (known) return true;
  }
  return false;
}

function isEmail(s: string): boolean {
  const named = /^[^<>]*<([^<>]+)>$/.exec(s.trim());
  return EMAIL_ADDR.test(named ? (named[1] ?? '') : s.trim());
}

function isISBN10(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^(?:\d{9}X|\d{10})$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (i + 1) * (d[i] === 'X' ? 10 : Number(d[i]));
  return sum % 11 === 0;
}

function isISBN13(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(d[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(d[12]);
}

function isCreditCard(s: string): boolean {
  const d = s.replace(/\D/g, '');
  const card =
    /^(?:4\d{12}(?:\d{3})?|5[1-5]\d{14}|(?:222[1-9]|22[3-9]\d|2[3-6]\d{2}|27[01]\d|2720)\d{12}|6(?:011|5\d\d)\d{12,15}|3[47]\d{13}|3(?:0[0-5]|[68]\d)\d{11}|(?:2131|1800|35\d{3})\d{11}|6[27]\d{14}|^(81\d{14,17}))$/;
  if (!card.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < d.length; i++) {
    let n = Number(d[d.length - 1 - i]);
    if (i % 2 === 1) n = n * 2 > 9 ? n * 2 - 9 : n * 2;
    sum += n;
  }
  return sum % 10 === 0;
}

/** Keyed by the normalized name (dashes removed), as the server looks formats up. */
const CHECKS: Record<string, Check> = {
  bsonobjectid: (s) => OBJECT_ID.test(s),
  uri: isRequestURI,
  email: isEmail,
  hostname: (s) =>
    HOSTNAME.test(s) &&
    Buffer.byteLength(s) <= 255 &&
    s.split('.').every((p) => Buffer.byteLength(p) <= 63),
  ipv4: (s) => isIP(s) && s.includes('.'),
  ipv6: (s) => isIP(s) && s.includes(':'),
  cidr: (s) => {
    const [ip = '', bits, ...rest] = s.split('/');
    if (bits === undefined || rest.length > 0 || !/^\d+$/.test(bits)) return false;
    const v4 = IPV4.test(ip);
    return (v4 || isIPv6Text(ip)) && Number(bits) <= (v4 ? 32 : 128);
  },
  mac: (s) => MAC.test(s),
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isISBN10(s) || isISBN13(s),
  isbn10: isISBN10,
  isbn13: isISBN13,
  creditcard: isCreditCard,
  ssn: (s) => SSN.test(s),
  hexcolor: (s) => HEX_COLOR.test(s),
  rgbcolor: (s) => RGB_COLOR.test(s),
  byte: (s) => BASE64.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
};

/** The check for a schema's `format`, or undefined when the server ignores that format. */
export function formatCheck(format: string): Check | undefined {
  return CHECKS[format.replaceAll('-', '')];
}
