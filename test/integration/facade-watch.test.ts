// GET /watch from the outside: real HTTP against a facade over a cluster with the operator
// running, read as the status page reads it (fetch and a stream reader). A scope kubectl
// creates streams in as upserts from pending to active, and its delete; filters and what the
// caller may see narrow the stream; Last-Event-ID resumes it or resets it; a reader that never
// reads is cut off while another stream flows on; streams are bounded per caller; bad input is
// a 400 in the error shape.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody, ResourceSummary } from '../../src/api/index.js';
import { Services } from '../../src/kube/index.js';
import { kubectl } from '../support/cluster.js';
import { type OpenedStream, openStream, type SseEvent } from '../support/sse.js';
import {
  ADMIN,
  SERVICES_ONLY,
  type StatusFacade,
  scopeYaml,
  startStatusFacade,
  TABS,
} from '../support/status-facade.js';

const PER_CALLER = 3;
/** Small, so that a reader who stops reading passes it after a few hundred events. */
const PENDING_BYTES = 16 * 1024;

describe('GET /watch', () => {
  let s: StatusFacade;
  const opened: OpenedStream[] = [];

  const watch = async (query = '', token = ADMIN, headers: Record<string, string> = {}) => {
    const stream = await openStream(`${s.facade.url}/watch${query}`, {
      authorization: `Bearer ${token}`,
      ...headers,
    });
    opened.push(stream);
    return stream;
  };
  const summaryOf = (e: SseEvent) => ResourceSummary.parse(JSON.parse(e.data));
  const about = (name: string) => (e: SseEvent) =>
    (e.event === 'upsert' || e.event === 'delete') &&
    (JSON.parse(e.data) as { name: string }).name === name;
  const service = (name: string, specificationId = crypto.randomUUID()) => ({
    metadata: { name, namespace: s.ns },
    spec: {
      name,
      type: 'dependency' as const,
      specification_id: specificationId,
      entity_nrn: s.appNrn,
    },
  });

  beforeAll(async () => {
    s = await startStatusFacade({
      streams: { maxStreamsPerCaller: PER_CALLER, pendingBytes: PENDING_BYTES },
      ringSize: 200,
    });
  });

  afterAll(async () => {
    for (const stream of opened) stream.close();
    await s?.close();
  });

  it('opens with retry and ready, then streams a scope kubectl creates from pending to active, and its delete', async () => {
    const stream = await watch();
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers.get('cache-control')).toBe('no-store');
    const ready = await stream.next();
    expect(ready.event).toBe('ready');
    expect(ready.data).toBe('{}');
    expect(ready.id).toMatch(/^[0-9a-z]+\.[0-9]+$/);
    expect(stream.retry).toBe(2000);

    const applied = await kubectl(s.cluster, ['apply', '-f', '-'], {
      input: scopeYaml(s.ns, 'live', s.appId),
    });
    expect(applied.code, applied.stderr).toBe(0);
    const seen: string[] = [];
    let last: ResourceSummary | undefined;
    while (last?.status !== 'active') {
      const e = await stream.next(about('live'));
      expect(e.event).toBe('upsert');
      expect(e.id?.split('.')[0]).toBe(ready.id?.split('.')[0]);
      last = summaryOf(e);
      if (seen.at(-1) !== last.status) seen.push(last.status);
    }
    // Every change is streamed: nothing skips from "not yet written" straight to active.
    expect(seen[0]).toMatch(/^(unknown|pending)$/);
    expect(seen).toContain('pending');
    expect(last).toMatchObject({
      kind: 'scope',
      namespace: s.ns,
      name: 'live',
      type: 'web_pool',
      application_id: s.appId,
      ready: 'True',
      stalled: false,
    });
    expect(last.nrn).toMatch(new RegExp(`^${s.appNrn}:scope=[0-9]+$`));

    const deleted = await kubectl(s.cluster, [
      'delete',
      'scope',
      'live',
      '-n',
      s.ns,
      '--wait=false',
    ]);
    expect(deleted.code, deleted.stderr).toBe(0);
    const gone = await stream.next((e) => e.event === 'delete' && about('live')(e));
    expect(JSON.parse(gone.data)).toEqual({ kind: 'scope', namespace: s.ns, name: 'live' });
    stream.close();
  });

  it('streams only what matches its filters, and only what the caller may see', async () => {
    const all = await watch();
    const services = await watch('?kind=service');
    const pending = await watch(`?status=pending&nrn=${encodeURIComponent(s.appNrn)}`);
    const noScopes = await watch('', SERVICES_ONLY);
    for (const stream of [all, services, pending, noScopes]) {
      expect((await stream.next()).event).toBe('ready');
    }
    await kubectl(s.cluster, ['apply', '-f', '-'], { input: scopeYaml(s.ns, 'filtered', s.appId) });
    // The scope is seen whole on the unfiltered stream first...
    await all.next((e) => about('filtered')(e) && summaryOf(e).status === 'active');
    // ...then a service: the first event of the narrowed streams is the service's, never the scope's.
    await s.kube.resource(Services).create(service('marker-one'));
    const first = (stream: OpenedStream) => stream.next((e) => e.event !== 'ready');
    expect(JSON.parse((await first(services)).data)).toMatchObject({
      kind: 'service',
      name: 'marker-one',
    });
    expect(JSON.parse((await first(noScopes)).data)).toMatchObject({
      kind: 'service',
      name: 'marker-one',
    });
    // The pending filter saw the scope while it was pending, then its leaving the set (a delete),
    // then the service (pending: its specification does not exist).
    const forPending: SseEvent[] = [];
    for (;;) {
      const e = await first(pending);
      forPending.push(e);
      if (about('marker-one')(e)) break;
    }
    const scopeEvents = forPending.filter(about('filtered'));
    expect(scopeEvents[0]?.event).toBe('upsert');
    expect(scopeEvents.at(-1)?.event).toBe('delete');
    for (const e of scopeEvents.filter((x) => x.event === 'upsert')) {
      expect(summaryOf(e).status).toBe('pending');
    }
    for (const stream of [all, services, pending, noScopes]) stream.close();
  });

  it('resumes after Last-Event-ID with the events in between; a foreign or too old id gets reset', async () => {
    const first = await watch();
    const ready = await first.next();
    const [epoch, seq] = (ready.id ?? '').split('.');
    first.close();
    await s.kube.resource(Services).create(service('while-away'));
    const again = await watch('', ADMIN, { 'last-event-id': ready.id ?? '' });
    const resumed = await again.next();
    expect(resumed).toMatchObject({ event: 'ready', id: ready.id, data: '{"resumed":true}' });
    const missed = await again.next(about('while-away'));
    expect(missed.event).toBe('upsert');
    expect(Number(missed.id?.split('.')[1])).toBeGreaterThan(Number(seq));
    again.close();

    const foreign = await watch('', ADMIN, { 'last-event-id': `zz${epoch}.1` });
    expect(await foreign.next()).toMatchObject({ event: 'reset', data: '{"reason":"foreign"}' });
    expect((await foreign.next()).event).toBe('ready');
    foreign.close();
    const malformed = await watch('', ADMIN, { 'last-event-id': 'not an id' });
    expect(await malformed.next()).toMatchObject({
      event: 'reset',
      data: '{"reason":"malformed"}',
    });
    malformed.close();

    // Past the ring's 200 changes, the oldest id is no longer there to resume from.
    const services = s.kube.resource(Services);
    await services.create(service('churn'));
    let now = Number(seq);
    for (let i = 0; now <= 201; i++) {
      await services.patchStatus(
        { namespace: s.ns, name: 'churn' },
        { status: { slug: `churn-${i}` } },
      );
      const probe = await watch();
      now = Number((await probe.next()).id?.split('.')[1]);
      probe.close();
    }
    const old = await watch('', ADMIN, { 'last-event-id': `${epoch}.1` });
    expect(await old.next()).toMatchObject({ event: 'reset', data: '{"reason":"expired"}' });
    old.close();
  });

  it('refuses bad filters with 400 in the error shape, and a stream without a token with 401', async () => {
    for (const query of ['?kind=pod', `?q=${'x'.repeat(257)}`, '?nrn=acme', '?unknown=1']) {
      const answer = await watch(query);
      expect(answer.status, query).toBe(400);
      expect(ErrorBody.parse(JSON.parse(answer.text ?? ''))).toMatchObject({ code: 'BAD_REQUEST' });
    }
    const anonymous = await openStream(`${s.facade.url}/watch`, {});
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.text ?? '')).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('answers 429 TOO_MANY_STREAMS past the streams one caller may have open', async () => {
    const tabs: OpenedStream[] = [];
    for (let i = 0; i < PER_CALLER; i++) {
      const tab = await watch('', TABS);
      expect(tab.status).toBe(200);
      tabs.push(tab);
    }
    const over = await watch('', TABS);
    expect(over.status).toBe(429);
    expect(ErrorBody.parse(JSON.parse(over.text ?? ''))).toMatchObject({
      statusCode: 429,
      code: 'TOO_MANY_STREAMS',
    });
    // Another caller is not held back by this one's streams.
    expect((await watch('', ADMIN)).status).toBe(200);
    for (const tab of tabs) tab.close();
  });

  it('cuts off a reader that stops reading once its budget is passed, while another stream flows on', async () => {
    const flowing = await watch();
    await flowing.next();
    // A client that sends the request and never reads a byte of the answer.
    let response: IncomingMessage | undefined;
    const url = new URL(`${s.facade.url}/watch`);
    const stalled = httpRequest({
      host: url.hostname,
      port: url.port,
      path: '/watch',
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    stalled.end();
    response = await new Promise<IncomingMessage>((resolve) => stalled.once('response', resolve));
    response.pause();
    expect(response.statusCode).toBe(200);

    const services = s.kube.resource(Services);
    await services.create(service('loud'));
    const cut = () => s.logs.some((l) => l.msg === 'status stream reader too slow; disconnected');
    // Each change carries a long message: the stalled socket fills in a few hundred of them.
    let changes = 0;
    while (!cut() && changes < 20_000) {
      const stamp = new Date().toISOString();
      await services.patchStatus(
        { namespace: s.ns, name: 'loud' },
        {
          status: {
            conditions: [
              {
                type: 'Ready',
                status: 'False',
                reason: 'Testing',
                message: `${changes} ${'x'.repeat(1000)}`,
                lastTransitionTime: stamp,
              },
            ],
          },
        },
      );
      changes++;
    }
    expect(cut()).toBe(true);
    // The other stream still flows: it gets a change made after the cut.
    await services.create(service('after-the-cut'));
    await flowing.next(about('after-the-cut'));
    // The stalled stream, read at last, ends without it.
    let received = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      received += chunk;
    });
    response.resume();
    await new Promise<void>((resolve) => {
      response?.once('close', resolve);
      response?.once('error', () => resolve());
      stalled.once('error', () => resolve());
    });
    expect(received).toMatch(/^retry: 2000\n\nid: [0-9a-z]+\.[0-9]+\nevent: ready\n/);
    expect(received).not.toContain('after-the-cut');
    flowing.close();
  });
});
