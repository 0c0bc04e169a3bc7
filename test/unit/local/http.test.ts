// Request bodies of the local control plane: apply bodies come as YAML or, from most clients,
// as JSON under the YAML media type; both must read the same, and a bad one is a 400.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseBody } from '../../../src/local/http.js';

const APPLY = 'application/apply-patch+yaml';

describe('parseBody', () => {
  it('reads an apply body sent as JSON or as YAML to the same object', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (generated) => {
        // As JSON carries it (JSON has no -0, YAML does): both encodings then hold one object.
        const object = JSON.parse(JSON.stringify(generated)) as unknown;
        const json = parseBody(Buffer.from(JSON.stringify(object)), APPLY);
        const yaml = parseBody(Buffer.from(stringify(object)), APPLY);
        expect(json).toEqual(object);
        expect(yaml).toEqual(json);
      }),
    );
  });

  it('leaves YAML flow style that is not JSON to the YAML parser', () => {
    expect(parseBody(Buffer.from('{a: 1, b: [x, y]}'), APPLY)).toEqual({ a: 1, b: ['x', 'y'] });
  });

  it('refuses what is neither, with a 400 naming the format', () => {
    expect(() => parseBody(Buffer.from('{a: [1'), APPLY)).toThrow(/not valid YAML/);
    expect(() => parseBody(Buffer.from('{"a": '), 'application/json')).toThrow(/not valid JSON/);
  });
});
