// Events as users reach them through core/v1: `kubectl events --for`, and `kubectl get events
// --field-selector` with each field label kube-apiserver supports for Events (and one it does not,
// answered in its words).
import { join } from 'node:path';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, startCluster, type TestCluster, uniqueName } from '../support/cluster.js';

type Json = Record<string, unknown>;

let cluster: TestCluster;
let ns: string;
let kc: KubeConfig;

const SCOPE_API = 'platform.nrn.dev/v1alpha1';

async function ok(args: string[], input?: string): Promise<string> {
  const result = await kubectl(cluster, args, input !== undefined ? { input } : {});
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

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

const ALL = ['configmap-settings', 'old-scope', 'scope-failed', 'scope-provisioned'];

beforeAll(async () => {
  cluster = await startCluster();
  kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  ns = uniqueName('events-api');
  await ok(['apply', '-f', join(import.meta.dirname, '../../crds/scopes.platform.nrn.dev.yaml')]);
  await ok(['wait', '--for=condition=Established', '--timeout=30s', 'crd/scopes.platform.nrn.dev']);
  await ok(['create', 'namespace', ns]);
  for (const event of FIXTURES()) await ok(['create', '-f', '-'], JSON.stringify(event));
}, 60_000);

afterAll(async () => {
  if (cluster !== undefined) {
    await kubectl(cluster, ['delete', 'namespace', ns, '--wait=false']);
    await cluster.close();
  }
});

describe('kubectl events --for', () => {
  it('shows the Events of that object, and no other', async () => {
    const out = await ok(['events', '-n', ns, '--for', 'scope/web']);
    expect(out).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
    const rows = out.trim().split('\n').slice(1);
    expect(rows).toHaveLength(2);
    for (const message of ['scope web is active', 'scope web failed a check']) {
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
    ['involvedObject.kind=Scope', ['old-scope', 'scope-failed', 'scope-provisioned']],
    ['involvedObject.name=web', ['old-scope', 'scope-failed', 'scope-provisioned']],
    ['involvedObject.uid=uid-web', ['scope-failed', 'scope-provisioned']],
    ['involvedObject.apiVersion=platform.nrn.dev/v1beta1', ['old-scope']],
    ['involvedObject.resourceVersion=7', ['scope-provisioned']],
    ['involvedObject.fieldPath=spec.requested_spec', ['scope-provisioned']],
    ['reason=Provisioned', ['old-scope', 'scope-provisioned']],
    ['reportingComponent=checker', ['scope-failed']],
    ['source=nrn-operator', ['old-scope', 'scope-provisioned']],
    // No source.component: the reporting component stands for it.
    ['source=checker', ['scope-failed']],
    ['type=Warning', ['scope-failed']],
    ['metadata.name=configmap-settings', ['configmap-settings']],
    ['involvedObject.kind=Scope,type!=Warning,involvedObject.uid!=uid-old', ['scope-provisioned']],
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
