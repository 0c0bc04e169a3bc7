// src/kube's typed client against "a cluster": every verb on a Scope and on a built-in kind,
// status writes, server-side apply conflicts, schema failures, keep-alive and transport errors,
// and credentials from the kubeconfig (exec plugin, token file).
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { ScopeSpec } from '../../src/api/index.js';
import {
  ConfigMaps,
  connect,
  defineResource,
  isNotFound,
  isTransient,
  type Kube,
  KubeApiError,
  KubeSchemaError,
  KubeTransportError,
  Namespaces,
  Scopes,
  Secrets,
} from '../../src/kube/index.js';
import { issueTls } from '../../src/local/tls.js';
import { silentLogger } from '../../src/log.js';
import { kubectl, startCluster, type TestCluster, uniqueName } from '../support/cluster.js';
import { sleep, until } from '../support/wait.js';

const log = silentLogger();

/** This process's children whose command line holds `text` (Linux: /proc). */
async function childrenRunning(text: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing paren.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      if ((await readFile(`/proc/${entry}/cmdline`, 'utf8')).includes(text))
        found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** Whether a process of this pid is still there. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface KubeconfigYaml {
  users: { user: { token?: string } & Record<string, unknown> }[];
}

function scopeSpec(name: string) {
  return { name, type: 'serverless' as const, application_id: 1, requested_spec: {} };
}

async function apiError(promise: Promise<unknown>): Promise<KubeApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KubeApiError);
  return error as KubeApiError;
}

describe('kube client', () => {
  let cluster: TestCluster;
  let kube: Kube;
  let ns: string;

  beforeAll(async () => {
    cluster = await startCluster();
    const applied = await kubectl(cluster, [
      'apply',
      '-f',
      join(import.meta.dirname, '../../crds'),
    ]);
    expect(applied.code, applied.stderr).toBe(0);
    await kubectl(cluster, ['wait', '--for=condition=Established', 'crd/scopes.platform.nrn.dev']);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    ns = uniqueName('kube-client');
    await kube.resource(Namespaces).create({ metadata: { name: ns } });
  });
  afterAll(async () => {
    await kube?.resource(Namespaces).delete({ name: ns });
    kube?.close();
    await cluster?.close();
  });

  it('runs every verb on a Scope, with spec and status parsed by the zod schemas', async () => {
    const scopes = kube.resource(Scopes);
    const created = await scopes.create({
      metadata: { name: 'one', namespace: ns, labels: { tier: 'a' } },
      spec: scopeSpec('one'),
    });
    expect(created.apiVersion).toBe('platform.nrn.dev/v1alpha1');
    expect(created.kind).toBe('Scope');
    expect(created.spec?.type).toBe('serverless');
    await scopes.create({ metadata: { name: 'two', namespace: ns }, spec: scopeSpec('two') });
    await scopes.create({ metadata: { name: 'three', namespace: ns }, spec: scopeSpec('three') });

    const got = await scopes.get({ namespace: ns, name: 'one' });
    expect(got.metadata.uid).toBe(created.metadata.uid);

    // list: selectors, and pages of one through limit/continue
    const labelled = await scopes.list({ namespace: ns, labelSelector: 'tier=a' });
    expect(labelled.items.map((s) => s.metadata.name)).toEqual(['one']);
    const byName = await scopes.list({ namespace: ns, fieldSelector: 'metadata.name=two' });
    expect(byName.items.map((s) => s.metadata.name)).toEqual(['two']);
    const pages: string[] = [];
    let token: string | undefined;
    do {
      const page = await scopes.list({
        namespace: ns,
        limit: 1,
        ...(token ? { continue: token } : {}),
      });
      expect(page.items.length).toBeLessThanOrEqual(1);
      pages.push(...page.items.map((s) => s.metadata.name));
      token = page.continue;
    } while (token !== undefined);
    expect(pages.sort()).toEqual(['one', 'three', 'two']);
    const everywhere = await scopes.list({ labelSelector: 'tier=a' });
    expect(everywhere.items.map((s) => `${s.metadata.namespace}/${s.metadata.name}`)).toContain(
      `${ns}/one`,
    );

    // replace (PUT) with optimistic concurrency: a stale resourceVersion is a 409 Conflict
    const replaced = await scopes.replace({
      ...got,
      spec: { ...scopeSpec('one'), tier: 'testing' },
    });
    expect(replaced.spec?.tier).toBe('testing');
    const stale = await apiError(scopes.replace({ ...got, spec: scopeSpec('one') }));
    expect(stale.code).toBe(409);
    expect(stale.reason).toBe('Conflict');

    // merge and JSON patch
    const merged = await scopes.patch(
      { namespace: ns, name: 'one' },
      { spec: { tags: ['merged'] } },
      { type: 'merge' },
    );
    expect(merged.spec?.tags).toEqual(['merged']);
    const jsonPatched = await scopes.patch(
      { namespace: ns, name: 'one' },
      [
        { op: 'test', path: '/spec/tier', value: 'testing' },
        { op: 'replace', path: '/spec/tier', value: 'critical' },
      ],
      { type: 'json' },
    );
    expect(jsonPatched.spec?.tier).toBe('critical');
    expect(jsonPatched.spec?.tags).toEqual(['merged']);

    // server-side apply creates, then updates the manager's fields
    const applied = await scopes.apply(
      { metadata: { name: 'applied', namespace: ns }, spec: scopeSpec('applied') },
      { fieldManager: 'test-a' },
    );
    expect(applied.metadata.managedFields).toBeDefined();
    const reapplied = await scopes.apply(
      {
        metadata: { name: 'applied', namespace: ns },
        spec: { ...scopeSpec('applied'), tier: 'important' },
      },
      { fieldManager: 'test-a' },
    );
    expect(reapplied.spec?.tier).toBe('important');

    // delete: a failed precondition is a 409; then the object goes
    const wrongUid = await apiError(
      scopes.delete({ namespace: ns, name: 'two' }, { preconditions: { uid: 'not-the-uid' } }),
    );
    expect(wrongUid.code).toBe(409);
    const two = await scopes.get({ namespace: ns, name: 'two' });
    await scopes.delete(
      { namespace: ns, name: 'two' },
      {
        propagationPolicy: 'Foreground',
        preconditions: { uid: two.metadata.uid as string },
      },
    );
    const gone = await apiError(scopes.get({ namespace: ns, name: 'two' }));
    expect(gone.code).toBe(404);
    expect(gone.reason).toBe('NotFound');
    expect(gone.details?.name).toBe('two');
    expect(isNotFound(gone)).toBe(true);
    expect(isTransient(gone)).toBe(false);
  });

  it('writes status through /status and leaves spec and generation alone', async () => {
    const scopes = kube.resource(Scopes);
    const created = await scopes.create({
      metadata: { name: 'status', namespace: ns },
      spec: scopeSpec('status'),
    });
    const patched = await scopes.patchStatus(
      { namespace: ns, name: 'status' },
      // spec in a status patch is ignored by the server: status writes never touch spec
      { status: { status: 'pending', id: 7, observedGeneration: 1 }, spec: { name: 'changed' } },
    );
    expect(patched.status?.status).toBe('pending');
    expect(patched.status?.id).toBe(7);
    expect(patched.spec).toEqual(created.spec);
    expect(patched.metadata.generation).toBe(created.metadata.generation);

    const applied = await scopes.applyStatus(
      {
        metadata: { name: 'status', namespace: ns },
        status: {
          status: 'active',
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'Provisioned',
              message: 'ready',
              lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            },
          ],
        },
      },
      { fieldManager: 'test-status', force: true },
    );
    expect(applied.status?.status).toBe('active');
    expect(applied.status?.conditions?.[0]?.type).toBe('Ready');
    expect(applied.spec).toEqual(created.spec);
    expect(applied.metadata.generation).toBe(created.metadata.generation);
  });

  it('surfaces a server-side apply conflict as KubeApiError 409 Conflict, and force wins', async () => {
    const scopes = kube.resource(Scopes);
    const object = (tier: 'testing' | 'critical') => ({
      metadata: { name: 'contested', namespace: ns },
      spec: { ...scopeSpec('contested'), tier },
    });
    await scopes.apply(object('testing'), { fieldManager: 'owner' });
    const conflict = await apiError(scopes.apply(object('critical'), { fieldManager: 'intruder' }));
    expect(conflict.code).toBe(409);
    expect(conflict.reason).toBe('Conflict');
    expect(conflict.message).toMatch(/conflict/i);
    expect(conflict.details?.causes?.some((c) => c.field?.includes('tier'))).toBe(true);
    const forced = await scopes.apply(object('critical'), {
      fieldManager: 'intruder',
      force: true,
    });
    expect(forced.spec?.tier).toBe('critical');
  });

  it('reports an object our schema refuses as KubeSchemaError naming the field', async () => {
    await kube.resource(Scopes).create({
      metadata: { name: 'a-long-name', namespace: ns },
      spec: scopeSpec('a-long-name'),
    });
    // A stricter schema than the CRD's stands for a server object that drifted from ours.
    const strict = defineResource({
      ...Scopes,
      spec: ScopeSpec.extend({ name: z.string().max(3) }),
    });
    const error = await kube
      .resource(strict)
      .get({ namespace: ns, name: 'a-long-name' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(KubeSchemaError);
    const schemaError = error as KubeSchemaError;
    expect(schemaError.objectKey).toBe(`${ns}/a-long-name`);
    expect(schemaError.problems).toHaveLength(1);
    expect(schemaError.problems[0]).toMatch(/^spec\.name: /);
    expect(schemaError.message).toContain(`Scope ${ns}/a-long-name`);

    // The envelope is checked too: an answer of another kind is refused, not trusted.
    const wrongKind = defineResource({ ...Scopes, kind: 'Application' });
    await expect(
      kube.resource(wrongKind).get({ namespace: ns, name: 'a-long-name' }),
    ).rejects.toThrow(/kind: expected Application, got Scope/);
  });

  it('runs every verb on built-in kinds (ConfigMap, Secret, Namespace)', async () => {
    const configMaps = kube.resource(ConfigMaps);
    const created = await configMaps.create({
      metadata: { name: 'settings', namespace: ns },
      data: { a: '1' },
    });
    expect(created.kind).toBe('ConfigMap');
    expect(created.data).toEqual({ a: '1' });
    const got = await configMaps.get({ namespace: ns, name: 'settings' });
    const listed = await configMaps.list({
      namespace: ns,
      fieldSelector: 'metadata.name=settings',
    });
    expect(listed.items.map((c) => c.kind)).toEqual(['ConfigMap']);
    const replaced = await configMaps.replace({ ...got, data: { a: '2' } });
    expect(replaced.data).toEqual({ a: '2' });
    const merged = await configMaps.patch(
      { namespace: ns, name: 'settings' },
      { data: { b: '3' } },
    );
    expect(merged.data).toEqual({ a: '2', b: '3' });
    const strategic = await configMaps.patch(
      { namespace: ns, name: 'settings' },
      { data: { c: '4' } },
      { type: 'strategic' },
    );
    expect(strategic.data).toEqual({ a: '2', b: '3', c: '4' });
    const jsonPatched = await configMaps.patch(
      { namespace: ns, name: 'settings' },
      [{ op: 'remove', path: '/data/a' }],
      { type: 'json' },
    );
    expect(jsonPatched.data).toEqual({ b: '3', c: '4' });
    const applied = await configMaps.apply(
      { metadata: { name: 'settings', namespace: ns }, data: { d: '5' } },
      { fieldManager: 'test', force: true },
    );
    expect(applied.data).toMatchObject({ d: '5' });
    await configMaps.delete(
      { namespace: ns, name: 'settings' },
      { propagationPolicy: 'Background' },
    );
    expect(isNotFound(await apiError(configMaps.get({ namespace: ns, name: 'settings' })))).toBe(
      true,
    );

    const secret = await kube.resource(Secrets).apply(
      {
        metadata: { name: 'creds', namespace: ns },
        type: 'Opaque',
        stringData: { token: 'x' },
      },
      { fieldManager: 'test' },
    );
    expect(secret.kind).toBe('Secret');
    const namespace = await kube.resource(Namespaces).get({ name: ns });
    expect(namespace.metadata.namespace).toBeUndefined();
    expect(namespace.kind).toBe('Namespace');

    const exists = await apiError(
      configMaps
        .create({ metadata: { name: 'twice', namespace: ns } })
        .then(() => configMaps.create({ metadata: { name: 'twice', namespace: ns } })),
    );
    expect(exists.code).toBe(409);
    expect(exists.reason).toBe('AlreadyExists');

    // Created without reading the answer; refused the same way as create.
    await expect(
      configMaps.createAndForget({ metadata: { name: 'quiet', namespace: ns }, data: { q: '1' } }),
    ).resolves.toBeUndefined();
    expect((await configMaps.get({ namespace: ns, name: 'quiet' })).data).toEqual({ q: '1' });
    const again = await apiError(
      configMaps.createAndForget({ metadata: { name: 'quiet', namespace: ns } }),
    );
    expect(again.code).toBe(409);
    expect(again.reason).toBe('AlreadyExists');

    // Applied without reading the answer; a conflict with another manager refused as apply's.
    await expect(
      configMaps.applyAndForget(
        { metadata: { name: 'quiet', namespace: ns }, data: { q: '2' } },
        { fieldManager: 'quiet-owner', force: true },
      ),
    ).resolves.toBeUndefined();
    expect((await configMaps.get({ namespace: ns, name: 'quiet' })).data).toEqual({ q: '2' });
    const conflict = await apiError(
      configMaps.applyAndForget(
        { metadata: { name: 'quiet', namespace: ns }, data: { q: '3' } },
        { fieldManager: 'someone-else' },
      ),
    );
    expect(conflict.code).toBe(409);
    expect(conflict.reason).toBe('Conflict');
  });

  it('reuses one keep-alive connection for sequential requests', async () => {
    const fresh = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    try {
      const configMaps = fresh.resource(ConfigMaps);
      // undici's pool may open a second connection for the request that follows the very
      // first one (the first connection is not yet marked free); after that, none.
      await configMaps.list({ namespace: ns });
      await configMaps.list({ namespace: ns });
      const opened = fresh.stats.connections;
      expect(opened).toBeLessThanOrEqual(2);
      for (let i = 0; i < 20; i++) {
        await configMaps.apply(
          { metadata: { name: `ka-${i}`, namespace: ns }, data: { i: String(i) } },
          { fieldManager: 'test' },
        );
        await configMaps.get({ namespace: ns, name: `ka-${i}` });
      }
      expect(fresh.stats.requests).toBe(42);
      expect(fresh.stats.connections).toBe(opened);
    } finally {
      fresh.close();
    }
  });

  it('bounds the connections of requests, however many are in flight', async () => {
    const fresh = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    try {
      const namespaces = fresh.resource(Namespaces);
      const answers = await Promise.all(
        Array.from({ length: 300 }, () => namespaces.get({ name: 'default' })),
      );
      expect(answers.every((ns) => ns.metadata.name === 'default')).toBe(true);
      expect(fresh.stats.requests).toBe(300);
      expect(fresh.stats.connections).toBeGreaterThan(1);
      expect(fresh.stats.connections).toBeLessThanOrEqual(128);
    } finally {
      fresh.close();
    }
  });

  describe('credentials from the kubeconfig', () => {
    let dir: string;
    let token: string | undefined;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'nrn-kube-credentials-'));
      const config = parseYaml(await readFile(cluster.kubeconfigPath, 'utf8')) as KubeconfigYaml;
      token = config.users[0]?.user.token;
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    /** The cluster's kubeconfig with its user's credentials replaced by `user`. */
    async function kubeconfigWith(user: Record<string, unknown>): Promise<string> {
      const config = parseYaml(await readFile(cluster.kubeconfigPath, 'utf8')) as KubeconfigYaml;
      for (const entry of config.users) entry.user = user;
      const path = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
      await writeFile(path, stringifyYaml(config), { mode: 0o600 });
      return path;
    }

    /**
     * A kubeconfig whose user runs an exec plugin that answers a token the server refuses the
     * first time and the cluster's own token after, counting its runs in `calls`.
     */
    async function execKubeconfig(calls: string): Promise<string> {
      const credential = (value: string) =>
        JSON.stringify({
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          status: { token: value },
        });
      const script = [
        "const fs = require('node:fs');",
        `const first = !fs.existsSync(${JSON.stringify(calls)});`,
        `fs.appendFileSync(${JSON.stringify(calls)}, 'x');`,
        `process.stdout.write(first ? ${JSON.stringify(credential('not-the-token'))} : ${JSON.stringify(credential(token ?? ''))});`,
      ].join(' ');
      return kubeconfigWith({
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: process.execPath,
          args: ['-e', script],
          interactiveMode: 'Never',
        },
      });
    }

    /** The plugin's first token is refused (401); asked again, its second is accepted. */
    async function refusedThenAccepted(kube: Kube, calls: string): Promise<void> {
      const refused = await apiError(kube.resource(Namespaces).get({ name: 'default' }));
      expect(refused.code).toBe(401);
      const ns = await kube.resource(Namespaces).get({ name: 'default' });
      expect(ns.metadata.name).toBe('default');
      expect(await readFile(calls, 'utf8')).toBe('xx');
    }

    it('runs an exec plugin for its token, and asks it again after a 401', async ({ skip }) => {
      if (token === undefined) skip("the cluster's kubeconfig has no bearer token to hand out");
      const calls = join(dir, 'exec-calls');
      const kube = await connect({ kubeconfigPath: await execKubeconfig(calls), log });
      try {
        await refusedThenAccepted(kube, calls);
      } finally {
        kube.close();
      }
    });

    it("starts the plugin's kubeconfig loader anew when it has died", async ({ skip }) => {
      if (token === undefined) skip("the cluster's kubeconfig has no bearer token to hand out");
      const calls = join(dir, 'exec-calls-loader');
      const kube = await connect({ kubeconfigPath: await execKubeconfig(calls), log });
      try {
        // The loader is this process's child that runs client-node's KubeConfig.
        const pids = await childrenRunning('KubeConfig');
        expect(pids).toHaveLength(1);
        const pid = pids[0] ?? 0;
        process.kill(pid, 'SIGKILL');
        for (let i = 0; i < 100 && alive(pid); i++) await sleep(20);
        await sleep(100);
        // A new loader reads the kubeconfig again, and its plugin answers the good token.
        await refusedThenAccepted(kube, calls);
      } finally {
        kube.close();
      }
    });

    it('reads a token file again once the API server refuses its token', async ({ skip }) => {
      if (token === undefined) skip("the cluster's kubeconfig has no bearer token to hand out");
      const tokenFile = join(dir, 'token');
      await writeFile(tokenFile, 'not-the-token');
      const kube = await connect({
        kubeconfigPath: await kubeconfigWith({
          'auth-provider': { name: 'token-file', config: { tokenFile } },
        }),
        log,
      });
      try {
        const refused = await apiError(kube.resource(Namespaces).get({ name: 'default' }));
        expect(refused.code).toBe(401);
        // As the kubelet rotates a service account token: the next request reads it anew.
        await writeFile(tokenFile, token ?? '');
        const ns = await kube.resource(Namespaces).get({ name: 'default' });
        expect(ns.metadata.name).toBe('default');
      } finally {
        kube.close();
      }
    });

    it("reads the kubeconfig without the operator's NODE_OPTIONS", async () => {
      const saved = process.env.NODE_OPTIONS;
      // A node started with these options fails at once: the loader must not get them.
      process.env.NODE_OPTIONS = `--require ${join(dir, 'no-such-module.cjs')}`;
      try {
        const kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
        kube.close();
        expect(kube.server).toMatch(/^https?:\/\//);
      } finally {
        if (saved === undefined) delete process.env.NODE_OPTIONS;
        else process.env.NODE_OPTIONS = saved;
      }
    });

    it('names the kubeconfig file that cannot be read', async () => {
      const missing = join(dir, 'no-such-kubeconfig');
      await expect(connect({ kubeconfigPath: missing, log })).rejects.toThrow(missing);
    });
  });

  describe('transport failures', () => {
    let holder: Server;
    const held: Socket[] = [];
    let dir: string;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'nrn-kube-client-'));
      // Accepts connections and never answers: a hung server, as a dead node behind a LB looks.
      holder = createServer((socket) => held.push(socket));
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => holder.close(resolve));
      await rm(dir, { recursive: true, force: true });
    });

    /** The cluster's kubeconfig, pointed at another address. */
    async function kubeconfigAt(server: string): Promise<string> {
      const config = parseYaml(await readFile(cluster.kubeconfigPath, 'utf8')) as {
        clusters: { cluster: Record<string, unknown> }[];
      };
      for (const entry of config.clusters) {
        entry.cluster.server = server;
        if (server.startsWith('http:')) {
          // client-node takes plain HTTP only from a cluster that says it skips TLS checks.
          delete entry.cluster['certificate-authority-data'];
          delete entry.cluster['certificate-authority'];
          entry.cluster['insecure-skip-tls-verify'] = true;
        }
      }
      const path = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
      await writeFile(path, stringifyYaml(config), { mode: 0o600 });
      return path;
    }

    it('a refused connection is a transient KubeTransportError, not a KubeApiError', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as { port: number }).port;
      await new Promise((resolve) => closed.close(resolve));
      const refused = await connect({
        kubeconfigPath: await kubeconfigAt(`https://127.0.0.1:${port}`),
        log,
      });
      try {
        const error = await refused
          .resource(Namespaces)
          .get({ name: 'default' })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(KubeTransportError);
        expect((error as KubeTransportError).errorCode).toBe('ECONNREFUSED');
        expect(isTransient(error)).toBe(true);
      } finally {
        refused.close();
      }
    });

    it('a server whose certificate the kubeconfig CA did not sign is refused', async () => {
      const config = parseYaml(await readFile(cluster.kubeconfigPath, 'utf8')) as {
        clusters: { cluster: Record<string, unknown> }[];
      };
      const stranger = Buffer.from(issueTls(['127.0.0.1']).ca).toString('base64');
      for (const entry of config.clusters) {
        delete entry.cluster['certificate-authority'];
        delete entry.cluster['insecure-skip-tls-verify'];
        entry.cluster['certificate-authority-data'] = stranger;
      }
      const path = join(dir, 'kubeconfig-stranger-ca');
      await writeFile(path, stringifyYaml(config), { mode: 0o600 });
      const distrusting = await connect({ kubeconfigPath: path, log });
      try {
        const error = await distrusting
          .resource(Namespaces)
          .get({ name: 'default' })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(KubeTransportError);
        expect((error as KubeTransportError).errorCode).toMatch(/CERT|SIGNATURE|VERIFY/);
      } finally {
        distrusting.close();
      }
      // The cluster's own CA, through the same code, is trusted.
      expect((await kube.resource(Namespaces).get({ name: ns })).metadata.name).toBe(ns);
    });

    it('a request that gets no answer fails at its deadline with a TIMEOUT', async () => {
      const port = (holder.address() as { port: number }).port;
      const hung = await connect({
        kubeconfigPath: await kubeconfigAt(`https://127.0.0.1:${port}`),
        log,
        timeoutMs: 300,
      });
      try {
        const started = Date.now();
        const error = await hung
          .resource(Namespaces)
          .get({ name: 'default' })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(KubeTransportError);
        expect((error as KubeTransportError).errorCode).toBe('TIMEOUT');
        expect(isTransient(error)).toBe(true);
        expect(Date.now() - started).toBeLessThan(3_000);
      } finally {
        hung.close();
      }
    });

    it('a request under way ends at its deadline or its caller, and its connection with it', async () => {
      // Takes each request and never answers it; counts the connections the client gives up.
      const requests: string[] = [];
      let closed = 0;
      const silent = createHttpServer((req) => {
        requests.push(req.url ?? '');
        req.socket.once('close', () => closed++);
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const port = (silent.address() as { port: number }).port;
      const waiting = await connect({
        kubeconfigPath: await kubeconfigAt(`http://127.0.0.1:${port}`),
        log,
        timeoutMs: 300,
      });
      try {
        const namespaces = waiting.resource(Namespaces);
        const late = await namespaces.get({ name: 'late' }).catch((e: unknown) => e);
        expect((late as KubeTransportError).errorCode).toBe('TIMEOUT');

        const caller = new AbortController();
        const asked = namespaces.get({ name: 'dropped' }, { signal: caller.signal });
        await until(() => requests.length === 2);
        caller.abort();
        const dropped = await asked.catch((e: unknown) => e);
        expect(dropped).toBeInstanceOf(KubeTransportError);
        expect((dropped as KubeTransportError).errorCode).toBe('ABORTED');

        expect(requests).toEqual(['/api/v1/namespaces/late', '/api/v1/namespaces/dropped']);
        // Aborted on the wire too: neither connection is left waiting for its answer.
        await until(() => closed === 2);
      } finally {
        waiting.close();
        await new Promise((resolve) => silent.close(resolve));
      }
    });
  });
});
