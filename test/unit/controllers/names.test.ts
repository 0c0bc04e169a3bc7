// Slugs, domains and NRN labels: DNS-safe, bounded, stable.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Slug } from '../../../src/api/index.js';
import { nrnLabelValue, scopeDomain, slugify } from '../../../src/domain/names.js';

describe('names', () => {
  it('slugify makes a valid slug of any text', () => {
    expect(slugify('Checkout Web')).toBe('checkout-web');
    expect(slugify('  Café -- API!! ')).toBe('cafe-api');
    fc.assert(fc.property(fc.string(), (text) => Slug.safeParse(slugify(text)).success));
  });

  it('a domain fits 60 characters, keeps its hash, and differs when the scope id does', () => {
    const short = scopeDomain('checkout', 'web', 7);
    expect(short).toMatch(/^checkout-web-[0-9a-f]{5}\.nrn\.local$/);
    const long = scopeDomain('a'.repeat(60), 'b'.repeat(60), 7, 'apps.example.com');
    expect(long.length).toBeLessThanOrEqual(60);
    expect(long).toMatch(/^a+-b+-[0-9a-f]{5}\.apps\.example\.com$/);
    expect(scopeDomain('a'.repeat(60), 'b'.repeat(60), 8)).not.toBe(
      scopeDomain('a'.repeat(60), 'b'.repeat(60), 7),
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.nat(), (a, b, id) => {
        const domain = scopeDomain(slugify(a), slugify(b), id);
        return domain.length <= 60 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\.nrn\.local$/.test(domain);
      }),
    );
  });

  it('an NRN label value is label-safe, and hashed when too long', () => {
    expect(nrnLabelValue('organization=1:account=2:application=3:scope=4')).toBe(
      'organization-1.account-2.application-3.scope-4',
    );
    const long = nrnLabelValue(
      'organization=123456789:account=123456789:namespace=1:application=123456789:scope=9',
    );
    expect(long).toMatch(/^sha256-[0-9a-f]{40}$/);
  });
});
