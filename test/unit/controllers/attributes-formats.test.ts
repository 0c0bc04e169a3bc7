// JSON Schema `format` in attribute schemas: the ajv-formats formats are checked, in plain and
// secret values alike, with messages naming the field and the format, never the value; a
// format ajv-formats does not know is not checked and does not stop the specification.
import { describe, expect, it } from 'vitest';
import { resolveAttributes, SchemaCache } from '../../../src/domain/services/attributes.js';

const schema = {
  type: 'object',
  properties: {
    contact: { type: 'string', format: 'email' },
    homepage: { type: 'string', format: 'uri' },
    since: { type: 'string', format: 'date-time' },
    day: { type: 'string', format: 'date' },
    tenant: { type: 'string', format: 'uuid' },
    address: { type: 'string', format: 'ipv4' },
    address6: { type: 'string', format: 'ipv6' },
    host: { type: 'string', format: 'hostname' },
    phone: { type: 'string', format: 'x-phone-number' },
    db: {
      type: 'object',
      properties: { url: { type: 'string', format: 'uri', secret: true } },
    },
  },
};

describe('attribute formats', () => {
  const compiled = new SchemaCache().get('uid-formats', 1, schema);

  it('accepts values of each format', () => {
    const result = resolveAttributes(
      compiled,
      {
        contact: 'ops@example.com',
        homepage: 'https://example.com/db?x=1',
        since: '2024-05-01T10:00:00Z',
        day: '2024-05-01',
        tenant: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        address: '10.0.0.1',
        address6: '::1',
        host: 'db.internal',
      },
      { 'db.url': 'postgres://db.internal:5432/orders' },
      'creds',
    );
    expect(result.ok).toBe(true);
  });

  const invalid: [string, string, string][] = [
    ['contact', 'not-an-email', 'email'],
    ['homepage', 'no scheme here', 'uri'],
    ['since', '2024-05-01 10:00', 'date-time'],
    ['day', '2024-13-01', 'date'],
    ['tenant', 'f00-bar', 'uuid'],
    ['address', '300.1.2.3', 'ipv4'],
    ['address6', 'fe80:::zz', 'ipv6'],
    ['host', 'under_score..example', 'hostname'],
  ];

  it.each(invalid)(
    'refuses a bad %s, naming the field and the format only',
    (field, value, format) => {
      const result = resolveAttributes(compiled, { [field]: value }, {}, undefined);
      expect(result).toEqual({
        ok: false,
        reason: 'InvalidAttributes',
        message: `attributes.${field}: must match format "${format}"`,
      });
      if (!result.ok) expect(result.message).not.toContain(value);
    },
  );

  it('checks the format of a nested secret value without showing it', () => {
    const result = resolveAttributes(compiled, {}, { 'db.url': 'hunter2 not a uri' }, 'creds');
    expect(result).toEqual({
      ok: false,
      reason: 'InvalidAttributes',
      message: 'attributes.db.url: must match format "uri"',
    });
  });

  it('does not check a format it does not know, and still compiles the schema', () => {
    const result = resolveAttributes(compiled, { phone: 'anything at all' }, {}, undefined);
    expect(result.ok).toBe(true);
    expect(() =>
      new SchemaCache().get('uid-unknown', 1, { properties: { a: { format: 'no-such-format' } } }),
    ).not.toThrow();
  });

  it('checks formatMinimum/formatMaximum, naming the field', () => {
    const limited = new SchemaCache().get('uid-limits', 1, {
      properties: { start: { type: 'string', format: 'date', formatMinimum: '2024-01-01' } },
    });
    expect(resolveAttributes(limited, { start: '2024-06-01' }, {}, undefined).ok).toBe(true);
    const early = resolveAttributes(limited, { start: '2023-06-01' }, {}, undefined);
    expect(early.ok).toBe(false);
    if (!early.ok) {
      expect(early.message).toBe('attributes.start: should be >= 2024-01-01');
      expect(early.message).not.toContain('2023-06-01');
    }
  });
});
