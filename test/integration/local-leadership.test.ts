// `nrn-operator local` runs the API server, the facade and the operator in one process: a
// stall longer than the renew deadline (SIGSTOP here; a long GC pause or a busy host in life)
// costs the operator its Lease, and must cost nothing else. The process goes on serving, the
// operator campaigns again, wins, and reconciles what kubectl applies next.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_RENEW_DEADLINE_MS } from '../../src/runtime/index.js';
import { kubectl } from '../support/cluster.js';
import { applicationYaml, namespaceYaml, scopeYaml } from '../support/manifests.js';
import { startLocalProcess, terminate } from '../support/operator-processes.js';
import { sleep, until } from '../support/wait.js';

interface LogLine {
  readonly msg: string;
  readonly reason?: string;
  readonly time: number;
}

/** The JSON lines of a process's log (pino on stderr); anything else is left out. */
function logLines(stderr: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const text of stderr.split('\n')) {
    try {
      lines.push(JSON.parse(text) as LogLine);
    } catch {
      // A partial last line, or a plain message: not a log record.
    }
  }
  return lines;
}

describe('nrn-operator local: losing leadership never ends the process', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children) {
      // A stopped process would never act on the SIGTERM below.
      child.kill('SIGCONT');
      await terminate(child);
    }
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('a stall past the renew deadline: the API server and the facade still answer, and the operator leads again and reconciles', {
    timeout: 90_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nrn-local-stall-'));
    dirs.push(dir);
    const local = await startLocalProcess(dir, ['--facade-port', '0', '--metrics-port', '0'], {
      logLevel: 'info',
    });
    children.push(local.child);
    const ready = local.lines.find((line) => line.includes('ready:')) ?? '';
    const facade = /facade at (http:\/\/[^\s;]+)/.exec(ready)?.[1] ?? '';
    const metrics = /metrics at (http:\/\/[^\s;]+)/.exec(ready)?.[1] ?? '';
    expect(facade).not.toBe('');
    expect(metrics).not.toBe('');
    const token = (await readFile(join(dir, 'token'), 'utf8')).trim();
    const logged = (msg: string) => logLines(local.stderr()).filter((line) => line.msg === msg);
    const cluster = {
      kind: 'local' as const,
      kubeconfigPath: local.kubeconfigPath,
      settle: async () => {},
      close: async () => {},
    };
    const k = (args: string[], input?: string) =>
      kubectl(cluster, args, { timeoutMs: 60_000, ...(input !== undefined ? { input } : {}) });
    const leader = async () => {
      const text = await (await fetch(`${metrics}/metrics`)).text();
      return /^nrn_leader (\S+)$/m.exec(text)?.[1];
    };

    await until(() => logged('leadership acquired').length === 1, 30_000);

    // Frozen past the renew deadline, whenever within its retry period the last renewal was.
    local.child.kill('SIGSTOP');
    await sleep(DEFAULT_RENEW_DEADLINE_MS + 2_000);
    local.child.kill('SIGCONT');

    await until(() => logged('leadership lost').length === 1, 10_000);
    expect(logged('leadership lost')[0]?.reason).toBe('renew-deadline');
    // Nobody else holds the Lease, and it still names this process: won back at once.
    const regained = () => logged('leadership regained; controllers starting again');
    await until(() => regained().length === 1 || local.child.exitCode !== null, 10_000);
    expect(local.child.exitCode).toBeNull();
    expect(local.child.signalCode).toBeNull();
    expect(logged('leadership lost; controllers halted, campaigning again')).toHaveLength(1);
    expect(regained()).toHaveLength(1);

    expect((await k(['get', 'namespaces'])).code).toBe(0);
    const services = await fetch(`${facade}/service`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(services.status).toBe(200);
    expect(await leader()).toBe('1');

    const applied = await k(
      ['apply', '-f', '-'],
      [namespaceYaml('shop'), applicationYaml('shop', 'shop', 7), scopeYaml('shop', 'web', 7)].join(
        '---',
      ),
    );
    expect(applied.stderr).toBe('');
    const waited = await k([
      'wait',
      '--for=condition=Ready',
      'scope/web',
      '-n',
      'shop',
      '--timeout=45s',
    ]);
    expect(waited.stdout, `${waited.stderr}\n${local.stderr().slice(-4_000)}`).toContain(
      'condition met',
    );
    expect(await terminate(local.child)).toBe(0);
  });
});
