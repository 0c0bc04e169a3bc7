// Which webhooks a request goes to: rules (resources with `*`, `*/*`, `x/*`, `*/status`, scope,
// operations), namespace and object selectors, as kube's predicates match them.
import { describe, expect, it } from 'vitest';
import type { RequestAttributes } from '../../../src/local/admission/webhooks.js';
import { compileWebhooks } from '../../../src/local/admission/webhooks.js';
import type { KubeObject } from '../../../src/local/types.js';

function webhook(extra: Record<string, unknown>) {
  const configuration = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'c' },
    webhooks: [{ name: 'w.example.com', clientConfig: { url: 'https://127.0.0.1/' }, ...extra }],
  } as KubeObject;
  const [compiled] = compileWebhooks([configuration], false);
  if (compiled === undefined) throw new Error('no webhook compiled');
  return compiled;
}

const pod = (labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', ...(labels ? { labels } : {}) },
});

function request(over: Partial<RequestAttributes> = {}): RequestAttributes {
  return {
    group: '',
    version: 'v1',
    resource: 'pods',
    subresource: '',
    namespace: 'ns',
    namespaced: true,
    operation: 'CREATE',
    object: pod(),
    oldObject: undefined,
    ...over,
  };
}

const rule = (resources: string[], more: Record<string, unknown> = {}) => ({
  rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources, ...more }],
});

describe('webhook rules', () => {
  it('matches resources as kube does: *, */*, x/*, */status', () => {
    const status = request({ subresource: 'status', operation: 'UPDATE' });
    expect(webhook(rule(['*'])).matchesRules(request())).toBe(true);
    expect(webhook(rule(['*'])).matchesRules(status)).toBe(false);
    expect(webhook(rule(['*/*'])).matchesRules(status)).toBe(true);
    expect(webhook(rule(['pods/*'])).matchesRules(status)).toBe(true);
    expect(webhook(rule(['pods/*'])).matchesRules(request())).toBe(false);
    expect(webhook(rule(['*/status'])).matchesRules(status)).toBe(true);
    expect(webhook(rule(['pods'])).matchesRules(status)).toBe(false);
    expect(webhook(rule(['deployments'])).matchesRules(request())).toBe(false);
  });

  it('matches operations and scope; namespaces are cluster-scoped', () => {
    const creates = webhook(rule(['*'], { operations: ['CREATE'] }));
    expect(creates.matchesRules(request({ operation: 'DELETE' }))).toBe(false);
    const cluster = webhook(rule(['*'], { scope: 'Cluster' }));
    expect(cluster.matchesRules(request())).toBe(false);
    const namespace = request({ resource: 'namespaces', namespaced: false, namespace: '' });
    expect(cluster.matchesRules(namespace)).toBe(true);
    expect(webhook(rule(['*'], { scope: 'Namespaced' })).matchesRules(namespace)).toBe(false);
  });

  it('never matches the webhook configurations themselves', () => {
    const configurations = request({
      group: 'admissionregistration.k8s.io',
      resource: 'validatingwebhookconfigurations',
      namespaced: false,
      namespace: '',
    });
    expect(webhook(rule(['*'])).matchesRules(configurations)).toBe(false);
  });
});

describe('webhook selectors', () => {
  it('matches objectSelector on the new or the old object', () => {
    const w = webhook({ objectSelector: { matchLabels: { a: 'b' } } });
    expect(w.matchesObject(request({ object: pod({ a: 'b' }) }))).toBe(true);
    expect(w.matchesObject(request({ object: pod(), oldObject: pod({ a: 'b' }) }))).toBe(true);
    expect(w.matchesObject(request({ object: pod({ a: 'c' }) }))).toBe(false);
  });

  it('matches namespaceSelector on the namespace, a namespace on itself, never skips cluster objects', () => {
    const w = webhook({
      namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
    });
    const labels = (ns: string) => (ns === 'ns' ? { env: 'prod' } : undefined);
    expect(w.matchesNamespace(request(), labels)).toBe(true);
    expect(w.matchesNamespace(request({ namespace: 'other' }), labels)).toBe(false);
    const node = request({ resource: 'nodes', namespaced: false, namespace: '' });
    expect(w.matchesNamespace(node, labels)).toBe(true);
    const ns = (l?: Record<string, string>) =>
      request({
        resource: 'namespaces',
        namespaced: false,
        namespace: '',
        object: {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: 'x', ...(l ? { labels: l } : {}) },
        },
      });
    expect(w.matchesNamespace(ns({ env: 'prod' }), labels)).toBe(true);
    expect(w.matchesNamespace(ns(), labels)).toBe(false);
  });
});
