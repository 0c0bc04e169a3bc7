// kubernetes/kubernetes test/cmd/core.sh (configmaps, pods, edit, label, replace, raw requests,
// secrets, service accounts), rbac.sh and events.sh replayed with the real kubectl against the
// cluster: each case quotes the script's line it replays and asserts what the script asserts.
import { generateKeyPairSync } from 'node:crypto';
import { chmod, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '../support/cluster.js';
import { type CmdSuite, pod, startCmdSuite } from '../support/kubectl-cmd.js';

let s: CmdSuite;
const ids = (args: string[]) => s.get(args, '{{range.items}}{{.metadata.name}}:{{end}}');
// test/fixtures/doc-yaml/admin/limitrange/valid-pod.yaml
const validPod = JSON.stringify(
  pod('valid-pod', { labels: { name: 'valid-pod' }, image: 'registry.k8s.io/serve_hostname' }),
);
/** create_and_use_new_namespace */
const newNamespace = async () => {
  const ns = uniqueName('cmd-core');
  await s.ok(['create', 'namespace', ns]);
  return ns;
};

beforeAll(async () => {
  s = await startCmdSuite();
}, 60_000);

afterAll(async () => {
  await s?.close();
});

describe('core.sh run_configmap_tests', () => {
  it('creates configmaps, not on a dry run, with binary data, and describes them in chunks', async () => {
    const ns = await newNamespace();
    // kubectl create configmap test-configmap --dry-run=client|server --from-literal=key1=value1 --namespace=test-configmaps
    await s.ok([
      'create',
      'configmap',
      'test-configmap',
      '--dry-run=client',
      '--from-literal=key1=value1',
      `--namespace=${ns}`,
    ]);
    expect(
      await s.ok([
        'create',
        'configmap',
        'test-configmap',
        '--dry-run=server',
        '--from-literal=key1=value1',
        `--namespace=${ns}`,
      ]),
    ).toBe('configmap/test-configmap created (server dry run)\n');
    expect(await ids(['configmaps', '-n', ns])).toBe('');
    // kubectl create configmap test-configmap --from-literal=key1=value1 --namespace=test-configmaps
    await s.ok([
      'create',
      'configmap',
      'test-configmap',
      '--from-literal=key1=value1',
      `--namespace=${ns}`,
    ]);
    // kubectl create configmap test-binary-configmap --from-file <( head -c 256 /dev/urandom )
    const binary = await s.file('binary');
    await writeFile(
      binary,
      Buffer.from(Array.from({ length: 256 }, (_, i) => (i * 131 + 7) % 256)),
    );
    await s.ok([
      'create',
      'configmap',
      'test-binary-configmap',
      '--from-file',
      binary,
      `--namespace=${ns}`,
    ]);
    // grep -q "key1: value1" <<< "$(kubectl get configmap/test-configmap -o yaml)"
    expect(
      await s.ok(['get', 'configmap/test-configmap', `--namespace=${ns}`, '-o', 'yaml']),
    ).toContain('key1: value1');
    // grep -q "binaryData" <<< "$(kubectl get configmap/test-binary-configmap -o yaml)"
    expect(
      await s.ok(['get', 'configmap/test-binary-configmap', `--namespace=${ns}`, '-o', 'yaml']),
    ).toContain('binaryData');
    // kube::test::describe_resource_chunk_size_assert configmaps events "--namespace=test-configmaps"
    const described = (
      await s.run(['describe', 'configmaps', `--namespace=${ns}`, '--chunk-size=10', '--v=6'])
    ).output;
    expect(described).toContain('/configmaps?limit=10 200 OK');
    expect(described).toMatch(/\/events\?fieldSelector=\S+&limit=10 200 OK/);
    // kubectl delete configmap ...; kubectl delete namespace test-configmaps
    await s.ok([
      'delete',
      'configmap',
      'test-configmap',
      'test-binary-configmap',
      `--namespace=${ns}`,
    ]);
    await s.ok(['delete', 'namespace', ns]);
  });
});

describe('core.sh run_pod_tests', () => {
  let ns: string;
  beforeAll(async () => {
    ns = await newNamespace();
  });

  it('creates a pod with the kubectl-create manager, and finds it by every name', async () => {
    // kubectl create -f test/fixtures/doc-yaml/admin/limitrange/valid-pod.yaml
    await s.ok(['create', '-n', ns, '-f', '-'], validPod);
    for (const ref of [['pods'], ['pod', 'valid-pod'], ['pod/valid-pod'], ['pods/valid-pod']])
      expect(
        await s.get(
          [...ref, '-n', ns],
          '{{if .items}}{{range.items}}{{.metadata.name}}{{end}}{{else}}{{.metadata.name}}{{end}}',
        ),
      ).toBe('valid-pod');
    // output_message=$(kubectl get --show-managed-fields -f valid-pod.yaml -o=jsonpath='{.metadata.managedFields[*].manager}')
    expect(
      await s.ok([
        'get',
        '--show-managed-fields',
        'pod/valid-pod',
        '-n',
        ns,
        '-o=jsonpath={.metadata.managedFields[*].manager}',
      ]),
    ).toContain('kubectl-create');
    // kube::test::describe_object_assert pods 'valid-pod' "Name:" "Image:" "Node:" "Labels:" "Status:"
    const described = await s.ok(['describe', 'pods', 'valid-pod', '-n', ns]);
    for (const field of ['Name:', 'Image:', 'Node:', 'Labels:', 'Status:'])
      expect(described).toContain(field);
    // kube::test::describe_object_events_assert pods 'valid-pod' [true|false]
    expect(described).toContain('Events:');
    expect(
      await s.ok(['describe', 'pods', 'valid-pod', '-n', ns, '--show-events=false']),
    ).not.toContain('Events:');
  });

  it('deletes a pod with --grace-period=0 --force, --now and --grace-period=0', async () => {
    // kubectl delete pod valid-pod --grace-period=0 --force
    await s.ok(['delete', 'pod', 'valid-pod', '-n', ns, '--grace-period=0', '--force']);
    expect(await ids(['pods', '-n', ns])).toBe('');
    // kubectl delete pod valid-pod --now
    await s.ok(['create', '-n', ns, '-f', '-'], validPod);
    await s.ok(['delete', 'pod', 'valid-pod', '-n', ns, '--now']);
    expect(await ids(['pods', '-n', ns])).toBe('');
    // kubectl delete pod valid-pod --grace-period=0 (succeeds without --force by waiting)
    await s.ok(['create', '-n', ns, '-f', '-'], validPod);
    await s.ok(['delete', 'pod', 'valid-pod', '-n', ns, '--grace-period=0']);
    expect(await ids(['pods', '-n', ns])).toBe('');
  });

  it('selects pods by field, refuses a delete without names, and deletes --all', async () => {
    await s.ok(['create', '-n', ns, '-f', '-'], validPod);
    // output_message=$(kubectl get pods --field-selector metadata.name=valid-pod)
    expect(
      await s.ok(['get', 'pods', '--field-selector', 'metadata.name=valid-pod', '-n', ns]),
    ).toContain('valid-pod');
    // phase=$(kubectl get pod valid-pod -o go-template='{{ .status.phase }}'); kubectl get pods --field-selector status.phase="${phase}"
    const phase = await s.get(['pod', 'valid-pod', '-n', ns], '{{ .status.phase }}');
    expect(
      await s.ok(['get', 'pods', '--field-selector', `status.phase=${phase}`, '-n', ns]),
    ).toContain('valid-pod');
    // ! kubectl delete pods || exit 1
    await s.fails(['delete', 'pods', '-n', ns]);
    // ! kubectl delete --all pods -l'name in (valid-pod)' || exit 1
    await s.fails(['delete', '--all', 'pods', '-l', 'name in (valid-pod)', '-n', ns]);
    expect(await ids(['pods', '-n', ns])).toBe('valid-pod:');
    // kubectl delete --all pods --grace-period=0 --force
    await s.ok(['delete', '--all', 'pods', '-n', ns, '--grace-period=0', '--force']);
    expect(await ids(['pods', '-l', 'name in (valid-pod)', '-n', ns])).toBe('');
  });

  it('edits with an editor, records kubectl-edit, and cancels an edit that changes nothing', async () => {
    await s.ok(['create', '-n', ns, '-f', '-'], validPod);
    const editor = await s.file('tmp-editor.sh');
    await writeFile(editor, '#!/bin/sh\nsed -i \'s/serve_hostname/serve_hostname:edited/\' "$1"\n');
    await chmod(editor, 0o755);
    const saved = process.env.EDITOR;
    try {
      // EDITOR=/tmp/tmp-editor.sh kubectl edit pod/valid-pod
      process.env.EDITOR = editor;
      await s.ok(['edit', 'pod/valid-pod', '-n', ns]);
      expect(
        await s.get(['pod', 'valid-pod', '-n', ns], '{{range.spec.containers}}{{.image}}:{{end}}'),
      ).toBe('registry.k8s.io/serve_hostname:edited:');
      // output_message=$(kubectl get pod valid-pod -o=jsonpath='{.metadata.managedFields[*].manager}')
      expect(
        await s.ok([
          'get',
          'pod',
          'valid-pod',
          '-n',
          ns,
          '-o=jsonpath={.metadata.managedFields[*].manager}',
        ]),
      ).toContain('kubectl-edit');
      // grep -q 'Edit cancelled' <<< "$(EDITOR="cat" kubectl edit pod/valid-pod 2>&1)"
      process.env.EDITOR = 'cat';
      const cancelled = await s.run(['edit', 'pod/valid-pod', '-n', ns]);
      expect(cancelled.output).toContain('Edit cancelled');
      expect(cancelled.stdout).toContain('name: valid-pod');
      // grep -q 'kind: List' <<< "$(EDITOR="cat" kubectl edit ns)"
      expect((await s.run(['edit', 'ns'])).stdout).toContain('kind: List');
    } finally {
      if (saved === undefined) delete process.env.EDITOR;
      else process.env.EDITOR = saved;
    }
  });

  it('labels locally, refuses to overwrite a label, and overwrites with --overwrite', async () => {
    // output_message=$(kubectl label --local --overwrite -f hack/testdata/pod.yaml name=localonlyvalue -o yaml)
    const podYaml = await s.file(
      'label-pod.yaml',
      pod('test-pod', { labels: { name: 'test-pod-label' } }),
    );
    expect(
      await s.ok([
        'label',
        '--local',
        '--overwrite',
        '-f',
        podYaml,
        'name=localonlyvalue',
        '-o',
        'yaml',
      ]),
    ).toContain('localonlyvalue');
    expect(await s.get(['pod', 'valid-pod', '-n', ns], '{{.metadata.labels.name}}')).toBe(
      'valid-pod',
    );
    // ! kubectl label pods valid-pod name=valid-pod-super-sayan || exit 1
    await s.fails(['label', 'pods', 'valid-pod', 'name=valid-pod-super-sayan', '-n', ns]);
    expect(await s.get(['pod', 'valid-pod', '-n', ns], '{{.metadata.labels.name}}')).toBe(
      'valid-pod',
    );
    // kubectl label --overwrite pods --all name=valid-pod-super-sayan
    await s.ok(['label', '--overwrite', 'pods', '--all', 'name=valid-pod-super-sayan', '-n', ns]);
    expect(await s.get(['pod', 'valid-pod', '-n', ns], '{{.metadata.labels.name}}')).toBe(
      'valid-pod-super-sayan',
    );
    // kubectl delete pods -l'name in (valid-pod-super-sayan)' --grace-period=0 --force
    await s.ok([
      'delete',
      'pods',
      '-l',
      'name in (valid-pod-super-sayan)',
      '--grace-period=0',
      '--force',
      '-n',
      ns,
    ]);
    expect(await ids(['pods', '-n', ns])).toBe('');
  });

  it('keeps the last-applied annotation out of create and replace, and replace updates it', async () => {
    // (grep's line of the annotation, its value by jsonpath here)
    const annotation = async () =>
      (await s.ok(['get', 'pods', 'test-pod', '-n', ns, '-o', 'yaml'])).includes(
        'kubectl.kubernetes.io/last-applied-configuration',
      )
        ? await s.ok([
            'get',
            'pods',
            'test-pod',
            '-n',
            ns,
            '-o',
            'jsonpath={.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}',
          ])
        : undefined;
    const replaceLabel = async (from: string, to: string) => {
      const live = await s.ok(['get', 'pods', 'test-pod', '-n', ns, '-o', 'yaml']);
      const file = await s.file('test-pod-replace.yaml');
      await writeFile(file, live.replaceAll(from, to));
      await s.ok(['replace', '-f', file]);
    };
    // kubectl create -f hack/testdata/pod.yaml
    await s.ok(
      ['create', '-n', ns, '-f', '-'],
      JSON.stringify(pod('test-pod', { labels: { name: 'test-pod-label' } })),
    );
    expect(await annotation()).toBeUndefined();
    // kubectl replace -f "${KUBE_TEMP}"/test-pod-replace.yaml
    await replaceLabel('test-pod-label', 'test-pod-replaced');
    expect(await s.get(['pods', 'test-pod', '-n', ns], '{{.metadata.labels.name}}')).toBe(
      'test-pod-replaced',
    );
    expect(await annotation()).toBeUndefined();
    // kubectl apply -f hack/testdata/pod-apply.yaml
    await s.ok(
      ['apply', '-n', ns, '-f', '-'],
      JSON.stringify(pod('test-pod', { labels: { name: 'test-pod-applied' } })),
    );
    const applied = await annotation();
    expect(applied).toBeDefined();
    // kubectl replace -f "${KUBE_TEMP}"/test-pod-replace.yaml (4. replace updates an existing annotation)
    await replaceLabel('test-pod-applied', 'test-pod-replaced');
    expect(await s.get(['pods', 'test-pod', '-n', ns], '{{.metadata.labels.name}}')).toBe(
      'test-pod-replaced',
    );
    const replaced = await annotation();
    expect(replaced).toContain('test-pod-replaced');
    expect(replaced).not.toBe(applied);
    await s.ok(['delete', 'pods', 'test-pod', '-n', ns]);
  });
});

describe('core.sh run_create_secret_tests', () => {
  it('creates, replaces, reads and deletes through --raw', async () => {
    const ns = await newNamespace();
    // kubectl create configmap tester-update-cm -o json --dry-run=client | kubectl create --raw /api/v1/namespaces/default/configmaps -f -
    const empty = await s.ok([
      'create',
      'configmap',
      'tester-update-cm',
      '-o',
      'json',
      '--dry-run=client',
    ]);
    await s.ok(['create', '--raw', `/api/v1/namespaces/${ns}/configmaps`, '-f', '-'], empty);
    // output_message=$(kubectl create configmap tester-update-cm --from-literal=key1=config1 -o json --dry-run=client | kubectl replace --raw .../tester-update-cm -f -)
    const body = await s.ok([
      'create',
      'configmap',
      'tester-update-cm',
      '--from-literal=key1=config1',
      '-o',
      'json',
      '--dry-run=client',
    ]);
    expect(
      await s.ok(
        ['replace', '--raw', `/api/v1/namespaces/${ns}/configmaps/tester-update-cm`, '-f', '-'],
        body,
      ),
    ).toContain('uid');
    // output_message=$(kubectl get --raw /api/v1/namespaces/default/configmaps/tester-update-cm 2>&1)
    expect(
      await s.ok(['get', '--raw', `/api/v1/namespaces/${ns}/configmaps/tester-update-cm`]),
    ).toContain('config1');
    // kubectl delete --raw /api/v1/namespaces/default/configmaps/tester-update-cm
    await s.ok(['delete', '--raw', `/api/v1/namespaces/${ns}/configmaps/tester-update-cm`]);
    // output_message=$(! kubectl get configmap tester-update-cm 2>&1)
    expect(await s.fails(['get', 'configmap', 'tester-update-cm', '-n', ns])).toContain(
      'configmaps "tester-update-cm" not found',
    );
  });
});

describe('core.sh run_secrets_test', () => {
  it('creates generic, docker-registry and tls secrets, and one of stringData', async () => {
    const ns = await newNamespace();
    const type = (name: string) => s.get([`secret/${name}`, `--namespace=${ns}`], '{{.type}}');
    const yaml = (name: string) =>
      s.ok(['get', `secret/${name}`, `--namespace=${ns}`, '-o', 'yaml']);
    // kubectl create secret generic test-secret --from-literal=key1=value1 --type=test-type --namespace=test-secrets
    await s.ok([
      'create',
      'secret',
      'generic',
      'test-secret',
      '--from-literal=key1=value1',
      '--type=test-type',
      `--namespace=${ns}`,
    ]);
    expect(await type('test-secret')).toBe('test-type');
    expect(await yaml('test-secret')).toContain('key1: dmFsdWUx');
    // kube::test::describe_resource_chunk_size_assert secrets "" "--namespace=test-secrets"
    expect(
      (await s.run(['describe', 'secrets', `--namespace=${ns}`, '--chunk-size=10', '--v=6']))
        .output,
    ).toContain('/secrets?limit=10 200 OK');
    await s.ok(['delete', 'secret', 'test-secret', `--namespace=${ns}`]);
    // kubectl create secret docker-registry test-secret --docker-username=test-user --docker-password=test-password --docker-email='test-user@test.com'
    await s.ok([
      'create',
      'secret',
      'docker-registry',
      'test-secret',
      '--docker-username=test-user',
      '--docker-password=test-password',
      '--docker-email=test-user@test.com',
      `--namespace=${ns}`,
    ]);
    expect(await type('test-secret')).toBe('kubernetes.io/dockerconfigjson');
    expect(await yaml('test-secret')).toContain(
      '.dockerconfigjson: eyJhdXRocyI6eyJodHRwczovL2luZGV4LmRvY2tlci5pby92MS8iOnsidXNlcm5hbWUiOiJ0ZXN0LXVzZXIiLCJwYXNzd29yZCI6InRlc3QtcGFzc3dvcmQiLCJlbWFpbCI6InRlc3QtdXNlckB0ZXN0LmNvbSIsImF1dGgiOiJkR1Z6ZEMxMWMyVnlPblJsYzNRdGNHRnpjM2R2Y21RPSJ9fX0=',
    );
    await s.ok(['delete', 'secret', 'test-secret', `--namespace=${ns}`]);
    // kubectl create secret tls test-secret --namespace=test-secrets --key=hack/testdata/tls.key --cert=hack/testdata/tls.crt
    const { cert, key } = await selfSigned();
    const certFile = await s.file('tls.crt');
    const keyFile = await s.file('tls.key');
    await writeFile(certFile, cert);
    await writeFile(keyFile, key);
    await s.ok([
      'create',
      'secret',
      'tls',
      'test-secret',
      `--namespace=${ns}`,
      `--key=${keyFile}`,
      `--cert=${certFile}`,
    ]);
    expect(await type('test-secret')).toBe('kubernetes.io/tls');
    await s.ok(['delete', 'secret', 'test-secret', `--namespace=${ns}`]);
    // kubectl create --namespace=test-secrets -f - << __EOF__ ... "stringData": {"k2":"v2"} ... __EOF__
    await s.ok(
      ['create', `--namespace=${ns}`, '-f', '-'],
      JSON.stringify({
        kind: 'Secret',
        apiVersion: 'v1',
        metadata: { name: 'secret-string-data' },
        data: { k1: 'djE=', k2: '' },
        stringData: { k2: 'v2' },
      }),
    );
    // kube::test::get_object_assert 'secret/secret-string-data' '{{.data}}' '.*k1:djE=.*' (and k2:djI=, stringData <no value>)
    expect(await s.get(['secret/secret-string-data', `--namespace=${ns}`], '{{.data}}')).toBe(
      'map[k1:djE= k2:djI=]',
    );
    expect(await s.get(['secret/secret-string-data', `--namespace=${ns}`], '{{.stringData}}')).toBe(
      '<no value>',
    );
    // grep -q 'test-secret:' <<< "$(kubectl create secret generic test-secret --from-literal=key1=value1 --output=go-template --template="{{.metadata.name}}:")"
    expect(
      await s.ok([
        'create',
        'secret',
        'generic',
        'test-secret',
        `--namespace=${ns}`,
        '--from-literal=key1=value1',
        '--output=go-template',
        '--template={{.metadata.name}}:',
      ]),
    ).toContain('test-secret:');
    await s.ok(['delete', 'namespace', ns]);
  });
});

describe('core.sh run_service_accounts_tests', () => {
  it('creates a service account, not on a dry run, and describes it in chunks', async () => {
    const ns = await newNamespace();
    // kubectl create serviceaccount test-service-account --dry-run=client|server --namespace=test-service-accounts
    await s.ok([
      'create',
      'serviceaccount',
      'test-service-account',
      '--dry-run=client',
      `--namespace=${ns}`,
    ]);
    await s.ok([
      'create',
      'serviceaccount',
      'test-service-account',
      '--dry-run=server',
      `--namespace=${ns}`,
    ]);
    expect(await s.ok(['get', 'serviceaccount', `--namespace=${ns}`, '-o', 'name'])).not.toContain(
      'test-service-account',
    );
    // kubectl create serviceaccount test-service-account --namespace=test-service-accounts
    await s.ok(['create', 'serviceaccount', 'test-service-account', `--namespace=${ns}`]);
    expect(
      await s.get(
        ['serviceaccount/test-service-account', `--namespace=${ns}`],
        '{{.metadata.name}}',
      ),
    ).toBe('test-service-account');
    // kube::test::describe_resource_chunk_size_assert serviceaccounts secrets,events "--namespace=test-service-accounts"
    const described = (
      await s.run(['describe', 'serviceaccounts', `--namespace=${ns}`, '--chunk-size=10', '--v=6'])
    ).output;
    expect(described).toContain('/serviceaccounts?limit=10 200 OK');
    expect(described).toContain('/secrets?limit=10 200 OK');
    expect(described).toMatch(/\/events\?fieldSelector=\S+&limit=10 200 OK/);
    await s.ok(['delete', 'serviceaccount', 'test-service-account', `--namespace=${ns}`]);
    await s.ok(['delete', 'namespace', ns]);
  });
});

describe('rbac.sh run_clusterroles_tests and run_role_tests', () => {
  it('creates cluster roles and bindings, and sets a binding subject', async () => {
    const rules = (name: string, field: string) =>
      s.get([`clusterrole/${name}`], `{{range.rules}}{{range.${field}}}{{.}}:{{end}}{{end}}`);
    // kubectl create clusterrole pod-admin --verb=* --resource=pods
    await s.ok(['create', 'clusterrole', 'pod-admin', '--verb=*', '--resource=pods']);
    expect(await rules('pod-admin', 'verbs')).toBe('*:');
    expect(await rules('pod-admin', 'resources')).toBe('pods:');
    expect(await rules('pod-admin', 'apiGroups')).toBe(':');
    // kubectl create clusterrole resource-reader --verb=get,list --resource=pods,deployments.apps
    await s.ok([
      'create',
      'clusterrole',
      'resource-reader',
      '--verb=get,list',
      '--resource=pods,deployments.apps',
    ]);
    expect(await rules('resource-reader', 'verbs')).toBe('get:list:get:list:');
    expect(await rules('resource-reader', 'resources')).toBe('pods:deployments:');
    expect(await rules('resource-reader', 'apiGroups')).toBe(':apps:');
    // kubectl create clusterrole url-reader --verb=get --non-resource-url=/logs/* --non-resource-url=/healthz/*
    await s.ok([
      'create',
      'clusterrole',
      'url-reader',
      '--verb=get',
      '--non-resource-url=/logs/*',
      '--non-resource-url=/healthz/*',
    ]);
    expect(await rules('url-reader', 'nonResourceURLs')).toBe('/logs/*:/healthz/*:');
    // kubectl create clusterrole aggregation-reader --aggregation-rule="foo1=foo2"
    await s.ok(['create', 'clusterrole', 'aggregation-reader', '--aggregation-rule=foo1=foo2']);
    expect(await s.get(['clusterrole/aggregation-reader'], '{{.metadata.name}}')).toBe(
      'aggregation-reader',
    );
    // kubectl create clusterrolebinding super-admin --clusterrole=admin --user=super-admin
    await s.ok([
      'create',
      'clusterrolebinding',
      'super-admin',
      '--clusterrole=admin',
      '--user=super-admin',
    ]);
    // kubectl set subject clusterrolebinding super-admin --user=foo
    await s.ok(['set', 'subject', 'clusterrolebinding', 'super-admin', '--user=foo']);
    expect(
      await s.get(['clusterrolebinding/super-admin'], '{{range.subjects}}{{.name}}:{{end}}'),
    ).toBe('super-admin:foo:');
    // kubectl create clusterrolebinding super-group --clusterrole=admin --group=the-group
    await s.ok([
      'create',
      'clusterrolebinding',
      'super-group',
      '--clusterrole=admin',
      '--group=the-group',
    ]);
    expect(
      await s.get(['clusterrolebinding/super-group'], '{{range.subjects}}{{.name}}:{{end}}'),
    ).toBe('the-group:');
    // kubectl create clusterrolebinding super-sa --clusterrole=admin --serviceaccount=otherns:sa-name
    await s.ok([
      'create',
      'clusterrolebinding',
      'super-sa',
      '--clusterrole=admin',
      '--serviceaccount=otherns:sa-name',
    ]);
    expect(
      await s.get(
        ['clusterrolebinding/super-sa'],
        '{{range.subjects}}{{.namespace}}:{{.name}}:{{end}}',
      ),
    ).toBe('otherns:sa-name:');
  });

  it('creates roles with resource names and subresources, and a role binding', async () => {
    const ns = await newNamespace();
    const rules = (name: string, field: string) =>
      s.get([`role/${name}`, '-n', ns], `{{range.rules}}{{range.${field}}}{{.}}:{{end}}{{end}}`);
    // kubectl create role pod-admin --verb=* --resource=pods
    await s.ok(['create', 'role', 'pod-admin', '--verb=*', '--resource=pods', '-n', ns]);
    expect(await rules('pod-admin', 'verbs')).toBe('*:');
    // kubectl create role resourcename-reader --verb=get,list --resource=pods --resource-name=foo
    await s.ok([
      'create',
      'role',
      'resourcename-reader',
      '--verb=get,list',
      '--resource=pods',
      '--resource-name=foo',
      '-n',
      ns,
    ]);
    expect(await rules('resourcename-reader', 'resourceNames')).toBe('foo:');
    // kubectl create role foo --verb=get,list,watch --resource=pods/status,deployments.apps/status
    await s.ok([
      'create',
      'role',
      'foo',
      '--verb=get,list,watch',
      '--resource=pods/status,deployments.apps/status',
      '-n',
      ns,
    ]);
    expect(await rules('foo', 'resources')).toBe('pods/status:deployments/status:');
    // kubectl create rolebinding admin --clusterrole=admin --user=default-admin
    await s.ok([
      'create',
      'rolebinding',
      'admin',
      '--clusterrole=admin',
      '--user=default-admin',
      '-n',
      ns,
    ]);
    expect(
      await s.get(['rolebinding/admin', '-n', ns], '{{.roleRef.kind}}:{{.roleRef.name}}'),
    ).toBe('ClusterRole:admin');
    expect(
      (await s.ok(['auth', 'can-i', 'get', 'pods', '--as=default-admin', '-n', ns])).trim(),
    ).toBe('yes');
  });
});

describe('events.sh run_kubectl_events_tests', () => {
  it('lists, filters, watches and prints the events of an object', async () => {
    const ns = await newNamespace();
    // kubectl create cronjob pi --schedule="59 23 31 2 *" ... (as JSON: the CronJob is only stored)
    await s.ok(
      ['apply', '-n', ns, '-f', '-'],
      JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'pi' },
        spec: {
          schedule: '59 23 31 2 *',
          jobTemplate: {
            spec: {
              template: {
                spec: {
                  restartPolicy: 'OnFailure',
                  containers: [{ name: 'pi', image: 'perl', command: ['perl'] }],
                },
              },
            },
          },
        },
      }),
    );
    // No cronjob controller runs here: the event it would record is recorded as it would be.
    const uid = await s.get(['cronjob', 'pi', '-n', ns], '{{.metadata.uid}}');
    await s.ok(
      ['create', '-n', ns, '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'pi.invalid' },
        involvedObject: { apiVersion: 'batch/v1', kind: 'CronJob', name: 'pi', namespace: ns, uid },
        reason: 'InvalidSchedule',
        message:
          'invalid schedule: 59 23 31 2 * : time difference between two schedules is less than 1 second',
        type: 'Warning',
        source: { component: 'cronjob-controller' },
        firstTimestamp: new Date().toISOString(),
        lastTimestamp: new Date().toISOString(),
        count: 1,
      }),
    );
    const hasEvent = (out: string) => {
      for (const word of ['Warning', 'InvalidSchedule', 'CronJob/pi']) expect(out).toContain(word);
    };
    // output_message=$(kubectl events -A 2>&1)
    hasEvent((await s.run(['events', '-A'])).output);
    // output_message=$(kubectl events -n test-events 2>&1)
    hasEvent((await s.run(['events', '-n', ns])).output);
    // output_message=$(kubectl events -n test-events --for=Cronjob/pi 2>&1)
    hasEvent((await s.run(['events', '-n', ns, '--for=Cronjob/pi'])).output);
    // output_message=$(kubectl events -n test-events --for=Cronjob/pi --watch --request-timeout=1 2>&1)
    hasEvent(
      (await s.run(['events', '-n', ns, '--for=Cronjob/pi', '--watch', '--request-timeout=1']))
        .output,
    );
    // output_message=$(kubectl events -n test-events --for=Cronjob/pi --types=Warning 2>&1)
    hasEvent((await s.run(['events', '-n', ns, '--for=Cronjob/pi', '--types=Warning'])).output);
    // output_message=$(kubectl events -n test-events --for=Cronjob/pi --types=Normal 2>&1)
    expect(
      (await s.run(['events', '-n', ns, '--for=Cronjob/pi', '--types=Normal'])).output,
    ).not.toContain('InvalidSchedule');
    // output_message=$(kubectl events -n test-events --for=Cronjob/pi --no-headers 2>&1)
    const bare = (await s.run(['events', '-n', ns, '--for=Cronjob/pi', '--no-headers'])).output;
    expect(bare).not.toContain('LAST SEEN');
    hasEvent(bare);
    // output_message=$(kubectl events -n test-events --for=Cronjob/pi --output=json|yaml 2>&1)
    expect(
      (await s.run(['events', '-n', ns, '--for=Cronjob/pi', '--output=json'])).output,
    ).toContain('"InvalidSchedule"');
    expect(
      (await s.run(['events', '-n', ns, '--for=Cronjob/pi', '--output=yaml'])).output,
    ).toContain('reason: InvalidSchedule');
    // kubectl delete cronjob pi --namespace=test-events; kubectl delete namespace test-events
    await s.ok(['delete', 'cronjob', 'pi', `--namespace=${ns}`]);
    await s.ok(['delete', 'namespace', ns]);
  });
});

/** hack/testdata/tls.crt and tls.key: a self-signed certificate, made here with node-forge. */
async function selfSigned(): Promise<{ cert: string; key: string }> {
  const forge = (await import('node-forge')).default;
  // Node makes the key (forge's RSA generation is slow); forge writes the certificate.
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const privateKey = forge.pki.privateKeyFromPem(key);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(privateKey.n, privateKey.e);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date();
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  cert.setSubject([{ name: 'commonName', value: 'test' }]);
  cert.setIssuer([{ name: 'commonName', value: 'test' }]);
  cert.sign(privateKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key };
}
