// `nrn-operator local` installs the default ScopeClasses of deploy/scopeclasses/ on the first
// start of a new data dir, applied server-side by nrn-operator as any apply, and says so; a
// restart on the same data dir installs nothing, so a class the platform team deleted stays
// deleted and one it edited keeps its edit. The example class is accepted by the API server.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kubectlAt } from '../support/cluster.js';
import { startLocalProcess, terminate } from '../support/operator-processes.js';

const ROOT = join(import.meta.dirname, '../..');
const DEFAULTS = ['scheduled-tasks-default', 'serverless-default', 'web-pool-default'];

describe('the default ScopeClasses of `nrn-operator local`', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children.reverse()) await terminate(child);
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  const start = async (dir: string) => {
    const local = await startLocalProcess(dir, ['--no-facade']);
    children.push(local.child);
    const k = kubectlAt(local.kubeconfigPath);
    const ok = async (args: string[]) => {
      const result = await k(args);
      if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    };
    const names = async () =>
      (await ok(['get', 'scopeclasses', '-o', 'jsonpath={.items[*].metadata.name}']))
        .split(' ')
        .filter((name) => name !== '')
        .sort();
    return { local, ok, names };
  };

  it('are installed on a new data dir only, and never again', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nrn-scopeclasses-'));
    dirs.push(dir);

    const first = await start(dir);
    // The line that says what was installed, beside the "data dir ... created" one.
    expect(first.local.lines.join('\n')).toContain('created (a new, empty cluster)');
    const line = first.local.lines.find((l) => l.includes('installed the default ScopeClasses'));
    expect(line?.split('ScopeClasses ')[1]?.split(' (')[0]?.split(', ').sort()).toEqual(DEFAULTS);
    expect(await first.names()).toEqual(DEFAULTS);
    // Applied as any apply: server-side, by the operator's field manager.
    const managers = JSON.parse(
      await first.ok([
        'get',
        'scopeclass',
        'web-pool-default',
        '--show-managed-fields',
        '-o',
        'json',
      ]),
    ).metadata.managedFields.map((f: { manager: string; operation: string }) => [
      f.manager,
      f.operation,
    ]);
    expect(managers).toContainEqual(['nrn-operator', 'Apply']);
    // The example class passes the CRD's schema as the API server checks it.
    const example = await first.ok([
      'apply',
      '--dry-run=server',
      '-f',
      join(ROOT, 'examples/scopeclass-web-pool-critical.yaml'),
    ]);
    expect(example).toContain(
      'scopeclass.platform.nrn.dev/web-pool-critical created (server dry run)',
    );

    // The platform team's choices: one class deleted, one edited.
    await first.ok(['delete', 'scopeclass', 'serverless-default']);
    await first.ok([
      'patch',
      'scopeclass',
      'web-pool-default',
      '--type=merge',
      '-p',
      '{"spec":{"namespace":{"pod_security":"restricted"}}}',
    ]);
    expect(await terminate(first.local.child)).toBe(0);

    const second = await start(dir);
    expect(second.local.lines.join('\n')).toContain('reopened');
    expect(second.local.lines.join('\n')).not.toContain('installed the default ScopeClasses');
    expect(await second.names()).toEqual(['scheduled-tasks-default', 'web-pool-default']);
    expect(
      await second.ok([
        'get',
        'scopeclass',
        'web-pool-default',
        '-o',
        'jsonpath={.spec.namespace.pod_security}',
      ]),
    ).toBe('restricted');
    expect(await terminate(second.local.child)).toBe(0);
  });
});
