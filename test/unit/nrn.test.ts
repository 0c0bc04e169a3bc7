import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareNrn,
  formatNrn,
  NRN_REGEX,
  type Nrn,
  nrnEquals,
  nrnMatches,
  parseNrn,
  valuesOverlap,
} from '../../src/api/nrn.js';

const nrn = (text: string): Nrn => {
  const parsed = parseNrn(text);
  if (parsed === undefined) throw new Error(`not an NRN: ${text}`);
  return parsed;
};

// Strings built from the NRN's own tokens, so that near misses (a level out of order, a
// missing '=', an empty value, a stray letter) are common rather than vanishingly rare.
const token = fc.constantFrom(
  'organization',
  'account',
  'namespace',
  'application',
  'scope',
  'org',
  '=',
  ':',
  '0',
  '7',
  '42',
  '*',
  'x',
  ' ',
  '\n',
  '',
);
const nearNrn = fc.array(token, { maxLength: 14 }).map((parts) => parts.join(''));
const level = (name: string) =>
  fc.stringMatching(/^[0-9*]{1,4}$/).map((value) => `${name}=${value}`);
const validNrn = fc
  .tuple(
    level('organization'),
    fc.option(level('account')),
    fc.option(level('namespace')),
    fc.option(level('application')),
    fc.option(level('scope')),
  )
  .map((segments) => segments.filter((s) => s !== null).join(':'));

describe('parseNrn', () => {
  it('accepts exactly the strings the spec regular expression accepts', () => {
    fc.assert(
      fc.property(fc.oneof(nearNrn, validNrn, fc.string()), (text) => {
        expect(parseNrn(text) !== undefined).toBe(NRN_REGEX.test(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('accepts every NRN the grammar builds, and formats it back unchanged', () => {
    fc.assert(
      fc.property(validNrn, (text) => {
        const parsed = parseNrn(text);
        expect(parsed).toBeDefined();
        expect(formatNrn(parsed as Nrn)).toBe(text);
      }),
    );
  });

  it.each([
    '',
    'organization=',
    'organization=1:',
    'account=1',
    'organization=1:organization=2',
    'organization=1:namespace=2:account=3',
    'organization=1:account=a',
    'organization=1:account=1=2',
    'organization=1;account=2',
    'Organization=1',
    'organization=1 ',
    'organization=1\n',
  ])('refuses %j', (text) => {
    expect(parseNrn(text)).toBeUndefined();
    expect(NRN_REGEX.test(text)).toBe(false);
  });

  it('lets levels be skipped, as the regular expression does', () => {
    expect(parseNrn('organization=1:application=4')).toEqual([
      { level: 'organization', value: '1' },
      { level: 'application', value: '4' },
    ]);
  });
});

describe('valuesOverlap', () => {
  // Brute force over the digits the patterns use: a shortest common word never needs others.
  const words = (maxLength: number): string[] => {
    const out = [''];
    for (let i = 0; i < out.length; i++) {
      const w = out[i] as string;
      if (w.length < maxLength) out.push(`${w}0`, `${w}1`);
    }
    return out;
  };
  const glob = (p: string) => new RegExp(`^${p.replaceAll('*', '[0-9]*')}$`);

  it('is true exactly when some id matches both patterns', () => {
    const pattern = fc.stringMatching(/^[01*]{1,4}$/);
    fc.assert(
      fc.property(pattern, pattern, (a, b) => {
        const expected = words(a.length + b.length).some((w) => glob(a).test(w) && glob(b).test(w));
        expect(valuesOverlap(a, b)).toBe(expected);
        expect(valuesOverlap(b, a)).toBe(expected);
      }),
      { numRuns: 3_000 },
    );
  });
});

describe('nrnMatches (the id filter of docs/interface.md)', () => {
  const org = 'organization=7';
  const account = 'organization=7:account=8';
  const app = 'organization=7:account=8:namespace=9:application=10';
  const otherAccount = 'organization=7:account=99';
  const owners = [org, account, app, otherAccount];
  const visibleAt = (query: string) => owners.filter((o) => nrnMatches(nrn(query), nrn(o)));

  it.each([
    ['organization=7', [org]],
    ['organization=7:account=8', [org, account]],
    [app, [org, account, app]],
    ['organization=7:account=*', [org, account, app, otherAccount]],
    ['organization=7:account=8:namespace=9:application=10:scope=11', [org, account, app]],
    ['organization=7:account=8:namespace=*', [org, account, app]],
    ['organization=7:account=9*', [org, otherAccount]],
    ['organization=*', [org, account, app, otherAccount]],
    ['organization=8', []],
    ['organization=7:account=8:namespace=9:application=11', [org, account]],
    ['organization=7:namespace=9', [org]],
  ])('at %s sees %j', (query, expected) => {
    expect(visibleAt(query)).toEqual(expected);
  });

  it('matches a wildcard an owner declares (linkable to every account)', () => {
    expect(nrnMatches(nrn('organization=7:account=8'), nrn('organization=7:account=*'))).toBe(true);
    expect(nrnMatches(nrn('organization=6:account=8'), nrn('organization=7:account=*'))).toBe(
      false,
    );
  });

  it('always sees an NRN at the NRN itself and at its descendants', () => {
    fc.assert(
      fc.property(validNrn, validNrn, (a, b) => {
        expect(nrnMatches(nrn(a), nrn(a))).toBe(true);
        const below = `${a}:scope=1`;
        if (!a.includes('scope=')) expect(nrnMatches(nrn(below), nrn(a))).toBe(true);
        // A concrete query never sees anything longer than itself.
        if (!b.includes('*') && nrn(a).length > nrn(b).length) {
          expect(nrnMatches(nrn(b), nrn(a))).toBe(false);
        }
      }),
    );
  });
});

describe('nrnEquals (the entity_nrn filter)', () => {
  it.each([
    ['organization=7:account=8', 'organization=7:account=8', true],
    ['organization=7:account=*', 'organization=7:account=8', true],
    ['organization=7', 'organization=7:account=8', false],
    ['organization=7:account=8', 'organization=7', false],
    ['organization=7:account=8', 'organization=7:account=9', false],
  ])('%s vs owner %s → %s', (query, owner, expected) => {
    expect(nrnEquals(nrn(query), nrn(owner))).toBe(expected);
  });
});

describe('compareNrn', () => {
  it('orders ancestors first and ids numerically', () => {
    const sorted = [
      'organization=10',
      'organization=9:account=1',
      'organization=9',
      'organization=*',
      'organization=9:account=10',
      'organization=9:account=2',
    ]
      .map(nrn)
      .sort(compareNrn)
      .map(formatNrn);
    expect(sorted).toEqual([
      'organization=9',
      'organization=9:account=1',
      'organization=9:account=2',
      'organization=9:account=10',
      'organization=10',
      'organization=*',
    ]);
  });

  it('is a total order consistent with equality', () => {
    fc.assert(
      fc.property(validNrn, validNrn, validNrn, (a, b, c) => {
        const [x, y, z] = [nrn(a), nrn(b), nrn(c)];
        expect(Math.sign(compareNrn(x, y))).toBe(-Math.sign(compareNrn(y, x)));
        expect(compareNrn(x, y) === 0).toBe(a === b);
        if (compareNrn(x, y) <= 0 && compareNrn(y, z) <= 0)
          expect(compareNrn(x, z)).toBeLessThanOrEqual(0);
      }),
    );
  });
});
