// A fixed class frees the scopes it failed, and no condition outlives its generation (issue 13,
// point 4; ADR 0032), from the outside: kubectl against the local plane with the operator. A
// class whose child the API server refuses (422) fails its scopes; `kubectl apply` of the
// fixed class brings them active with no retry annotation, while a scope failed for its own
// doing (a duplicate slug) stays failed; a class that stops serving the scope it could not
// render for stops quoting that scope.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Kube, Namespaces } from '../../src/kube/index.js';
import { type Operator, startOperator } from '../../src/operator.js';
import {
  installCrdsAndClasses,
  type StartedCluster,
  startCluster,
  uniqueName,
} from '../support/cluster.js';
import { applicationYaml, scopeYaml } from '../support/manifests.js';
import { refusalLog } from '../support/operator-identity.js';
import { conditionOf, kubectlViews, type View, waitFor } from '../support/resource-views.js';
import { sleep } from '../support/wait.js';

const ROOT = join(import.meta.dirname, '../..');
const operatorLog = refusalLog();
const APP = 52;
/** Slow enough to see: four retried scopes take at least 1.5 s to reach. */
const ROLLOUT_RATE = 2;
const REFUSED = ['one', 'two', 'three', 'four'];

/** A class for scopes labelled `fix: <label>`, with one Service named `childName`. */
const classYaml = (name: string, label: string, childName: string) => `
apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: ${name}}
spec:
  scope_type: web_pool
  match: {labels: {fix: "${label}"}}
  resources:
    - name: web
      manifest:
        apiVersion: v1
        kind: Service
        metadata: {name: "${childName}"}
        spec: {ports: [{port: 80}]}
`;

describe('a fixed class frees the scopes it failed; conditions follow generations', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  let operator: Operator;
  let ns: string;

  const views = kubectlViews(() => cluster);
  const k = views.k;
  const get = async (what: string, namespace?: string): Promise<View> => {
    const view = await views.get(what, namespace);
    if (view === undefined) throw new Error(`${what} not found`);
    return view;
  };
  const waitUntil = (what: string, check: (v: View) => boolean, namespace?: string) =>
    waitFor(what, () => get(what, namespace), check);
  /** A scope labelled `fix: <label>`; `slugOf` its spec.name (its slug), its name by default. */
  const scope = (name: string, label: string, slugOf = name) =>
    scopeYaml(ns, name, APP)
      .replace(`metadata: {name: ${name},`, `metadata: {labels: {fix: "${label}"}, name: ${name},`)
      .replace(`  name: ${name}\n`, `  name: ${slugOf}\n`);
  const failedFor = (reason: string) => (s: View) =>
    s.status?.status === 'failed' && conditionOf(s, 'Stalled')?.reason === reason;
  /** Every condition describes the generation the object is at. */
  const current = (v: View) =>
    (v.status?.conditions ?? []).every((c) => c.observedGeneration === v.metadata.generation);

  beforeAll(async () => {
    const opNs = uniqueName('operator-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await installCrdsAndClasses(cluster);
    // The kinds classes make (Services among them), granted through the aggregated role.
    await k(['apply', '-f', join(ROOT, 'deploy/scope-class-kinds.yaml')]);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log: operatorLog.log });
    const operatorKube = await connect({
      kubeconfigPath: cluster.operatorKubeconfigPath,
      log: operatorLog.log,
    });
    ns = uniqueName('class-fix');
    await kube.resource(Namespaces).create({ metadata: { name: ns } });
    await k(['apply', '-f', '-'], applicationYaml(ns, 'fixable', APP));
    operator = await startOperator({
      kube: operatorKube,
      log: operatorLog.log,
      namespace: opNs,
      leaderElection: false,
      scopeClassRolloutRate: ROLLOUT_RATE,
    });
  });
  afterAll(async () => {
    expect(await operator?.stop()).toBe(true);
    kube?.close();
    await cluster?.close();
  });

  it('scopes a class failed (the API server refused its child) go active once the class is fixed, unasked', async () => {
    await k(['apply', '-f', '-'], classYaml('refused-child', 'refused', 'Bad_Web'));
    await sleep(300);
    await k(['apply', '-f', '-'], REFUSED.map((name) => scope(name, 'refused')).join('---'));
    for (const name of REFUSED) {
      const failed = await waitUntil(`scope/${name}`, failedFor('ProvisionRefused'), ns);
      expect(conditionOf(failed, 'Stalled')?.message).toContain('Bad_Web');
      expect(failed.status).toMatchObject({ scopeClass: 'refused-child', scopeClassGeneration: 1 });
    }
    // Same application, same slug as `one`, younger: failed for its own doing.
    await k(['apply', '-f', '-'], scope('one-again', 'refused', 'one'));
    const duplicate = await waitUntil('scope/one-again', failedFor('DuplicateSlug'), ns);

    await k(['apply', '-f', '-'], classYaml('refused-child', 'refused', 'web'));
    const made: View[] = [];
    for (const name of REFUSED) {
      made.push(await waitUntil(`scope/${name}`, (s) => s.status?.status === 'active', ns));
    }
    for (const view of made) {
      expect(view.metadata.annotations?.['platform.nrn.dev/retry']).toBeUndefined();
      expect(view.status?.observedRetry).toBeUndefined();
      expect(view.status).toMatchObject({ scopeClass: 'refused-child', scopeClassGeneration: 2 });
      expect(view.status?.observedGeneration).toBe(view.metadata.generation);
      expect(current(view)).toBe(true);
      expect(JSON.stringify(view.status?.conditions)).not.toContain('Bad_Web');
    }
    // Retried at the rollout's pace, as a class change reaches active scopes: four at two a
    // second are at least 1.5 s apart, so their Ready stamps (whole seconds) at least one.
    const times = made.map((v) => Date.parse(conditionOf(v, 'Ready')?.lastTransitionTime ?? ''));
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(1000);
    const cls = await waitUntil(
      'scopeclass/refused-child',
      (c) => c.status?.observedGeneration === 2 && conditionOf(c, 'Ready')?.status === 'True',
    );
    expect(cls.metadata.generation).toBe(2);
    expect(current(cls)).toBe(true);
    // The class change woke it, and it failed again for the same reason: nothing rewritten.
    const still = await get('scope/one-again', ns);
    expect(conditionOf(still, 'Stalled')).toMatchObject({
      status: 'True',
      reason: 'DuplicateSlug',
    });
    expect(conditionOf(still, 'Stalled')?.message).toBe(conditionOf(duplicate, 'Stalled')?.message);
    expect(current(still)).toBe(true);
  });

  it('a class that stops serving the scope it could not render for stops quoting it', async () => {
    await k(
      ['apply', '-f', '-'],
      classYaml('regional-fix', 'regional', '${scope.dimensions.region}'),
    );
    await sleep(300);
    await k(['apply', '-f', '-'], scope('nowhere', 'regional'));
    await waitUntil('scope/nowhere', failedFor('RenderFailed'), ns);
    const stalled = await waitUntil(
      'scopeclass/regional-fix',
      (c) => conditionOf(c, 'Stalled')?.reason === 'RenderFailed',
    );
    expect(conditionOf(stalled, 'Stalled')?.message).toContain(`${ns}/nowhere`);
    expect(current(stalled)).toBe(true);

    // Generation 2 serves other scopes: `nowhere` falls to the default class and goes active,
    // and what generation 1 could not do for it is no longer said.
    await k(['apply', '-f', '-'], classYaml('regional-fix', 'regional-eu', 'web'));
    const moved = await waitUntil('scope/nowhere', (s) => s.status?.status === 'active', ns);
    expect(moved.status?.scopeClass).toBe('web-pool-default');
    expect(current(moved)).toBe(true);
    const cls = await waitUntil(
      'scopeclass/regional-fix',
      (c) => c.status?.observedGeneration === 2 && conditionOf(c, 'Ready')?.status === 'True',
    );
    expect(current(cls)).toBe(true);
    expect(JSON.stringify(cls.status?.conditions)).not.toContain('nowhere');
    expect(JSON.stringify(cls.status?.conditions)).not.toContain('dimensions');
  });
});
