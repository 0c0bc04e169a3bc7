// Kubernetes JSONPath (client-go util/jsonpath), as the API server evaluates printer columns.
import { goFloat } from './schema/goformat.js';

/** A literal float from the path (`1.0`), kept apart from integers as Go's kinds are. */
class FloatLiteral {
  constructor(readonly value: number) {}
}

interface Param {
  value: number;
  known: boolean;
  derived: boolean;
}

interface ListNode {
  type: 'list';
  nodes: Node[];
}

type Node =
  | ListNode
  | { type: 'text'; text: string }
  | { type: 'field'; name: string }
  | { type: 'identifier'; name: string }
  | { type: 'int'; value: number }
  | { type: 'float'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'array'; params: [Param, Param, Param] }
  | { type: 'filter'; left: ListNode; right: ListNode; operator: string }
  | { type: 'wildcard' }
  | { type: 'recursive' }
  | { type: 'union'; lists: ListNode[] };

const newList = (): ListNode => ({ type: 'list', nodes: [] });
const EOF = -1;

const isSpace = (r: number) => r === 0x20 || r === 0x09;
const isEndOfLine = (r: number) => r === 0x0d || r === 0x0a;
const isDigit = (r: number) => r >= 0 && /\p{Nd}/u.test(String.fromCodePoint(r));
const isAlphaNumeric = (r: number) =>
  r === 0x5f || (r >= 0 && /[\p{L}\p{Nd}]/u.test(String.fromCodePoint(r)));
const isTerminator = (r: number) =>
  isSpace(r) || isEndOfLine(r) || r === EOF || '.,[]$@{}'.includes(String.fromCodePoint(r));

/** Go's `%#U`: `U+007B '{'`. */
function formatRune(r: number): string {
  const hex = `U+${r.toString(16).toUpperCase().padStart(4, '0')}`;
  const ch = String.fromCodePoint(r);
  return /[\p{C}\p{Z}]/u.test(ch) && ch !== ' ' ? hex : `${hex} '${ch}'`;
}

const DICT_KEY_RE = /^'([^']*)'$/;
const SLICE_RE = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/;
// Go's `.` does not match a newline; JavaScript's also refuses \r and the line separators.
const FILTER_RE = /^([^!<>=]+)([!<>=]+)([^\n]+?)$/;
const ATOI_RE = /^[+-]?[0-9]+$/;
// One way only to split the digits ("[0-9]+\.?[0-9]*" has n of them): "111...1.." from a
// CRD's printer column would otherwise take quadratic time to refuse.
const PARSE_FLOAT_RE = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$/;

/** Go's `strconv.Atoi` on a 64-bit platform. */
function atoi(s: string): number | undefined {
  if (!ATOI_RE.test(s)) return undefined;
  const n = BigInt(s);
  return n < -(2n ** 63n) || n >= 2n ** 63n ? undefined : Number(n);
}

/** A port of client-go's jsonpath parser, step for step, so that the same paths fail. */
class Parser {
  root: ListNode = newList();
  private input = '';
  private pos = 0;
  private start = 0;
  private width = 0;

  parse(text: string): ListNode {
    this.input = text;
    this.root = newList();
    this.pos = 0;
    this.parseText(this.root);
    return this.root;
  }

  private consumeText(): string {
    const value = this.input.slice(this.start, this.pos);
    this.start = this.pos;
    return value;
  }

  private next(): number {
    if (this.pos >= this.input.length) {
      this.width = 0;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos) ?? EOF;
    this.width = r > 0xffff ? 2 : 1;
    this.pos += this.width;
    return r;
  }

  private peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  private backup(): void {
    this.pos -= this.width;
  }

  private parseText(cur: ListNode): void {
    for (;;) {
      if (this.input.startsWith('{', this.pos)) {
        if (this.pos > this.start) cur.nodes.push({ type: 'text', text: this.consumeText() });
        this.parseLeftDelim(cur);
        return;
      }
      if (this.next() === EOF) break;
    }
    if (this.pos > this.start) cur.nodes.push({ type: 'text', text: this.consumeText() });
  }

  private parseLeftDelim(cur: ListNode): void {
    this.pos += 1;
    this.consumeText();
    const node = newList();
    cur.nodes.push(node);
    this.parseInsideAction(node);
  }

  private parseInsideAction(cur: ListNode): void {
    if (this.input.startsWith('}', this.pos)) {
      this.parseRightDelim();
      return;
    }
    if (this.input.startsWith('[?(', this.pos)) {
      this.parseFilter(cur);
      return;
    }
    if (this.input.startsWith('..', this.pos)) {
      this.parseRecursive(cur);
      return;
    }

    const r = this.next();
    if (r === EOF || isEndOfLine(r)) throw new Error('unclosed action');
    if (r === 0x20 || r === 0x40 || r === 0x24) {
      // A space, `@` or `$` is the current object: nothing to add.
      this.consumeText();
      this.parseInsideAction(cur);
      return;
    }
    if (r === 0x5b) {
      this.parseArray(cur);
      return;
    }
    if (r === 0x22 || r === 0x27) {
      this.parseQuote(cur, r);
      return;
    }
    if (r === 0x2e) {
      this.parseField(cur);
      return;
    }
    if (r === 0x2b || r === 0x2d || isDigit(r)) {
      this.backup();
      this.parseNumber(cur);
      return;
    }
    if (isAlphaNumeric(r)) {
      this.backup();
      this.parseIdentifier(cur);
      return;
    }
    throw new Error(`unrecognized character in action: ${formatRune(r)}`);
  }

  private parseRightDelim(): void {
    this.pos += 1;
    this.consumeText();
    this.parseText(this.root);
  }

  private parseIdentifier(cur: ListNode): void {
    while (!isTerminator(this.next()));
    this.backup();
    const value = this.consumeText();
    if (value === 'true' || value === 'false')
      cur.nodes.push({ type: 'bool', value: value === 'true' });
    else cur.nodes.push({ type: 'identifier', name: value });
    this.parseInsideAction(cur);
  }

  private parseRecursive(cur: ListNode): void {
    if (cur.nodes.at(-1)?.type === 'recursive')
      throw new Error('invalid multiple recursive descent');
    this.pos += 2;
    this.consumeText();
    cur.nodes.push({ type: 'recursive' });
    if (isAlphaNumeric(this.peek())) {
      this.parseField(cur);
      return;
    }
    this.parseInsideAction(cur);
  }

  private parseNumber(cur: ListNode): void {
    const sign = this.peek();
    if (sign === 0x2b || sign === 0x2d) this.next();
    for (;;) {
      const r = this.next();
      if (r !== 0x2e && !isDigit(r)) {
        this.backup();
        break;
      }
    }
    const value = this.consumeText();
    const int = atoi(value);
    if (int !== undefined) cur.nodes.push({ type: 'int', value: int });
    else if (PARSE_FLOAT_RE.test(value)) cur.nodes.push({ type: 'float', value: Number(value) });
    else throw new Error(`cannot parse number ${value}`);
    this.parseInsideAction(cur);
  }

  private parseArray(cur: ListNode): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new Error('unterminated array');
      if (r === 0x5d) break;
    }
    let text = this.consumeText().slice(1, -1);
    if (text === '*') text = ':';

    const parts = text.split(',');
    if (parts.length > 1) {
      const lists = parts.map((part) => parseAction(`[${part.replace(/^ +| +$/g, '')}]`));
      cur.nodes.push({ type: 'union', lists });
      this.parseInsideAction(cur);
      return;
    }

    // `['a.b']` is read as `.a.b`: the real parser does not keep the dots of a quoted key.
    const dictKey = DICT_KEY_RE.exec(text);
    if (dictKey !== null) {
      cur.nodes.push(...parseAction(`.${dictKey[1] ?? ''}`).nodes);
      this.parseInsideAction(cur);
      return;
    }

    const slice = SLICE_RE.exec(text);
    if (slice === null) throw new Error(`invalid array index ${text}`);
    const groups = [slice[1] ?? '', slice[2] ?? '', slice[3] ?? ''];
    const params: [Param, Param, Param] = [
      { value: 0, known: false, derived: false },
      { value: 0, known: false, derived: false },
      { value: 0, known: false, derived: false },
    ];
    for (let i = 0; i < 3; i++) {
      const param = params[i] as Param;
      let group = groups[i] ?? '';
      if (group !== '') {
        if (i > 0) group = group.slice(1);
        if (i > 0 && group === '') {
          param.known = false;
        } else {
          const n = atoi(group);
          if (n === undefined) throw new Error(`array index ${group} is not a number`);
          param.known = true;
          param.value = n;
        }
      } else if (i === 1) {
        // `[n]` is the slice `[n:n+1]`.
        param.known = true;
        param.value = params[0].value + 1;
        param.derived = true;
      }
    }
    cur.nodes.push({ type: 'array', params });
    this.parseInsideAction(cur);
  }

  private parseFilter(cur: ListNode): void {
    this.pos += 3;
    this.consumeText();
    let begin = false;
    let end = false;
    let pair = 0;
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new Error('unterminated filter');
      if (r === 0x22 || r === 0x27) {
        if (!begin) {
          begin = true;
          pair = r;
          continue;
        }
        if (this.input[this.pos - 2] !== '\\' && r === pair) end = true;
      } else if (r === 0x29 && begin === end) {
        break;
      }
    }
    if (this.next() !== 0x5d) throw new Error('unclosed array expect ]');
    const text = this.consumeText().slice(0, -2);
    const match = FILTER_RE.exec(text);
    if (match === null) {
      cur.nodes.push({
        type: 'filter',
        left: parseAction(text),
        right: newList(),
        operator: 'exists',
      });
    } else {
      cur.nodes.push({
        type: 'filter',
        left: parseAction(match[1] ?? ''),
        right: parseAction(match[3] ?? ''),
        operator: match[2] ?? '',
      });
    }
    this.parseInsideAction(cur);
  }

  private parseQuote(cur: ListNode, quote: number): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new Error('unterminated quoted string');
      if (r === quote && this.input[this.pos - 2] !== '\\') break;
    }
    const value = this.consumeText();
    const text = unquoteExtend(value);
    if (text === undefined) throw new Error(`unquote string ${value} error invalid syntax`);
    cur.nodes.push({ type: 'text', text });
    this.parseInsideAction(cur);
  }

  private parseField(cur: ListNode): void {
    this.consumeText();
    while (this.advance());
    const value = this.consumeText();
    if (value === '*') cur.nodes.push({ type: 'wildcard' });
    else cur.nodes.push({ type: 'field', name: value.replaceAll('\\', '') });
    this.parseInsideAction(cur);
  }

  /** Scans to the next terminator that is not escaped with a backslash. */
  private advance(): boolean {
    const r = this.next();
    if (r === 0x5c) {
      this.next();
      return true;
    }
    if (isTerminator(r)) {
      this.backup();
      return false;
    }
    return true;
  }
}

/** Parses `{text}` and returns its action, as the original's `parseAction` does. */
function parseAction(text: string): ListNode {
  const root = new Parser().parse(`{${text}}`);
  const first = root.nodes[0];
  return first?.type === 'list' ? first : newList();
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
};

/** `UnquoteExtend`: Go's `strconv.Unquote` that also takes single-quoted strings. */
function unquoteExtend(s: string): string | undefined {
  if (s.length < 2) return undefined;
  const quote = s[0];
  if ((quote !== '"' && quote !== "'") || s.at(-1) !== quote) return undefined;
  const body = s.slice(1, -1);
  if (!body.includes('\\') && !body.includes(quote)) return body;
  let out = '';
  let i = 0;
  while (i < body.length) {
    const c = body[i] ?? '';
    if (c === quote) return undefined;
    if (c !== '\\') {
      out += c;
      i++;
      continue;
    }
    const e = body[i + 1];
    if (e === undefined) return undefined;
    i += 2;
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
    } else if (e === "'" || e === '"') {
      if (e !== quote) return undefined;
      out += e;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i, i + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) return undefined;
      const v = Number.parseInt(hex, 16);
      if (e !== 'x' && (v > 0x10ffff || (v >= 0xd800 && v < 0xe000))) return undefined;
      out += String.fromCodePoint(v);
      i += n;
    } else if (e >= '0' && e <= '7') {
      const oct = e + body.slice(i, i + 2);
      if (!/^[0-7]{3}$/.test(oct)) return undefined;
      const v = Number.parseInt(oct, 8);
      if (v > 255) return undefined;
      out += String.fromCharCode(v);
      i += 2;
    } else {
      return undefined;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof FloatLiteral);
const isNil = (v: unknown) => v === null || v === undefined;

/** The Go type a JSON value decodes to, for error messages. */
function goTypeName(v: unknown): string {
  if (Array.isArray(v)) return '[]interface {}';
  if (v instanceof FloatLiteral) return 'float64';
  if (isMap(v)) return 'map[string]interface {}';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  return '<nil>';
}

const utf8Bytes = (s: string) => [...Buffer.from(s, 'utf8')];

/** What the original iterates for `*` and `..`: map values by sorted key, slice elements, string bytes. */
function children(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (isMap(v)) {
    return Object.keys(v)
      .sort()
      .map((k) => v[k]);
  }
  if (typeof v === 'string') return utf8Bytes(v);
  return undefined;
}

type Kind = 'bool' | 'int' | 'float' | 'string';

function basicKind(v: unknown): Kind {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  if (v instanceof FloatLiteral) return 'float';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  throw new Error('invalid type for comparison');
}

const scalar = (v: unknown) =>
  (v instanceof FloatLiteral ? v.value : v) as number | string | boolean;

// The comparisons of the text/template fork client-go uses: kinds must match.
function equal(a: unknown, b: unknown): boolean {
  const ka = basicKind(a);
  if (ka !== basicKind(b)) throw new Error('incompatible types for comparison');
  return scalar(a) === scalar(b);
}

function less(a: unknown, b: unknown): boolean {
  const ka = basicKind(a);
  if (ka !== basicKind(b)) throw new Error('incompatible types for comparison');
  if (ka === 'bool') throw new Error('invalid type for comparison');
  return scalar(a) < scalar(b);
}

const lessEqual = (a: unknown, b: unknown) => less(a, b) || equal(a, b);

function compare(operator: string, left: unknown, right: unknown): boolean {
  switch (operator) {
    case '<':
      return less(left, right);
    case '>':
      return !lessEqual(left, right);
    case '==':
      return equal(left, right);
    case '!=':
      return !equal(left, right);
    case '<=':
      return lessEqual(left, right);
    case '>=':
      return !less(left, right);
    default:
      throw new Error(`unrecognized filter operator ${operator}`);
  }
}

function walk(input: unknown[], node: Node): unknown[] {
  switch (node.type) {
    case 'list':
      return evalList(input, node);
    case 'text':
      return [node.text];
    case 'field':
      return evalField(input, node.name);
    case 'array':
      return evalArray(input, node.params);
    case 'filter':
      return evalFilter(input, node);
    case 'int':
      return input.map(() => node.value);
    case 'float':
      return input.map(() => new FloatLiteral(node.value));
    case 'bool':
      return input.map(() => node.value);
    case 'wildcard':
      return input.flatMap((v) => (isNil(v) ? [] : (children(v) ?? [])));
    case 'recursive':
      return evalRecursive(input);
    case 'union':
      return node.lists.flatMap((list) => evalList(input, list));
    case 'identifier':
      // `range` and `end` only make sense for kubectl's -o jsonpath templates.
      throw new Error(`unrecognized identifier ${node.name}`);
  }
}

function evalList(input: unknown[], list: ListNode): unknown[] {
  let current = input;
  for (const node of list.nodes) current = walk(current, node);
  return current;
}

// Missing keys give no result rather than an error, as with the printer's AllowMissingKeys(true).
function evalField(input: unknown[], name: string): unknown[] {
  const results: unknown[] = [];
  for (const value of input) {
    if (isMap(value) && Object.hasOwn(value, name)) results.push(value[name]);
  }
  return results;
}

function evalArray(input: unknown[], nodeParams: [Param, Param, Param]): unknown[] {
  const result: unknown[] = [];
  for (const value of input) {
    if (isNil(value)) continue;
    if (!Array.isArray(value)) throw new Error(`${goTypeName(value)} is not array or slice`);
    const [p0, p1, p2] = nodeParams.map((p) => ({ ...p }));
    if (p0 === undefined || p1 === undefined || p2 === undefined) continue;
    const length = value.length;
    if (!p0.known) p0.value = 0;
    if (p0.value < 0) p0.value += length;
    if (!p1.known) p1.value = length;
    if (p1.value < 0 || (p1.value === 0 && p1.derived)) p1.value += length;
    if (p1.value === p0.value) return result;
    if (p0.value >= length || p0.value < 0) {
      throw new Error(`array index out of bounds: index ${p0.value}, length ${length}`);
    }
    if (p1.value > length || p1.value < 0) {
      throw new Error(`array index out of bounds: index ${p1.value - 1}, length ${length}`);
    }
    if (p0.value > p1.value) {
      throw new Error(`starting index ${p0.value} is greater than ending index ${p1.value}`);
    }
    let step = 1;
    if (p2.known) {
      if (p2.value <= 0) throw new Error('step must be > 0');
      step = p2.value;
    }
    for (let i = p0.value; i < p1.value; i += step) result.push(value[i]);
  }
  return result;
}

function evalRecursive(input: unknown[]): unknown[] {
  const result: unknown[] = [];
  for (const value of input) {
    if (isNil(value)) continue;
    const kids = children(value) ?? [];
    if (kids.length === 0) continue;
    result.push(value, ...evalRecursive(kids));
  }
  return result;
}

function evalFilter(
  input: unknown[],
  node: { left: ListNode; right: ListNode; operator: string },
): unknown[] {
  const results: unknown[] = [];
  for (const value of input) {
    if (!Array.isArray(value)) {
      throw new Error(`${goTypeName(value)} is not array or slice and cannot be filtered`);
    }
    for (const element of value) {
      let lefts: unknown[];
      try {
        lefts = evalList([element], node.left);
      } catch (err) {
        if (node.operator === 'exists') continue;
        throw err;
      }
      if (node.operator === 'exists') {
        if (lefts.length > 0) results.push(element);
        continue;
      }
      if (lefts.length === 0) continue;
      if (lefts.length > 1) throw new Error('can only compare one element at a time');
      const rights = evalList([element], node.right);
      if (rights.length === 0) continue;
      if (rights.length > 1) throw new Error('can only compare one element at a time');
      if (compare(node.operator, lefts[0], rights[0])) results.push(element);
    }
  }
  return results;
}

const unwrap = (v: unknown) => (v instanceof FloatLiteral ? v.value : v);

/**
 * Compiles a template exactly as `jsonpath.Parse` does: text, with `{...}` actions. The
 * function returns the results of each part (a text run or an action), as `FindResults` does.
 * Throws at compile time for a template the real parser refuses; the returned function throws
 * when evaluation fails (an index past the end, filtering something that is not a list...).
 */
export function compileJsonPathTemplate(template: string): (object: unknown) => unknown[][] {
  const root = new Parser().parse(template);
  return (object) => root.nodes.map((node) => walk([object], node).map(unwrap));
}

/**
 * Compiles a path such as `.status.conditions[?(@.type=="Ready")].status` and returns all its
 * results, in order. A path without braces is one action, the way the API server wraps a
 * printer column's `jsonPath` in `{...}`; a leading `$` is the root. Throws like
 * `compileJsonPathTemplate`.
 */
export function compileJsonPath(path: string): (object: unknown) => unknown[] {
  const find = compileJsonPathTemplate(path.trimStart().startsWith('{') ? path : `{${path}}`);
  return (object) => find(object).flat();
}

// ---------------------------------------------------------------------------------------------
// Printing one value as text, as `PrintResults` does for a string column.

/** Go's `%v` of a float64: one implementation, shared with the schema messages. */
export const formatGoFloat = goFloat;

/** `encoding/json.Marshal` of a decoded JSON value: keys sorted, HTML characters escaped. */
export function goJsonMarshal(value: unknown): string {
  if (value instanceof FloatLiteral) return JSON.stringify(value.value);
  if (Array.isArray(value)) return `[${value.map(goJsonMarshal).join(',')}]`;
  if (isMap(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${goJsonString(k)}:${goJsonMarshal(value[k])}`).join(',')}}`;
  }
  if (typeof value === 'string') return goJsonString(value);
  if (value === undefined) return 'null';
  return JSON.stringify(value);
}

const goJsonString = (s: string) =>
  JSON.stringify(s).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** The text `PrintResults` writes for one value: maps and lists as JSON, `null` as `<no value>`. */
export function printJsonPathValue(value: unknown): string {
  const v = unwrap(value);
  if (isNil(v)) return '<no value>';
  if (Array.isArray(v) || isMap(v)) return goJsonMarshal(v);
  if (typeof v === 'number') {
    if (value instanceof FloatLiteral || !Number.isInteger(v) || Math.abs(v) >= 2 ** 63) {
      return formatGoFloat(v);
    }
    return BigInt(v).toString();
  }
  return String(v);
}
