// How the Go API server prints values in its messages (fmt's %q and %v, encoding/json), so
// our errors read byte for byte like a real cluster's.

const SIMPLE_ASCII = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;
const PRINTABLE = /[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u;
const ESCAPES: Record<number, string> = {
  7: '\\a',
  8: '\\b',
  9: '\\t',
  10: '\\n',
  11: '\\v',
  12: '\\f',
  13: '\\r',
};

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/** Go's strconv.Quote (fmt's %q): printable runes stay, the rest are escaped. */
export function goQuote(s: string): string {
  if (SIMPLE_ASCII.test(s)) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
    else if (PRINTABLE.test(ch)) out += ch;
    else if (ESCAPES[cp] !== undefined) out += ESCAPES[cp];
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return `${out}"`;
}

// JSON numbers the API server decodes as int64 print as integers; the rest are float64.
const INT64_LIMIT = 2 ** 63;
export const isInt64 = (n: number): boolean => Number.isInteger(n) && Math.abs(n) < INT64_LIMIT;

/** A float64 as fmt's %v prints it: shortest digits, exponent form outside [1e-4, 1e6). */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mantissa = '', exponent = '0'] = n.toExponential().split('e');
  const exp = Number(exponent);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return String(n);
}

/** A JSON number as the API server prints it in a message (int64 or float64). */
export const goNumber = (n: number): string => (isInt64(n) ? String(n) : goFloat(n));

const HTML_UNSAFE = /[<>&\u2028\u2029]/g;
const htmlEscape = (s: string) =>
  s.replace(HTML_UNSAFE, (c) => `\\u${hex(c.codePointAt(0) ?? 0, 4)}`);

/** Go's encoding/json Marshal of a decoded JSON value: sorted keys, HTML-safe strings. */
export function goJSON(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'string':
      return htmlEscape(JSON.stringify(v));
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(v)) return `[${v.map(goJSON).join(',')}]`;
      const record = v as Record<string, unknown>;
      const keys = Object.keys(record).sort();
      return `{${keys.map((k) => `${htmlEscape(JSON.stringify(k))}:${goJSON(record[k])}`).join(',')}}`;
    }
    default:
      return 'null';
  }
}

/** A bad value as field.Error's ErrorBody prints it: %q, %v, or JSON for the rest. */
export function goValue(v: unknown): string {
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return goJSON(v);
}

/**
 * fmt's %#v of a value decoded from JSON into interface{}, as field.Error prints a bad value
 * that is neither a string, a number nor a bool: `map[string]interface {}{"a":1}`,
 * `[]interface {}{"x", true}`; `inner` is how a value nested in a map or slice prints.
 */
export function goSharp(v: unknown, inner = false): string {
  if (v === null || v === undefined) return inner ? 'interface {}(nil)' : '<nil>';
  switch (typeof v) {
    case 'string':
      return goQuote(v);
    case 'number':
      // util/json decodes whole numbers as int64, the rest as float64; %#v prints them as %v.
      return goNumber(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(v)) return `[]interface {}{${v.map((x) => goSharp(x, true)).join(', ')}}`;
      const record = v as Record<string, unknown>;
      const keys = Object.keys(record).sort();
      return `map[string]interface {}{${keys.map((k) => `${goQuote(k)}:${goSharp(record[k], true)}`).join(', ')}}`;
    }
    default:
      return '<nil>';
  }
}

/** fmt's %#v of a []string: `[]string{"a", "b"}`, or `[]string(nil)` for none. */
export const goStrings = (values: readonly string[] | undefined): string =>
  values === undefined ? '[]string(nil)' : `[]string{${values.map(goQuote).join(', ')}}`;
