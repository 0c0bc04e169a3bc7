// A ScopeClass is checked against the cluster it runs on (issue 13 point 4, ADR 0031), through
// kubectl against `nrn-operator local` with its operator and admission webhook: a kind the API
// server does not serve, an unknown field, a wrong type are refused at apply naming the path,
// and nothing is stored; a placeholder is admitted where it can render; a child two scopes
// would share is admitted with a warning kubectl prints; a class naming a CRD's kind goes
// Stalled (KindNotServed) when the CRD is deleted, and Ready when it is made again.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalProcess, terminate } from '../support/operator-processes.js';
import { sleep } from '../support/wait.js';

const execFileAsync = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

const classYaml = (name: string, resources: string) => `apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata:
  name: ${name}
spec:
  scope_type: web_pool
  match:
    labels: {class: ${name}}
  resources:
${resources}`;

/** One resource entry of a class, its manifest written in YAML below `manifest:`. */
const resource = (name: string, manifest: string) =>
  `    - name: ${name}\n      manifest:\n${manifest
    .trim()
    .split('\n')
    .map((line) => `        ${line}`)
    .join('\n')}\n`;

const configMap = (body: string, name = 'settings') =>
  resource(
    'settings',
    `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
${body}`,
  );

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.test
spec:
  group: example.test
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: {type: integer}
                colour: {type: string}
`;

describe('a ScopeClass checked against the cluster', () => {
  let dir: string;
  let stop: (() => Promise<unknown>) | undefined;
  let kubeconfig: string;

  const kubectl = async (args: string[], input?: string) => {
    const run = execFileAsync('kubectl', ['--kubeconfig', kubeconfig, ...args], {
      timeout: 30_000,
    });
    if (input !== undefined) run.child.stdin?.end(input);
    try {
      const { stdout, stderr } = await run;
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
    }
  };
  const apply = (yaml: string) => kubectl(['apply', '-f', '-'], yaml);
  const refused = async (name: string, yaml: string, message: RegExp) => {
    const result = await apply(yaml);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'admission webhook "validate.platform.nrn.dev" denied the request: ',
    );
    expect(result.stderr).toMatch(message);
    const stored = await kubectl(['get', 'scopeclass', name]);
    expect(stored.stderr).toContain('NotFound');
  };
  const ready = async (
    name: string,
    status: 'True' | 'False',
    reason: string,
    timeoutMs: number,
  ) => {
    const deadline = Date.now() + timeoutMs;
    let last: Condition | undefined;
    for (;;) {
      const got = await kubectl(['get', 'scopeclass', name, '-o', 'json']);
      const view = JSON.parse(got.stdout || '{}') as { status?: { conditions?: Condition[] } };
      last = view.status?.conditions?.find((c) => c.type === 'Ready');
      if (last?.status === status && last.reason === reason) return last;
      if (Date.now() > deadline) {
        throw new Error(
          `class ${name}: Ready ${status} ${reason} not reached: ${JSON.stringify(last)}`,
        );
      }
      await sleep(250);
    }
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nrn-class-cluster-'));
    const local = await startLocalProcess(dir, ['--no-facade']);
    stop = () => terminate(local.child);
    kubeconfig = local.kubeconfigPath;
  }, 120_000);
  afterAll(async () => {
    await stop?.();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a kind the API server does not serve, naming the path; nothing is stored', async () => {
    const yaml = classYaml(
      'typo',
      configMap('data: {a: "1"}') +
        resource('typo', 'apiVersion: v1\nkind: ConfigMapp\nmetadata:\n  name: other'),
    );
    await refused(
      'typo',
      yaml,
      /spec\.resources\[1\]\.manifest: the API server serves no kind ConfigMapp in v1$/m,
    );
  });

  it('refuses an unknown field and a wrong type at their paths', async () => {
    await refused(
      'unknown-field',
      classYaml('unknown-field', configMap('datta: {a: "1"}')),
      /spec\.resources\[0\]\.manifest\.datta: unknown field "datta"$/m,
    );
    await refused(
      'wrong-type',
      classYaml('wrong-type', configMap('data: {a: 1}')),
      /spec\.resources\[0\]\.manifest\.data\.a: expected string, got integer$/m,
    );
  });

  it('admits placeholders where they can render, and the examples as they are', async () => {
    const yaml = classYaml(
      'placeholders',
      configMap('data:\n  id: "id-${scope.id}"\n  nrn: "${scope.nrn}"') +
        resource(
          'deployment',
          `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: \${scope.requested_spec.memory_in_gb}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:\${scope.slug}", ports: [{containerPort: 8080}]}]`,
        ),
    );
    const result = await apply(yaml);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    await ready('placeholders', 'True', 'Ready', 20_000);
    // A placeholder inside text where an integer goes renders a string: refused.
    await refused(
      'text-in-integer',
      classYaml(
        'text-in-integer',
        resource(
          'hpa',
          'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  maxReplicas: "1${scope.id}"\n  scaleTargetRef: {kind: Deployment, name: web}',
        ),
      ),
      /spec\.resources\[0\]\.manifest\.spec\.maxReplicas: expected integer, got a string with a placeholder inside text/,
    );
    const example = await kubectl([
      'apply',
      '-f',
      join(ROOT, 'examples/scopeclass-web-pool-critical.yaml'),
    ]);
    expect(example.stderr).toBe('');
    expect(example.code).toBe(0);
  });

  it('warns of a child name two scopes would share; kubectl prints it', async () => {
    const yaml = classYaml(
      'shared-name',
      configMap('  namespace: shared\ndata: {a: "1"}', '${scope.slug}'),
    );
    const result = await apply(yaml);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /^Warning: spec\.resources\[0\]\.manifest\.metadata\.name: "\$\{scope\.slug\}" in namespace "shared" is the same for every scope of this class/m,
    );
    expect((await kubectl(['get', 'scopeclass', 'shared-name'])).code).toBe(0);
  });

  it('a class naming a CRD kind is Stalled KindNotServed while the CRD is gone, Ready again once back', {
    timeout: 120_000,
  }, async () => {
    expect((await apply(CRD)).code).toBe(0);
    await kubectl([
      'wait',
      '--for=condition=Established',
      'crd/widgets.example.test',
      '--timeout=30s',
    ]);
    const widget = resource(
      'widget',
      'apiVersion: example.test/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 3, colour: "${scope.slug}"}',
    );
    // Its schema is the CRD's, as published: a wrong type is refused here too.
    await refused(
      'widget-wrong',
      classYaml(
        'widget-wrong',
        resource(
          'widget',
          'apiVersion: example.test/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: big}',
        ),
      ),
      /spec\.resources\[0\]\.manifest\.spec\.size: expected integer, got string$/m,
    );
    const admitted = await apply(classYaml('widgets', widget));
    expect(admitted.stderr).toBe('');
    await ready('widgets', 'True', 'Ready', 20_000);

    expect((await kubectl(['delete', 'crd', 'widgets.example.test', '--wait=true'])).code).toBe(0);
    const stalled = await ready('widgets', 'False', 'KindNotServed', 60_000);
    expect(stalled.message).toBe(
      'resources.widget (spec.resources[0].manifest): the API server serves no kind Widget in example.test/v1',
    );

    expect((await apply(CRD)).code).toBe(0);
    await ready('widgets', 'True', 'Ready', 30_000);
  });
});
