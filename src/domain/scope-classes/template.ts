// The per-scope template renderer of ScopeClass manifests (ADR 0019): a JSON value whose string
// values may hold `${ <CEL expression> }` placeholders (kro's form) is compiled once, then rendered
// for each scope with that scope's fields bound as CEL variables. It owns the placeholder syntax
// and the bounds; the CEL environment, the JSON <-> CEL value mapping and the cost meter are
// src/cel's. It knows nothing of Kubernetes or of what the manifests are.
import { type CelValue, isCelError, isCelList, isCelMap } from '@bufbuild/cel';
import {
  celString,
  celTypeName,
  compileCel,
  metered,
  type Shape,
  setKey,
  toCel,
  toJson,
  ValueProblem,
  variableNameProblem,
} from '../../cel/index.js';

/** A problem with a template, at a JSON path such as `resources[2].manifest.spec.replicas`. */
export interface TemplateProblem {
  readonly path: string;
  readonly message: string;
}

/** The variables an expression may name, as plain JSON values. */
export type TemplateVariables = Readonly<Record<string, unknown>>;

export type RenderResult = { ok: true; value: unknown } | { ok: false; problem: TemplateProblem };

export interface CompiledTemplate {
  /** The value with every placeholder evaluated; a problem names the path and what failed. */
  render(variables: TemplateVariables): RenderResult;
  /** How many placeholders it holds (0: render returns a deep copy of the input). */
  readonly placeholders: number;
}

/** The bounds a template and one render of it are held to (ADR 0019, "Bounds"). */
export interface TemplateLimits {
  /** Characters between `${` and its `}`. */
  readonly maxExpressionLength: number;
  /** Placeholders in one template. */
  readonly maxPlaceholders: number;
  /** Approximate JSON size of one rendered placeholder value (and of one interpolated string). */
  readonly maxValueBytes: number;
  /** Nesting depth of the template and of the variables. */
  readonly maxDepth: number;
  /** Values (scalars, lists, maps) in the variables of one render. */
  readonly maxVariableNodes: number;
  /**
   * Cost units one render may spend over all its placeholders: 1 per comprehension iteration and
   * per function call, plus 1 per 64 characters or elements a call reads or produces.
   */
  readonly maxCost: number;
}

export const DEFAULT_TEMPLATE_LIMITS: TemplateLimits = {
  maxExpressionLength: 1000,
  maxPlaceholders: 1000,
  maxValueBytes: 64 * 1024,
  maxDepth: 100,
  maxVariableNodes: 100_000,
  maxCost: 100_000,
};

/**
 * Parses and type-checks every placeholder of `value` (any JSON value) once. `variables` lists the
 * names an expression may use (e.g. ['scope', 'application', 'namespace']); an unknown name, a
 * syntax error, an unterminated `${`, an expression longer than the bound, a field `shapes`
 * says a variable lacks are problems at their path (all of them, not just the first). `path`
 * prefixes the reported paths.
 */
export function compileTemplate(
  value: unknown,
  path: string,
  variables: readonly string[],
  limits: TemplateLimits = DEFAULT_TEMPLATE_LIMITS,
  shapes: Readonly<Record<string, Shape>> = {},
): CompiledTemplate | { problems: TemplateProblem[] } {
  const compiler = new Compiler(new Set(variables), limits, shapes);
  for (const name of variables) {
    const problem = variableNameProblem(name);
    if (problem !== undefined) compiler.problems.push({ path, message: problem });
  }
  const node = compiler.node(value, path, 0);
  if (compiler.problems.length > 0) return { problems: compiler.problems };
  const count = compiler.placeholders;
  const declared = [...variables];
  return {
    placeholders: count,
    render: (input) => {
      try {
        return render(node, declared, input, limits, path);
      } catch (error) {
        // Nothing below is meant to throw; this keeps the promise that render never does.
        return { ok: false, problem: { path, message: `internal error: ${describe(error)}` } };
      }
    },
  };
}

/**
 * How a template's string value holds placeholders, and their expressions' source: `whole`
 * when the value is one placeholder (it renders to any JSON value), `embedded` when text
 * surrounds them (it renders a string), `none` for plain text (`$${` included).
 */
export function placeholdersOf(value: string): {
  readonly form: 'none' | 'whole' | 'embedded';
  readonly expressions: readonly string[];
} {
  if (!value.includes('${')) return { form: 'none', expressions: [] };
  const scanned = scan(value);
  // Compiling refuses it; until then it is read as what it cannot be typed as.
  if ('error' in scanned) return { form: 'whole', expressions: [] };
  const expressions = scanned.pieces.flatMap((piece) => ('expr' in piece ? [piece.expr] : []));
  if (expressions.length === 0) return { form: 'none', expressions };
  return { form: scanned.pieces.length === 1 ? 'whole' : 'embedded', expressions };
}

// ---------------------------------------------------------------------------------------------
// The placeholder syntax.

/** A piece of a string value: literal text, or an expression (its source text). */
type Piece = { readonly text: string } | { readonly expr: string };

/**
 * Splits a string into literal text and `${...}` expressions. `$${` is a literal `${`. The end of
 * an expression is the `}` that balances its `${`, counting braces outside CEL string literals
 * only, so `${ {'a': '}'}['a'] }` is one expression. kro's scanner (pkg/graph/parser/cel.go,
 * extractExpressions) knows only `"` literals and leaves an unterminated `${` as text; we follow
 * the CEL lexis (langdef.md "Syntax": quotes ' and ", triple quotes, r/R raw and b/B prefixes) and
 * report an unterminated `${`, which is far likelier a typo than intended text.
 */
function scan(source: string): { pieces: Piece[] } | { error: string } {
  const pieces: Piece[] = [];
  let text = '';
  let i = 0;
  while (i < source.length) {
    if (source.startsWith('$${', i)) {
      text += '${';
      i += 3;
      continue;
    }
    if (!source.startsWith('${', i)) {
      text += source[i];
      i += 1;
      continue;
    }
    const end = expressionEnd(source, i + 2);
    if (end === undefined)
      return { error: `unterminated placeholder: \`\${\` at character ${i} has no closing \`}\`` };
    if (text !== '') pieces.push({ text });
    text = '';
    pieces.push({ expr: source.slice(i + 2, end) });
    i = end + 1;
  }
  if (text !== '' || pieces.length === 0) pieces.push({ text });
  return { pieces };
}

/** The index of the `}` closing an expression that starts at `start`, skipping string literals. */
function expressionEnd(source: string, start: number): number | undefined {
  let depth = 1;
  let i = start;
  while (i < source.length) {
    const c = source[i];
    if (c === '"' || c === "'") {
      const end = literalEnd(source, i);
      if (end === undefined) return undefined;
      i = end;
      continue;
    }
    if (c === '{') depth += 1;
    else if (c === '}') {
      depth -= 1;
      if (depth === 0) return i;
    }
    i += 1;
  }
  return undefined;
}

/** The index just after the string literal whose opening quote is at `open`. */
function literalEnd(source: string, open: number): number | undefined {
  const quote = source[open] as string;
  // A raw literal (r'..', rb'..', br'..') has no escapes: langdef.md, "String and Bytes Values".
  let p = open - 1;
  let raw = false;
  while (p >= 0 && /[rRbB]/.test(source[p] as string)) {
    if (source[p] === 'r' || source[p] === 'R') raw = true;
    p -= 1;
  }
  if (p >= 0 && /[A-Za-z0-9_]/.test(source[p] as string)) raw = false; // part of an identifier
  const triple = source.startsWith(quote.repeat(3), open);
  const closing = triple ? quote.repeat(3) : quote;
  let i = open + closing.length;
  while (i < source.length) {
    if (!raw && source[i] === '\\') {
      i += 2;
      continue;
    }
    if (source.startsWith(closing, i)) return i + closing.length;
    if (!triple && (source[i] === '\n' || source[i] === '\r')) return undefined;
    i += 1;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Compiling.

type Evaluate = (bindings: Record<string, unknown>) => unknown;

type Node =
  | { readonly kind: 'literal'; readonly value: unknown }
  | { readonly kind: 'object'; readonly entries: readonly (readonly [string, Node])[] }
  | { readonly kind: 'array'; readonly items: readonly Node[] }
  | {
      readonly kind: 'whole';
      readonly path: string;
      readonly source: string;
      readonly evaluate: Evaluate;
    }
  | { readonly kind: 'embedded'; readonly path: string; readonly parts: readonly Part[] };

type Part = string | { readonly source: string; readonly evaluate: Evaluate };

class Compiler {
  readonly problems: TemplateProblem[] = [];
  placeholders = 0;

  constructor(
    private readonly variables: ReadonlySet<string>,
    private readonly limits: TemplateLimits,
    private readonly shapes: Readonly<Record<string, Shape>>,
  ) {}

  node(value: unknown, path: string, depth: number): Node {
    if (depth > this.limits.maxDepth) {
      this.problems.push({ path, message: `nested deeper than ${this.limits.maxDepth} levels` });
      return { kind: 'literal', value: null };
    }
    if (typeof value === 'string') return this.string(value, path);
    if (Array.isArray(value)) {
      const items = value.map((item, i) => this.node(item, `${path}[${i}]`, depth + 1));
      return items.every((item) => item.kind === 'literal')
        ? { kind: 'literal', value }
        : { kind: 'array', items };
    }
    if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value).map(
        ([key, item]) => [key, this.node(item, joinPath(path, key), depth + 1)] as const,
      );
      return entries.every(([, item]) => item.kind === 'literal')
        ? { kind: 'literal', value }
        : { kind: 'object', entries };
    }
    if (
      value === null ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value))
    ) {
      return { kind: 'literal', value };
    }
    this.problems.push({ path, message: `not a JSON value (${typeof value})` });
    return { kind: 'literal', value: null };
  }

  private string(value: string, path: string): Node {
    if (!value.includes('${')) return { kind: 'literal', value };
    const scanned = scan(value);
    if ('error' in scanned) {
      this.problems.push({ path, message: scanned.error });
      return { kind: 'literal', value: null };
    }
    const { pieces } = scanned;
    if (pieces.every((piece) => 'text' in piece))
      return { kind: 'literal', value: pieces.map(textOf).join('') };
    const first = pieces[0];
    if (pieces.length === 1 && first !== undefined && 'expr' in first) {
      return {
        kind: 'whole',
        path,
        source: first.expr,
        evaluate: this.expression(first.expr, path),
      };
    }
    const parts = pieces.map(
      (piece): Part =>
        'text' in piece
          ? piece.text
          : { source: piece.expr, evaluate: this.expression(piece.expr, path) },
    );
    return { kind: 'embedded', path, parts };
  }

  private expression(source: string, path: string): Evaluate {
    this.placeholders += 1;
    const failed: Evaluate = () => null;
    const where = `in ${quoteSource(source)}`;
    if (this.placeholders === this.limits.maxPlaceholders + 1) {
      this.problems.push({
        path,
        message: `more than ${this.limits.maxPlaceholders} placeholders in one template`,
      });
    }
    if (source.length > this.limits.maxExpressionLength) {
      this.problems.push({
        path,
        message: `${where}: expression is ${source.length} characters long, more than ${this.limits.maxExpressionLength}`,
      });
      return failed;
    }
    if (source.trim() === '') {
      this.problems.push({ path, message: 'empty placeholder `${}`' });
      return failed;
    }
    const compiled = compileCel(source, [...this.variables], this.shapes);
    if (!compiled.ok) {
      for (const message of compiled.errors)
        this.problems.push({ path, message: `${where}: ${message}` });
      return failed;
    }
    return compiled.program;
  }
}

function textOf(piece: Piece): string {
  return 'text' in piece ? piece.text : '';
}

/** `.key`, or `["key"]` when the key is not a plain identifier (kro's joinPathAndFieldName does the same for dots). */
function joinPath(path: string, key: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

function quoteSource(source: string): string {
  const short = source.length > 80 ? `${source.slice(0, 77)}...` : source;
  return `\${${short}}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------------------------------------
// Rendering.

class RenderProblem {
  constructor(
    readonly path: string,
    readonly message: string,
  ) {}
}

function render(
  node: Node,
  declared: readonly string[],
  input: TemplateVariables,
  limits: TemplateLimits,
  root: string,
): RenderResult {
  if (node.kind === 'literal') return { ok: true, value: copy(node.value) };
  const bindings: Record<string, unknown> = {};
  const budget = { nodes: limits.maxVariableNodes };
  for (const name of declared) {
    if (!Object.hasOwn(input, name)) {
      return { ok: false, problem: { path: root, message: `variable '${name}' was not provided` } };
    }
    const converted = toCel(input[name], limits.maxDepth, budget);
    if (converted instanceof ValueProblem) {
      return {
        ok: false,
        problem: { path: root, message: `variable '${name}': ${converted.message}` },
      };
    }
    bindings[name] = converted;
  }
  const { result: value } = metered(limits.maxCost, () => renderNode(node, bindings, limits));
  return value instanceof RenderProblem
    ? { ok: false, problem: { path: value.path, message: value.message } }
    : { ok: true, value };
}

function renderNode(
  node: Node,
  bindings: Record<string, unknown>,
  limits: TemplateLimits,
): unknown {
  switch (node.kind) {
    case 'literal':
      return copy(node.value);
    case 'array': {
      const out: unknown[] = [];
      for (const item of node.items) {
        const value = renderNode(item, bindings, limits);
        if (value instanceof RenderProblem) return value;
        out.push(value);
      }
      return out;
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, item] of node.entries) {
        const value = renderNode(item, bindings, limits);
        if (value instanceof RenderProblem) return value;
        setKey(out, key, value);
      }
      return out;
    }
    case 'whole': {
      const result = evaluate(node.evaluate, bindings, node.path, node.source);
      if (result instanceof RenderProblem) return result;
      const budget = { bytes: limits.maxValueBytes };
      const value = toJson(result, limits.maxDepth, budget);
      return typeof value === 'string'
        ? new RenderProblem(node.path, `in ${quoteSource(node.source)}: ${value}`)
        : value.json;
    }
    case 'embedded': {
      let out = '';
      for (const part of node.parts) {
        if (typeof part === 'string') out += part;
        else {
          const result = evaluate(part.evaluate, bindings, node.path, part.source);
          if (result instanceof RenderProblem) return result;
          const text = embeddable(result);
          if (text instanceof RenderProblem)
            return new RenderProblem(node.path, `in ${quoteSource(part.source)}: ${text.message}`);
          out += text;
        }
        if (out.length > limits.maxValueBytes) {
          return new RenderProblem(
            node.path,
            `rendered string is longer than ${limits.maxValueBytes} characters`,
          );
        }
      }
      return out;
    }
  }
}

function evaluate(
  program: Evaluate,
  bindings: Record<string, unknown>,
  path: string,
  source: string,
): CelValue | RenderProblem {
  const result = program(bindings) as CelValue;
  if (isCelError(result))
    return new RenderProblem(path, `in ${quoteSource(source)}: ${celMessage(result.message)}`);
  return result;
}

/** cel-go's wording for a missing map key ("no such key: region"), which CEL users know. */
function celMessage(message: string): string {
  return message.replace(/^field not found: /, 'no such key: ');
}

/** A scalar result converted as CEL's `string()` does, for a placeholder inside a longer string. */
function embeddable(value: CelValue): string | RenderProblem {
  if (typeof value === 'string') return value;
  if (isCelList(value) || isCelMap(value)) {
    return new RenderProblem(
      '',
      `a ${isCelList(value) ? 'list' : 'map'} cannot be embedded in a string (only scalars can; use join() or a placeholder that is the whole value)`,
    );
  }
  if (value === null) return new RenderProblem('', 'null cannot be embedded in a string');
  const text = celString(value);
  return text ?? new RenderProblem('', `a value of type ${celTypeName(value)} has no string form`);
}

/** A deep copy of a JSON value; faster than structuredClone for plain data. */
function copy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copy);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      setKey(out, key, copy(item));
    }
    return out;
  }
  return value;
}
