// `nrn-operator local` serves the operator's admission webhook and registers it: a CA and a
// serving certificate for 127.0.0.1 in DIR/webhook, and the ValidatingWebhookConfiguration
// nrn-operator applied on each start with that start's URL (its port may change) and the CA.
// The registration is checked as kubectl shows it, and the webhook at its URL, with its CA.
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchTrusting } from '../support/https.js';
import { applicationYaml, scopeYaml } from '../support/manifests.js';
import { startLocalProcess, terminate } from '../support/operator-processes.js';

const execFileAsync = promisify(execFile);

interface Configuration {
  webhooks: {
    name: string;
    clientConfig: { url: string; caBundle: string };
    rules: { apiGroups: string[]; operations: string[]; resources: string[] }[];
    failurePolicy: string;
    sideEffects: string;
    admissionReviewVersions: string[];
  }[];
}

/** kubectl's exit code and stderr, never throwing. */
async function kubectlResult(
  kubeconfig: string,
  args: string[],
  input?: string,
): Promise<{ code: number; stderr: string }> {
  const run = execFileAsync('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 });
  if (input !== undefined) run.child.stdin?.end(input);
  try {
    const { stderr } = await run;
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    return { code: failed.code ?? -1, stderr: failed.stderr ?? '' };
  }
}

describe('local registers the admission webhook', () => {
  const children: ChildProcess[] = [];
  let dir: string | undefined;
  afterAll(async () => {
    for (const child of children) await terminate(child);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('each start applies nrn-operator with its URL and CA; the webhook answers there', {
    timeout: 120_000,
  }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'nrn-webhook-local-'));
    const kubectl = async (kubeconfig: string, args: string[], input?: string) => {
      const run = execFileAsync('kubectl', ['--kubeconfig', kubeconfig, ...args], {
        timeout: 30_000,
      });
      if (input !== undefined) run.child.stdin?.end(input);
      return (await run).stdout;
    };
    const registered = async (kubeconfig: string) =>
      JSON.parse(
        await kubectl(kubeconfig, [
          'get',
          'validatingwebhookconfiguration',
          'nrn-operator',
          '-o',
          'json',
        ]),
      ) as Configuration;

    const first = await startLocalProcess(dir, ['--no-facade']);
    children.push(first.child);
    const ready = first.lines.find((l) => l.includes('ready:')) ?? '';
    const url = /admission webhook at (https:\/\/[^;\s]+)/.exec(ready)?.[1] ?? '';
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/validate$/);
    const ca = await readFile(join(dir, 'webhook', 'ca.crt'), 'utf8');
    const configuration = await registered(first.kubeconfigPath);
    expect(configuration.webhooks).toHaveLength(1);
    const [webhook] = configuration.webhooks;
    expect(webhook).toMatchObject({
      name: 'validate.platform.nrn.dev',
      clientConfig: { url },
      failurePolicy: 'Ignore',
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      rules: [
        {
          apiGroups: ['platform.nrn.dev'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['scopes', 'services', 'servicespecifications', 'scopeclasses'],
        },
      ],
    });
    expect(Buffer.from(webhook?.clientConfig.caBundle ?? '', 'base64').toString()).toBe(ca);

    // The webhook at the registered URL, trusted by the registered CA, refuses a duplicate
    // slug the operator's cache knows of.
    await kubectl(first.kubeconfigPath, ['create', 'namespace', 'team-a']);
    await kubectl(
      first.kubeconfigPath,
      ['apply', '-f', '-'],
      `${applicationYaml('team-a', 'shop', 10)}---${scopeYaml('team-a', 'web', 10)}`,
    );
    const post = fetchTrusting(ca);
    const copy = {
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'Scope',
      metadata: { name: 'web-copy', namespace: 'team-a' },
      spec: { name: 'Web', type: 'web_pool', application_id: 10 },
    };
    let message: string | undefined;
    // Refused as soon as the webhook's cache holds team-a/web; named with its id once the
    // operator has given it one (under load, the refusal can come first).
    const named = () => message?.includes('(id ') === true;
    for (let i = 0; i < 200 && !named(); i++) {
      const res = await post(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          request: {
            uid: `u${i}`,
            kind: { group: 'platform.nrn.dev', version: 'v1alpha1', kind: 'Scope' },
            operation: 'CREATE',
            namespace: 'team-a',
            name: 'web-copy',
            object: copy,
          },
        }),
      });
      const answer = (await res.json()) as {
        response: { allowed: boolean; status?: { message: string } };
      };
      message = answer.response.allowed ? undefined : answer.response.status?.message;
      if (!named()) await new Promise((r) => setTimeout(r, 25));
    }
    expect(message).toMatch(
      /^spec\.name: slug web is already used by scope team-a\/web \(id \d+\) of application 10$/,
    );

    // kubectl: the API server calls the webhook, which refuses, and nothing is stored;
    // --dry-run=server is refused the same (sideEffects None: dry runs are sent too).
    const manifest = scopeYaml('team-a', 'web-copy', 10).replace(
      'name: web-copy\n  type',
      'name: Web\n  type',
    );
    expect(manifest).toContain('name: Web\n');
    const denied = (stderr: string) =>
      expect(stderr.trim()).toMatch(
        /^Error from server \(Forbidden\): error when creating "STDIN": admission webhook "validate\.platform\.nrn\.dev" denied the request: spec\.name: slug web is already used by scope team-a\/web \(id \d+\) of application 10$/,
      );
    for (const extra of [['--dry-run=server'], []]) {
      const result = await kubectlResult(
        first.kubeconfigPath,
        ['apply', ...extra, '-f', '-'],
        manifest,
      );
      expect(result.code).toBe(1);
      denied(result.stderr);
    }
    const stored = await kubectlResult(first.kubeconfigPath, [
      'get',
      '-n',
      'team-a',
      'scope',
      'web-copy',
    ]);
    expect(stored.stderr.trim()).toBe(
      'Error from server (NotFound): scopes.platform.nrn.dev "web-copy" not found',
    );

    // A restart (any free port again) registers the new URL, with the same CA.
    expect(await terminate(first.child)).toBe(0);
    const second = await startLocalProcess(dir, ['--no-facade']);
    children.push(second.child);
    const again = /admission webhook at (https:\/\/[^;\s]+)/.exec(
      second.lines.find((l) => l.includes('ready:')) ?? '',
    )?.[1];
    const reapplied = await registered(second.kubeconfigPath);
    expect(reapplied.webhooks[0]?.clientConfig.url).toBe(again);
    expect(
      Buffer.from(reapplied.webhooks[0]?.clientConfig.caBundle ?? '', 'base64').toString(),
    ).toBe(ca);
  });
});
