// The rendered-page cache of GET /service: kept on the second ask at one catalog version,
// dropped whole when the version moves, bounded in pages and bytes (least recently used first).
import { describe, expect, it } from 'vitest';
import { PageCache } from '../../../src/facade/endpoints/list-services/pages.js';

const page = (text: string) => Buffer.from(text);

/** Asks `key` twice at `version`, as a client polling it would, so the cache keeps it. */
function keep(cache: PageCache, key: string, version: number, body: Buffer): void {
  for (let i = 0; i < 2; i++) {
    if (cache.get(key, version) === undefined) cache.set(key, version, body);
  }
}

describe('PageCache', () => {
  it('keeps a page the second time its query is rendered, not the first', () => {
    const cache = new PageCache({ pages: 10, bytes: 1 << 20 });
    cache.set('/service?a', 1, page('one'));
    expect(cache.get('/service?a', 1)).toBeUndefined();
    cache.set('/service?a', 1, page('one'));
    expect(cache.get('/service?a', 1)?.toString()).toBe('one');
  });

  it('drops every page when the catalog version moves', () => {
    const cache = new PageCache({ pages: 10, bytes: 1 << 20 });
    keep(cache, '/service?a', 1, page('a1'));
    keep(cache, '/service?b', 1, page('b1'));
    expect(cache.size).toBe(2);
    expect(cache.get('/service?a', 2)).toBeUndefined();
    expect(cache.size).toBe(0);
    // Asked once at the old version does not count at the new one.
    cache.set('/service?b', 2, page('b2'));
    expect(cache.get('/service?b', 2)).toBeUndefined();
    // A page rendered at an older version than the cache has seen is not kept as current.
    keep(cache, '/service?c', 3, page('c3'));
    cache.set('/service?d', 2, page('d2'));
    cache.set('/service?d', 2, page('d2'));
    expect(cache.get('/service?d', 2)).toBeUndefined();
  });

  it('holds at most its page count, dropping the least recently used', () => {
    const cache = new PageCache({ pages: 2, bytes: 1 << 20 });
    keep(cache, 'a', 1, page('a'));
    keep(cache, 'b', 1, page('b'));
    expect(cache.get('a', 1)?.toString()).toBe('a'); // a is now the most recent
    keep(cache, 'c', 1, page('c'));
    expect(cache.size).toBe(2);
    expect(cache.get('b', 1)).toBeUndefined();
    expect(cache.get('a', 1)?.toString()).toBe('a');
    expect(cache.get('c', 1)?.toString()).toBe('c');
  });

  it('holds at most its byte budget and never a page over an eighth of it', () => {
    const cache = new PageCache({ pages: 100, bytes: 800 });
    keep(cache, 'big', 1, Buffer.alloc(101));
    expect(cache.get('big', 1)).toBeUndefined();
    for (let i = 0; i < 10; i++) keep(cache, `p${i}`, 1, Buffer.alloc(100));
    expect(cache.size).toBe(8);
    expect(cache.get('p0', 1)).toBeUndefined();
    expect(cache.get('p9', 1)).toBeDefined();
  });

  it('keeps nothing with a page count of 0', () => {
    const cache = new PageCache({ pages: 0, bytes: 1 << 20 });
    keep(cache, 'a', 1, page('a'));
    expect(cache.get('a', 1)).toBeUndefined();
  });
});
