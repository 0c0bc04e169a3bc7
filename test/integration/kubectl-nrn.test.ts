// `kubectl nrn` as a platform team runs it: the plugin (src/kubectl-nrn.ts, run by tsx) on the
// PATH of real kubectl, which finds it by its name, against a local control plane with the
// operator running; a webhook agent answers `failed` for one scope, a scope of a type no class
// serves stays pending, a web_pool scope becomes active.

import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Kube, rawResource } from '../../src/kube/index.js';
import { type Operator, startOperator } from '../../src/operator.js';
import { kubectl, type StartedCluster, startCluster, uniqueName } from '../support/cluster.js';
import { applicationYaml, scopeYaml } from '../support/manifests.js';
import { readUntil } from '../support/wait.js';

const ROOT = join(import.meta.dirname, '../..');
const SIGNING_KEY = 'kubectl-nrn-signing-key';

interface View {
  metadata: { name: string; generation?: number };
  status?: {
    status?: string;
    observedGeneration?: number;
    conditions?: { type: string; reason?: string }[];
  };
}

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

describe('kubectl nrn', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  let operatorKube: Kube;
  let operator: Operator | undefined;
  let agent: Server | undefined;
  let bin: string;
  const ns = uniqueName('nrn-plugin');
  const log = pino({ level: 'silent' });

  const k = async (args: string[], input?: string) => {
    const result = await kubectl(cluster, args, input !== undefined ? { input } : {});
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  /** `kubectl nrn ...` with the plugin on the PATH and the cluster as KUBECONFIG. */
  const nrn = (args: string[], env: Record<string, string> = {}): Promise<Ran> =>
    new Promise((resolve) => {
      execFile(
        'kubectl',
        ['nrn', ...args],
        {
          timeout: 60_000,
          env: {
            ...process.env,
            PATH: `${bin}:${process.env.PATH ?? ''}`,
            KUBECONFIG: cluster.kubeconfigPath,
            ...env,
          },
        },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
          resolve({ code, stdout, stderr });
        },
      );
    });
  const waitFor = (name: string, check: (view: View) => boolean) =>
    readUntil(
      `scope ${name}`,
      async () =>
        (await kube.resource(rawResource('Scope')).get({ namespace: ns, name })) as unknown as View,
      check,
      { timeoutMs: 30_000 },
    );
  const scope = (name: string, type: string, labels = '') =>
    scopeYaml(ns, name, 1)
      .replace('type: web_pool', `type: ${type}`)
      .replace(`metadata: {name: ${name},`, `metadata: {${labels}name: ${name},`);

  beforeAll(async () => {
    bin = await mkdtemp(join(tmpdir(), 'kubectl-nrn-'));
    // What `npm install` puts on the PATH, run from the sources as `npx tsx src/kubectl-nrn.ts`.
    const plugin = join(bin, 'kubectl-nrn');
    await writeFile(
      plugin,
      `#!/bin/sh\nexec "${join(ROOT, 'node_modules/.bin/tsx')}" "${join(ROOT, 'src/kubectl-nrn.ts')}" "$@"\n`,
    );
    await chmod(plugin, 0o755);
    // The agent: every scope it is asked for fails, with the reason a provider gives.
    agent = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ status: 'failed', messages: ['no capacity left in region eu-west-1'] }),
        );
      });
    });
    const server = agent;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const agentUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/scopes`;

    const opNs = uniqueName('operator-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await k(['apply', '-f', join(ROOT, 'crds')]);
    await k(['wait', '--for=condition=Established', '--timeout=60s', '-f', join(ROOT, 'crds')]);
    await k(['apply', '-f', join(ROOT, 'deploy/scopeclasses/web-pool.yaml')]);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    operatorKube = await connect({ kubeconfigPath: cluster.operatorKubeconfigPath, log });
    await k(['create', 'namespace', ns]);
    await k([
      'create',
      'secret',
      'generic',
      'agent-signing',
      '-n',
      opNs,
      `--from-literal=key=${SIGNING_KEY}`,
    ]);
    operator = await startOperator({
      kube: operatorKube,
      log,
      namespace: opNs,
      leaderElection: false,
    });
    await k(
      ['create', '-f', '-'],
      `
apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: agent}
spec:
  scope_type: serverless
  match: {labels: {provisioned-by: agent}}
  provisioner: {type: webhook, url: "${agentUrl}", signing_secret_ref: {name: agent-signing}, deadline_seconds: 3600}
${applicationYaml(ns, 'shop', 1)}`.replace(
        '\napiVersion: platform.nrn.dev/v1alpha1\nkind: Application',
        '\n---\napiVersion: platform.nrn.dev/v1alpha1\nkind: Application',
      ),
    );
    await k(['create', '-f', '-'], scope('web', 'web_pool'));
    await waitFor(
      'web',
      (s) => s.status?.status === 'active' && s.status.observedGeneration === s.metadata.generation,
    );
    await k(
      ['create', '-f', '-'],
      scope('broken', 'serverless', 'labels: {provisioned-by: agent}, '),
    );
    await waitFor('broken', (s) => s.status?.status === 'failed');
    await k(['create', '-f', '-'], scope('later', 'scheduled_tasks'));
    await waitFor(
      'later',
      (s) =>
        s.status?.conditions?.some(
          (c) => c.type === 'Reconciling' && c.reason === 'WaitingForScopeClass',
        ) === true,
    );
  }, 120_000);

  afterAll(async () => {
    if (operator !== undefined) await operator.stop();
    const server = agent;
    if (server !== undefined) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    operatorKube?.close();
    kube?.close();
    await cluster?.close();
    if (bin !== undefined) await rm(bin, { recursive: true, force: true });
  });

  it('tree: the hierarchy with each scope, its status, counts and a failure reason inline', async () => {
    const ran = await nrn(['tree', '-n', ns]);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const lines = ran.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('organization=1  [3 scopes: 1 active, 1 failed, 1 pending]');
    expect(lines[1]).toBe('└─ account=2  [3 scopes: 1 active, 1 failed, 1 pending]');
    expect(lines[2]).toBe('   └─ namespace=3  [3 scopes: 1 active, 1 failed, 1 pending]');
    expect(lines[3]).toBe(
      `      └─ application=1 shop (${ns}/shop) ready  [3 scopes: 1 active, 1 failed, 1 pending]`,
    );
    const scopes = lines.slice(4).join('\n');
    expect(scopes).toMatch(new RegExp(`scope=\\d+ ${ns}/web web_pool active\\n`));
    expect(scopes).toMatch(
      new RegExp(
        `scope=\\d+ ${ns}/broken serverless failed — ProvisionFailed: no capacity left in region eu-west-1`,
      ),
    );
    expect(scopes).toMatch(
      new RegExp(`scope=\\d+ ${ns}/later scheduled_tasks pending — WaitingForScopeClass: `),
    );
    // No colour when stdout is not a terminal: the words carry the status.
    expect(ran.stdout).not.toContain('\u001b[');
  });

  it('tree NRN: a prefix narrows it; one that matches nothing says so', async () => {
    const narrowed = await nrn([
      'tree',
      'organization=1:account=2:namespace=3:application=1',
      '-n',
      ns,
    ]);
    expect(narrowed.code).toBe(0);
    expect(narrowed.stdout).toContain('application=1 shop');
    const none = await nrn(['tree', 'organization=9', '-n', ns]);
    expect(none).toEqual({
      code: 0,
      stdout: '',
      stderr: `No applications, scopes or services found in ${ns} namespace.\n`,
    });
  });

  it('why on a failed scope: the reason, its Event, the retry command', async () => {
    const ran = await nrn(['why', 'scope/broken', '-n', ns]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(
      `Scope ${ns}/broken is failed.\nReason: ProvisionFailed: no capacity left in region eu-west-1\n`,
    );
    expect(ran.stdout).toContain(
      '  Stalled=True  ProvisionFailed: no capacity left in region eu-west-1',
    );
    expect(ran.stdout).toMatch(
      /Events \(the last \d+ of \d+\):\n(.*\n)*.*Warning {2}ProvisionFailed {2}/,
    );
    expect(ran.stdout).toContain(
      `Retry (after fixing the cause):\n  kubectl annotate -n ${ns} scopes.platform.nrn.dev/broken platform.nrn.dev/retry="$(date +%s)" --overwrite\n`,
    );
    // Its agent's refusal is its class's doing: a new generation of the class retries it.
    expect(ran.stdout).toContain(
      'Or fix ScopeClass agent: its next generation tries the scopes it failed again, unasked.\n',
    );
  });

  it('why on a pending scope: what the operator waits for', async () => {
    // A short name, as kubectl takes it.
    const ran = await nrn(['why', 'nscope/later', '-n', ns]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(`Scope ${ns}/later is pending.\nReason: WaitingForScopeClass: `);
    expect(ran.stdout).toContain(
      'Waits for: a ScopeClass serving scopes of type scheduled_tasks (kubectl get scopeclasses.platform.nrn.dev); none of the 2 installed serves scheduled_tasks',
    );
    expect(ran.stdout).not.toContain('Retry');
  });

  it('why on an active scope and application: nothing is wrong', async () => {
    const web = await nrn(['why', 'scopes/web', '-n', ns, '--kubeconfig', cluster.kubeconfigPath], {
      KUBECONFIG: '/nonexistent',
    });
    expect(web.stderr).toBe('');
    expect(web.stdout).toMatch(
      new RegExp(
        `^Scope ${ns}/web is active: nothing is wrong\\. \\(scope is active in namespace nrn-scope-\\d+\\)\\n$`,
      ),
    );
    const app = await nrn(['why', 'application/shop', '-n', ns]);
    expect(app.stdout).toBe(
      `Application ${ns}/shop is ready: nothing is wrong. (application 1 is ready)\n`,
    );
  });

  it('scopes --app: a table like kubectl get, and -o json|yaml|wide', async () => {
    const table = await nrn(['scopes', '--app', '1', '-n', ns]);
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header?.split(/\s{3,}/)).toEqual([
      'NAME',
      'ID',
      'TYPE',
      'STATUS',
      'CLASS',
      'AGE',
      'REASON',
    ]);
    expect(
      rows.map((r) =>
        r
          .split(/\s{3,}/)
          .slice(0, 5)
          .filter((_cell, i) => i !== 1),
      ),
    ).toEqual([
      // A scope records the class chosen from the first pass that uses it, failed or not.
      ['broken', 'serverless', 'failed', 'agent'],
      ['later', 'scheduled_tasks', 'pending', '<none>'],
      ['web', 'web_pool', 'active', 'web-pool-default'],
    ]);
    expect(rows[0]).toMatch(/ProvisionFailed: no capacity left in region eu-west-1$/);
    const json = JSON.parse(
      (await nrn(['scopes', '--app', '1', '-n', ns, '-o', 'json'])).stdout,
    ) as {
      kind: string;
      items: { metadata: { name: string } }[];
    };
    expect(json.kind).toBe('List');
    expect(json.items.map((i) => i.metadata.name)).toEqual(['broken', 'later', 'web']);
    const yaml = await nrn(['scopes', '--app=1', '-n', ns, '-oyaml']);
    expect(yaml.stdout).toMatch(/^apiVersion: v1\nkind: List\n/);
    const wide = await nrn(['scopes', '--app', '1', '-A', '-o', 'wide']);
    expect(wide.stdout.split('\n')[0]?.split(/\s{3,}/)).toEqual([
      'NAMESPACE',
      'NAME',
      'ID',
      'TYPE',
      'STATUS',
      'CLASS',
      'AGE',
      'DOMAIN',
      'NRN',
      'REASON',
    ]);
    const none = await nrn(['scopes', '--app', '2', '-n', ns]);
    expect(none).toEqual({
      code: 0,
      stdout: '',
      stderr: `No scopes of application 2 found in ${ns} namespace.\n`,
    });
  });

  it('help, and a wrong flag or argument: one line naming it, exit 1', async () => {
    const help = await nrn(['why', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: kubectl nrn why <kind>\/<name> \[options\]\n/);
    const cases: [string[], string][] = [
      [['scopes'], 'kubectl nrn scopes: --app ID is required (see kubectl nrn scopes --help)\n'],
      [
        ['scopes', '--app', 'x'],
        'kubectl nrn scopes: --app "x": not an application id (see kubectl nrn scopes --help)\n',
      ],
      [
        ['tree', '--bogus'],
        'kubectl nrn tree: unknown flag --bogus (see kubectl nrn tree --help)\n',
      ],
      [['frobnicate'], 'kubectl nrn: unknown command "frobnicate" (see kubectl nrn --help)\n'],
      [
        ['why', 'web'],
        'kubectl nrn why: "web" is not <kind>/<name> (scope/web, service/db) (see kubectl nrn why --help)\n',
      ],
      [
        ['why', 'pod/web', '-n', ns],
        'kubectl nrn why: unknown kind "pod": one of scope, service, application, servicespecification, scopeclass\n',
      ],
      [
        ['why', 'scope/nope', '-n', ns],
        `kubectl nrn why: scope "nope" not found in namespace "${ns}"\n`,
      ],
      [
        ['tree', 'org=1', '-n', ns],
        'kubectl nrn tree: "org=1" is not an NRN (organization=1:account=2...)\n',
      ],
    ];
    for (const [args, stderr] of cases) {
      expect(await nrn(args), args.join(' ')).toEqual({ code: 1, stdout: '', stderr });
    }
  });

  it('an unreachable cluster is one line, no stack trace', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kubectl-nrn-down-'));
    const config = join(dir, 'kubeconfig');
    // A port nothing listens on: the server that held it is closed.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    await writeFile(
      config,
      `apiVersion: v1
kind: Config
clusters: [{name: down, cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: down, context: {cluster: down, user: u}}]
current-context: down
`,
    );
    try {
      const ran = await nrn(['tree'], { KUBECONFIG: config });
      expect(ran.code).toBe(1);
      expect(ran.stdout).toBe('');
      expect(ran.stderr).toMatch(
        new RegExp(
          `^kubectl nrn tree: cannot reach the API server at https://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*\\n$`,
        ),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
