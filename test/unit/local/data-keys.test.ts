// ConfigMap and Secret keys as validation.IsConfigMapKey judges them, and Secret data as Go's
// base64.StdEncoding decodes it (the byte offset its CorruptInputError names).
import { describe, expect, it } from 'vitest';
import { base64ErrorAt, configKeyProblems } from '../../../src/local/kinds/data-keys.js';

describe('configKeyProblems', () => {
  it('takes letters, digits, dashes, underscores and dots', () => {
    for (const key of ['a', 'key.name', 'KEY_NAME', 'key-name', '.hidden', 'a..b']) {
      expect(configKeyProblems(key)).toEqual([]);
    }
  });
  it('refuses other characters, `.`, `..`, a `..` prefix and more than 253 characters', () => {
    expect(configKeyProblems('bad key')).toEqual([
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    ]);
    expect(configKeyProblems('.')).toEqual(["must not be '.'"]);
    expect(configKeyProblems('..')).toEqual(["must not be '..'"]);
    expect(configKeyProblems('..x')).toEqual(["must not start with '..'"]);
    expect(configKeyProblems('k'.repeat(254))).toEqual(['must be no more than 253 characters']);
  });
});

describe('base64ErrorAt', () => {
  it('decodes padded base64 of any length', () => {
    for (const text of ['', 'YQ==', 'YWI=', 'YWJj', 'Y2hhbmdlLW1l']) {
      expect(base64ErrorAt(text)).toBeUndefined();
    }
  });
  it('names the first byte it cannot take', () => {
    expect(base64ErrorAt('not base64!')).toBe(3);
    expect(base64ErrorAt('YW=j')).toBe(2);
    expect(base64ErrorAt('Y===')).toBe(1);
  });
});
