// Service attributes against a specification's schema: secret properties, plain and secret
// values checked together, messages that name the field (never the value), one compile per
// specification generation.
import { describe, expect, it } from 'vitest';
import { resolveAttributes, SchemaCache } from '../../../src/domain/services/attributes.js';

const schema = {
  type: 'object',
  properties: {
    host: { type: 'string' },
    port: { type: 'integer', minimum: 1 },
    password: { type: 'string', secret: true, minLength: 8 },
    replicas: { type: 'integer', secret: true },
    tls: { type: 'object', properties: { mode: { enum: ['on', 'off'] } } },
  },
  required: ['host', 'password'],
  additionalProperties: false,
};

describe('attributes', () => {
  const cache = new SchemaCache();
  const compiled = cache.get('uid-1', 1, schema);

  it('merges plain and secret values and validates them together', () => {
    const result = resolveAttributes(
      compiled,
      { host: 'db', port: 5432 },
      { password: 's3cret-value' },
      'creds',
    );
    expect(result).toEqual({
      ok: true,
      attributes: { host: 'db', port: 5432, password: 's3cret-value' },
    });
  });

  it('reads a secret value typed other than string as JSON', () => {
    const result = resolveAttributes(
      compiled,
      { host: 'db' },
      { password: 's3cret-value', replicas: '3' },
      'creds',
    );
    expect(result.ok && result.attributes.replicas).toBe(3);
  });

  it('refuses a secret attribute in the plain spec, naming it', () => {
    const result = resolveAttributes(
      compiled,
      { host: 'db', password: 'hunter22x' },
      {},
      undefined,
    );
    expect(result).toMatchObject({ ok: false, reason: 'SecretInSpec' });
    if (result.ok) return;
    expect(result.message).toContain('attributes.password is secret');
    expect(result.message).not.toContain('hunter22x');
  });

  it('names the field of each schema error, values left out', () => {
    const result = resolveAttributes(
      compiled,
      { host: 'db', port: 'eighty', extra: 1, tls: { mode: 'maybe' } },
      { password: 'short' },
      'creds',
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe('InvalidAttributes');
    expect(result.message).toContain('attributes.port: must be integer');
    expect(result.message).toContain('attributes.extra: is not allowed by the specification');
    expect(result.message).toContain(
      'attributes.tls.mode: must be equal to one of the allowed values',
    );
    expect(result.message).toContain('attributes.password: must NOT have fewer than 8 characters');
    expect(result.message).not.toContain('short');
    expect(result.message).not.toContain('eighty');
  });

  it('names a missing required attribute', () => {
    const result = resolveAttributes(compiled, { host: 'db' }, {}, undefined);
    expect(result).toMatchObject({ ok: false, message: 'attributes.password: required' });
  });

  it('refuses an attribute given both plainly and in the Secret', () => {
    const result = resolveAttributes(compiled, { host: 'db' }, { host: 'x', password: 'p' }, 'c');
    expect(result).toMatchObject({ ok: false, reason: 'InvalidAttributes' });
    if (!result.ok) expect(result.message).toContain('attributes.host set both');
  });

  it('compiles once per specification generation', () => {
    expect(cache.get('uid-1', 1, schema)).toBe(compiled);
    const next = cache.get('uid-1', 2, { type: 'object' });
    expect(next).not.toBe(compiled);
    expect(cache.get('uid-1', 2, { type: 'object' })).toBe(next);
  });

  it('throws on a schema that does not compile', () => {
    expect(() => cache.get('uid-2', 1, { type: 'no-such-type' })).toThrow();
  });
});
