// The facade as the `nrn-operator` command serves it: `local` makes, prints and keeps a token
// (DIR/token, 0600) and serves the facade beside the operator; `run` serves it with
// `kubernetes` auth, so the API server's own token is what lets a caller in.
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  createOperatorIdentity,
  DEPLOY_NAMESPACE,
  refusalsIn,
} from '../support/operator-identity.js';
import {
  startControlPlaneProcess,
  startLocalProcess,
  startOperatorProcess,
  terminate,
} from '../support/operator-processes.js';

const execFileAsync = promisify(execFile);

/** `nrn-operator local` with the operator and the facade. */
const startLocal = (dataDir: string) => startLocalProcess(dataDir, ['--facade-port', '0']);

describe('facade: served by the nrn-operator command', () => {
  const dirs: string[] = [];
  // Stopped here too: a test that times out must not leave servers behind.
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children) await terminate(child);
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('local: prints and keeps a token in DIR/token, and the facade takes only it', {
    timeout: 90_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nrn-facade-cli-'));
    dirs.push(dir);
    const first = await startLocal(dir);
    children.push(first.child);
    const printed = /facade token \(kept in (\S+)\): (\S+)/.exec(first.lines.join('\n'));
    expect(printed?.[1]).toBe(join(dir, 'token'));
    const token = printed?.[2] ?? '';
    expect((await readFile(join(dir, 'token'), 'utf8')).trim()).toBe(token);
    expect((await stat(join(dir, 'token'))).mode & 0o777).toBe(0o600);
    const ready = first.lines.find((l) => l.includes('ready:')) ?? '';
    const url = /facade at (http:\/\/\S+)/.exec(ready)?.[1] ?? '';
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // Each part with where it is (the operator has no address), KUBECONFIG last; and what the
    // data dir was.
    expect(ready).toMatch(
      /^nrn-operator local ready: API server at https:\/\/127\.0\.0\.1:\d+; operator running as system:serviceaccount:nrn-system:nrn-operator; admission webhook at https:\/\/127\.0\.0\.1:\d+\/validate; facade at http:\/\/127\.0\.0\.1:\d+ \(token in \S+\); KUBECONFIG=\S+$/,
    );
    expect(first.lines).toContain(
      `nrn-operator local: data dir ${dir} created (a new, empty cluster)`,
    );

    const answer = await fetch(`${url}/service`, { headers: { authorization: `Bearer ${token}` } });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ paging: { limit: 30, offset: 0 }, results: [] });
    expect((await fetch(`${url}/service`)).status).toBe(401);
    expect(await terminate(first.child)).toBe(0);

    // A restart keeps the token (scripts keep working) and does not print it again.
    const second = await startLocal(dir);
    children.push(second.child);
    expect(second.lines.join('\n')).not.toContain(token);
    expect(second.lines.join('\n')).toMatch(
      new RegExp(`nrn-operator local: data dir ${dir} reopened \\(\\d+ objects\\)`),
    );
    const again = /facade at (http:\/\/\S+)/.exec(second.lines.join('\n'))?.[1] ?? '';
    const kept = await fetch(`${again}/service`, { headers: { authorization: `Bearer ${token}` } });
    expect(kept.status).toBe(200);
    expect(await terminate(second.child)).toBe(0);
  });

  it('local: exits with an error, leaving nothing running, when the facade port is taken', {
    timeout: 90_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nrn-facade-port-'));
    dirs.push(dir);
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as AddressInfo).port;
    try {
      const started = startLocalProcess(dir, ['--facade-port', String(port)]);
      await expect(started).rejects.toThrow(/exited with 1 before ready/);
    } finally {
      taken.close();
    }
  });

  it('run: serves the facade with kubernetes auth', { timeout: 90_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nrn-facade-run-'));
    dirs.push(dir);
    const plane = await startControlPlaneProcess(dir);
    children.push(plane.child);
    // On a cluster the CRDs come first (kubectl apply -f crds/), then `nrn-operator run`.
    const crds = await execFileAsync('kubectl', [
      '--kubeconfig',
      plane.kubeconfigPath,
      'apply',
      '-f',
      join(import.meta.dirname, '../../crds'),
    ]);
    expect(crds.stdout).toContain('created');
    // The operator as deployed: deploy/'s ServiceAccount reviews the caller's token.
    const identity = await createOperatorIdentity(
      plane.kubeconfigPath,
      DEPLOY_NAMESPACE,
      join(dir, 'operator-kubeconfig'),
    );
    const operator = startOperatorProcess(identity.kubeconfigPath);
    children.push(operator.child);
    try {
      const listening = await operator.waitForLog((l) => l.msg === 'facade listening', 60_000);
      expect(listening.auth).toBe('kubernetes');
      const url = String(listening.url);
      const config = parseYaml(await readFile(plane.kubeconfigPath, 'utf8')) as {
        users: { user: { token: string } }[];
      };
      const token = config.users[0]?.user.token ?? '';
      const ok = await fetch(`${url}/service`, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      const bad = await fetch(`${url}/service`, { headers: { authorization: 'Bearer nope' } });
      expect(bad.status).toBe(401);
      expect(refusalsIn(operator.logs)).toEqual([]);
    } finally {
      await terminate(operator.child);
      await terminate(plane.child);
    }
  });
});
