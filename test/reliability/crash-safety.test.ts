// Crash safety: while scopes are created through the facade, the operator is killed -9 every
// few seconds and the control plane twice, each restarted on the same data; afterwards, with one
// operator left running, every create that got a 200 exists exactly once and is active, ids are
// unique, no child outlives its scope, no scope lacks one, nothing acknowledged is lost.
//
// How it is set up, and why:
// - The control plane process serves the facade (`local --no-operator`: the API server and the
//   facade, as `local` runs them), the operator is a process of its own (`run --no-facade`).
//   In the operator process the facade would be down most of the time (it dies every 3 s and
//   needs a few to start), and creates would measure restarts; beside the API server it dies
//   only with it, which is the case that matters: a create in flight when the process holding
//   both the store and the facade dies.
// - The plane comes back on the same data directory and the same API and facade ports, so the
//   operators' kubeconfig and the creators' URL stay right, as for a restarted service.
// - The operators run without leader election, one at a time (each is dead before the next
//   starts): with it, each new one waits out the dead one's 15 s Lease (ADR 0008) and none
//   would ever work between kills 3 s apart. Take-over under election is what
//   test/integration/operator-failover.test.ts covers.
// - Creates go 8 at a time, paced so that they span the kills, and are retried only when no
//   answer or a 5xx came. Such a create may or may not have happened: if it ends without a
//   200 (a 409 on a retry, or never an answer) it is "unknown", and must exist at most once.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SCOPE_UID_LABEL, scopeNamespaceName } from '../../src/domain/names.js';
import { LIMIT_RANGE_NAME, QUOTA_NAME } from '../../src/domain/scope-classes/children.js';
import {
  connect,
  type Kube,
  type KubeObject,
  LimitRanges,
  Namespaces,
  ResourceQuotas,
  Scopes,
  ServiceAccounts,
} from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import { kubectl, type TestCluster } from '../support/cluster.js';
import { applicationYaml, namespaceYaml } from '../support/manifests.js';
import { createOperatorIdentity, DEPLOY_NAMESPACE } from '../support/operator-identity.js';
import { sleep } from '../support/wait.js';
import {
  crash,
  killAll,
  type OperatorChild,
  type PlaneProcess,
  restartPlane,
  startOperator,
  startPlane,
} from './support/crash-safety-processes.js';
import { report, size } from './support/scenario.js';

const SCOPES = size(200, 1000);
const KILL_EVERY_S = size(3, 3);
const IN_FLIGHT = 8;
/** Creates start in batches of IN_FLIGHT, one batch per IN_FLIGHT × this many ms, so that they
 * span the kills. */
const PACE_MS = size(120, 60);
/** A create is retried (no answer, 5xx) for this long at most, then counted unknown. */
const CREATE_DEADLINE_MS = size(60_000, 120_000);
const ATTEMPT_TIMEOUT_MS = 15_000;
/** Every scope active within this of the last operator's start: the bound asserted. */
const ACTIVE_WITHIN_S = size(120, 300);
const NS = 'crash';
const APP_ID = 10;

type Outcome =
  | { readonly kind: 'acknowledged'; readonly id: number }
  | { readonly kind: 'unknown'; readonly why: string }
  | { readonly kind: 'refused'; readonly why: string };

interface Create {
  readonly name: string;
  readonly outcome: Outcome;
  readonly attempts: number;
  readonly ms: number;
}

const scopeName = (i: number) => `crash-${i}`;

/**
 * POST /scope until an answer that is not a 5xx. `setup` also retries the 400 of an
 * application the facade has not seen yet (only for the first create, right after it is made).
 */
async function createScope(facade: string, token: string, name: string, setup = false) {
  const body = JSON.stringify({
    name,
    type: 'web_pool',
    application_id: APP_ID,
    requested_spec: { memory_in_gb: 1, cpu_profile: 'standard', local_storage_in_gb: 5 },
  });
  const started = Date.now();
  let attempts = 0;
  let ambiguous = false;
  let last = '';
  const done = (outcome: Outcome): Create => ({
    name,
    outcome,
    attempts,
    ms: Date.now() - started,
  });
  for (let pause = 100; ; pause = Math.min(pause * 2, 1_000)) {
    attempts++;
    let status: number | undefined;
    let text = '';
    try {
      const answer = await fetch(`${facade}/scope`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      // An answer cut off mid-body is no answer.
      text = await answer.text();
      status = answer.status;
    } catch (error) {
      last = String((error as { cause?: unknown }).cause ?? error);
    }
    if (status === 200 || status === 201) {
      let scope: { id?: unknown; name?: unknown } = {};
      try {
        scope = JSON.parse(text) as typeof scope;
      } catch {
        // Not JSON: refused below, with the text.
      }
      if (typeof scope.id !== 'number' || scope.name !== name) {
        return done({ kind: 'refused', why: `${status} without its id or name: ${text}` });
      }
      return done({ kind: 'acknowledged', id: scope.id });
    }
    const notSeenYet = setup && status === 400 && text.includes('APPLICATION_NOT_FOUND');
    if (status !== undefined && status < 500 && !notSeenYet) {
      if (status === 409 && ambiguous) return done({ kind: 'unknown', why: `409 after ${last}` });
      return done({ kind: 'refused', why: `${status} ${text.slice(0, 300)}` });
    }
    if (status !== undefined) last = `${status} ${text.slice(0, 200)}`;
    if (!notSeenYet) ambiguous = true;
    if (Date.now() - started > CREATE_DEADLINE_MS) {
      return done({ kind: 'unknown', why: `no answer but ${last}` });
    }
    await sleep(pause);
  }
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};

describe('reliability: crash safety', () => {
  let dataDir = '';
  let kube: Kube | undefined;
  let stopChurn: () => void = () => {};
  let churning: Promise<unknown> = Promise.resolve();

  afterAll(async () => {
    stopChurn();
    await Promise.race([churning, sleep(10_000)]);
    await killAll();
    kube?.close();
    if (dataDir !== '') await rm(dataDir, { recursive: true, force: true });
  });

  it(`${SCOPES} creates through the facade while the operator is killed -9 every ${KILL_EVERY_S} s and the control plane twice: every acknowledged scope exists once and is active within ${ACTIVE_WITHIN_S} s of the last operator's start, ids unique, no orphaned or missing child`, async () => {
    const began = Date.now();
    dataDir = await mkdtemp(join(tmpdir(), 'nrn-crash-safety-'));
    let plane: PlaneProcess = await startPlane(dataDir);
    const ports = { api: plane.apiPort, facade: Number(new URL(plane.facadeUrl).port) };
    const facade = plane.facadeUrl;
    const kubeconfigPath = plane.kubeconfigPath;
    const token = (await readFile(join(dataDir, 'token'), 'utf8')).trim();
    const cluster: TestCluster = {
      kind: 'local',
      kubeconfigPath,
      settle: async () => {},
      close: async () => {},
    };
    const applied = await kubectl(cluster, ['apply', '-f', '-'], {
      input: `${namespaceYaml(NS)}---${applicationYaml(NS, 'checkout', APP_ID)}`,
    });
    expect(applied.code, applied.stderr).toBe(0);
    // The operators act as deployed: deploy/'s ServiceAccount, with deploy/rbac.yaml's rights
    // (its token outlives the plane's restarts: the signing key is in the data dir).
    const operatorKubeconfig = (
      await createOperatorIdentity(
        kubeconfigPath,
        DEPLOY_NAMESPACE,
        join(dataDir, 'operator-kubeconfig'),
      )
    ).kubeconfigPath;

    // The operators: one at a time, each killed -9 a random half to one and a half periods
    // after its spawn. One that is not up by then is first given a random second of work
    // (starting takes some seconds here, and an operator that never works tests little),
    // except every fourth, killed on time whatever it is doing: mostly listing.
    const operators = { starts: 0, kills: 0, killedStarting: 0, exitedOnTheirOwn: 0 };
    const exits: string[] = [];
    /** From spawn to 'operator started', of each operator that got there. */
    const startMs: number[] = [];
    let stopped = false;
    const stop = new Promise<'stop'>((resolve) => {
      stopChurn = () => {
        stopped = true;
        resolve('stop');
      };
    });
    let firstStarted: () => void = () => {};
    const operatorUp = new Promise<void>((resolve) => {
      firstStarted = resolve;
    });
    const alive = (op: OperatorChild) => op.child.exitCode === null && op.child.signalCode === null;
    churning = (async () => {
      while (!stopped) {
        const op: OperatorChild = startOperator(operatorKubeconfig);
        operators.starts++;
        const spawned = Date.now();
        let up = false;
        void op.started.then(() => {
          up = true;
          startMs.push(Date.now() - spawned);
          firstStarted();
        });
        await Promise.race([sleep(KILL_EVERY_S * 1000 * (0.5 + Math.random())), op.exited, stop]);
        if (!up && operators.starts % 4 !== 0) {
          const worked = op.started.then(() => sleep(Math.random() * 1000));
          await Promise.race([worked, op.exited, stop]);
        }
        if (!alive(op)) {
          // It gave up by itself (the plane was down while it started, say): started again,
          // as a Deployment's pod would be.
          operators.exitedOnTheirOwn++;
          const why =
            op
              .tail()
              .split('\n')
              .find((l) => /"level":(50|60)|Error/.test(l)) ?? '';
          exits.push(`exit ${op.child.exitCode}: ${why.slice(0, 300)}`);
          await sleep(500);
          continue;
        }
        if (!up) operators.killedStarting++;
        await crash(op);
        operators.kills++;
      }
    })();
    await Promise.race([operatorUp, sleep(60_000)]);

    // The first create also waits until the facade has seen the application.
    const creates: Create[] = [await createScope(facade, token, scopeName(0), true)];
    expect(creates[0]?.outcome.kind, JSON.stringify(creates[0])).toBe('acknowledged');

    // The creates, in batches of 8 started together, paced; the plane is killed a third and two
    // thirds through, just after a batch started, so that creates are in flight.
    const createsFrom = Date.now();
    const batchStart = (i: number) => createsFrom + Math.floor(i / IN_FLIGHT) * IN_FLIGHT * PACE_MS;
    let next = 1;
    let inFlight = 0;
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= SCOPES) return;
        const wait = batchStart(i) - Date.now();
        if (wait > 0) await sleep(wait);
        inFlight++;
        creates[i] = await createScope(facade, token, scopeName(i));
        inFlight--;
      }
    };
    const planeCrashes = { kills: 0, restartAttempts: 0, maxDownMs: 0, inFlight: 0 };
    const killPlane = async () => {
      for (const third of [1, 2]) {
        // Right after a batch started, a random few ms in: creates caught at any stage.
        const at = batchStart(Math.floor((third * SCOPES) / 3 / IN_FLIGHT) * IN_FLIGHT);
        // Bounded: the creators always move on (each create ends by its deadline).
        while (Date.now() < at) await sleep(Math.min(20, at - Date.now()));
        await sleep(Math.random() * 30);
        const down = Date.now();
        planeCrashes.inFlight += inFlight;
        await crash(plane);
        planeCrashes.kills++;
        const restarted = await restartPlane(dataDir, ports);
        plane = restarted.plane;
        planeCrashes.restartAttempts += restarted.attempts;
        planeCrashes.maxDownMs = Math.max(planeCrashes.maxDownMs, Date.now() - down);
      }
    };
    await Promise.all([...Array.from({ length: IN_FLIGHT }, worker), killPlane()]);
    const createsMs = Date.now() - createsFrom;

    // One operator left: the churn ends (its last one killed) and a fresh one starts.
    stopChurn();
    await churning;
    const last = startOperator(operatorKubeconfig);
    operators.starts++;
    const lastFrom = Date.now();
    const up = await Promise.race([
      last.started.then(() => 'started'),
      last.exited.then(() => 'exited'),
      sleep(60_000).then(() => 'timeout'),
    ]);
    expect(up, last.tail()).toBe('started');

    kube = await connect({ kubeconfigPath, log: silentLogger() });
    const acknowledged = creates.filter((c) => c.outcome.kind === 'acknowledged');
    const ackNames = new Set(acknowledged.map((c) => c.name));
    let scopes: KubeObject[] = [];
    const activeBy = lastFrom + ACTIVE_WITHIN_S * 1000;
    let allActive = false;
    while (!allActive && Date.now() < activeBy) {
      scopes = (await kube.resource(Scopes).list({ namespace: NS })).items;
      const names = new Set(scopes.map((s) => (s.spec as { name?: string } | undefined)?.name));
      allActive =
        [...ackNames].every((n) => names.has(n)) &&
        scopes.every(
          (s) =>
            (s.status as { status?: string } | undefined)?.status === 'active' &&
            s.metadata.deletionTimestamp === undefined,
        );
      if (!allActive) await sleep(500);
    }
    const allActiveMs = Date.now() - lastFrom;

    // What the API server holds now, and what it should.
    const specName = (s: KubeObject) => (s.spec as { name?: string } | undefined)?.name ?? '';
    const statusOf = (s: KubeObject) =>
      (s.status ?? {}) as { id?: number; status?: string; slug?: string };
    const byName = new Map<string, KubeObject[]>();
    for (const s of scopes) byName.set(specName(s), [...(byName.get(specName(s)) ?? []), s]);
    const byId = new Map<number, KubeObject[]>();
    for (const s of scopes) {
      const id = statusOf(s).id;
      if (id !== undefined) byId.set(id, [...(byId.get(id) ?? []), s]);
    }
    // Lost: no scope of its name. Exactly once: the one of its name holds the id answered (more
    // than one of a name or an id is in `duplicates`).
    const lost: string[] = [];
    const otherId: string[] = [];
    const notActive: string[] = [];
    for (const c of acknowledged) {
      const id = c.outcome.kind === 'acknowledged' ? c.outcome.id : -1;
      const named = byName.get(c.name) ?? [];
      if (named.length === 0) lost.push(`${c.name} (id ${id})`);
      for (const s of named) {
        if (statusOf(s).id !== id)
          otherId.push(`${c.name}: answered ${id}, holds ${statusOf(s).id}`);
        if (statusOf(s).status !== 'active')
          notActive.push(`${c.name}: ${JSON.stringify(s.status)}`);
      }
    }
    const unknown = creates.filter((c) => c.outcome.kind === 'unknown');
    const refused = creates.filter((c) => c.outcome.kind === 'refused');
    const requested = new Set(creates.map((c) => c.name));
    const duplicates = [
      ...[...byName].filter(([, list]) => list.length > 1).map(([name]) => `name ${name}`),
      ...[...byId].filter(([, list]) => list.length > 1).map(([id]) => `id ${id}`),
    ];
    const ackIds = acknowledged.map((c) => (c.outcome.kind === 'acknowledged' ? c.outcome.id : 0));
    const answeredTwice = ackIds.length - new Set(ackIds).size;
    const strangers = scopes.filter((s) => !requested.has(specName(s))).map(specName);
    const withoutId = scopes.filter((s) => statusOf(s).id === undefined).map(specName);
    const unknownExisting = unknown.filter((c) => byName.has(c.name)).length;

    // The namespace provisioner's children: each carries its scope's uid.
    const uids = new Map(scopes.map((s) => [s.metadata.uid ?? '', s]));
    const selector = { labelSelector: SCOPE_UID_LABEL };
    const children = [
      ...(await kube.resource(Namespaces).list(selector)).items,
      ...(await kube.resource(ResourceQuotas).list(selector)).items,
      ...(await kube.resource(LimitRanges).list(selector)).items,
      ...(await kube.resource(ServiceAccounts).list(selector)).items,
    ];
    const childKey = (kind: string, namespace: string | undefined, name: string) =>
      `${kind} ${namespace ?? ''}/${name}`;
    const childUid = new Map(
      children.map((c) => [
        childKey(c.kind ?? '', c.metadata.namespace, c.metadata.name),
        c.metadata.labels?.[SCOPE_UID_LABEL],
      ]),
    );
    const orphans = children
      .filter((c) => !uids.has(c.metadata.labels?.[SCOPE_UID_LABEL] ?? ''))
      .map((c) => childKey(c.kind ?? '', c.metadata.namespace, c.metadata.name));
    const missing: string[] = [];
    for (const s of scopes) {
      const id = statusOf(s).id;
      if (id === undefined) continue;
      const ns = scopeNamespaceName(id);
      const expected = [
        childKey('Namespace', undefined, ns),
        childKey('ResourceQuota', ns, QUOTA_NAME),
        childKey('LimitRange', ns, LIMIT_RANGE_NAME),
        childKey('ServiceAccount', ns, 'scope-runtime'),
      ];
      for (const key of expected) {
        if (childUid.get(key) !== s.metadata.uid) missing.push(`${specName(s)}: ${key}`);
      }
    }

    const attempts = creates.reduce((n, c) => n + c.attempts, 0);
    await report({
      scenario: 'crash-safety',
      tried:
        `${creates.length} creates through the facade (${IN_FLIGHT} in flight, ${attempts} attempts); ` +
        `operator killed -9 ${operators.kills} times (${operators.killedStarting} while starting), ` +
        `${operators.starts} starts, ${operators.exitedOnTheirOwn} exits on its own${exits.length > 0 ? ` (${exits[0]})` : ''}; ` +
        `control plane killed -9 ${planeCrashes.kills} times with ${planeCrashes.inFlight} creates in flight, ` +
        `restarted in ${planeCrashes.restartAttempts} attempts`,
      found:
        `${acknowledged.length} acknowledged, ${unknown.length} unknown (${unknownExisting} exist), ` +
        `${refused.length} refused; lost ${lost.length}, duplicates ${duplicates.length + answeredTwice}, ` +
        `orphans ${orphans.length}, missing children ${missing.length}, not active ${notActive.length}; ` +
        `all active ${(allActiveMs / 1000).toFixed(1)} s after the last operator started; ` +
        `scenario ${((Date.now() - began) / 1000).toFixed(0)} s`,
      figures: {
        creates: creates.length,
        acknowledged: acknowledged.length,
        unknown: unknown.length,
        lost: lost.length,
        duplicates: duplicates.length + answeredTwice,
        orphans: orphans.length,
        operatorKills: operators.kills,
        planeKills: planeCrashes.kills,
        inFlightAtPlaneKills: planeCrashes.inFlight,
        allActiveS: allActiveMs / 1000,
        createP99Ms: percentile(
          creates.map((c) => c.ms),
          99,
        ),
        planeDownMaxS: planeCrashes.maxDownMs / 1000,
        operatorStartP50S: percentile(startMs, 50) / 1000,
        createsS: createsMs / 1000,
      },
    });

    const sample = (list: readonly string[]) => list.slice(0, 5).join('; ');
    expect(
      refused.map((c) => `${c.name}: ${c.outcome.kind === 'refused' && c.outcome.why}`),
    ).toEqual([]);
    expect(lost, `acknowledged but lost: ${sample(lost)}`).toEqual([]);
    expect(duplicates, 'scopes that exist twice').toEqual([]);
    expect(otherId, 'scopes that hold another id than the one answered').toEqual([]);
    expect(answeredTwice, 'one id in two answers').toBe(0);
    expect(strangers, 'scopes nobody asked for').toEqual([]);
    expect(withoutId, 'scopes without an id').toEqual([]);
    expect(allActive, `not all active: ${sample(notActive)}`).toBe(true);
    expect(notActive).toEqual([]);
    expect(orphans, `children without their scope: ${sample(orphans)}`).toEqual([]);
    expect(missing, `scopes missing a child: ${sample(missing)}`).toEqual([]);
    // Only a create in flight when the plane (and the facade with it) died can end unknown.
    expect(unknown.length, JSON.stringify(unknown.slice(0, 5))).toBeLessThanOrEqual(
      planeCrashes.kills * IN_FLIGHT,
    );
    // The kills happened as planned (the scenario tried what it says).
    expect(planeCrashes.kills).toBe(2);
    expect(operators.kills, exits.slice(-3).join('\n')).toBeGreaterThanOrEqual(
      Math.floor(createsMs / (KILL_EVERY_S * 1000 * 3)),
    );
  });
});
