// Slugs, domains and NRN labels: DNS-safe, bounded, stable; and the namespace provisioner's
// children derived from requested_spec.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Slug } from '../../../src/api/index.js';
import { desiredChildren } from '../../../src/controllers/provisioners/namespace/provisioner.js';
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

describe('namespace provisioner children', () => {
  const target = {
    key: 'team/web',
    namespace: 'team',
    name: 'web',
    uid: 'u-1',
    id: 5,
    nrn: 'organization=1:application=2:scope=5',
    slug: 'web',
  };

  it('derives quota and limits from requested_spec', () => {
    const [ns, quota, limits, sa] = desiredChildren({
      ...target,
      requestedSpec: { memory_in_gb: 1.5, cpu_profile: 'intensive', local_storage_in_gb: 4 },
    });
    expect(ns?.metadata).toMatchObject({
      name: 'nrn-scope-5',
      labels: { 'platform.nrn.dev/scope-id': '5' },
    });
    expect(quota?.spec).toEqual({
      hard: {
        'limits.memory': '1536Mi',
        'requests.memory': '1536Mi',
        'limits.cpu': '8',
        'requests.cpu': '4',
        'limits.ephemeral-storage': '4096Mi',
        'requests.ephemeral-storage': '4096Mi',
      },
    });
    expect(limits?.spec).toMatchObject({
      limits: [{ type: 'Container', max: { cpu: '8', memory: '1536Mi' } }],
    });
    expect(sa?.metadata).toMatchObject({ name: 'scope-runtime', namespace: 'nrn-scope-5' });
  });

  it('sets only what is requested, and changes the spec hash when the request changes', () => {
    const [, quota] = desiredChildren({ ...target, requestedSpec: {} });
    expect(quota?.spec).toEqual({ hard: {} });
    const hash = (memory: number) =>
      desiredChildren({ ...target, requestedSpec: { memory_in_gb: memory } })[0]?.metadata
        .annotations?.['platform.nrn.dev/spec-hash'];
    expect(hash(1)).not.toBe(hash(2));
  });
});
