// Micro-benchmark of the facade's service catalog (src/facade/catalog/): 100,000 services over
// an NRN tree of 10 organizations x 10 accounts x 10 namespaces x 10 applications, owned at
// every level, some linkable elsewhere; build time, heap the catalog adds per service, and the
// latency of GET /service's queries.
//   npx tsx bench/facade-catalog.ts   (BENCH_SERVICES, BENCH_ITERATIONS, BENCH_BUDGET_MS per query)
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { ServicePhase, ServiceType } from '../src/api/index.js';
import {
  type CatalogQuery,
  ServiceCatalog,
  type ServiceObject,
  type SpecificationObject,
} from '../src/facade/catalog/index.js';
import { mulberry32 } from './support/random.js';

const SERVICES = Number(process.env.BENCH_SERVICES ?? 100_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20_000);
const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 1500);
const FANOUT = 10;
const SPECIFICATIONS = 20;

/** gc() without --expose-gc on the command line: the flag can still be set at run time. */
function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed !== undefined) return exposed;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}
const gc = collector();

const random = mulberry32(7);
const int = (n: number) => Math.floor(random() * n);
const pick = <T>(values: readonly T[]): T => values[int(values.length)] as T;

const specIds = Array.from({ length: SPECIFICATIONS }, () => randomUUID());

function specification(i: number): SpecificationObject {
  const secret = i % 4 === 0; // a quarter of the specifications have secret attributes
  return {
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'ServiceSpecification',
    metadata: { name: `spec-${i}`, namespace: 'catalog', uid: randomUUID() },
    spec: {
      id: specIds[i] as string,
      name: `spec-${i}`,
      type: 'dependency',
      attributes: {
        schema: {
          type: 'object',
          properties: {
            size: { type: 'string' },
            version: { type: 'string' },
            ...(secret ? { password: { type: 'string', secret: true } } : {}),
          },
        },
      },
      provisioner: { type: 'none', deadline_seconds: 1800 },
    },
  };
}

const nrnOf = (org: number, account?: number, ns?: number, app?: number) =>
  [
    `organization=${org}`,
    ...(account !== undefined ? [`account=${account}`] : []),
    ...(ns !== undefined ? [`namespace=${ns}`] : []),
    ...(app !== undefined ? [`application=${app}`] : []),
  ].join(':');
const orgId = (o: number) => o + 1;
const accountId = (o: number, a: number) => 100 + o * FANOUT + a;
const nsId = (o: number, a: number, n: number) => 10_000 + (o * FANOUT + a) * FANOUT + n;
const appId = (o: number, a: number, n: number, p: number) =>
  1_000_000 + ((o * FANOUT + a) * FANOUT + n) * FANOUT + p;

function randomApp(): string {
  const [o, a, n, p] = [int(FANOUT), int(FANOUT), int(FANOUT), int(FANOUT)];
  return nrnOf(orgId(o), accountId(o, a), nsId(o, a, n), appId(o, a, n, p));
}

/** Owned at the application mostly, and at every level above it (and a few at a scope). */
function entityNrn(): string {
  const [o, a, n, p] = [int(FANOUT), int(FANOUT), int(FANOUT), int(FANOUT)];
  const r = random();
  if (r < 0.05) return nrnOf(orgId(o));
  if (r < 0.15) return nrnOf(orgId(o), accountId(o, a));
  if (r < 0.3) return nrnOf(orgId(o), accountId(o, a), nsId(o, a, n));
  const app = nrnOf(orgId(o), accountId(o, a), nsId(o, a, n), appId(o, a, n, p));
  return r < 0.9 ? app : `${app}:scope=${int(1_000_000)}`;
}

/** A fifth linkable elsewhere: another namespace or account, now and then every account. */
function linkableTo(): string[] | undefined {
  const r = random();
  if (r >= 0.2) return undefined;
  const [o, a, n] = [int(FANOUT), int(FANOUT), int(FANOUT)];
  if (r < 0.01) return [`${nrnOf(orgId(o))}:account=*`];
  if (r < 0.1) return [nrnOf(orgId(o), accountId(o, a))];
  return [nrnOf(orgId(o), accountId(o, a), nsId(o, a, n)), nrnOf(orgId(o), accountId(o, a))];
}

const STATUSES: readonly ServicePhase[] = [
  ...Array<ServicePhase>(17).fill('active'),
  'failed',
  'pending',
  'creating',
];
const START = Date.UTC(2024, 0, 1);

function service(i: number): ServiceObject {
  const spec = int(SPECIFICATIONS);
  const type: ServiceType = random() < 0.7 ? 'dependency' : 'scope';
  const created = new Date(START + int(365 * 86_400) * 1000).toISOString().replace('.000', '');
  const status = pick(STATUSES);
  const links = linkableTo();
  return {
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'Service',
    metadata: {
      name: `service-${i}`,
      namespace: `team-${i % 50}`,
      uid: randomUUID(),
      resourceVersion: String(1000 + i),
      generation: 1,
      creationTimestamp: created,
    },
    spec: {
      name: `Service ${i}`,
      type,
      specification_id: specIds[spec] as string,
      entity_nrn: entityNrn(),
      ...(links !== undefined ? { linkable_to: links } : {}),
      dimensions: { environment: pick(['production', 'staging', 'development']) },
      attributes: {
        size: pick(['small', 'medium', 'large']),
        version: `${1 + int(15)}.${int(10)}`,
        // A few put a secret in the plain spec by mistake: the catalog must leave it out.
        ...(spec % 4 === 0 && i % 100 === 0 ? { password: 'oops' } : {}),
      },
      provider: pick(['aws', 'gcp', 'azure']),
      category: 'database',
      sub_category: pick(['postgres', 'mysql', 'redis']),
      ...(spec % 4 === 0 ? { secret_attributes_ref: { name: `service-${i}-secrets` } } : {}),
    },
    status: {
      status,
      slug: `service-${i}`,
      messages: [{ level: 'info', message: `service is ${status}` }],
      updated_at: created,
      observedGeneration: 1,
    },
  };
}

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const lines: [string, string][] = [];
const report = (name: string, value: string) => lines.push([name, value]);

// --- Build ---

const specifications = Array.from({ length: SPECIFICATIONS }, (_, i) => specification(i));
const objects = Array.from({ length: SERVICES }, (_, i) => service(i));
// The informer's cache holds these anyway: only what the catalog adds is counted.
const before = heapUsed();
let started = performance.now();
const catalog = new ServiceCatalog();
for (const spec of specifications) catalog.upsertSpecification(spec);
for (const object of objects) catalog.upsertService(object); // as an informer's first list
catalog.query({ limit: 1, offset: 0 }); // files the pending rows (one sort per list)
catalog.query({ nrn: randomApp(), type: 'dependency', limit: 1, offset: 0 });
const buildMs = performance.now() - started;
const after = heapUsed();
const jsonBytes = objects.reduce(
  (sum, o) => sum + (catalog.get(o.metadata.namespace, o.metadata.name)?.json.length ?? 0),
  0,
);
report('services', SERVICES.toLocaleString('en'));
report('build (upsert all + first query)', `${buildMs.toFixed(0)} ms`);
report('build per service', `${((buildMs * 1000) / SERVICES).toFixed(2)} µs`);
report('heap added per service', `${((after - before) / SERVICES).toFixed(0)} B`);
report('  of which JSON text (avg length)', `${(jsonBytes / SERVICES).toFixed(0)} B`);

// --- Queries ---

/** Each query in turn, for ITERATIONS rounds or BUDGET_MS, whichever ends first. */
function measure(name: string, queries: readonly CatalogQuery[]): void {
  let results = 0;
  for (let i = 0; i < 1000; i++) catalog.query(queries[i % queries.length] as CatalogQuery);
  const times = new Float64Array(ITERATIONS);
  const t0 = performance.now();
  let n = 0;
  while (n < ITERATIONS && (n % 64 !== 0 || performance.now() - t0 < BUDGET_MS)) {
    const query = queries[n % queries.length] as CatalogQuery;
    const s = performance.now();
    results += catalog.query(query).entries.length;
    times[n++] = performance.now() - s;
  }
  const total = performance.now() - t0;
  const sorted = times.subarray(0, n).sort();
  const us = (q: number) => (sorted[Math.min(n - 1, Math.floor(q * n))] ?? 0) * 1000;
  report(
    name,
    `p50 ${us(0.5).toFixed(1)} µs  p99 ${us(0.99).toFixed(1)} µs  ${Math.round(n / (total / 1000)).toLocaleString('en')} q/s  ${(results / n).toFixed(1)} rows`,
  );
}

const many = <T>(make: () => T): T[] => Array.from({ length: 1000 }, make);
const page = { limit: 30, offset: 0 };
const org = () => orgId(int(FANOUT));
const account = () => {
  const o = int(FANOUT);
  return nrnOf(orgId(o), accountId(o, int(FANOUT)));
};

measure(
  'app NRN + type + limit 30',
  many(() => ({ ...page, nrn: randomApp(), type: 'dependency' as const })),
);
measure(
  'scope NRN (below an app) + limit 30',
  many(() => ({ ...page, nrn: `${randomApp()}:scope=1` })),
);
measure(
  'account NRN + status=active + limit 30',
  many(() => ({ ...page, nrn: account(), status: 'active' })),
);
measure(
  'NRN org=X:account=* + limit 30',
  many(() => ({ ...page, nrn: `organization=${org()}:account=*` })),
);
measure(
  'NRN account=Y:namespace=* + type + limit 30',
  many(() => ({ ...page, nrn: `${account()}:namespace=*`, type: 'scope' as const })),
);
measure(
  'entity_nrn account + limit 30',
  many(() => ({ ...page, entityNrn: account() })),
);
measure('no filter, limit 30', [page]);
measure('no filter, offset 1000', [{ limit: 30, offset: 1000 }]);
measure('status=active, offset 1000', [{ limit: 30, offset: 1000, status: 'active' }]);
measure('status=failed, type=scope, limit 30', [{ ...page, status: 'failed', type: 'scope' }]);
measure(
  'NRN org=X:account=* + offset 1000',
  many(() => ({ limit: 30, offset: 1000, nrn: `organization=${org()}:account=*` })),
);
measure('no filter, limit 1500', [{ limit: 1500, offset: 0 }]);

// --- Events ---

started = performance.now();
const UPDATES = 10_000;
for (let i = 0; i < UPDATES; i++) {
  const object = objects[int(SERVICES)] as ServiceObject;
  catalog.upsertService({
    ...object,
    metadata: { ...object.metadata, resourceVersion: `${object.metadata.resourceVersion}-${i}` },
    status: { ...object.status, status: pick(STATUSES) },
    spec: { ...(object.spec as NonNullable<ServiceObject['spec']>), entity_nrn: entityNrn() },
  });
  // Reads between the writes, as a serving facade has: lists read file their pending rows.
  if (i % 10 === 0) catalog.query({ ...page, type: 'scope' });
}
report(
  'update (status + entity_nrn changed)',
  `${(((performance.now() - started) * 1000) / UPDATES).toFixed(1)} µs each`,
);

process.stdout.write(`\nfacade catalog benchmark (node ${process.version})\n`);
const width = Math.max(...lines.map(([name]) => name.length));
for (const [name, value] of lines) process.stdout.write(`${name.padEnd(width)}  ${value}\n`);
