// `nrn-operator local` as a process: it prints one line when ready, stops cleanly on
// SIGTERM, and every write it acknowledged survives `kill -9`. Local control plane only.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type Fetch, fetchTrusting } from '../support/https.js';
import { startControlPlaneProcess } from '../support/operator-processes.js';

interface Running {
  child: ChildProcess;
  url: string;
  token: string;
  fetch: Fetch;
  exited: Promise<number | null>;
}

/** The control plane as a process, with what a client needs from its kubeconfig. */
async function startLocal(dataDir: string): Promise<Running> {
  const plane = await startControlPlaneProcess(dataDir);
  const kubeconfig = parse(await readFile(plane.kubeconfigPath, 'utf8'));
  const ca = Buffer.from(
    kubeconfig.clusters[0].cluster['certificate-authority-data'],
    'base64',
  ).toString();
  return {
    child: plane.child,
    url: plane.url,
    token: kubeconfig.users[0].user.token,
    fetch: fetchTrusting(ca),
    exited: plane.exited,
  };
}

async function api(
  run: Running,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await run.fetch(`${run.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${run.token}`, 'Content-Type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe('nrn-operator local', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'nrn-durable-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('prints one ready line, writes a private kubeconfig, and stops cleanly on SIGTERM', async () => {
    const dir = join(dataDir, 'term');
    const run = await startLocal(dir);
    expect((await stat(join(dir, 'kubeconfig'))).mode & 0o777).toBe(0o600);
    expect((await api(run, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
    const anonymous = await run.fetch(`${run.url}/api/v1/namespaces`);
    // system:anonymous, as kube-apiserver's --anonymous-auth default has it: refused by RBAC.
    expect(anonymous.status).toBe(403);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('keeps every acknowledged write through kill -9, and resumes with larger resourceVersions', async () => {
    const dir = join(dataDir, 'kill');
    const first = await startLocal(dir);
    const acknowledged = new Map<string, number>();
    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const name = `cm-${w}-${i}`;
        try {
          const res = await api(first, 'POST', '/api/v1/namespaces/default/configmaps', {
            metadata: { name },
            data: { i: String(i) },
          });
          if (res.status === 201) {
            acknowledged.set(
              name,
              Number((res.json.metadata as { resourceVersion: string }).resourceVersion),
            );
          }
        } catch {
          return; // the server is gone
        }
      }
    };
    const writers = Array.from({ length: 16 }, (_, w) => writer(w));
    while (acknowledged.size < 500) await new Promise((r) => setTimeout(r, 5));
    first.child.kill('SIGKILL');
    await first.exited;
    stop = true;
    await Promise.all(writers);

    const second = await startLocal(dir);
    try {
      const list = await api(second, 'GET', '/api/v1/namespaces/default/configmaps');
      const stored = new Set(
        (list.json.items as Array<{ metadata: { name: string } }>).map((i) => i.metadata.name),
      );
      const lost = [...acknowledged.keys()].filter((n) => !stored.has(n));
      expect(lost).toEqual([]);
      const highest = Math.max(...acknowledged.values());
      expect(
        Number((list.json.metadata as { resourceVersion: string }).resourceVersion),
      ).toBeGreaterThanOrEqual(highest);
      const created = await api(second, 'POST', '/api/v1/namespaces/default/configmaps', {
        metadata: { name: 'after-restart' },
      });
      expect(created.status).toBe(201);
      expect(
        Number((created.json.metadata as { resourceVersion: string }).resourceVersion),
      ).toBeGreaterThan(highest);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
