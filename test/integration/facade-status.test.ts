// The status data calls from the outside: real HTTP against a facade over a cluster with the
// operator running. The tree counts what kubectl made, by NRN and lifecycle value; the list puts
// a failed scope first with its reason and pages through a cursor; the detail of the failed scope
// carries its conditions, messages, children and last Events; a caller who may not get scopes
// sees none of them; bad filters and cursors are 400 in the error shape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ErrorBody,
  ResourceDetail,
  ResourcePage,
  type ResourceSummary,
  StatusTree,
} from '../../src/api/index.js';
import { Services } from '../../src/kube/index.js';
import { kubectl } from '../support/cluster.js';
import {
  SERVICES_ONLY,
  type StatusFacade,
  scopeYaml,
  startStatusFacade,
} from '../support/status-facade.js';
import { sleep } from '../support/wait.js';

describe('GET /status/*', () => {
  let s: StatusFacade;

  const page = async (query: string, token?: string) => {
    const answer = await s.call<ResourcePage>(`/status/resources${query}`, token);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return ResourcePage.parse(answer.body);
  };
  const mine = (summaries: ResourceSummary[]) => summaries.filter((r) => r.namespace === s.ns);
  const expectError = async (path: string, status: number, code: string, token?: string | null) => {
    const answer = await s.call(path, token);
    expect(answer.status, path).toBe(status);
    expect(ErrorBody.parse(answer.body)).toMatchObject({ statusCode: status, code });
  };

  beforeAll(async () => {
    s = await startStatusFacade();
    const apply = async (yaml: string) => {
      const applied = await kubectl(s.cluster, ['apply', '-f', '-'], { input: yaml });
      expect(applied.code, applied.stderr).toBe(0);
    };
    await apply(scopeYaml(s.ns, 'web', s.appId));
    // The same slug in the same application, written with no admission webhook running: the
    // operator fails it, naming the holder.
    await apply(scopeYaml(s.ns, 'web-again', s.appId, 'web'));
    const services = s.kube.resource(Services);
    for (const name of ['db', 'cache']) {
      await services.create({
        metadata: { name, namespace: s.ns },
        // No such specification: the operator leaves them pending.
        spec: {
          name,
          type: 'dependency',
          specification_id: crypto.randomUUID(),
          entity_nrn: s.appNrn,
        },
      });
    }
    // Until the operator settled all four (as the status page would watch them settle).
    for (;;) {
      const all = mine((await page(`?nrn=${encodeURIComponent(s.appNrn)}`)).results);
      const statuses = Object.fromEntries(all.map((r) => [r.name, r.status]));
      if (
        statuses.web === 'active' &&
        statuses['web-again'] === 'failed' &&
        statuses.db === 'pending' &&
        statuses.cache === 'pending'
      ) {
        break;
      }
      await sleep(100);
    }
  });

  afterAll(async () => {
    await s?.close();
  });

  it('GET /status/tree counts by NRN node and lifecycle value, down to the named application', async () => {
    const answer = await s.call<StatusTree>(`/status/tree?nrn=${encodeURIComponent(s.appNrn)}`);
    expect(answer.status).toBe(200);
    const tree = StatusTree.parse(answer.body);
    expect(tree.counts).toEqual({ scope: { active: 1, failed: 1 }, service: { pending: 2 } });
    const [org, account, namespace] = s.appNrn.split(':');
    expect(tree.nodes.map((n) => [n.nrn, n.level])).toEqual([
      [org, 'organization'],
      [`${org}:${account}`, 'account'],
      [`${org}:${account}:${namespace}`, 'namespace'],
      [s.appNrn, 'application'],
    ]);
    expect(tree.nodes.at(-1)).toEqual({
      nrn: s.appNrn,
      level: 'application',
      name: 'shop',
      counts: tree.counts,
    });
    const failed = StatusTree.parse(
      (await s.call(`/status/tree?nrn=${encodeURIComponent(s.appNrn)}&status=failed`)).body,
    );
    expect(failed.counts).toEqual({ scope: { failed: 1 }, service: {} });
  });

  it('GET /status/resources puts the failure first, with its reason, and pages with a cursor', async () => {
    const nrn = `nrn=${encodeURIComponent(s.appNrn)}`;
    const all = await page(`?${nrn}`);
    expect(all.total).toBe(4);
    expect(all.results.map((r) => r.name)).toEqual(['web-again', 'cache', 'db', 'web']);
    expect(all.results[0]).toMatchObject({
      kind: 'scope',
      status: 'failed',
      stalled: true,
      ready: 'False',
      application_id: s.appId,
    });
    expect(all.results[0]?.reason).toBeTruthy();
    expect(all.results[0]?.message).toContain('slug web is already used');

    const names: string[] = [];
    let cursor = '';
    for (;;) {
      const one = await page(`?${nrn}&limit=1${cursor}`);
      expect(one.total).toBe(4);
      names.push(...one.results.map((r) => r.name));
      if (one.next_cursor === undefined) break;
      cursor = `&cursor=${encodeURIComponent(one.next_cursor)}`;
    }
    expect(names).toEqual(['web-again', 'cache', 'db', 'web']);

    expect(mine((await page(`?${nrn}&kind=service&q=CACH`)).results).map((r) => r.name)).toEqual([
      'cache',
    ]);
    expect((await page(`?${nrn}&type=web_pool&status=active`)).results.map((r) => r.name)).toEqual([
      'web',
    ]);
  });

  it('shows a caller who may not get scopes none of them, anywhere', async () => {
    const nrn = `nrn=${encodeURIComponent(s.appNrn)}`;
    const seen = await page(`?${nrn}`, SERVICES_ONLY);
    expect(seen.results.map((r) => r.kind)).toEqual(['service', 'service']);
    const tree = StatusTree.parse((await s.call(`/status/tree?${nrn}`, SERVICES_ONLY)).body);
    expect(tree.counts).toEqual({ scope: {}, service: { pending: 2 } });
    // Not found, as for a scope that does not exist: the caller learns nothing of it.
    await expectError(`/status/resources/scope/${s.ns}/web`, 404, 'NOT_FOUND', SERVICES_ONLY);
    await expectError(`/status/resources/scope/${s.ns}/nothing-here`, 404, 'NOT_FOUND');
  });

  it('GET /status/resources/{kind}/{namespace}/{name} of a failed scope carries its reason and last Events', async () => {
    const answer = await s.call<ResourceDetail>(`/status/resources/scope/${s.ns}/web-again`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const detail = ResourceDetail.parse(answer.body);
    expect(detail.summary).toMatchObject({ name: 'web-again', status: 'failed', stalled: true });
    expect(detail.conditions.find((c) => c.type === 'Stalled')).toMatchObject({ status: 'True' });
    expect(detail.messages.map((m) => m.message).join('\n')).toContain('slug web is already used');
    // Events are written in the background: read until the failure's is there.
    let events = detail.events;
    for (let i = 0; i < 100 && !events.some((e) => e.type === 'Warning'); i++) {
      await sleep(100);
      events = ResourceDetail.parse(
        (await s.call(`/status/resources/scope/${s.ns}/web-again`)).body,
      ).events;
    }
    expect(events.length).toBeGreaterThan(0);
    expect(events.length).toBeLessThanOrEqual(10);
    const warning = events.find((e) => e.type === 'Warning');
    expect(warning?.reason).toBeTruthy();
    expect(warning?.source).toBeTruthy();
    const times = events.map((e) => Date.parse(e.last_seen));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const active = ResourceDetail.parse((await s.call(`/status/resources/scope/${s.ns}/web`)).body);
    expect(active.summary.status).toBe('active');
    expect(active.children.map((c) => c.kind)).toContain('Namespace');
  });

  it('refuses bad filters, limits and cursors with 400, and no token with 401', async () => {
    await expectError('/status/resources?cursor=not-ours', 400, 'BAD_REQUEST');
    await expectError(`/status/resources?cursor=${'A'.repeat(2000)}`, 400, 'BAD_REQUEST');
    await expectError('/status/resources?limit=0', 400, 'BAD_REQUEST');
    await expectError('/status/resources?limit=501', 400, 'BAD_REQUEST');
    await expectError(`/status/tree?q=${'x'.repeat(257)}`, 400, 'BAD_REQUEST');
    await expectError('/status/tree?kind=pod', 400, 'BAD_REQUEST');
    await expectError('/status/tree?nrn=acme', 400, 'BAD_REQUEST');
    await expectError('/status/tree?sort=name', 400, 'BAD_REQUEST');
    await expectError('/status/resources/pod/default/x', 400, 'BAD_REQUEST');
    await expectError('/status/tree', 401, 'UNAUTHENTICATED', null);
  });

  it('documents the four calls in /openapi.json', async () => {
    const doc = (await s.call<{ paths: Record<string, { get?: unknown }> }>('/openapi.json')).body;
    for (const path of [
      '/status/tree',
      '/status/resources',
      '/status/resources/{kind}/{namespace}/{name}',
      '/watch',
    ]) {
      expect(doc.paths[path]?.get, path).toBeDefined();
    }
    expect(JSON.stringify(doc.paths['/watch'])).toContain('text/event-stream');
  });
});
