// Admission webhooks called by the local control plane, as kube-apiserver calls them: a test
// HTTPS webhook server (its own CA) registered with kubectl, and kubectl writes that go
// through it.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueTls } from '../../src/local/tls.js';
import { kubectl, startCluster, type TestCluster, uniqueName } from '../support/cluster.js';

let cluster: TestCluster;
let ns: string;
let server: Server;
let base: string;
let caBundle: string;
/** Every AdmissionReview request the webhook server received, by path. */
const received: { path: string; request: Record<string, unknown> }[] = [];

async function ok(args: string[], input?: string): Promise<string> {
  const result = await kubectl(cluster, args, input !== undefined ? { input } : {});
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

const configMap = (name: string, labels: Record<string, string>, namespace = ns) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels },
    data: { a: '1' },
  });

/** A webhook configuration of one webhook, for ConfigMaps labelled `case: <label>`. */
function registration(
  kind: 'Validating' | 'Mutating',
  name: string,
  label: string,
  webhook: Record<string, unknown>,
): string {
  return JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: [
      {
        name: `${name}.test.nrn.dev`,
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        clientConfig: { url: `${base}/${label}`, caBundle },
        rules: [
          {
            operations: ['CREATE', 'UPDATE'],
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['configmaps'],
          },
        ],
        objectSelector: { matchLabels: { case: label } },
        ...webhook,
      },
    ],
  });
}

const sentFor = (path: string, name: string) =>
  received.filter(
    (r) =>
      r.path === path &&
      (r.request.object as { metadata?: { name?: string } } | null)?.metadata?.name === name,
  );

beforeAll(async () => {
  const tls = issueTls(['127.0.0.1']);
  caBundle = Buffer.from(tls.ca).toString('base64');
  server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]?.slice(1) ?? '';
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        request: Record<string, unknown>;
      };
      received.push({ path, request: review.request });
      if (path === 'hang') return; // never answers: the caller's timeout ends it
      const response: Record<string, unknown> = { uid: review.request.uid, allowed: true };
      if (path === 'deny') {
        response.allowed = false;
        response.status = { code: 403, reason: 'Forbidden', message: 'no thanks' };
      }
      if (path === 'mutate') {
        response.patchType = 'JSONPatch';
        response.patch = Buffer.from(
          JSON.stringify([{ op: 'add', path: '/data/mutated', value: 'yes' }]),
        ).toString('base64');
        response.warnings = ['mutated by the test webhook'];
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cluster = await startCluster();
  ns = uniqueName('admission');
  await ok(['create', 'namespace', ns]);
}, 60_000);

afterAll(async () => {
  await cluster?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

describe('admission webhooks', () => {
  it('refuses what a validating webhook denies, with kube message, and stores nothing', async () => {
    await ok(['apply', '-f', '-'], registration('Validating', 'deny', 'deny', {}));
    const result = await kubectl(cluster, ['apply', '-f', '-'], {
      input: configMap('denied', { case: 'deny' }),
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      'admission webhook "deny.test.nrn.dev" denied the request: no thanks',
    );
    const get = await kubectl(cluster, ['get', 'configmap', 'denied', '-n', ns]);
    expect(get.stderr).toContain('configmaps "denied" not found');
    const sent = sentFor('deny', 'denied')[0]?.request;
    expect(sent).toMatchObject({
      operation: 'CREATE',
      namespace: ns,
      name: 'denied',
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      dryRun: false,
      oldObject: null,
      userInfo: { username: expect.any(String) },
    });
    // objectSelector: a ConfigMap without the label is not sent.
    await ok(['apply', '-f', '-'], configMap('unlabelled', {}));
    expect(sentFor('deny', 'unlabelled')).toHaveLength(0);
  });

  it('sends a server-side dry run to a webhook without side effects, with dryRun true', async () => {
    await ok(['apply', '-f', '-'], registration('Validating', 'allow', 'allow', {}));
    await ok(['apply', '--dry-run=server', '-f', '-'], configMap('dry', { case: 'allow' }));
    expect(sentFor('allow', 'dry')[0]?.request.dryRun).toBe(true);
    const get = await kubectl(cluster, ['get', 'configmap', 'dry', '-n', ns]);
    expect(get.code).not.toBe(0);
  });

  it('refuses a dry run to a webhook with side effects, as kube does', async () => {
    await ok(
      ['apply', '-f', '-'],
      registration('Validating', 'effects', 'effects', { sideEffects: 'Some' }),
    );
    const result = await kubectl(cluster, ['apply', '--dry-run=server', '-f', '-'], {
      input: configMap('effects', { case: 'effects' }),
    });
    expect(result.stderr).toContain(
      'admission webhook "effects.test.nrn.dev" does not support dry run',
    );
  });

  it('stores what a mutating webhook patches in, and passes its warning on', async () => {
    await ok(['apply', '-f', '-'], registration('Mutating', 'mutate', 'mutate', {}));
    const result = await kubectl(cluster, ['apply', '-f', '-'], {
      input: configMap('mutated', { case: 'mutate' }),
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('mutated by the test webhook');
    const data = await ok(['get', 'configmap', 'mutated', '-n', ns, '-o', 'jsonpath={.data}']);
    expect(JSON.parse(data)).toEqual({ a: '1', mutated: 'yes' });
  });

  it('calls an IfNeeded webhook again once a later one changed the object', async () => {
    const reinvoke = { objectSelector: { matchLabels: { case: 'reinvoke' } } };
    await ok(
      ['apply', '-f', '-'],
      registration('Mutating', 'a-observe', 'observe', {
        ...reinvoke,
        reinvocationPolicy: 'IfNeeded',
      }),
    );
    await ok(['apply', '-f', '-'], registration('Mutating', 'b-mutate', 'mutate', reinvoke));
    await ok(['apply', '-f', '-'], configMap('reinvoked', { case: 'reinvoke' }));
    const seen = sentFor('observe', 'reinvoked').map(
      (r) => (r.request.object as { data: Record<string, string> }).data,
    );
    expect(seen).toEqual([{ a: '1' }, { a: '1', mutated: 'yes' }]);
  });

  it('lets a write through a webhook that is down with Ignore, refuses it with Fail', async () => {
    const down = createServer();
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const port = (down.address() as AddressInfo).port;
    await new Promise<void>((resolve) => down.close(() => resolve()));
    const url = `https://127.0.0.1:${port}/down`;
    await ok(
      ['apply', '-f', '-'],
      registration('Validating', 'down-ignore', 'down-ignore', {
        failurePolicy: 'Ignore',
        clientConfig: { url, caBundle },
      }),
    );
    await ok(['apply', '-f', '-'], configMap('ignored', { case: 'down-ignore' }));
    await ok(
      ['apply', '-f', '-'],
      registration('Validating', 'down-fail', 'down-fail', {
        failurePolicy: 'Fail',
        clientConfig: { url, caBundle },
      }),
    );
    const result = await kubectl(cluster, ['apply', '-f', '-'], {
      input: configMap('failed', { case: 'down-fail' }),
    });
    expect(result.stderr).toContain(
      `Internal error occurred: failed calling webhook "down-fail.test.nrn.dev": failed to call webhook: Post "${url}?timeout=10s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
  });

  it('sends only what namespaceSelector and matchConditions select', async () => {
    const other = uniqueName('admission-on');
    await ok(['create', 'namespace', other]);
    await ok(['label', 'namespace', other, 'admission=on']);
    await ok(
      ['apply', '-f', '-'],
      registration('Validating', 'selective', 'selective', {
        namespaceSelector: { matchLabels: { admission: 'on' } },
        matchConditions: [
          { name: 'checked-only', expression: 'object.metadata.name.startsWith("checked-")' },
        ],
      }),
    );
    await ok(['apply', '-f', '-'], configMap('checked-elsewhere', { case: 'selective' }));
    await ok(['apply', '-f', '-'], configMap('checked-here', { case: 'selective' }, other));
    await ok(['apply', '-f', '-'], configMap('unchecked-here', { case: 'selective' }, other));
    expect(sentFor('selective', 'checked-elsewhere')).toHaveLength(0);
    expect(sentFor('selective', 'checked-here')).toHaveLength(1);
    expect(sentFor('selective', 'unchecked-here')).toHaveLength(0);
  });

  it('refuses a delete a webhook denies, and keeps the object', async () => {
    await ok(['apply', '-f', '-'], configMap('kept', { case: 'deny-delete' }));
    await ok(
      ['apply', '-f', '-'],
      registration('Validating', 'deny-delete', 'deny', {
        objectSelector: { matchLabels: { case: 'deny-delete' } },
        rules: [
          {
            operations: ['DELETE'],
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['configmaps'],
          },
        ],
      }),
    );
    const result = await kubectl(cluster, ['delete', 'configmap', 'kept', '-n', ns]);
    expect(result.stderr).toContain(
      'admission webhook "deny-delete.test.nrn.dev" denied the request: no thanks',
    );
    const sent = received.find(
      (r) =>
        r.request.operation === 'DELETE' &&
        (r.request.oldObject as { metadata: { name: string } } | null)?.metadata.name === 'kept',
    );
    expect(sent?.request).toMatchObject({ name: 'kept', object: null });
    expect(await ok(['get', 'configmap', 'kept', '-n', ns, '-o', 'name'])).toContain('kept');
  });

  it('refuses a write whose match condition fails to evaluate, with Fail', async () => {
    await ok(
      ['apply', '-f', '-'],
      registration('Validating', 'broken-condition', 'allow', {
        objectSelector: { matchLabels: { case: 'broken-condition' } },
        matchConditions: [{ name: 'asks-authorizer', expression: 'authorizer.group("").check()' }],
      }),
    );
    const result = await kubectl(cluster, ['apply', '-f', '-'], {
      input: configMap('broken', { case: 'broken-condition' }),
    });
    expect(result.stderr).toContain('configmaps "broken" is forbidden: asks-authorizer:');
    // The configurations themselves are never sent to a webhook: they stay repairable.
    await ok(['delete', 'validatingwebhookconfiguration', 'broken-condition']);
  });

  it('matches a status subresource by resources */status, not the object itself', async () => {
    await ok(
      ['apply', '-f', '-'],
      registration('Validating', 'deny-status', 'deny', {
        objectSelector: { matchLabels: { case: 'deny-status' } },
        rules: [
          {
            operations: ['UPDATE'],
            apiGroups: ['apps'],
            apiVersions: ['v1'],
            resources: ['*/status'],
          },
        ],
      }),
    );
    await ok(['create', 'deployment', 'web', '-n', ns, '--image=nginx']);
    await ok(['label', 'deployment', 'web', '-n', ns, 'case=deny-status']);
    const result = await kubectl(cluster, [
      'patch',
      'deployment',
      'web',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"observedGeneration":1}}',
    ]);
    expect(result.stderr).toContain(
      'admission webhook "deny-status.test.nrn.dev" denied the request: no thanks',
    );
    const sent = received.find(
      (r) =>
        r.path === 'deny' &&
        (r.request.object as { metadata?: { name?: string } } | null)?.metadata?.name === 'web',
    );
    expect(sent?.request).toMatchObject({ subResource: 'status', operation: 'UPDATE' });
  });

  it('lets a hanging webhook cost its timeout only (Ignore lets the write through)', async () => {
    await ok(
      ['apply', '-f', '-'],
      registration('Validating', 'hang', 'hang', { failurePolicy: 'Ignore', timeoutSeconds: 1 }),
    );
    await ok(['apply', '-f', '-'], configMap('slow', { case: 'hang' }));
    expect(sentFor('hang', 'slow')).toHaveLength(1);
    expect(await ok(['get', 'configmap', 'slow', '-n', ns, '-o', 'name'])).toContain('slow');
  });
});
