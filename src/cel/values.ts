// The JSON <-> CEL value mapping of the repository: whole numbers become ints and others doubles
// (kube's unstructured decoding makes int64 of a number without fraction or exponent; ADR 0019,
// "Numbers"), objects maps, arrays lists; and back, where JSON can hold the result. Both ways are
// bounded (depth, values, bytes), so a client's document cannot make either unbounded.
import {
  type CelValue,
  celList,
  celMap,
  isCelList,
  isCelMap,
  isCelType,
  isCelUint,
} from '@bufbuild/cel';
import { celString } from './env.js';

/** Why a value could not be converted; `at` is a key path inside it, '' at its root. */
export class ValueProblem {
  constructor(readonly message: string) {}
}

/**
 * A CEL value from a JSON value, once (not at each access). `budget.nodes` counts down the values
 * converted; `depth` the levels left.
 */
export function toCel(
  value: unknown,
  depth: number,
  budget: { nodes: number },
): unknown | ValueProblem {
  budget.nodes -= 1;
  if (budget.nodes < 0) return new ValueProblem('too many values');
  if (depth < 0) return new ValueProblem('nested too deeply');
  if (
    value === null ||
    typeof value === 'boolean' ||
    typeof value === 'string' ||
    typeof value === 'bigint'
  ) {
    return value;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return new ValueProblem(`${value} is not a JSON number`);
    return Number.isSafeInteger(value) ? BigInt(value) : value;
  }
  if (value === undefined) return null;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const converted = toCel(item, depth - 1, budget);
      if (converted instanceof ValueProblem) return converted;
      out.push(converted);
    }
    return celList(out as never);
  }
  if (typeof value === 'object') {
    const out = new Map<string, unknown>();
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      const converted = toCel(item, depth - 1, budget);
      if (converted instanceof ValueProblem)
        return new ValueProblem(`${key}: ${converted.message}`);
      out.set(key, converted);
    }
    return celMap(out as never);
  }
  return new ValueProblem(`not a JSON value (${typeof value})`);
}

/** CEL's name of a value's type, as its errors and `type()` name it. */
export function celTypeName(value: CelValue): string {
  if (value === null) return 'null_type';
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return 'double';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (isCelUint(value)) return 'uint';
  if (value instanceof Uint8Array) return 'bytes';
  if (isCelType(value)) return 'type';
  if (isCelList(value)) return 'list';
  if (isCelMap(value)) return 'map';
  if (typeof value === 'object' && 'desc' in value) {
    return String((value as { desc: { typeName: string } }).desc.typeName);
  }
  return typeof value;
}

/** A JSON value from a CEL result, or why there is none; `budget.bytes` bounds its JSON size. */
export function toJson(
  value: CelValue,
  depth: number,
  budget: { bytes: number },
): { json: unknown } | string {
  const spend = (bytes: number) => {
    budget.bytes -= bytes;
    return budget.bytes < 0;
  };
  const tooLarge = 'rendered value is larger than the bound';
  if (depth < 0) return 'rendered value is nested too deeply';
  if (value === null || typeof value === 'boolean') return spend(5) ? tooLarge : { json: value };
  if (typeof value === 'string') return spend(value.length + 2) ? tooLarge : { json: value };
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return `${value} is not a JSON number`;
    return spend(24) ? tooLarge : { json: value };
  }
  if (typeof value === 'bigint' || isCelUint(value)) {
    const n = typeof value === 'bigint' ? value : value.value;
    if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) {
      return `${n} is outside the integers a JSON number holds exactly (±2^53-1)`;
    }
    return spend(20) ? tooLarge : { json: Number(n) };
  }
  if (isCelList(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      if (spend(1)) return tooLarge;
      const converted = toJson(item, depth - 1, budget);
      if (typeof converted === 'string') return converted;
      out.push(converted.json);
    }
    return { json: out };
  }
  if (isCelMap(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of value.entries()) {
      if (typeof key !== 'string')
        return `map key ${String(key)} is not a string (JSON object keys are strings)`;
      if (spend(key.length + 4)) return tooLarge;
      const converted = toJson(item, depth - 1, budget);
      if (typeof converted === 'string') return converted;
      setKey(out, key, converted.json);
    }
    return { json: out };
  }
  // bytes, durations, timestamps, types: their CEL string form where CEL has one.
  const text = celString(value);
  if (text === undefined) return `a value of type ${celTypeName(value)} has no JSON form`;
  return spend(text.length + 2) ? tooLarge : { json: text };
}

/** Sets a key, `__proto__` included (assignment would set the prototype). */
export function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    target[key] = value;
  }
}
