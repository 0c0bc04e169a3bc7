// How deeply a client's JSON may nest: measured on the text before it is parsed, and on values
// that other parsers (YAML, protobuf) produced, without recursion, so that no depth a client
// sends can overflow the stack of the code that later walks the value.

/**
 * How deeply JSON text nests objects and arrays, counted up to `cap + 1` (the scan stops
 * there). Brackets inside strings do not count; invalid JSON is left for the parser to report.
 */
export function jsonDepth(text: string, cap: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > cap) return deepest;
      }
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return deepest;
}

export const jsonDepthExceeds = (text: string, max: number): boolean => jsonDepth(text, max) > max;

/** True when a parsed value nests objects or arrays more than `max` levels deep. */
export function valueDepthExceeds(value: unknown, max: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  // A YAML document may share one node under many aliases: a node is walked again only when
  // it is met deeper than before, so sharing costs no more than the depth it adds.
  const deepest = new Map<object, number>();
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const v = top.value;
    if (typeof v !== 'object' || v === null) continue;
    const depth = top.depth + 1;
    if ((deepest.get(v) ?? 0) >= depth) continue;
    deepest.set(v, depth);
    if (depth > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth });
    }
  }
  return false;
}
