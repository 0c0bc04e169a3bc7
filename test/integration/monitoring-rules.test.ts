// deploy/monitoring/ against the operator it watches and the engine that runs it: a real
// operator reconciles a scope and a service (through a webhook agent) on a local plane, its
// /metrics is scraped, and every metric and label the PrometheusRule and the dashboard read
// must be there, as must every series the promtool unit tests feed in
// (test/monitoring/alerts.promtool.yaml), so that renaming a metric breaks this test. Then
// promtool itself (Debian's `prometheus` package) checks the rules, runs the unit tests (each
// alert fires in one case and stays quiet in another) and parses every panel's query. Without
// promtool those steps skip, and say why.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { SCOPE_PHASES, SERVICE_PHASES } from '../../src/api/index.js';
import { connect, type Kube } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import {
  type ObservabilityServer,
  OperatorMetrics,
  startObservabilityServer,
} from '../../src/observability.js';
import { type Operator, startOperator } from '../../src/operator.js';
import {
  installCrdsAndClasses,
  kubectl,
  type StartedCluster,
  startCluster,
  uniqueName,
} from '../support/cluster.js';
import { applicationYaml, scopeYaml } from '../support/manifests.js';
import { sleep } from '../support/wait.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const MONITORING = join(ROOT, 'deploy/monitoring');
const PROMTOOL_TESTS = join(ROOT, 'test/monitoring/alerts.promtool.yaml');
/** promtool answers in a second; past this it is stuck, and is killed. */
const PROMTOOL_TIMEOUT_MS = 60_000;
/** Labels Prometheus adds to every scraped series (its target's), not the operator. */
const TARGET_LABELS = new Set(['job', 'instance']);
/** Series Prometheus writes itself, which a test may feed in beside the operator's. */
const PROMETHEUS_SERIES = new Set(['up']);
const log = silentLogger();

/** Why promtool cannot run here, or undefined when it can. */
async function promtoolMissing(): Promise<string | undefined> {
  try {
    await run('promtool', ['--version'], { timeout: PROMTOOL_TIMEOUT_MS });
    return undefined;
  } catch (error) {
    const e = error as { code?: string; stderr?: string; message: string };
    const why = e.code === 'ENOENT' ? 'promtool not found' : (e.stderr || e.message).trim();
    return `promtool --version failed (${why}); install Debian's prometheus package`;
  }
}

const missing = await promtoolMissing();
if (missing !== undefined) console.error(`monitoring-rules.test.ts: skipped: ${missing}`);
const promtoolIt = it.skipIf(missing !== undefined);

async function promtool(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd, timeout: PROMTOOL_TIMEOUT_MS });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string; message: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout}${e.stderr}` };
  }
}

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** The Prometheus text format, sample lines only (label values here never hold quotes). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    samples.push({
      name: match[1] ?? '',
      labels: labelsOf(match[2] ?? ''),
      value: Number(match[3]),
    });
  }
  return samples;
}

function labelsOf(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of text.matchAll(/(\w+)\s*=\s*"([^"]*)"/g)) labels[pair[1] ?? ''] = pair[2] ?? '';
  return labels;
}

/** What a PromQL expression reads: the metric names and the label names it matches or groups by. */
function readsOf(expr: string): { metrics: string[]; labels: string[] } {
  const metrics = [...new Set([...expr.matchAll(/\b(nrn_\w+)/g)].map((m) => m[1] ?? ''))];
  const labels = new Set<string>();
  for (const matchers of expr.matchAll(/\{([^}]*)\}/g)) {
    for (const m of (matchers[1] ?? '').matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)) labels.add(m[1] ?? '');
  }
  for (const grouping of expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)) {
    for (const name of (grouping[1] ?? '').split(',')) {
      if (name.trim() !== '') labels.add(name.trim());
    }
  }
  return { metrics, labels: [...labels] };
}

/** The status values an expression matches (`status="x"` or `status=~"a|b"`). */
function statusesOf(expr: string): string[] {
  return [...expr.matchAll(/\bstatus\s*=~?\s*"([^"]*)"/g)].flatMap((m) => (m[1] ?? '').split('|'));
}

interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}
interface RuleGroup {
  readonly name: string;
  readonly rules: Rule[];
}
interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly targets?: { refId: string; expr: string }[];
  readonly panels?: Panel[];
}
interface PromtoolTests {
  rule_files: string[];
  tests: {
    name: string;
    input_series: { series: string; values: string }[];
    alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
  }[];
}

const ruleDocument = parse(await readFile(join(MONITORING, 'prometheusrule.yaml'), 'utf8')) as {
  apiVersion: string;
  kind: string;
  spec: { groups: RuleGroup[] };
};
const groups = ruleDocument.spec.groups;
const alerts = groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
const dashboard = JSON.parse(await readFile(join(MONITORING, 'dashboard.json'), 'utf8')) as {
  uid: string;
  title: string;
  panels: Panel[];
};
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
/** A panel's query as Prometheus gets it: Grafana's variables filled in. */
const queries = panels.flatMap((panel) =>
  (panel.targets ?? []).map((target) => ({
    name: `${panel.title} ${target.refId}`,
    expr: target.expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', 'nrn-operator'),
  })),
);
const promtoolTests = parse(await readFile(PROMTOOL_TESTS, 'utf8')) as PromtoolTests;

/** A webhook agent that makes every service active at once. */
async function startAgent(): Promise<{ server: Server; url: string; calls: () => number }> {
  let calls = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      calls++;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ status: 'active' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/provision`, calls: () => calls };
}

describe('deploy/monitoring: alerts and dashboard over the operator’s own metrics', () => {
  let cluster: StartedCluster;
  let operatorKube: Kube;
  let operator: Operator | undefined;
  let server: ObservabilityServer | undefined;
  let agent: Awaited<ReturnType<typeof startAgent>> | undefined;
  let dir: string;
  /** The operator's /metrics, once it has reconciled a scope and a service. */
  let samples: Sample[];
  /** Each sample name scraped, with the label names its series carry. */
  const scraped = new Map<string, Set<string>>();
  const valuesOf = (label: string) =>
    new Set(samples.flatMap((s) => (s.labels[label] !== undefined ? [s.labels[label]] : [])));

  const k = async (args: string[], input?: string) => {
    const result = await kubectl(cluster, args, input !== undefined ? { input } : {});
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const scrape = async () => {
    const response = await fetch(`${server?.url}/metrics`);
    expect(response.status).toBe(200);
    return parseMetrics(await response.text());
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nrn-monitoring-'));
    const opNs = uniqueName('operator-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await installCrdsAndClasses(cluster);
    operatorKube = await connect({ kubeconfigPath: cluster.operatorKubeconfigPath, log });
    agent = await startAgent();
    const metrics = new OperatorMetrics();
    server = await startObservabilityServer({ metrics, log, port: 0 });
    operator = await startOperator({
      kube: operatorKube,
      log,
      namespace: opNs,
      leaderElection: false,
      metrics,
    });

    const ns = uniqueName('monitoring');
    const specId = randomUUID();
    const specification = {
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'ServiceSpecification',
      metadata: { name: 'db', namespace: ns },
      spec: {
        id: specId,
        name: 'db',
        type: 'dependency',
        attributes: { schema: { type: 'object', properties: { size: { type: 'string' } } } },
        provisioner: { type: 'webhook', url: agent.url, deadline_seconds: 60 },
      },
    };
    const service = {
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'Service',
      metadata: { name: 'db', namespace: ns },
      spec: {
        name: 'db',
        type: 'dependency',
        specification_id: specId,
        entity_nrn: 'organization=1:account=2',
        attributes: { size: 'small' },
      },
    };
    await k(['create', 'namespace', ns]);
    await k(
      ['apply', '-f', '-'],
      `${applicationYaml(ns, 'shop', 41)}---${scopeYaml(ns, 'web', 41)}---\n${JSON.stringify(specification)}\n---\n${JSON.stringify(service)}\n`,
    );
    await k(['wait', '-n', ns, '--for=jsonpath={.status.status}=active', 'scope/web']);
    await k([
      'wait',
      '-n',
      ns,
      '--for=jsonpath={.status.status}=active',
      'services.platform.nrn.dev/db',
    ]);

    // The caches follow the status writes by a watch event: poll until they show them.
    const deadline = Date.now() + 10_000;
    const shown = (name: string, labels: Record<string, string>) =>
      samples.some(
        (s) => s.name === name && Object.entries(labels).every(([l, v]) => s.labels[l] === v),
      );
    for (;;) {
      samples = await scrape();
      const done =
        shown('nrn_resources_oldest_seconds', { kind: 'Scope', status: 'active' }) &&
        shown('nrn_resources_oldest_seconds', { kind: 'Service', status: 'active' }) &&
        shown('nrn_webhook_call_duration_seconds_count', { kind: 'Service', outcome: '2xx' }) &&
        shown('nrn_kube_api_request_duration_seconds_count', { method: 'PATCH', outcome: '2xx' });
      if (done || Date.now() > deadline) break;
      await sleep(50);
    }
    for (const sample of samples) {
      const names = scraped.get(sample.name) ?? new Set<string>();
      for (const label of Object.keys(sample.labels)) names.add(label);
      scraped.set(sample.name, names);
    }
  });
  afterAll(async () => {
    await operator?.stop();
    await server?.close();
    if (agent !== undefined) {
      agent.server.closeAllConnections();
      await new Promise<void>((resolve) => agent?.server.close(() => resolve()));
    }
    operatorKube?.close();
    await cluster?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('exports how long webhook calls and API requests took, and how long the oldest object has been in its state', () => {
    const answered = samples.filter(
      (s) => s.name === 'nrn_kube_api_request_duration_seconds_count' && s.labels.outcome === '2xx',
    );
    expect(answered.map((s) => s.labels.method)).toEqual(expect.arrayContaining(['GET', 'PATCH']));
    expect(answered.every((s) => s.value > 0)).toBe(true);
    const call = samples.find(
      (s) =>
        s.name === 'nrn_webhook_call_duration_seconds_count' &&
        s.labels.kind === 'Service' &&
        s.labels.action === 'create' &&
        s.labels.outcome === '2xx',
    );
    expect(call?.value).toBeGreaterThanOrEqual(1);
    expect(call?.value).toBeLessThanOrEqual(agent?.calls() ?? 0);
    const bucket = samples.find(
      (s) =>
        s.name === 'nrn_webhook_call_duration_seconds_bucket' &&
        s.labels.kind === 'Service' &&
        s.labels.le === '+Inf',
    );
    expect(bucket?.value).toBe(call?.value);
    for (const kind of ['Scope', 'Service']) {
      const oldest = samples.find(
        (s) =>
          s.name === 'nrn_resources_oldest_seconds' &&
          s.labels.kind === kind &&
          s.labels.status === 'active',
      );
      // Made in this test: active for seconds, not the hour the stuck alert waits for.
      expect(oldest?.value, kind).toBeGreaterThanOrEqual(0);
      expect(oldest?.value, kind).toBeLessThan(600);
    }
  });

  it('the rules and the dashboard read only metrics and labels the operator exports', () => {
    const problems: string[] = [];
    const check = (where: string, expr: string) => {
      const { metrics, labels } = readsOf(expr);
      if (metrics.length === 0) {
        // absent() of a metric still names it; a query of no metric of ours is a mistake.
        problems.push(`${where}: reads no nrn_ metric`);
      }
      const known = new Set(TARGET_LABELS);
      for (const metric of metrics) {
        const names = scraped.get(metric);
        if (names === undefined) problems.push(`${where}: ${metric} is not on /metrics`);
        for (const name of names ?? []) known.add(name);
      }
      for (const label of labels) {
        if (!known.has(label)) problems.push(`${where}: no metric it reads has label ${label}`);
      }
    };
    for (const rule of alerts) check(`alert ${rule.alert}`, rule.expr);
    for (const query of queries) check(`panel ${query.name}`, query.expr);
    expect(problems).toEqual([]);
    expect(alerts.length).toBeGreaterThanOrEqual(9);
    expect(queries.length).toBeGreaterThanOrEqual(15);
  });

  it('the status values the rules match are lifecycle values, and "stuck" covers every transitional one', () => {
    const phases = new Set<string>([...SCOPE_PHASES, ...SERVICE_PHASES]);
    const matched = [...alerts, ...queries].flatMap((r) => statusesOf(r.expr));
    expect(matched.filter((status) => !phases.has(status))).toEqual([]);
    const stuck = alerts.find((a) => a.alert === 'NrnResourceStuck');
    const settled = new Set(['active', 'deleted', 'failed']);
    expect(new Set(statusesOf(stuck?.expr ?? ''))).toEqual(
      new Set([...phases].filter((phase) => !settled.has(phase))),
    );
  });

  it('every alert has a severity, a summary and a description, and a runbook section that exists', async () => {
    const runbook = await readFile(join(MONITORING, 'README.md'), 'utf8');
    // GitHub's heading anchors: lower case, spaces to dashes, punctuation dropped.
    const anchors = new Set(
      [...runbook.matchAll(/^#+ (.+)$/gm)].map((m) =>
        (m[1] ?? '')
          .toLowerCase()
          .replace(/[^\w\- ]/g, '')
          .replaceAll(' ', '-'),
      ),
    );
    expect(ruleDocument.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(ruleDocument.kind).toBe('PrometheusRule');
    for (const rule of alerts) {
      expect(['critical', 'warning', 'info'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.description, rule.alert).toBeTruthy();
      const url = rule.annotations?.runbook_url ?? '';
      expect(url, rule.alert).toMatch(
        /^https:\/\/github\.com\/nrn-operator\/nrn-operator\/blob\/main\/deploy\/monitoring\/README\.md#/,
      );
      expect(anchors, rule.alert).toContain(url.slice(url.indexOf('#') + 1));
    }
  });

  it('the promtool tests feed in series shaped as the operator writes them, and each alert both fires and stays quiet', () => {
    const problems: string[] = [];
    const kinds = valuesOf('kind');
    const controllers = valuesOf('controller');
    for (const test of promtoolTests.tests) {
      for (const { series } of test.input_series) {
        const match = /^(\w+)(?:\{(.*)\})?$/.exec(series);
        const name = match?.[1] ?? '';
        if (PROMETHEUS_SERIES.has(name)) continue;
        const labels = labelsOf(match?.[2] ?? '');
        const own = Object.keys(labels)
          .filter((l) => !TARGET_LABELS.has(l))
          .sort();
        const expected = [...(scraped.get(name) ?? [])].sort();
        if (!scraped.has(name)) problems.push(`${test.name}: ${name} is not on /metrics`);
        else if (own.join() !== expected.join()) {
          problems.push(`${test.name}: ${name} has labels ${own}, /metrics ${expected}`);
        }
        if (labels.kind !== undefined && !kinds.has(labels.kind)) {
          problems.push(`${test.name}: kind ${labels.kind} is not on /metrics`);
        }
        if (labels.controller !== undefined && !controllers.has(labels.controller)) {
          problems.push(`${test.name}: controller ${labels.controller} is not on /metrics`);
        }
      }
    }
    expect(problems).toEqual([]);
    for (const rule of alerts) {
      const cases = promtoolTests.tests.flatMap((t) =>
        (t.alert_rule_test ?? []).filter((c) => c.alertname === rule.alert),
      );
      expect(
        cases.some((c) => c.exp_alerts.length > 0),
        `${rule.alert} fires`,
      ).toBe(true);
      expect(
        cases.some((c) => c.exp_alerts.length === 0),
        `${rule.alert} stays quiet`,
      ).toBe(true);
    }
  });

  promtoolIt('promtool checks the PrometheusRule’s groups', async () => {
    await writeFile(join(dir, 'rules.yml'), stringify({ groups }));
    const result = await promtool(['check', 'rules', 'rules.yml'], dir);
    expect(result.output).toContain(`SUCCESS: ${alerts.length} rules found`);
    expect(result.code).toBe(0);
  });

  promtoolIt('promtool runs the alerts’ unit tests', async () => {
    await writeFile(join(dir, 'rules.yml'), stringify({ groups }));
    expect(promtoolTests.rule_files).toEqual(['rules.yml']);
    await copyFile(PROMTOOL_TESTS, join(dir, 'alerts.promtool.yaml'));
    const result = await promtool(['test', 'rules', 'alerts.promtool.yaml'], dir);
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
  });

  promtoolIt('promtool parses every query of the dashboard', async () => {
    // A recording rule per query: `check rules` parses each expression as Prometheus would.
    const rules = queries.map((query, i) => ({ record: `dashboard:query_${i}`, expr: query.expr }));
    await writeFile(
      join(dir, 'dashboard.yml'),
      stringify({ groups: [{ name: 'dashboard', rules }] }),
    );
    const result = await promtool(['check', 'rules', 'dashboard.yml'], dir);
    expect(result.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(result.code).toBe(0);
    expect(dashboard.uid).toBe('nrn-operator');
  });

  it('kustomize builds deploy/monitoring: the rule, the scrape and the dashboard for the sidecar', async () => {
    const built = await run('kubectl', ['kustomize', MONITORING], { timeout: 60_000 });
    const objects = built.stdout.split(/^---$/m).map(
      (doc) =>
        parse(doc) as {
          kind: string;
          metadata: { name: string; labels?: Record<string, string> };
          data?: Record<string, string>;
        },
    );
    expect(objects.map((o) => o.kind).sort()).toEqual([
      'ConfigMap',
      'PrometheusRule',
      'ServiceMonitor',
    ]);
    const configMap = objects.find((o) => o.kind === 'ConfigMap');
    expect(configMap?.metadata.labels?.grafana_dashboard).toBe('1');
    expect(JSON.parse(configMap?.data?.['nrn-operator.json'] ?? '')).toEqual(dashboard);
  });
});
