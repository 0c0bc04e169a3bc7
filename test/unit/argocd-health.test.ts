// The Argo CD health checks of deploy/argocd/ run in real Lua VMs (Debian's lua5.1, the
// language of the gopher-lua Argo CD embeds, and fengari) against every status the operator
// wrote in a recorded run (test/fixtures/statuses/<kind>/<case>.json), plus a few hand-made
// edge cases; and the argocd-cm patch carries exactly the .lua files.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { argocdConfigMap, HEALTH_KINDS } from '../../scripts/generate-argocd-cm.js';
import { type LuaHealth, lua51Missing, runInFengari, runInLua51 } from '../support/argocd-lua.js';

const ROOT = join(import.meta.dirname, '../..');
const ARGOCD = join(ROOT, 'deploy/argocd');
const FIXTURES = join(ROOT, 'test/fixtures/statuses');

/** The agreed expectation of each recorded case (test/fixtures/statuses/README.md). */
const EXPECTED: Record<string, LuaHealth['status']> = {
  active: 'Healthy',
  ready: 'Healthy',
  pending: 'Progressing',
  creating: 'Progressing',
  updating: 'Progressing',
  deleting: 'Progressing',
  waiting: 'Progressing',
  stale: 'Progressing',
  failed: 'Degraded',
  stalled: 'Degraded',
  paused: 'Suspended',
};

const script = (kind: string): string =>
  readFileSync(
    join(ARGOCD, 'resource_customizations/platform.nrn.dev', kind, 'health.lua'),
    'utf8',
  );

interface Case {
  readonly name: string;
  readonly kind: string;
  readonly object: KubeLike;
  readonly expected: LuaHealth['status'] | undefined;
}
interface KubeLike {
  kind: string;
  metadata: { generation?: number; annotations?: Record<string, string> };
  status?: {
    status?: string;
    observedGeneration?: number;
    conditions?: { type: string; status: string; reason?: string; message: string }[];
  };
}

function recorded(): Case[] {
  if (!existsSync(FIXTURES)) return [];
  const cases: Case[] = [];
  for (const folder of readdirSync(FIXTURES, { withFileTypes: true })) {
    if (!folder.isDirectory()) continue;
    for (const file of readdirSync(join(FIXTURES, folder.name)).filter((f) =>
      f.endsWith('.json'),
    )) {
      const object = JSON.parse(
        readFileSync(join(FIXTURES, folder.name, file), 'utf8'),
      ) as KubeLike;
      const name = file.slice(0, -'.json'.length);
      cases.push({
        name: `${folder.name}/${name}`,
        kind: object.kind,
        object,
        expected: EXPECTED[name],
      });
    }
  }
  return cases;
}

/** Made by hand, on top of the recorded ones: what no run leaves behind for long. */
function edgeCases(): Case[] {
  return HEALTH_KINDS.flatMap((kind): Case[] => [
    {
      name: `${kind} (hand-made): no status yet`,
      kind,
      object: { kind, metadata: { generation: 1 } },
      expected: 'Progressing',
    },
    {
      name: `${kind} (hand-made): a status without conditions`,
      kind,
      object: { kind, metadata: { generation: 1 }, status: { observedGeneration: 1 } },
      expected: 'Progressing',
    },
    {
      name: `${kind} (hand-made): a generation newer than observedGeneration`,
      kind,
      object: {
        kind,
        metadata: { generation: 3 },
        status: {
          status: 'active',
          observedGeneration: 2,
          conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'ready' }],
        },
      },
      expected: 'Progressing',
    },
  ]);
}

const missing = lua51Missing();
if (missing !== undefined) console.error(`argocd-health.test.ts: lua5.1 half skipped: ${missing}`);

const cases = [...recorded(), ...edgeCases()];

/** Why the health is what it is: the message a user reads in Argo CD says it. */
function expectExplained(c: Case, health: LuaHealth): void {
  expect(health.message).not.toBe('');
  const conditions = c.object.status?.conditions ?? [];
  const stalled = conditions.find((x) => x.type === 'Stalled' && x.status === 'True');
  if (health.status === 'Degraded' && stalled !== undefined) {
    expect(health.message).toContain(stalled.message);
  }
  const paused = conditions.find((x) => x.type === 'Paused' && x.status === 'True');
  if (health.status === 'Suspended' && paused !== undefined) {
    expect(health.message).toContain(paused.message);
  }
  const generation = c.object.metadata.generation;
  const observed = c.object.status?.observedGeneration;
  if (generation !== undefined && observed !== undefined && observed < generation) {
    expect(health.message).toContain(`generation ${generation}`);
  }
}

describe('Argo CD health checks (deploy/argocd/resource_customizations)', () => {
  it('has an expectation for every recorded case, of a kind with a script', () => {
    for (const c of recorded()) {
      expect(c.expected, `${c.name}: no expected health for this case name`).toBeDefined();
      expect(HEALTH_KINDS, c.name).toContain(c.kind);
    }
  });

  describe.each(cases)('$name', (c) => {
    it('fengari (Lua 5.3)', () => {
      const health = runInFengari(script(c.kind), c.object);
      expect(health.status).toBe(c.expected);
      expectExplained(c, health);
    });
    it.skipIf(missing !== undefined)('lua5.1 (the language of gopher-lua)', () => {
      const health = runInLua51(script(c.kind), c.object);
      expect(health.status).toBe(c.expected);
      expectExplained(c, health);
    });
  });

  it('a paused scope is Suspended by the annotation alone, before the operator writes Paused', () => {
    const object = {
      kind: 'Scope',
      metadata: { generation: 1, annotations: { 'platform.nrn.dev/reconcile': 'disabled' } },
      status: { status: 'active', observedGeneration: 1, conditions: [] },
    };
    expect(runInFengari(script('Scope'), object).status).toBe('Suspended');
  });

  it('a script that uses the string or math library fails as in Argo CD, which opens neither', () => {
    const runs = missing === undefined ? [runInFengari, runInLua51] : [runInFengari];
    for (const run of runs) {
      expect(() => run('return { status = ("x"):upper() }', {})).toThrow(/index a string value/);
      expect(() => run('return { status = string.upper("x") }', {})).toThrow(/global 'string'/);
      expect(() => run('return { status = tostring(math.floor(1)) }', {})).toThrow(/global 'math'/);
    }
  });
});

describe('deploy/argocd/argocd-cm.yaml', () => {
  const text = readFileSync(join(ARGOCD, 'argocd-cm.yaml'), 'utf8');

  it('is what scripts/generate-argocd-cm.ts writes from the .lua files', () => {
    expect(text).toBe(argocdConfigMap(ARGOCD));
  });

  it('holds each health.lua, byte for byte, under the key Argo CD reads', () => {
    const configMap = parse(text) as {
      metadata: { name: string; namespace: string; labels: Record<string, string> };
      data: Record<string, string>;
    };
    expect(configMap.metadata).toMatchObject({
      name: 'argocd-cm',
      namespace: 'argocd',
      labels: { 'app.kubernetes.io/name': 'argocd-cm', 'app.kubernetes.io/part-of': 'argocd' },
    });
    expect(Object.keys(configMap.data).sort()).toEqual(
      HEALTH_KINDS.map((kind) => `resource.customizations.health.platform.nrn.dev_${kind}`).sort(),
    );
    for (const kind of HEALTH_KINDS) {
      expect(configMap.data[`resource.customizations.health.platform.nrn.dev_${kind}`]).toBe(
        script(kind),
      );
    }
  });
});

describe('deploy/argocd as a kustomize Component', () => {
  const kubectl = spawnSync('kubectl', ['version', '--client'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  const kubectlMissing =
    kubectl.error !== undefined ? `kubectl cannot run (${kubectl.error.message})` : undefined;
  if (kubectlMissing !== undefined)
    console.error(`argocd-health.test.ts: kustomize half skipped: ${kubectlMissing}`);

  it.skipIf(kubectlMissing !== undefined)(
    "merges the health checks into an Argo CD install's argocd-cm, keeping its other keys",
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'argocd-kustomize-'));
      try {
        writeFileSync(
          join(dir, 'argocd-cm.yaml'),
          [
            'apiVersion: v1',
            'kind: ConfigMap',
            'metadata:',
            '  name: argocd-cm',
            '  namespace: argocd',
            '  labels:',
            '    app.kubernetes.io/name: argocd-cm',
            '    app.kubernetes.io/part-of: argocd',
            'data:',
            '  url: https://argocd.example.com',
            '',
          ].join('\n'),
        );
        writeFileSync(
          join(dir, 'kustomization.yaml'),
          [
            'apiVersion: kustomize.config.k8s.io/v1beta1',
            'kind: Kustomization',
            'resources:',
            '  - argocd-cm.yaml',
            'components:',
            `  - ${relative(dir, ARGOCD)}`,
            '',
          ].join('\n'),
        );
        const run = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
        expect(run.stderr).toBe('');
        const merged = parse(run.stdout) as { data: Record<string, string> };
        expect(merged.data.url).toBe('https://argocd.example.com');
        for (const kind of HEALTH_KINDS) {
          expect(merged.data[`resource.customizations.health.platform.nrn.dev_${kind}`]).toBe(
            script(kind),
          );
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
