// deploy/'s ValidatingWebhookConfiguration while its webhook is down, as kubectl meets it on
// the local control plane (whose clientConfig.service has no endpoints, ADR 0003: every call
// fails as a call to a webhook that is down would): a user's CREATE of our kinds is refused
// (failurePolicy Fail), the operator's own create is not sent (matchCondition
// not-the-operator), and updates go through (failurePolicy Ignore): a label, a finalizer
// added and then removed from a scope being deleted, so that nothing waits on the webhook.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterWebhookConfiguration } from '../../src/admission/index.js';
import { connect, defineResource, type Kube, Namespaces } from '../../src/kube/index.js';
import { applyCrds, OPERATOR_NAME } from '../../src/operator.js';
import {
  kubectl,
  type StartedCluster,
  startCluster,
  type TestCluster,
  uniqueName,
} from '../support/cluster.js';
import { applicationYaml, scopeYaml } from '../support/manifests.js';

const Configurations = defineResource({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
});

describe("deploy/'s webhook configuration while the webhook is down", () => {
  const operatorNs = uniqueName('nrn');
  const ns = uniqueName('team');
  let cluster: StartedCluster;
  let admin: Kube;
  /** kubectl as the operator's ServiceAccount (deploy/'s RBAC). */
  let asOperator: TestCluster;

  beforeAll(async () => {
    cluster = await startCluster({ operatorNamespace: operatorNs });
    admin = await connect({
      kubeconfigPath: cluster.kubeconfigPath,
      log: pino({ level: 'silent' }),
    });
    asOperator = { ...cluster, kubeconfigPath: cluster.operatorKubeconfigPath };
    await applyCrds(admin);
    await admin.resource(Namespaces).create({ metadata: { name: ns } });
    const app = await kubectl(cluster, ['apply', '-f', '-'], {
      input: applicationYaml(ns, 'shop', 10),
    });
    expect(app.code, app.stderr).toBe(0);
    await admin.resource(Configurations).create(
      clusterWebhookConfiguration({
        namespace: operatorNs,
        serviceName: OPERATOR_NAME,
        servicePort: 443,
        serviceAccount: OPERATOR_NAME,
      }) as never,
    );
  });

  afterAll(async () => {
    await admin?.close();
    await cluster?.close();
  });

  it("refuses a user's create (Fail), and stores nothing", async () => {
    const refused = await kubectl(cluster, ['apply', '-f', '-'], {
      input: scopeYaml(ns, 'web', 10),
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('failed calling webhook "validate.platform.nrn.dev"');
    const get = await kubectl(cluster, ['get', 'scope', 'web', '-n', ns]);
    expect(get.stderr).toContain('NotFound');
  });

  it("does not send the operator's own create", async () => {
    const made = await kubectl(asOperator, ['create', '-f', '-'], {
      input: scopeYaml(ns, 'web', 10),
    });
    expect(made.code, made.stderr).toBe(0);
  });

  it('lets updates through (Ignore): a label, and a finalizer removed while deleting', async () => {
    const label = await kubectl(cluster, ['label', 'scope', 'web', '-n', ns, 'tier=gold']);
    expect(label.code, label.stderr).toBe(0);
    const hold = await kubectl(cluster, [
      'patch',
      'scope',
      'web',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":["example.com/hold"]}}',
    ]);
    expect(hold.code, hold.stderr).toBe(0);
    const deleting = await kubectl(cluster, ['delete', 'scope', 'web', '-n', ns, '--wait=false']);
    expect(deleting.code, deleting.stderr).toBe(0);
    const release = await kubectl(cluster, [
      'patch',
      'scope',
      'web',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    ]);
    expect(release.code, release.stderr).toBe(0);
    const gone = await kubectl(cluster, [
      'wait',
      '--for=delete',
      'scope/web',
      '-n',
      ns,
      '--timeout=30s',
    ]);
    expect(gone.code, gone.stderr).toBe(0);
  });
});
