// The x-kubernetes-validations (CEL) rules of a CRD version's schema, compiled once and evaluated
// on each write of a custom resource as apiextensions-apiserver does
// (pkg/apiserver/schema/cel/validation.go, Validator.validate and validateExpressions): `self` is
// the value at the rule's node, `oldSelf` its old value on an update where the path correlates
// (object properties, map keys, map-list items by key); a rule naming oldSelf is skipped when there
// is none. A failed rule is a field error at the node (or at its `fieldPath`), worded by `reason`,
// its detail the messageExpression's value, else `message`, else `failed rule: <rule>`. Errors of
// rules without oldSelf on a value an update leaves unchanged are ratcheted (CRDValidationRatcheting,
// GA since 1.30): not reported. Every rule runs under the per-call cost limit and all of them under
// one request budget (apis/cel/config.go: PerCallLimit, RuntimeCELCostBudget).
import type { CelValue } from '@bufbuild/cel';
import { isCelError } from '@bufbuild/cel';
import {
  type CelProgram,
  compileCel,
  metered,
  PER_CALL_LIMIT,
  RUNTIME_CEL_COST_BUDGET,
} from '../../cel/index.js';
import { deepEqual, isObject } from '../patch/util.js';
import { type CelNode, celNode, celValueOf } from './cel-values.js';
import {
  childPath,
  duplicate,
  type FieldIssue,
  forbidden,
  indexPath,
  invalid,
  keyPath,
  required,
} from './field-errors.js';

type Json = Record<string, unknown>;

interface Rule {
  readonly rule: string;
  readonly message: string;
  readonly messageExpression: string;
  readonly reason: string;
  readonly fieldPath: string;
  readonly program: CelProgram | undefined;
  readonly messageProgram: CelProgram | undefined;
  readonly usesOldSelf: boolean;
  readonly error: string | undefined;
}

interface Node {
  readonly type: string;
  readonly cel: CelNode;
  readonly rules: readonly Rule[];
  readonly properties: Map<string, Node> | undefined;
  readonly additional: Node | undefined;
  readonly items: Node | undefined;
  /** `x-kubernetes-list-type: map` keys: old items correlate to new ones by them. */
  readonly mapKeys: readonly string[] | undefined;
  /** `x-kubernetes-map-type`: only granular and atomic maps correlate (MapIsCorrelatable). */
  readonly mapCorrelates: boolean;
  /** Whether this node or one below holds a rule: the walk skips subtrees without. */
  readonly live: boolean;
}

export interface RuleOutcome {
  readonly issues: FieldIssue[];
  /** Ratcheted errors: kube-apiserver returns them as warnings. */
  readonly warnings: string[];
}

export interface CompiledRules {
  /** Checks `object` (decoded, pruned, defaulted), `old` on an update. */
  validate(object: unknown, old: unknown): RuleOutcome;
}

const VARIABLES = ['self', 'oldSelf'];

/** MaxEvaluatedMessageExpressionSizeBytes (apis/cel/config.go). */
const MAX_MESSAGE_BYTES = 5 * 1024;

/** The rules of a CRD version's openAPIV3Schema; undefined when it has none. */
export function compileRules(schema: Json): CompiledRules | undefined {
  const root = compileNode(schema, true);
  if (!root.live) return undefined;
  return {
    validate(object, old) {
      const run: Run = { budget: RUNTIME_CEL_COST_BUDGET, issues: [], warnings: [] };
      visit(root, object, old, '', run, old === undefined ? undefined : { equal: undefined });
      return { issues: run.issues, warnings: run.warnings };
    },
  };
}

/** Why one rule does not compile, as the CRD's validation words it; undefined when it does. */
export function ruleCompileError(source: string): string | undefined {
  const compiled = compileCel(source, VARIABLES);
  return compiled.ok ? undefined : `compilation failed: ${celIssues(compiled.errors)}`;
}

/** Why a messageExpression does not compile; undefined when it does. */
export function messageExpressionCompileError(source: string): string | undefined {
  const compiled = compileCel(source, VARIABLES);
  return compiled.ok
    ? undefined
    : `messageExpression compilation failed: ${celIssues(compiled.errors)}`;
}

/**
 * cel-go's issue list (common.Errors.ToDisplayString): one `ERROR: <input>:line:column: ...` per
 * problem. The checker's problems carry no position here (our check walks the parsed tree, which
 * keeps none), so they read `ERROR: <input>: undeclared reference to 'x' (in container '')`.
 */
function celIssues(errors: readonly string[]): string {
  return errors
    .map((e) => {
      if (e.startsWith('syntax error: '))
        return `ERROR: <input>:${e.slice('syntax error: '.length)}`;
      const unknown = /^unknown (?:variable|function) '([^']*)'/.exec(e);
      return unknown
        ? `ERROR: <input>: undeclared reference to '${unknown[1]}' (in container '')`
        : `ERROR: <input>: ${e}`;
    })
    .join('\n');
}

function compileRule(raw: unknown): Rule {
  const r = isObject(raw) ? raw : {};
  const text = (k: string) => (typeof r[k] === 'string' ? (r[k] as string) : '');
  const rule = text('rule');
  const compiled = rule.trim() === '' ? undefined : compileCel(rule, VARIABLES);
  const messageExpression = text('messageExpression');
  const messageCompiled =
    messageExpression.trim() === '' ? undefined : compileCel(messageExpression, VARIABLES);
  return {
    rule,
    message: text('message'),
    messageExpression,
    reason: text('reason'),
    fieldPath: text('fieldPath'),
    program: compiled?.ok ? compiled.program : undefined,
    messageProgram: messageCompiled?.ok ? messageCompiled.program : undefined,
    usesOldSelf: compiled?.ok === true && compiled.uses.has('oldSelf'),
    error: compiled !== undefined && !compiled.ok ? celIssues(compiled.errors) : undefined,
  };
}

function compileNode(raw: Json, resourceRoot: boolean): Node {
  const rules = Array.isArray(raw['x-kubernetes-validations'])
    ? raw['x-kubernetes-validations'].map(compileRule)
    : [];
  let properties: Map<string, Node> | undefined;
  if (isObject(raw.properties)) {
    properties = new Map();
    for (const [name, child] of Object.entries(raw.properties))
      if (isObject(child)) properties.set(name, compileNode(child, false));
  }
  const additional = isObject(raw.additionalProperties)
    ? compileNode(raw.additionalProperties, false)
    : undefined;
  const items = isObject(raw.items) ? compileNode(raw.items, false) : undefined;
  const listType = raw['x-kubernetes-list-type'];
  const keys = raw['x-kubernetes-list-map-keys'];
  const mapType = raw['x-kubernetes-map-type'];
  const live =
    rules.length > 0 ||
    (properties !== undefined && [...properties.values()].some((p) => p.live)) ||
    additional?.live === true ||
    items?.live === true;
  return {
    type: typeof raw.type === 'string' ? raw.type : '',
    cel: celNode(raw, resourceRoot),
    rules,
    properties,
    additional,
    items,
    mapKeys:
      listType === 'map' && Array.isArray(keys)
        ? keys.filter((k): k is string => typeof k === 'string')
        : undefined,
    mapCorrelates: mapType === undefined || mapType === 'granular' || mapType === 'atomic',
    live,
  };
}

// ---------------------------------------------------------------------------------------------
// Evaluating.

interface Run {
  /** What is left of RuntimeCELCostBudget; below 0, nothing more is evaluated. */
  budget: number;
  issues: FieldIssue[];
  warnings: string[];
}

/**
 * The ratcheting state of a node on an update (ratchetingOptions): `equal` caches whether the
 * value equals its correlated old value. Undefined on a create.
 */
interface Correlation {
  equal: boolean | undefined;
}

function visit(
  node: Node,
  value: unknown,
  old: unknown,
  path: string,
  run: Run,
  correlation: Correlation | undefined,
): void {
  if (value === null || value === undefined || run.budget < 0 || !node.live) return;
  // An uncorrelatable node ratchets by its nearest correlatable ancestor's equality.
  const mine =
    correlation === undefined
      ? undefined
      : old === undefined
        ? correlation
        : { equal: undefined as boolean | undefined };
  const ratchets = () => {
    if (mine === undefined) return false;
    if (mine.equal === undefined) mine.equal = deepEqual(value, old);
    return mine.equal;
  };
  if (node.rules.length > 0) evaluate(node, value, old, path, run, ratchets);
  if (run.budget < 0) return;
  if (Array.isArray(value)) {
    if (!node.items) return;
    const olds = node.mapKeys && Array.isArray(old) ? byKeys(old, node.mapKeys) : undefined;
    for (let i = 0; i < value.length; i += 1) {
      const item = value[i];
      const oldItem = olds && node.mapKeys ? olds.get(keyOf(item, node.mapKeys)) : undefined;
      visit(node.items, item, oldItem, indexPath(path, i), run, mine);
      if (run.budget < 0) return;
    }
    return;
  }
  if (!isObject(value)) return;
  const oldMap = isObject(old) && node.mapCorrelates ? old : undefined;
  for (const key of Object.keys(value)) {
    const prop = node.properties?.get(key);
    const child = prop ?? node.additional;
    if (child === undefined) continue;
    const at = prop ? childPath(path, key) : keyPath(path, key);
    visit(child, value[key], oldMap?.[key], at, run, mine);
    if (run.budget < 0) return;
  }
}

function evaluate(
  node: Node,
  value: unknown,
  old: unknown,
  path: string,
  run: Run,
  ratchets: () => boolean,
): void {
  const field = path === '' ? '<nil>' : path;
  const typeInvalid = (detail: string) => invalid(field, node.type, detail);
  if (run.budget <= 0) {
    run.issues.push(
      typeInvalid(
        'validation failed due to running out of cost budget, no further validation rules will be run',
      ),
    );
    run.budget = -1;
    return;
  }
  let self: unknown;
  let oldSelf: unknown;
  for (const rule of node.rules) {
    if (rule.error !== undefined) {
      run.issues.push(typeInvalid(`rule compile error: compilation failed: ${rule.error}`));
      continue;
    }
    if (rule.program === undefined) continue;
    // Transition rules run only where an old value correlates (optionalOldSelf needs CEL's
    // optional types, which @bufbuild/cel 0.6 has not: such rules are treated the same).
    if (rule.usesOldSelf && old === undefined) continue;
    self ??= celValueOf(value, node.cel);
    if (rule.usesOldSelf) oldSelf ??= celValueOf(old, node.cel);
    const bindings: Record<string, unknown> = rule.usesOldSelf ? { self, oldSelf } : { self };
    const program = rule.program;
    const limit = Math.min(PER_CALL_LIMIT, run.budget);
    const outcome = metered(limit, () => program(bindings));
    const ruleText = ruleErrorString(rule);
    if (outcome.exceeded) {
      run.issues.push(
        typeInvalid(
          limit < PER_CALL_LIMIT
            ? 'validation failed due to running out of cost budget, no further validation rules will be run'
            : `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText}`,
        ),
      );
      run.budget = -1;
      return;
    }
    run.budget -= outcome.cost;
    const result = outcome.result;
    if (isCelError(result)) {
      const message = celMessage(result.message);
      run.issues.push(
        typeInvalid(
          message.startsWith('no such overload')
            ? `'${message}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText}`
            : `${message} evaluating rule: ${ruleText}`,
        ),
      );
      continue;
    }
    if (result === true) continue;
    const at =
      rule.fieldPath === '' ? field : childPath(path, normalizeFieldPath(rule.fieldPath, node));
    const report = (issue: FieldIssue) => {
      if (!rule.usesOldSelf && ratchets()) run.warnings.push(`${issue.field}: ${issue.message}`);
      else run.issues.push(issue);
    };
    let detail: string | undefined;
    if (rule.messageProgram !== undefined) {
      const message = evaluateMessage(rule, bindings, run);
      if ('stop' in message) {
        report(invalid(at, node.type, message.stop));
        run.budget = -1;
        return;
      }
      detail = message.detail;
    }
    detail ??= rule.message === '' ? `failed rule: ${ruleText}` : rule.message.trim();
    const shown = node.type === 'object' || node.type === 'array' ? OMIT : value;
    report(fieldErrorForReason(at, shown, detail, rule.reason));
  }
}

function evaluateMessage(
  rule: Rule,
  bindings: Record<string, unknown>,
  run: Run,
): { detail: string | undefined } | { stop: string } {
  const program = rule.messageProgram as CelProgram;
  const limit = Math.min(PER_CALL_LIMIT, run.budget);
  const outcome = metered(limit, () => program(bindings));
  if (outcome.exceeded) {
    return {
      stop:
        limit < PER_CALL_LIMIT
          ? 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run'
          : `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(rule.messageExpression)}`,
    };
  }
  run.budget -= outcome.cost;
  const result: CelValue = outcome.result;
  // Failures below fall back to `message` (kube logs them at V(2) only).
  if (typeof result !== 'string') return { detail: undefined };
  const trimmed = result.trim();
  if (trimmed === '' || /\n/.test(trimmed) || Buffer.byteLength(trimmed) > MAX_MESSAGE_BYTES)
    return { detail: undefined };
  return { detail: trimmed };
}

/** field.OmitValueType: the error shows no value (objects and arrays). */
const OMIT = Symbol('omit');

function fieldErrorForReason(
  field: string,
  value: unknown,
  detail: string,
  reason: string,
): FieldIssue {
  switch (reason) {
    case 'FieldValueForbidden':
      return forbidden(field, detail);
    case 'FieldValueRequired':
      return required(field, detail);
    case 'FieldValueDuplicate':
      return value === OMIT
        ? { field, reason: 'FieldValueDuplicate', message: 'Duplicate value' }
        : duplicate(field, value);
    default:
      return value === OMIT
        ? { field, reason: 'FieldValueInvalid', message: `Invalid value: ${detail}` }
        : invalid(field, value, detail);
  }
}

function ruleErrorString(rule: Rule): string {
  return rule.message.length > 0 ? rule.message.trim() : rule.rule.trim();
}

/** cel-go's wording for a missing map key or field ("no such key: region"). */
function celMessage(message: string): string {
  return message.replace(/^field not found: /, 'no such key: ');
}

/**
 * A rule's fieldPath (`.spec.x`, `.m['key']`) as field.Path prints it under the node
 * (ValidFieldPath): a property by `.name`, a key of a map by `[key]`. The CRD's validation has
 * checked it already.
 */
function normalizeFieldPath(fieldPath: string, node: Node): string {
  const tokens = fieldPath.match(/\.[^.[\]]+|\['(?:[^'\\]|\\.)*'\]/g) ?? [];
  let out = '';
  let at: Node | undefined = node;
  for (const token of tokens) {
    const name = token.startsWith('.')
      ? token.slice(1)
      : token.slice(2, -2).replace(/\\(.)/g, '$1');
    const prop: Node | undefined = at?.properties?.get(name);
    if (at?.properties !== undefined || prop !== undefined) {
      out = out === '' ? name : `${out}.${name}`;
      at = prop;
    } else {
      out = `${out}[${name}]`;
      at = at?.additional;
    }
  }
  return out;
}

function keyOf(item: unknown, keys: readonly string[]): string {
  if (!isObject(item)) return '';
  return JSON.stringify(keys.map((k) => item[k] ?? null));
}

function byKeys(list: unknown[], keys: readonly string[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const item of list) out.set(keyOf(item, keys), item);
  return out;
}
