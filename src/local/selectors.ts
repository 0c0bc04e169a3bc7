// Label and field selectors: parsed, matched and refused (400) as the real API server does.

import { badRequest, type KubeObject } from './types.js';

export type LabelMatcher = (labels: Record<string, string> | undefined) => boolean;
export type FieldMatcher = (object: KubeObject) => boolean;

// ---------------------------------------------------------------------------------------------
// Validation messages (apimachinery pkg/util/validation, as of 1.32)

const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_ERR =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

const qualifiedNameRe = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const labelValueRe = new RegExp(`^${LABEL_VALUE_FMT}$`);
const dns1123SubdomainRe = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);

// Go measures these limits in bytes, not UTF-16 units.
const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');
const maxLenError = (n: number) => `must be no more than ${n} characters`;

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  // The doubled space after each example's comma is in the original and shows in its messages.
  const shown = examples.map((e) => `'${e}', `).join(' or ');
  return `${msg} (e.g. ${shown}regex used for validation is '${fmt}')`;
}

function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!dns1123SubdomainRe.test(value)) {
    errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  }
  return errs;
}

/** The errors of `IsQualifiedName` (a label key); empty when the key is valid. */
export function labelKeyErrors(key: string): string[] {
  const errs: string[] = [];
  const parts = key.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!qualifiedNameRe.test(name)) {
    errs.push(
      `name part ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`,
    );
  }
  return errs;
}

/** The errors of `IsValidLabelValue`; empty when the value is valid. */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!labelValueRe.test(value)) {
    errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

/** Go's `%q` for the printable-ASCII-and-Unicode strings selectors carry. */
function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** A `field.Invalid` error as `field.Error.Error()` prints it. */
const invalid = (path: string, value: string, detail: string) =>
  `${path}: Invalid value: ${goQuote(value)}: ${detail}`;

/** `utilerrors.Aggregate.Error()`: one message alone, several de-duplicated inside brackets. */
function aggregate(messages: string[]): string | undefined {
  const unique = [...new Set(messages)];
  if (unique.length === 0) return undefined;
  if (unique.length === 1) return unique[0];
  return `[${unique.join(', ')}]`;
}

// ---------------------------------------------------------------------------------------------
// Label selectors: a port of the lexer and recursive-descent parser in pkg/labels/selector.go,
// kept token for token so that the same inputs fail with the same messages.

type Operator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

type Token =
  | 'error'
  | 'eos'
  | ')'
  | ','
  | '!'
  | '=='
  | '='
  | '>'
  | 'identifier'
  | 'in'
  | '<'
  | '!='
  | 'notin'
  | '(';

const STRING_TO_TOKEN: Record<string, Token> = {
  ')': ')',
  ',': ',',
  '!': '!',
  '==': '==',
  '=': '=',
  '>': '>',
  in: 'in',
  '<': '<',
  '!=': '!=',
  notin: 'notin',
  '(': '(',
};
const tokenOf = (s: string): Token | undefined =>
  Object.hasOwn(STRING_TO_TOKEN, s) ? STRING_TO_TOKEN[s] : undefined;

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

const isWhitespace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecialSymbol = (ch: string) => ch.length === 1 && '=!(),><'.includes(ch);
// Go's lexer reads bytes and uses NUL for "no more input"; a NUL in the text ends it too.
const EOS = '\0';

class Lexer {
  private pos = 0;
  constructor(private readonly s: string) {}

  private read(): string {
    return this.pos < this.s.length ? (this.s[this.pos++] ?? EOS) : EOS;
  }

  private unread(): void {
    this.pos--;
  }

  private scanIdOrKeyword(): [Token, string] {
    let buffer = '';
    for (;;) {
      const ch = this.read();
      if (ch === EOS) break;
      if (isSpecialSymbol(ch) || isWhitespace(ch)) {
        this.unread();
        break;
      }
      buffer += ch;
    }
    return [tokenOf(buffer) ?? 'identifier', buffer];
  }

  private scanSpecialSymbol(): [Token, string] {
    let last: [Token, string] | undefined;
    let buffer = '';
    for (;;) {
      const ch = this.read();
      if (ch === EOS) break;
      if (!isSpecialSymbol(ch)) {
        this.unread();
        break;
      }
      buffer += ch;
      const token = tokenOf(buffer);
      if (token !== undefined) {
        last = [token, buffer];
      } else if (last !== undefined) {
        this.unread();
        break;
      }
    }
    return last ?? ['error', `error expected: keyword found '${buffer}'`];
  }

  lex(): [Token, string] {
    let ch = this.read();
    while (isWhitespace(ch)) ch = this.read();
    if (ch === EOS) return ['eos', ''];
    this.unread();
    return isSpecialSymbol(ch) ? this.scanSpecialSymbol() : this.scanIdOrKeyword();
  }
}

type Context = 'keyAndOperator' | 'values';

class LabelParser {
  private readonly items: Array<[Token, string]> = [];
  private position = 0;

  constructor(text: string) {
    const lexer = new Lexer(text);
    for (;;) {
      const item = lexer.lex();
      this.items.push(item);
      if (item[0] === 'eos') break;
    }
  }

  // In a value position the words `in` and `notin` are plain identifiers: `x in (in)`.
  private lookahead(context: Context): [Token, string] {
    const [tok, lit] = this.items[this.position] ?? ['eos', ''];
    return context === 'values' && (tok === 'in' || tok === 'notin')
      ? ['identifier', lit]
      : [tok, lit];
  }

  private consume(context: Context): [Token, string] {
    const item = this.lookahead(context);
    this.position++;
    return item;
  }

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    for (;;) {
      const [tok, lit] = this.lookahead('values');
      if (tok === 'eos') return requirements;
      if (tok !== 'identifier' && tok !== '!') {
        throw new Error(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
      let requirement: Requirement;
      try {
        requirement = this.parseRequirement();
      } catch (err) {
        throw new Error(`unable to parse requirement: ${(err as Error).message}`);
      }
      requirements.push(requirement);
      const [t, l] = this.consume('values');
      if (t === 'eos') return requirements;
      if (t !== ',') throw new Error(`found '${l}', expected: ',' or 'end of string'`);
      const [t2, l2] = this.lookahead('values');
      if (t2 !== 'identifier' && t2 !== '!') {
        throw new Error(`found '${l2}', expected: identifier after ','`);
      }
    }
  }

  private parseRequirement(): Requirement {
    const [key, inferred] = this.parseKeyAndInferOperator();
    if (inferred === 'exists' || inferred === '!') return newRequirement(key, inferred, []);
    const operator = this.parseOperator();
    const values =
      operator === 'in' || operator === 'notin' ? this.parseValues() : this.parseExactValue();
    // sets.String.List() hands NewRequirement the values sorted and de-duplicated.
    return newRequirement(key, operator, [...values].sort());
  }

  private parseKeyAndInferOperator(): [string, Operator | undefined] {
    let operator: Operator | undefined;
    let [tok, literal] = this.consume('values');
    if (tok === '!') {
      operator = '!';
      [tok, literal] = this.consume('values');
    }
    if (tok !== 'identifier') throw new Error(`found '${literal}', expected: identifier`);
    const errs = labelKeyErrors(literal);
    if (errs.length > 0) throw new Error(invalid('<nil>', literal, errs.join('; ')));
    const [next] = this.lookahead('values');
    if ((next === 'eos' || next === ',') && operator !== '!') operator = 'exists';
    return [literal, operator];
  }

  private parseOperator(): Operator {
    const [tok, lit] = this.consume('keyAndOperator');
    switch (tok) {
      case 'in':
        return 'in';
      case '=':
        return '=';
      case '==':
        return '==';
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      case 'notin':
        return 'notin';
      case '!=':
        return '!=';
      default:
        throw new Error(`found '${lit}', expected: ${BINARY_OPERATORS}`);
    }
  }

  private parseValues(): Set<string> {
    const [tok, lit] = this.consume('values');
    if (tok !== '(') throw new Error(`found '${lit}' expected: '('`);
    const [next, nextLit] = this.lookahead('values');
    if (next === 'identifier' || next === ',') {
      const values = this.parseIdentifiersList();
      // The original reports the literal it looked at before the list, not the one it found.
      if (this.consume('values')[0] !== ')') throw new Error(`found '${nextLit}', expected: ')'`);
      return values;
    }
    if (next === ')') {
      this.consume('values');
      return new Set(['']);
    }
    throw new Error(`found '${nextLit}', expected: ',', ')' or identifier`);
  }

  private parseIdentifiersList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const [tok, lit] = this.consume('values');
      if (tok === 'identifier') {
        values.add(lit);
        const [tok2, lit2] = this.lookahead('values');
        if (tok2 === ',') continue;
        if (tok2 === ')') return values;
        throw new Error(`found '${lit2}', expected: ',' or ')'`);
      }
      if (tok !== ',') throw new Error(`found '${lit}', expected: ',', or identifier`);
      // A comma with nothing before or after it stands for the empty value.
      if (values.size === 0) values.add('');
      const [tok2] = this.lookahead('values');
      if (tok2 === ')') {
        values.add('');
        return values;
      }
      if (tok2 === ',') values.add('');
    }
  }

  private parseExactValue(): Set<string> {
    const [next] = this.lookahead('values');
    if (next === 'eos' || next === ',') return new Set(['']);
    const [tok, lit] = this.consume('values');
    if (tok === 'identifier') return new Set([lit]);
    throw new Error(`found '${lit}', expected: identifier`);
  }
}

const INT64_RE = /^[+-]?[0-9]+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go's `strconv.ParseInt(s, 10, 64)`. */
function parseInt64(s: string): bigint | undefined {
  if (!INT64_RE.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

/** `labels.NewRequirement`: every rule broken is reported, in the original's order. */
function newRequirement(key: string, operator: Operator, values: string[]): Requirement {
  const errs: string[] = [];
  const keyErrs = labelKeyErrors(key);
  if (keyErrs.length > 0) errs.push(invalid('key', key, keyErrs.join('; ')));
  const valuesPath = (i: number) => `values[${i}]`;
  if (operator === 'gt' || operator === 'lt') {
    values.forEach((v, i) => {
      if (parseInt64(v) === undefined) {
        errs.push(
          invalid(valuesPath(i), v, "for 'Gt', 'Lt' operators, the value must be an integer"),
        );
      }
    });
  }
  values.forEach((v, i) => {
    const valueErrs = labelValueErrors(v);
    if (valueErrs.length > 0)
      errs.push(invalid(`${valuesPath(i)}[${key}]`, v, valueErrs.join('; ')));
  });
  const message = aggregate(errs);
  if (message !== undefined) throw new Error(message);
  return { key, operator, values };
}

function matches(requirement: Requirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, requirement.key);
  const value = has ? labels[requirement.key] : undefined;
  switch (requirement.operator) {
    case 'in':
    case '=':
    case '==':
      return value !== undefined && requirement.values.includes(value);
    case 'notin':
    case '!=':
      return value === undefined || !requirement.values.includes(value);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      const actual = value === undefined ? undefined : parseInt64(value);
      const wanted = parseInt64(requirement.values[0] ?? '');
      if (actual === undefined || wanted === undefined) return false;
      return requirement.operator === 'gt' ? actual > wanted : actual < wanted;
    }
  }
}

/**
 * Parses a label selector (`labelSelector=` of a list or watch). The empty selector matches
 * everything. A selector the API server would refuse throws a 400 `ApiError` with its message.
 */
export function parseLabelSelector(text: string): LabelMatcher {
  let requirements: Requirement[];
  try {
    requirements = new LabelParser(text).parse();
  } catch (err) {
    throw badRequest((err as Error).message);
  }
  return (labels) => {
    const set = labels ?? {};
    return requirements.every((r) => matches(r, set));
  };
}

// ---------------------------------------------------------------------------------------------
// Field selectors: pkg/fields/selector.go, then the API server's field label conversion.

interface FieldTerm {
  field: string;
  value: string;
  negated: boolean;
}

/** Splits on commas that are not escaped; the backslashes stay for the value to unescape. */
function splitTerms(selector: string): string[] {
  if (selector.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

// `==` is tried before `=` so that `a==b` does not leave `=b` as the value.
const TERM_OPERATORS = ['!=', '==', '='] as const;

function splitTerm(term: string): [string, string, string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw new Error(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      inSlash = false;
    } else if (c === '\\') {
      inSlash = true;
    } else if (c === ',' || c === '=') {
      // Go prints the rune with %v, which is its code point.
      throw new Error(
        `invalid field selector: unescaped character in value: ${c.codePointAt(0) ?? 0}`,
      );
    } else {
      out += c;
    }
  }
  if (inSlash) throw new Error('invalid field selector: invalid escape sequence: \\');
  return out;
}

export interface FieldSelectorOptions {
  /**
   * A cluster-scoped custom resource does not support `metadata.namespace` (the CRD handler's
   * field label conversion refuses it); built-in kinds and namespaced resources do.
   */
  clusterScoped?: boolean;
  /**
   * A built-in kind that registers no field label conversion (ConfigMap, ServiceAccount...):
   * an unknown label gets runtime.DefaultMetaV1FieldSelectorConversion's words.
   */
  defaultConversion?: boolean;
}

/**
 * Parses a field selector (`fieldSelector=`): `field=value`, `field==value`, `field!=value`,
 * joined by commas. `metadata.name` and `metadata.namespace` are always supported; a resource
 * adds its own with `extraFields`. A field the object lacks reads as the empty string, as the
 * server's field sets do. Anything else is a 400 with the server's message.
 */
export function parseFieldSelector(
  text: string,
  extraFields?: Record<string, (o: KubeObject) => string | undefined>,
  options: FieldSelectorOptions = {},
): FieldMatcher {
  const terms: FieldTerm[] = [];
  try {
    // Sorted like the original, so that the first error reported is the same one.
    for (const part of splitTerms(text).sort()) {
      if (part === '') continue;
      const split = splitTerm(part);
      if (split === undefined) {
        throw new Error(`invalid selector: '${text}'; can't understand '${part}'`);
      }
      const [field, op, rhs] = split;
      terms.push({ field, value: unescapeValue(rhs), negated: op === '!=' });
    }
  } catch (err) {
    throw badRequest((err as Error).message);
  }

  const getters = terms.map((term) => {
    const getter = fieldGetter(term.field, extraFields, options);
    if (getter === undefined) {
      throw badRequest(
        options.defaultConversion === true
          ? `${JSON.stringify(term.field)} is not a known field selector: only "metadata.name", "metadata.namespace"`
          : `field label not supported: ${term.field}`,
      );
    }
    return getter;
  });
  return (object) =>
    terms.every((term, i) => {
      const actual = getters[i]?.(object) ?? '';
      return term.negated ? actual !== term.value : actual === term.value;
    });
}

/** Field values of an object by field label: a `fields.Set` of `GetAttrs`, one getter a field. */
type FieldGetters = Readonly<Record<string, (object: KubeObject) => string | undefined>>;

/**
 * The fields of `fields` under the labels of another API version of the kind. kube-apiserver
 * converts each label of a versioned field selector into the internal object's
 * (`scheme.AddFieldLabelConversionFunc`; any other label is "field label not supported") and
 * matches the internal object, so a label reads what the internal object holds, whatever that
 * version calls it or shows (events.k8s.io's `source` is `source.component`, or the reporting
 * controller when that is empty). `labels` maps each label to the field of `fields` it reads;
 * `internal` presents an object of either version as `fields` reads it, once per object however
 * many terms read it.
 */
export function convertedFieldLabels(
  fields: FieldGetters,
  labels: Readonly<Record<string, string>>,
  internal: (object: KubeObject) => KubeObject,
): FieldGetters {
  const seen = new WeakMap<KubeObject, KubeObject>();
  const internalOf = (object: KubeObject) => {
    let found = seen.get(object);
    if (found === undefined) {
      found = internal(object);
      seen.set(object, found);
    }
    return found;
  };
  const out: Record<string, (object: KubeObject) => string | undefined> = {};
  for (const [label, field] of Object.entries(labels)) {
    const getter = fields[field];
    if (getter !== undefined) out[label] = (object) => getter(internalOf(object));
  }
  return out;
}

function fieldGetter(
  field: string,
  extraFields: Record<string, (o: KubeObject) => string | undefined> | undefined,
  options: FieldSelectorOptions,
): ((o: KubeObject) => string | undefined) | undefined {
  if (field === 'metadata.name') return (o) => o.metadata.name;
  if (field === 'metadata.namespace' && !options.clusterScoped) return (o) => o.metadata.namespace;
  if (extraFields !== undefined && Object.hasOwn(extraFields, field)) return extraFields[field];
  return undefined;
}
