// Applications from the outside: a valid one is Ready with a derived slug, an NRN that does not
// end in its id is Stalled naming the field, and of two claiming one id the newer is Stalled.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Kube, Namespaces } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log.js';
import { type Operator, startOperator } from '../../src/operator.js';
import { kubectl, type StartedCluster, startCluster, uniqueName } from '../support/cluster.js';
import { refusalLog } from '../support/operator-identity.js';
import { readUntil, sleep } from '../support/wait.js';

const log = silentLogger();
const operatorLog = refusalLog();

interface AppView {
  status?: {
    slug?: string;
    messages?: { level: string; message: string }[];
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

describe('operator: applications', () => {
  let cluster: StartedCluster;
  let kube: Kube;
  /** The operator's own client: deploy/'s ServiceAccount, with the rights of deploy/rbac.yaml. */
  let operatorKube: Kube;
  let operator: Operator;
  let nsA: string;
  let nsB: string;

  const apply = async (yaml: string) => {
    const result = await kubectl(cluster, ['apply', '-f', '-'], { input: yaml });
    if (result.code !== 0) throw new Error(result.stderr);
  };
  const app = (ns: string, name: string, id: number, nrnId = id) => `
apiVersion: platform.nrn.dev/v1alpha1
kind: Application
metadata: { name: ${name}, namespace: ${ns} }
spec: { id: ${id}, name: "${name} shop", nrn: "organization=1:application=${nrnId}" }
`;
  const ready = (a: AppView) => a.status?.conditions?.find((c) => c.type === 'Ready');
  const waitApp = (ns: string, name: string, check: (a: AppView) => boolean) =>
    readUntil(
      name,
      async () => {
        const got = await kubectl(cluster, ['get', 'application', name, '-n', ns, '-o', 'json']);
        return JSON.parse(got.stdout || '{}') as AppView;
      },
      check,
    );

  beforeAll(async () => {
    const opNs = uniqueName('operator-system');
    cluster = await startCluster({ operatorNamespace: opNs });
    await kubectl(cluster, ['apply', '-f', join(import.meta.dirname, '../../crds')]);
    await kubectl(cluster, [
      'wait',
      '--for=condition=Established',
      'crd/applications.platform.nrn.dev',
    ]);
    kube = await connect({ kubeconfigPath: cluster.kubeconfigPath, log });
    operatorKube = await connect({
      kubeconfigPath: cluster.operatorKubeconfigPath,
      log: operatorLog.log,
    });
    nsA = uniqueName('operator-app-a');
    nsB = uniqueName('operator-app-b');
    for (const name of [nsA, nsB]) await kube.resource(Namespaces).create({ metadata: { name } });
    operator = await startOperator({
      kube: operatorKube,
      log: operatorLog.log,
      namespace: opNs,
      leaderElection: false,
    });
  });
  afterAll(async () => {
    expect(await operator?.stop()).toBe(true);
    // Whatever the operator did, deploy/rbac.yaml allowed.
    expect(operatorLog.refusals()).toEqual([]);
    operatorKube?.close();
    kube?.close();
    await cluster?.close();
  });

  it('a valid application is Ready with its slug derived from the name', async () => {
    await apply(app(nsA, 'shop', 31));
    const view = await waitApp(nsA, 'shop', (a) => ready(a)?.status === 'True');
    expect(view.status?.slug).toBe('shop-shop');
    const wait = await kubectl(cluster, [
      'wait',
      '--for=condition=Ready',
      'application/shop',
      '-n',
      nsA,
      '--timeout=5s',
    ]);
    expect(wait.code).toBe(0);
  });

  it('an NRN that does not end in the id is refused at apply, naming the field', async () => {
    // The CRD's CEL rule; the reconciler's InvalidSpec covers what got in before the rule.
    const refused = await kubectl(cluster, ['apply', '-f', '-'], {
      input: app(nsA, 'wrong', 32, 99),
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'The Application "wrong" is invalid: spec.nrn: Invalid value: must end in application=32',
    );
    const stored = await kubectl(cluster, ['get', 'application', 'wrong', '-n', nsA]);
    expect(stored.stderr).toContain('NotFound');
  });

  it('of two applications with one id in different namespaces, the newer is Stalled', async () => {
    await sleep(1100); // creationTimestamp has whole seconds: make this one strictly newer
    await apply(app(nsB, 'copy', 31));
    const view = await waitApp(nsB, 'copy', (a) => ready(a) !== undefined);
    expect(ready(view)).toMatchObject({ status: 'False', reason: 'DuplicateId' });
    expect(view.status?.messages?.[0]?.message).toContain(
      `already used by application ${nsA}/shop`,
    );
    // The older one is untouched, and the newer takes over once the older is gone.
    expect(ready(await waitApp(nsA, 'shop', () => true))?.status).toBe('True');
    await kubectl(cluster, ['delete', 'application', 'shop', '-n', nsA]);
    await waitApp(nsB, 'copy', (a) => ready(a)?.status === 'True');
  });
});
