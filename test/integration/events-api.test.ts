// Events through both of kube-apiserver's APIs, as users reach them: `kubectl events --for`, and
// `kubectl get events --field-selector` with each field label core/v1 supports (and one it does
// not, answered in kube-apiserver's words); events.k8s.io/v1 discovered, created, patched, listed
// with its own field labels and watched through client-node, over the same objects as core/v1:
// an Event written through one API is read, selected and watched through the other.
import { join } from 'node:path';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  Watch,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, startCluster, type TestCluster, uniqueName } from '../support/cluster.js';

type Json = Record<string, unknown>;

let cluster: TestCluster;
let ns: string;
let kc: KubeConfig;
let custom: CustomObjectsApi;

const EVENTS_V1 = { group: 'events.k8s.io', version: 'v1', plural: 'events' } as const;
const SCOPE_API = 'platform.nrn.dev/v1alpha1';

async function ok(args: string[], input?: string): Promise<string> {
  const result = await kubectl(cluster, args, input !== undefined ? { input } : {});
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

const getRaw = async (path: string): Promise<Json> =>
  JSON.parse(await ok(['get', '--raw', path])) as Json;

/** A core/v1 Event as client-go's old recorder writes one (eventTime unset). */
function coreEvent(
  name: string,
  about: Json,
  fields: { reason: string; type: string; message: string } & Json,
): Json {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: ns },
    involvedObject: { namespace: ns, ...about },
    firstTimestamp: '2025-03-01T10:00:00Z',
    lastTimestamp: '2025-03-01T10:00:00Z',
    count: 1,
    ...fields,
  };
}

/** An events.k8s.io/v1 Event as client-go's new recorder (tools/events) creates one. */
function eventsV1Event(name: string, about: Json, fields: Json = {}): Json {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, namespace: ns },
    eventTime: '2025-03-01T10:00:00.123456Z',
    reportingController: 'nrn.dev/operator',
    reportingInstance: 'operator-1',
    action: 'Reconcile',
    reason: 'Reconciled',
    type: 'Normal',
    regarding: { namespace: ns, ...about },
    note: 'scope web reconciled',
    ...fields,
  };
}

const webScope = { apiVersion: SCOPE_API, kind: 'Scope', name: 'web', uid: 'uid-web' };

/** The Events every test reads; each selector below picks a known subset of them. */
const FIXTURES = () => [
  coreEvent(
    'scope-provisioned',
    { ...webScope, resourceVersion: '7', fieldPath: 'spec.requested_spec' },
    {
      reason: 'Provisioned',
      type: 'Normal',
      message: 'scope web is active',
      source: { component: 'nrn-operator', host: 'node-1' },
      reportingComponent: 'nrn-operator',
      reportingInstance: 'nrn-operator-0',
    },
  ),
  // No source: selecting by `source` falls back on the reporting component.
  coreEvent('scope-failed', webScope, {
    reason: 'Failed',
    type: 'Warning',
    message: 'scope web failed a check',
    reportingComponent: 'checker',
    reportingInstance: 'checker-0',
  }),
  // Same kind and name, another API version: not the Scope `kubectl events --for` means.
  coreEvent(
    'old-scope',
    { apiVersion: 'platform.nrn.dev/v1beta1', kind: 'Scope', name: 'web', uid: 'uid-old' },
    {
      reason: 'Provisioned',
      type: 'Normal',
      message: 'an older web',
      source: { component: 'nrn-operator' },
      reportingComponent: 'nrn-operator',
    },
  ),
  coreEvent(
    'configmap-settings',
    { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', uid: 'uid-cm' },
    { reason: 'Updated', type: 'Normal', message: 'settings changed' },
  ),
];

const byName = (items: readonly Json[]) =>
  items.map((e) => (e.metadata as { name: string }).name).sort();

async function coreNames(selector: string): Promise<string[]> {
  const out = await ok(['get', 'events', '-n', ns, '--field-selector', selector, '-o', 'json']);
  return byName((JSON.parse(out) as { items: Json[] }).items);
}

async function eventsV1Names(selector: string): Promise<string[]> {
  const list = (await custom.listNamespacedCustomObject({
    ...EVENTS_V1,
    namespace: ns,
    fieldSelector: selector,
  })) as { items: Json[] };
  return byName(list.items);
}

/** The Status of a request the server refused, as client-node hands it over. */
async function refusal(request: Promise<unknown>): Promise<Json> {
  try {
    await request;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const body = error.body;
    return (typeof body === 'string' ? JSON.parse(body) : body) as Json;
  }
  throw new Error('the request succeeded');
}

const ALL = [
  'configmap-settings',
  'old-scope',
  'scope-failed',
  'scope-provisioned',
  'scope-recorded',
];

beforeAll(async () => {
  cluster = await startCluster();
  kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  custom = kc.makeApiClient(CustomObjectsApi);
  ns = uniqueName('events-api');
  await ok(['apply', '-f', join(import.meta.dirname, '../../crds/scopes.platform.nrn.dev.yaml')]);
  await ok(['wait', '--for=condition=Established', '--timeout=30s', 'crd/scopes.platform.nrn.dev']);
  await ok(['create', 'namespace', ns]);
  for (const event of FIXTURES()) await ok(['create', '-f', '-'], JSON.stringify(event));
  // Through events.k8s.io/v1, as the new recorder does.
  await custom.createNamespacedCustomObject({
    ...EVENTS_V1,
    namespace: ns,
    body: eventsV1Event('scope-recorded', webScope),
  });
}, 60_000);

afterAll(async () => {
  if (cluster !== undefined) {
    await kubectl(cluster, ['delete', 'namespace', ns, '--wait=false']);
    await cluster.close();
  }
});

describe('kubectl events --for', () => {
  it('shows the Events of that object whichever API wrote them, and no other', async () => {
    const out = await ok(['events', '-n', ns, '--for', 'scope/web']);
    expect(out).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
    const rows = out.trim().split('\n').slice(1);
    expect(rows).toHaveLength(3);
    for (const message of [
      'scope web is active',
      'scope web failed a check',
      'scope web reconciled',
    ]) {
      expect(rows.some((row) => row.includes('Scope/web') && row.endsWith(message))).toBe(true);
    }
    expect(out).not.toContain('an older web');
    expect(out).not.toContain('settings changed');
  });

  it('takes a resource by its full name, and says when there is nothing', async () => {
    const out = await ok(['events', '-n', ns, '--for', 'configmaps/settings']);
    expect(out).toContain('settings changed');
    const none = await kubectl(cluster, ['events', '-n', ns, '--for', 'scope/absent']);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain(`No events found in ${ns} namespace.`);
  });
});

describe('core/v1 field selectors', () => {
  it.each([
    ['involvedObject.kind=ConfigMap', ['configmap-settings']],
    [
      'involvedObject.kind=Scope',
      ['old-scope', 'scope-failed', 'scope-provisioned', 'scope-recorded'],
    ],
    [
      'involvedObject.name=web',
      ['old-scope', 'scope-failed', 'scope-provisioned', 'scope-recorded'],
    ],
    ['involvedObject.uid=uid-web', ['scope-failed', 'scope-provisioned', 'scope-recorded']],
    ['involvedObject.apiVersion=platform.nrn.dev/v1beta1', ['old-scope']],
    ['involvedObject.resourceVersion=7', ['scope-provisioned']],
    ['involvedObject.fieldPath=spec.requested_spec', ['scope-provisioned']],
    ['reason=Provisioned', ['old-scope', 'scope-provisioned']],
    ['reportingComponent=checker', ['scope-failed']],
    // Written through events.k8s.io/v1 as reportingController.
    ['reportingComponent=nrn.dev/operator', ['scope-recorded']],
    ['source=nrn-operator', ['old-scope', 'scope-provisioned']],
    // No source.component: the reporting component stands for it.
    ['source=checker', ['scope-failed']],
    ['type=Warning', ['scope-failed']],
    ['metadata.name=configmap-settings', ['configmap-settings']],
    ['involvedObject.kind=Scope,type!=Warning,reason!=Provisioned', ['scope-recorded']],
    ['involvedObject.namespace=elsewhere', []],
  ])('%s', async (selector, expected) => {
    expect(await coreNames(selector)).toEqual(expected);
  });

  it('selects every Event by its namespace, its own and the one it is about', async () => {
    expect(await coreNames(`metadata.namespace=${ns}`)).toEqual(ALL);
    expect(await coreNames(`involvedObject.namespace=${ns}`)).toEqual(ALL);
  });

  it('refuses a field it does not support, in kube-apiserver words', async () => {
    const result = await kubectl(cluster, [
      'get',
      'events',
      '-n',
      ns,
      '--field-selector',
      'involvedObject.name=web,spec.foo=x',
    ]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('(BadRequest)');
    expect(result.stderr).toContain('field label not supported: spec.foo');
    // events.k8s.io/v1's names (regarding for involvedObject) are not core/v1's.
    const status = await refusal(
      kc.makeApiClient(CoreV1Api).listNamespacedEvent({
        namespace: ns,
        fieldSelector: 'regarding.name=web',
      }),
    );
    expect(status).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'field label not supported: regarding.name',
      reason: 'BadRequest',
      code: 400,
    });
  });
});

describe('events.k8s.io/v1', () => {
  it('is discovered, and kubectl lists and reads through it', async () => {
    expect(await ok(['api-resources', '--api-group=events.k8s.io', '-o', 'name'])).toBe(
      'events.events.k8s.io\n',
    );
    const group = await getRaw('/apis/events.k8s.io');
    expect(group).toMatchObject({
      kind: 'APIGroup',
      name: 'events.k8s.io',
      preferredVersion: { groupVersion: 'events.k8s.io/v1', version: 'v1' },
    });
    const resources = await getRaw('/apis/events.k8s.io/v1');
    expect(resources.resources).toEqual([
      expect.objectContaining({
        name: 'events',
        singularName: 'event',
        namespaced: true,
        kind: 'Event',
        shortNames: ['ev'],
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      }),
    ]);
    const names = await ok(['get', 'events.events.k8s.io', '-n', ns, '-o', 'name']);
    expect(names.trim().split('\n').sort()).toEqual(ALL.map((n) => `event.events.k8s.io/${n}`));
    expect(
      await ok([
        'get',
        'events.v1.events.k8s.io',
        'scope-provisioned',
        '-n',
        ns,
        '-o',
        'jsonpath={.note}',
      ]),
    ).toBe('scope web is active');
  });

  it('shows an Event written through core/v1 with its own field names', async () => {
    const event = (await custom.getNamespacedCustomObject({
      ...EVENTS_V1,
      namespace: ns,
      name: 'scope-provisioned',
    })) as Json;
    expect(event).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'scope-provisioned', namespace: ns },
      regarding: {
        apiVersion: SCOPE_API,
        kind: 'Scope',
        name: 'web',
        namespace: ns,
        uid: 'uid-web',
        resourceVersion: '7',
        fieldPath: 'spec.requested_spec',
      },
      reason: 'Provisioned',
      type: 'Normal',
      note: 'scope web is active',
      reportingController: 'nrn-operator',
      reportingInstance: 'nrn-operator-0',
      deprecatedSource: { component: 'nrn-operator', host: 'node-1' },
      deprecatedFirstTimestamp: '2025-03-01T10:00:00Z',
      deprecatedLastTimestamp: '2025-03-01T10:00:00Z',
      deprecatedCount: 1,
    });
    for (const coreOnly of ['involvedObject', 'message', 'source', 'count', 'reportingComponent'])
      expect(event).not.toHaveProperty(coreOnly);
  });

  it('writes an Event that core/v1 reads with its own field names', async () => {
    const event = await getRaw(`/api/v1/namespaces/${ns}/events/scope-recorded`);
    expect(event).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'scope-recorded', namespace: ns },
      involvedObject: { ...webScope, namespace: ns },
      reason: 'Reconciled',
      message: 'scope web reconciled',
      type: 'Normal',
      eventTime: '2025-03-01T10:00:00.123456Z',
      action: 'Reconcile',
      reportingComponent: 'nrn.dev/operator',
      reportingInstance: 'operator-1',
    });
    for (const eventsOnly of ['regarding', 'note', 'reportingController', 'deprecatedSource'])
      expect(event).not.toHaveProperty(eventsOnly);
  });

  it('takes a series patch (strategic merge, as the recorder sends it), seen through both', async () => {
    await ok([
      'patch',
      'events.events.k8s.io',
      'scope-recorded',
      '-n',
      ns,
      '--type=strategic',
      '-p',
      JSON.stringify({ series: { count: 2, lastObservedTime: '2025-03-01T10:05:00.000000Z' } }),
    ]);
    const series = { count: 2, lastObservedTime: '2025-03-01T10:05:00.000000Z' };
    expect(await getRaw(`/api/v1/namespaces/${ns}/events/scope-recorded`)).toMatchObject({
      series,
      reportingComponent: 'nrn.dev/operator',
    });
    expect(
      await custom.getNamespacedCustomObject({
        ...EVENTS_V1,
        namespace: ns,
        name: 'scope-recorded',
      }),
    ).toMatchObject({ series, note: 'scope web reconciled' });
  });

  it.each([
    ['regarding.kind=ConfigMap', ['configmap-settings']],
    ['regarding.name=web,reason=Provisioned', ['old-scope', 'scope-provisioned']],
    ['regarding.uid=uid-web', ['scope-failed', 'scope-provisioned', 'scope-recorded']],
    ['regarding.apiVersion=v1', ['configmap-settings']],
    ['regarding.resourceVersion=7', ['scope-provisioned']],
    ['regarding.fieldPath=spec.requested_spec', ['scope-provisioned']],
    ['reportingController=checker', ['scope-failed']],
    ['reportingController=nrn.dev/operator', ['scope-recorded']],
    ['source=checker', ['scope-failed']],
    ['type=Warning', ['scope-failed']],
    ['reason=Reconciled', ['scope-recorded']],
    ['metadata.name=scope-recorded', ['scope-recorded']],
  ])('selects by %s', async (selector, expected) => {
    expect(await eventsV1Names(selector)).toEqual(expected);
  });

  it('selects by the namespace of the Event and of the object it is about', async () => {
    expect(await eventsV1Names(`regarding.namespace=${ns}`)).toEqual(ALL);
    expect(await eventsV1Names(`metadata.namespace=${ns}`)).toEqual(ALL);
  });

  it('refuses core/v1 field names, in kube-apiserver words', async () => {
    const status = await refusal(
      custom.listNamespacedCustomObject({
        ...EVENTS_V1,
        namespace: ns,
        fieldSelector: 'involvedObject.name=web',
      }),
    );
    expect(status).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      message: 'field label not supported: involvedObject.name',
      reason: 'BadRequest',
      code: 400,
    });
  });

  it('names itself in a missing Event', async () => {
    const status = await refusal(
      custom.getNamespacedCustomObject({ ...EVENTS_V1, namespace: ns, name: 'absent' }),
    );
    expect(status).toMatchObject({
      message: 'events.events.k8s.io "absent" not found',
      reason: 'NotFound',
      details: { name: 'absent', group: 'events.k8s.io', kind: 'events' },
      code: 404,
    });
  });
});

/** A watch through client-node, collecting what it receives. */
async function watching(path: string, query: Json) {
  const seen: Array<{ type: string; object: Json }> = [];
  const controller = await new Watch(kc).watch(
    path,
    query as Record<string, string>,
    (type, object: Json) => seen.push({ type, object }),
    () => {},
  );
  /** Resolves with the next event past those already taken. */
  let taken = 0;
  const next = async () => {
    const deadline = Date.now() + 20_000;
    while (seen.length <= taken) {
      if (Date.now() > deadline) throw new Error(`no watch event after ${taken}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return seen[taken++] as { type: string; object: Json };
  };
  return { next, stop: () => controller.abort() };
}

const resourceVersionOf = (list: unknown) =>
  (list as { metadata: { resourceVersion: string } }).metadata.resourceVersion;

describe('watching Events', () => {
  it('through events.k8s.io/v1, sees what core/v1 writes, selected by its own field labels', async () => {
    const from = resourceVersionOf(
      await custom.listNamespacedCustomObject({ ...EVENTS_V1, namespace: ns }),
    );
    const watch = await watching(`/apis/events.k8s.io/v1/namespaces/${ns}/events`, {
      fieldSelector: 'regarding.name=watched',
      resourceVersion: from,
    });
    try {
      const about = { apiVersion: SCOPE_API, kind: 'Scope', name: 'watched', uid: 'uid-w' };
      await ok(
        ['create', '-f', '-'],
        JSON.stringify(
          coreEvent('watched-1', about, { reason: 'A', type: 'Normal', message: 'a' }),
        ),
      );
      const added = await watch.next();
      expect(added.type).toBe('ADDED');
      expect(added.object).toMatchObject({
        apiVersion: 'events.k8s.io/v1',
        metadata: { name: 'watched-1' },
        regarding: { ...about, namespace: ns },
        note: 'a',
        deprecatedCount: 1,
      });
      expect(added.object).not.toHaveProperty('involvedObject');
      // Not selected: were it sent, it would come before the change below.
      await ok(
        ['create', '-f', '-'],
        JSON.stringify(
          coreEvent(
            'unwatched',
            { ...about, name: 'other' },
            { reason: 'B', type: 'Normal', message: 'b' },
          ),
        ),
      );
      await ok(['patch', 'event', 'watched-1', '-n', ns, '--type=merge', '-p', '{"count":2}']);
      const modified = await watch.next();
      expect(modified.type).toBe('MODIFIED');
      expect(modified.object).toMatchObject({
        metadata: { name: 'watched-1' },
        deprecatedCount: 2,
      });
      await custom.deleteNamespacedCustomObject({ ...EVENTS_V1, namespace: ns, name: 'watched-1' });
      const deleted = await watch.next();
      expect(deleted.type).toBe('DELETED');
      expect(deleted.object).toMatchObject({
        apiVersion: 'events.k8s.io/v1',
        metadata: { name: 'watched-1' },
      });
      expect(await coreNames('metadata.name=watched-1')).toEqual([]);
    } finally {
      watch.stop();
    }
  });

  it('through core/v1, sees what events.k8s.io/v1 writes', async () => {
    const from = resourceVersionOf(await getRaw(`/api/v1/namespaces/${ns}/events?limit=1`));
    const watch = await watching(`/api/v1/namespaces/${ns}/events`, {
      fieldSelector: 'involvedObject.name=recorded,reportingComponent=nrn.dev/operator',
      resourceVersion: from,
    });
    try {
      const about = { apiVersion: SCOPE_API, kind: 'Scope', name: 'recorded', uid: 'uid-r' };
      await custom.createNamespacedCustomObject({
        ...EVENTS_V1,
        namespace: ns,
        body: eventsV1Event('recorded-1', about, { note: 'recorded through the new API' }),
      });
      const added = await watch.next();
      expect(added.type).toBe('ADDED');
      expect(added.object).toMatchObject({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'recorded-1', namespace: ns },
        involvedObject: { ...about, namespace: ns },
        message: 'recorded through the new API',
        reportingComponent: 'nrn.dev/operator',
      });
      expect(added.object).not.toHaveProperty('regarding');
    } finally {
      watch.stop();
    }
  });
});
