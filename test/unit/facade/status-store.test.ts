// The status store behind GET /status/* and /watch: summaries of the statuses the operator
// really writes (test/fixtures/statuses), the tree's counts, pages in failure-first order with
// a cursor, the ring Last-Event-ID resumes from, and what 100,000 services cost a request
// (printed, not asserted: a timing depends on the machine and whoever else runs on it).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { ResourceSummary } from '../../../src/api/index.js';
import { StatusStore, type Visibility } from '../../../src/facade/status/store.js';
import {
  type ScopeObject,
  type ServiceObject,
  scopeEntry,
  serviceEntry,
} from '../../../src/facade/status/summary.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/statuses');
const fixture = <O>(kind: string, name: string): O =>
  JSON.parse(readFileSync(join(FIXTURES, kind, `${name}.json`), 'utf8')) as O;
const ALL: Visibility = { scope: 'all', service: 'all' };

function service(name: string, nrn: string, status: string, namespace = 'ns'): ServiceObject {
  const o = fixture<ServiceObject>('service', 'active');
  return {
    ...o,
    metadata: { ...o.metadata, name, namespace, resourceVersion: `${name}-${status}` },
    spec: { ...(o.spec as NonNullable<ServiceObject['spec']>), entity_nrn: nrn },
    status: { ...o.status, status: status as 'active' },
  };
}

describe('summaries of recorded statuses', () => {
  it('every recorded scope and service summarises to a valid ResourceSummary', () => {
    for (const kind of ['scope', 'service'] as const) {
      for (const file of readdirSync(join(FIXTURES, kind))) {
        const object = fixture<ScopeObject & ServiceObject>(kind, file.replace(/\.json$/, ''));
        const entry = kind === 'scope' ? scopeEntry(object) : serviceEntry(object);
        expect(ResourceSummary.safeParse(entry.summary).success, file).toBe(true);
        expect(JSON.parse(entry.json)).toEqual(entry.summary);
      }
    }
  });

  it('a failed scope carries Stalled as its reason, first in the order', () => {
    const failed = scopeEntry(fixture('scope', 'failed')).summary;
    expect(failed).toMatchObject({
      kind: 'scope',
      status: 'failed',
      ready: 'False',
      stalled: true,
      reason: 'ProvisionFailed',
      message: 'no capacity left in region eu-west-1',
      id: 7,
      application_id: 1,
      nrn: 'organization=1:account=2:namespace=3:application=1:scope=7',
    });
    expect(
      scopeEntry(fixture('scope', 'failed')).sortKey <
        scopeEntry(fixture('scope', 'active')).sortKey,
    ).toBe(true);
  });

  it('a paused scope says so; a stale one says so', () => {
    expect(scopeEntry(fixture('scope', 'paused')).summary.paused).toBe(true);
    expect(scopeEntry(fixture('scope', 'stale')).summary.stale).toBe(true);
    expect(scopeEntry(fixture('scope', 'active')).summary).toMatchObject({
      paused: false,
      stale: false,
      ready: 'True',
    });
  });

  it('a scope with no status yet is unknown, placed under its application', () => {
    const o = fixture<ScopeObject>('scope', 'active');
    const entry = scopeEntry({ ...o, status: undefined }, 'organization=1:account=2:application=9');
    expect(entry.summary).toMatchObject({ status: 'unknown', ready: 'Unknown', stale: true });
    expect(entry.places).toEqual([
      'organization=1',
      'organization=1:account=2',
      'organization=1:account=2:application=9',
    ]);
  });
});

describe('StatusStore', () => {
  it('counts per NRN node, rolled up, and only what the caller may see', () => {
    const store = new StatusStore();
    store.upsertService(
      service('a', 'organization=1:account=2:namespace=3:application=4', 'active'),
    );
    store.upsertService(
      service('b', 'organization=1:account=2:namespace=3:application=4', 'failed'),
    );
    store.upsertService(service('c', 'organization=1:account=5', 'active', 'hidden'));
    const tree = store.tree({}, ALL);
    expect(tree.counts).toEqual({ scope: {}, service: { active: 2, failed: 1 } });
    const node = (nrn: string) => tree.nodes.find((n) => n.nrn === nrn);
    expect(node('organization=1')?.counts.service).toEqual({ active: 2, failed: 1 });
    expect(node('organization=1:account=2:namespace=3:application=4')).toMatchObject({
      level: 'application',
      counts: { service: { active: 1, failed: 1 } },
    });
    expect(node('organization=1:account=5')?.level).toBe('account');
    const narrow = store.tree({}, { scope: 'all', service: new Set(['ns']) });
    expect(narrow.counts.service).toEqual({ active: 1, failed: 1 });
    expect(narrow.nodes.map((n) => n.nrn)).not.toContain('organization=1:account=5');
    expect(store.tree({ status: 'failed' }, ALL).counts.service).toEqual({ failed: 1 });
    expect(store.tree({ q: 'B' }, ALL).counts.service).toEqual({ failed: 1 });
    expect(store.tree({ nrn: 'organization=1:account=5' }, ALL).counts.service).toEqual({
      active: 1,
    });
  });

  it('pages failures first, then by NRN with ids as numbers, through a cursor', () => {
    const store = new StatusStore();
    for (let i = 1; i <= 25; i++) {
      store.upsertService(
        service(`s${i}`, `organization=${i}`, i % 10 === 0 ? 'failed' : 'active'),
      );
    }
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = store.page({}, ALL, 7, after);
      expect(page.total).toBe(25);
      seen.push(...page.results.map((e) => e.summary.name));
      if (!page.more) break;
      after = page.last;
    }
    expect(seen.slice(0, 2)).toEqual(['s10', 's20']);
    expect(seen.slice(2, 6)).toEqual(['s1', 's2', 's3', 's4']);
    expect(new Set(seen).size).toBe(25);
  });

  it('records changes in a ring: an unchanged version is no change, an old seq is gone', () => {
    const store = new StatusStore(3);
    const a = service('a', 'organization=1', 'pending');
    store.upsertService(a);
    store.upsertService(a);
    expect(store.lastSeq).toBe(1);
    store.upsertService(service('a', 'organization=1', 'active'));
    store.remove('service', a);
    expect(
      store.changesSince(1)?.map((c) => (c.entry ? c.entry.summary.status : 'deleted')),
    ).toEqual(['active', 'deleted']);
    store.upsertService(service('b', 'organization=1', 'active'));
    store.upsertService(service('c', 'organization=1', 'active'));
    expect(store.changesSince(1)).toBeUndefined();
    expect(store.changesSince(2)?.length).toBe(3);
    expect(store.changesSince(99)).toBeUndefined();
  });

  it('answers for 100,000 services in bounded time (printed)', () => {
    const store = new StatusStore();
    const statuses = ['active', 'active', 'active', 'pending', 'failed'];
    for (let i = 0; i < 100_000; i++) {
      const app = i % 2000;
      store.upsertService(
        service(
          `svc-${i}`,
          `organization=${app % 5}:account=${app % 40}:namespace=${app % 200}:application=${app}`,
          statuses[i % statuses.length] as string,
          `ns-${i % 50}`,
        ),
      );
    }
    // The first run (what a request after a burst of changes pays) and the best of three.
    const time = (f: () => unknown) => {
      const runs: number[] = [];
      for (let run = 0; run < 3; run++) {
        const start = performance.now();
        f();
        runs.push(performance.now() - start);
      }
      return `${(runs[0] as number).toFixed(1)} ms first, ${Math.min(...runs).toFixed(1)} ms best`;
    };
    const some: Visibility = { scope: 'all', service: new Set(['ns-1', 'ns-2', 'ns-3']) };
    const tree = time(() => store.tree({}, ALL));
    const treeFiltered = time(() => store.tree({ q: 'svc-9', status: 'active' }, some));
    const page = time(() => store.page({}, ALL, 500, undefined));
    const failures = store.page({}, ALL, 500, undefined);
    expect(failures.total).toBe(100_000);
    expect(failures.results.every((e) => e.summary.status === 'failed')).toBe(true);
    process.stdout.write(
      `status store, 100,000 services: tree ${tree}; filtered tree ${treeFiltered}; page of 500 ${page}\n`,
    );
  });
});
