// The indexed cache: lookups by key, namespace and named index stay right through updates,
// deletes and a relist's replace.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ObjectCache } from '../../../src/kube/cache.js';

interface Obj {
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
  };
}

const obj = (namespace: string | undefined, name: string, rv: string, app?: string): Obj => ({
  metadata: {
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    resourceVersion: rv,
    ...(app !== undefined ? { labels: { app } } : {}),
  },
});

const names = (objects: readonly Obj[]) => objects.map((o) => o.metadata.name).sort();
const byApp = (o: Obj) => (o.metadata.labels?.app ? [o.metadata.labels.app] : []);

describe('ObjectCache', () => {
  it('gets by namespace/name and by key, and lists by namespace', () => {
    const cache = new ObjectCache<Obj>();
    cache.upsert(obj('a', 'x', '1'));
    cache.upsert(obj('b', 'x', '2'));
    cache.upsert(obj(undefined, 'cluster-wide', '3'));
    expect(cache.get('a', 'x')?.metadata.resourceVersion).toBe('1');
    expect(cache.getByKey('b/x')?.metadata.resourceVersion).toBe('2');
    expect(cache.get(undefined, 'cluster-wide')).toBeDefined();
    expect(names(cache.list('a'))).toEqual(['x']);
    expect(cache.list()).toHaveLength(3);
    expect(cache.size).toBe(3);
  });

  it('moves an object between index values when it changes, and unfiles it on delete', () => {
    const cache = new ObjectCache<Obj>();
    cache.addIndex('app', byApp);
    cache.upsert(obj('ns', 's1', '1', 'one'));
    cache.upsert(obj('ns', 's2', '1', 'one'));
    cache.upsert(obj('ns', 's3', '1', 'two'));
    expect(names(cache.byIndex('app', 'one'))).toEqual(['s1', 's2']);

    cache.upsert(obj('ns', 's2', '2', 'two'));
    expect(names(cache.byIndex('app', 'one'))).toEqual(['s1']);
    expect(names(cache.byIndex('app', 'two'))).toEqual(['s2', 's3']);

    cache.upsert(obj('ns', 's1', '2')); // label removed: filed nowhere
    expect(cache.byIndex('app', 'one')).toEqual([]);
    expect(cache.indexValues('app').sort()).toEqual(['two']);

    cache.remove('ns/s3');
    expect(names(cache.byIndex('app', 'two'))).toEqual(['s2']);
    expect(cache.byIndex('app', 'nothing')).toEqual([]);

    // An update keeping its value, then a value gaining and losing objects one by one.
    cache.upsert(obj('ns', 's2', '3', 'two'));
    expect(names(cache.byIndex('app', 'two'))).toEqual(['s2']);
    cache.upsert(obj('ns', 's4', '1', 'two'));
    cache.upsert(obj('ns', 's5', '1', 'two'));
    expect(names(cache.byIndex('app', 'two'))).toEqual(['s2', 's4', 's5']);
    cache.remove('ns/s2');
    cache.remove('ns/s4');
    expect(names(cache.byIndex('app', 'two'))).toEqual(['s5']);
    cache.upsert(obj('ns', 's5', '2', 'three'));
    expect(cache.indexValues('app')).toEqual(['three']);
    expect(names(cache.byIndex('app', 'three'))).toEqual(['s5']);
  });

  it('indexes objects cached before the index was added', () => {
    const cache = new ObjectCache<Obj>();
    cache.upsert(obj('ns', 'early', '1', 'one'));
    cache.addIndex('app', byApp);
    expect(names(cache.byIndex('app', 'one'))).toEqual(['early']);
    expect(() => cache.addIndex('app', byApp)).toThrow(/exists/);
    expect(() => cache.byIndex('missing', 'x')).toThrow(/no index/);
  });

  it('files an object under each of several values once', () => {
    const cache = new ObjectCache<Obj>();
    cache.addIndex('multi', () => ['a', 'b', 'a']);
    cache.addIndex('twice', () => ['c', 'c']);
    cache.upsert(obj('ns', 'x', '1'));
    expect(cache.byIndex('multi', 'a')).toHaveLength(1);
    expect(cache.byIndex('multi', 'b')).toHaveLength(1);
    expect(cache.byIndex('twice', 'c')).toHaveLength(1);
    cache.remove('ns/x');
    expect(cache.indexValues('multi')).toEqual([]);
    expect(cache.indexValues('twice')).toEqual([]);
  });

  it('answers every index lookup as a scan would, through any run of upserts, removes and relists', () => {
    // Values are unfiled by running the index function on the replaced object: whatever the
    // sequence, byIndex must agree with filtering the cached objects.
    const tags = (o: Obj) => (o.metadata.labels?.tags ?? '').split(',').filter((t) => t !== '');
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('upsert' as const),
        name: fc.constantFrom('a', 'b', 'c', 'd'),
        tags: fc.array(fc.constantFrom('x', 'y', 'z'), { maxLength: 3 }),
      }),
      fc.record({ kind: fc.constant('remove' as const), name: fc.constantFrom('a', 'b', 'c') }),
      fc.record({ kind: fc.constant('relist' as const), keep: fc.constantFrom('a', 'b', 'c') }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const cache = new ObjectCache<Obj>();
        cache.addIndex('tags', tags);
        let rv = 0;
        for (const o of ops) {
          if (o.kind === 'upsert') {
            rv++;
            const object = obj('ns', o.name, String(rv));
            object.metadata.labels = { tags: o.tags.join(',') };
            cache.upsert(object);
          } else if (o.kind === 'remove') cache.remove(`ns/${o.name}`);
          else cache.replace(cache.list().filter((c) => c.metadata.name === o.keep));
          for (const tag of ['x', 'y', 'z']) {
            const scanned = names(cache.list().filter((c) => tags(c).includes(tag)));
            expect(names(cache.byIndex('tags', tag))).toEqual(scanned);
          }
          const values = new Set(cache.list().flatMap(tags));
          expect(cache.indexValues('tags').sort()).toEqual([...values].sort());
        }
      }),
      { numRuns: 300 },
    );
  });

  it('replace reports what a relist changed and leaves the indexes right', () => {
    const cache = new ObjectCache<Obj>();
    cache.addIndex('app', byApp);
    cache.upsert(obj('ns', 'same', '1', 'one'));
    cache.upsert(obj('ns', 'changed', '1', 'one'));
    cache.upsert(obj('ns', 'gone', '1', 'one'));
    const diff = cache.replace([
      obj('ns', 'same', '1', 'one'),
      obj('ns', 'changed', '2', 'two'),
      obj('ns', 'new', '3', 'two'),
    ]);
    expect(names(diff.added)).toEqual(['new']);
    expect(
      diff.updated.map((u) => [u.old.metadata.resourceVersion, u.object.metadata.resourceVersion]),
    ).toEqual([['1', '2']]);
    expect(names(diff.deleted)).toEqual(['gone']);
    expect(names(cache.byIndex('app', 'one'))).toEqual(['same']);
    expect(names(cache.byIndex('app', 'two'))).toEqual(['changed', 'new']);
    expect(names(cache.list('ns'))).toEqual(['changed', 'new', 'same']);
  });
});
