// kubernetes/kubernetes test/cmd/crd.sh (run_crd_tests, run_non_native_resource_tests) replayed
// with the real kubectl against the cluster: each case quotes the script's line it replays and
// asserts what the script asserts. The script's v1beta1 CRDs are written as apiextensions/v1
// ones of the same names with a schema that keeps unknown fields (what v1beta1's absent
// schema meant).
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '../support/cluster.js';
import { type CmdSuite, startCmdSuite, until } from '../support/kubectl-cmd.js';

let s: CmdSuite;
let ns: string;
const ids = (args: string[]) => s.get(args, '{{range.items}}{{.metadata.name}}:{{end}}');
const field = (args: string[], template: string) => s.get([...args, '-n', ns], template);

const crd = (
  group: string,
  version: string,
  names: { plural: string; kind: string; singular?: string; listKind?: string },
) => ({
  kind: 'CustomResourceDefinition',
  apiVersion: 'apiextensions.k8s.io/v1',
  metadata: { name: `${names.plural}.${group}` },
  spec: {
    group,
    scope: 'Namespaced',
    names,
    versions: [
      {
        name: version,
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
    ],
  },
});

// hack/testdata/CRD/foo.yaml and its variants
const foo = (nested: Record<string, string>) => ({
  kind: 'Foo',
  apiVersion: 'company.com/v1',
  metadata: { name: 'test', labels: { pruneGroup: 'true' } },
  someField: 'field1',
  otherField: 'field2',
  nestedField: nested,
});
const bar = {
  kind: 'Bar',
  apiVersion: 'company.com/v1',
  metadata: { name: 'test' },
  someField: 'field1',
};

beforeAll(async () => {
  s = await startCmdSuite();
  ns = uniqueName('cmd-crd');
  await s.ok(['create', 'namespace', ns]);
}, 60_000);

afterAll(async () => {
  await s?.close();
});

describe('crd.sh run_crd_tests', () => {
  it('creates CRDs, one whose kind and resource names differ', async () => {
    // kubectl create -f - << __EOF__ ... "name": "foos.company.com" ... __EOF__
    await s.ok(
      ['create', '-f', '-'],
      JSON.stringify(crd('company.com', 'v1', { plural: 'foos', kind: 'Foo' })),
    );
    await s.ok(
      ['create', '-f', '-'],
      JSON.stringify(crd('company.com', 'v1', { plural: 'bars', kind: 'Bar' })),
    );
    // "name": "resources.mygroup.example.com" ... "kind": "Kind", "listKind": "KindList"
    await s.ok(
      ['create', '-f', '-'],
      JSON.stringify(
        crd('mygroup.example.com', 'v1alpha1', {
          plural: 'resources',
          singular: 'resource',
          kind: 'Kind',
          listKind: 'KindList',
        }),
      ),
    );
    // kube::test::get_object_assert customresourcedefinitions ... 'bars.company.com:foos.company.com:resources.mygroup.example.com:'
    expect(await ids(['customresourcedefinitions'])).toBe(
      'bars.company.com:foos.company.com:resources.mygroup.example.com:',
    );
  });
});

describe('crd.sh run_non_native_resource_tests', () => {
  it('serves the new group and its resources', async () => {
    // kubectl get --raw '/apis/company.com/v1' (kube::util::non_native_resources)
    await until(async () => {
      for (const path of [
        '/apis/company.com/v1',
        '/apis/company.com/v1/foos',
        '/apis/company.com/v1/bars',
      ])
        if ((await s.run(['get', '--raw', path])).code !== 0) return false;
      return true;
    });
    // kube::test::get_object_assert foos|bars|resources "{{range.items}}{{$id_field}}:{{end}}" ''
    for (const kind of ['foos', 'bars', 'resources']) expect(await ids([kind, '-n', ns])).toBe('');
  });

  it('names a kind of another name than its resource as kind.group/name', async () => {
    // kubectl create -f hack/testdata/CRD/resource.yaml
    await s.ok(
      ['create', '-n', ns, '-f', '-'],
      JSON.stringify({
        kind: 'Kind',
        apiVersion: 'mygroup.example.com/v1alpha1',
        metadata: { name: 'myobj' },
      }),
    );
    // output_message=$(kubectl get resource/myobj -o name) (and resources/myobj, kind.mygroup.example.com/myobj)
    for (const ref of ['resource/myobj', 'resources/myobj', 'kind.mygroup.example.com/myobj'])
      expect(await s.ok(['get', ref, '-n', ns, '-o', 'name'])).toContain(
        'kind.mygroup.example.com/myobj',
      );
    // kubectl delete resources myobj --cascade=background
    await s.ok(['delete', 'resources', 'myobj', '--cascade=background', '-n', ns]);
    await until(async () => (await ids(['resources', '-n', ns])) === '');
  });

  it('creates, finds by every name, prints, patches, labels, annotates and describes a Foo', async () => {
    // kubectl create -f hack/testdata/CRD/foo.yaml
    const fooYaml = await s.file(
      'foo.yaml',
      foo({ someSubfield: 'subfield1', otherSubfield: 'subfield2' }),
    );
    await s.ok(['create', '-n', ns, '-f', fooYaml]);
    // kube::test::get_object_assert foos|foo|foos.company.com|foos.v1.company.com ... 'test:'
    for (const name of ['foos', 'foo', 'foos.company.com', 'foos.v1.company.com'])
      expect(await ids([name, '-n', ns])).toBe('test:');

    // kubectl get foos[/test] [-o name|wide|json|yaml|jsonpath|go-template]
    for (const target of ['foos', 'foos/test'])
      for (const format of [[], ['-o', 'name'], ['-o', 'wide'], ['-o', 'json'], ['-o', 'yaml']])
        await s.ok(['get', target, '-n', ns, ...format]);
    // kubectl get foos -o "jsonpath={.items[*].someField}" --allow-missing-template-keys=false
    expect(
      await s.ok([
        'get',
        'foos',
        '-n',
        ns,
        '-o',
        'jsonpath={.items[*].someField}',
        '--allow-missing-template-keys=false',
      ]),
    ).toBe('field1');
    expect(
      await s.ok([
        'get',
        'foos/test',
        '-n',
        ns,
        '-o',
        'jsonpath={.someField}',
        '--allow-missing-template-keys=false',
      ]),
    ).toBe('field1');
    expect(
      await s.ok([
        'get',
        'foos',
        '-n',
        ns,
        '-o',
        'go-template={{range .items}}{{.someField}}{{end}}',
        '--allow-missing-template-keys=false',
      ]),
    ).toBe('field1');
    // output_message=$(kubectl get foos/test -o name)
    expect(await s.ok(['get', 'foos/test', '-n', ns, '-o', 'name'])).toContain(
      'foo.company.com/test',
    );

    // kubectl patch foos/test -p '{"patched":"value1"}' --type=merge
    await s.ok(['patch', 'foos/test', '-n', ns, '-p', '{"patched":"value1"}', '--type=merge']);
    expect(await field(['foos/test'], '{{.patched}}')).toBe('value1');
    // kubectl patch foos/test -p '{"patched":"value2"}' --type=merge --record
    await s.ok([
      'patch',
      'foos/test',
      '-n',
      ns,
      '-p',
      '{"patched":"value2"}',
      '--type=merge',
      '--record',
    ]);
    expect(await field(['foos/test'], '{{.patched}}')).toBe('value2');
    // kubectl patch foos/test -p '{"patched":null}' --type=merge --record
    await s.ok([
      'patch',
      'foos/test',
      '-n',
      ns,
      '-p',
      '{"patched":null}',
      '--type=merge',
      '--record',
    ]);
    expect(await field(['foos/test'], '{{.patched}}')).toBe('<no value>');
    // kubectl get foos/test -o json > "${CRD_RESOURCE_FILE}"
    const local = await s.file('crd-foos-test.json');
    await writeFile(local, await s.ok(['get', 'foos/test', '-n', ns, '-o', 'json']));
    // ! kubectl patch --local -f "${CRD_RESOURCE_FILE}" -p '{"patched":"value3"}' 2> "${CRD_PATCH_ERROR_FILE}"
    expect(
      await s.fails(['patch', '--local', '-f', local, '-p', '{"patched":"value3"}']),
    ).toContain('try --type merge');
    // kubectl patch --local -f "${CRD_RESOURCE_FILE}" -p '{"patched":"value3"}' --type=merge -o json
    await s.ok([
      'patch',
      '--local',
      '-f',
      local,
      '-p',
      '{"patched":"value3"}',
      '--type=merge',
      '-o',
      'json',
    ]);
    // kubectl patch --record -f "${CRD_RESOURCE_FILE}" -p '{"patched":"value3"}' --type=merge -o json
    await s.ok([
      'patch',
      '--record',
      '-f',
      local,
      '-p',
      '{"patched":"value3"}',
      '--type=merge',
      '-o',
      'json',
    ]);
    expect(await field(['foos/test'], '{{.patched}}')).toBe('value3');
    expect(JSON.parse(await readFile(local, 'utf8')).kind).toBe('Foo');

    // kubectl label foos --all listlabel=true; kubectl label foo/test itemlabel=true
    await s.ok(['label', 'foos', '--all', 'listlabel=true', '-n', ns]);
    await s.ok(['label', 'foo/test', 'itemlabel=true', '-n', ns]);
    // kubectl annotate foos --all listannotation=true; kubectl annotate foo/test itemannotation=true
    await s.ok(['annotate', 'foos', '--all', 'listannotation=true', '-n', ns]);
    await s.ok(['annotate', 'foo/test', 'itemannotation=true', '-n', ns]);
    // kubectl describe foos | grep listlabel=true; ... | grep itemlabel=true
    await s.ok(['describe', 'foos/test', '-n', ns]);
    const described = await s.ok(['describe', 'foos', '-n', ns]);
    expect(described).toContain('listlabel=true');
    expect(described).toContain('itemlabel=true');

    // kubectl delete foos test --cascade=background
    await s.ok(['delete', 'foos', 'test', '--cascade=background', '-n', ns]);
    await until(async () => (await ids(['foos', '-n', ns])) === '');
  });

  it('watches a Bar, and deletes it orphaning its dependents', async () => {
    // kubectl create -f hack/testdata/CRD/bar.yaml
    await s.ok(['create', '-n', ns, '-f', '-'], JSON.stringify(bar));
    expect(await ids(['bars', '-n', ns])).toBe('test:');
    // exec 3< <(kubectl get bars --request-timeout=1m --watch-only -o name & echo $! ; wait)
    // ... kubectl patch bars/test -p "{\"patched\":\"${tries}\"}" --type=merge
    const watching = s.run([
      'get',
      'bars',
      '-n',
      ns,
      '--request-timeout=3s',
      '--watch-only',
      '-o',
      'name',
    ]);
    for (let tries = 1; tries <= 3; tries++) {
      await new Promise((r) => setTimeout(r, 500));
      await s.ok(['patch', 'bars/test', '-n', ns, '-p', `{"patched":"${tries}"}`, '--type=merge']);
    }
    // kube::test::if_has_string "${watch_output}" 'bar.company.com/test'
    expect((await watching).stdout).toContain('bar.company.com/test');
    // kubectl delete bars test --cascade=orphan
    await s.ok(['delete', 'bars', 'test', '--cascade=orphan', '-n', ns]);
    await until(async () => (await ids(['bars', '-n', ns])) === '');
  });

  it('applies a Foo: an empty patch changes nothing, subfields change, go and come', async () => {
    const apply = async (nested: Record<string, string>) =>
      s.ok(['apply', '-n', ns, '-f', await s.file('foo-apply.yaml', foo(nested))]);
    // kubectl apply -f hack/testdata/CRD/foo.yaml
    await apply({ someSubfield: 'subfield1', otherSubfield: 'subfield2' });
    expect(await ids(['foos', '-n', ns])).toBe('test:');
    expect(await field(['foos/test'], '{{.someField}}')).toBe('field1');
    // kubectl apply -f hack/testdata/CRD/foo.yaml (again)
    await apply({ someSubfield: 'subfield1', otherSubfield: 'subfield2' });
    expect(await field(['foos/test'], '{{.someField}}')).toBe('field1');
    expect(await field(['foos/test'], '{{.nestedField.someSubfield}}')).toBe('subfield1');
    // kubectl apply -f hack/testdata/CRD/foo-updated-subfield.yaml
    await apply({ someSubfield: 'modifiedSubfield', otherSubfield: 'subfield2' });
    expect(await field(['foos/test'], '{{.nestedField.someSubfield}}')).toBe('modifiedSubfield');
    expect(await field(['foos/test'], '{{.nestedField.otherSubfield}}')).toBe('subfield2');
    // kubectl apply -f hack/testdata/CRD/foo-deleted-subfield.yaml
    await apply({ someSubfield: 'modifiedSubfield' });
    expect(await field(['foos/test'], '{{.nestedField.otherSubfield}}')).toBe('<no value>');
    expect(await field(['foos/test'], '{{.nestedField.newSubfield}}')).toBe('<no value>');
    // kubectl apply -f hack/testdata/CRD/foo-added-subfield.yaml
    await apply({ someSubfield: 'modifiedSubfield', newSubfield: 'subfield3' });
    expect(await field(['foos/test'], '{{.nestedField.newSubfield}}')).toBe('subfield3');
    // kubectl delete -f hack/testdata/CRD/foo.yaml
    await s.ok(['delete', '-n', ns, '-f', await s.file('foo-apply.yaml', foo({}))]);
    expect(await ids(['foos', '-n', ns])).toBe('');
  });

  it('applies a List of a Foo and a Bar, again, and changed', async () => {
    const list = (someField: string) =>
      s.file('multi-crd-list.yaml', {
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { ...foo({}), metadata: { name: 'test-list' }, someField },
          { ...bar, metadata: { name: 'test-list' }, someField },
        ],
      });
    // kubectl apply -f hack/testdata/CRD/multi-crd-list.yaml
    await s.ok(['apply', '-n', ns, '-f', await list('field1')]);
    expect(await ids(['foos', '-n', ns])).toBe('test-list:');
    expect(await ids(['bars', '-n', ns])).toBe('test-list:');
    // kubectl apply -f hack/testdata/CRD/multi-crd-list.yaml (again)
    await s.ok(['apply', '-n', ns, '-f', await list('field1')]);
    expect(await field(['foos/test-list'], '{{.someField}}')).toBe('field1');
    expect(await field(['bars/test-list'], '{{.someField}}')).toBe('field1');
    // kubectl apply -f hack/testdata/CRD/multi-crd-list-updated-field.yaml
    await s.ok(['apply', '-n', ns, '-f', await list('modifiedField')]);
    expect(await field(['foos/test-list'], '{{.someField}}')).toBe('modifiedField');
    expect(await field(['bars/test-list'], '{{.someField}}')).toBe('modifiedField');
    // kubectl delete -f hack/testdata/CRD/multi-crd-list.yaml
    await s.ok(['delete', '-n', ns, '-f', await list('field1')]);
    expect(await ids(['foos', '-n', ns])).toBe('');
    expect(await ids(['bars', '-n', ns])).toBe('');
  });

  it('prunes custom resources by label, and with --prune-allowlist', async () => {
    // kubectl apply --prune -l pruneGroup=true -f hack/testdata/CRD/foo.yaml --prune-allowlist=company.com/v1/Foo --prune-allowlist=company.com/v1/Bar
    const fooYaml = await s.file('prune-foo.yaml', foo({}));
    const barYaml = await s.file('prune-bar.yaml', {
      ...bar,
      metadata: { name: 'test', labels: { pruneGroup: 'true' } },
    });
    const allow = ['--prune-allowlist=company.com/v1/Foo', '--prune-allowlist=company.com/v1/Bar'];
    await s.ok(['apply', '--prune', '-l', 'pruneGroup=true', '-n', ns, '-f', fooYaml, ...allow]);
    expect(await ids(['foos', '-n', ns])).toBe('test:');
    expect(await ids(['bars', '-n', ns])).toBe('');
    // kubectl apply --prune -l pruneGroup=true -f hack/testdata/CRD/bar.yaml --prune-allowlist=...
    await s.ok(['apply', '--prune', '-l', 'pruneGroup=true', '-n', ns, '-f', barYaml, ...allow]);
    await until(async () => (await ids(['foos', '-n', ns])) === '');
    expect(await ids(['bars', '-n', ns])).toBe('test:');
    // kubectl delete bars test
    await s.ok(['delete', 'bars', 'test', '-n', ns]);
  });

  it('deletes the CRDs', async () => {
    // kubectl delete customresourcedefinitions/foos.company.com ...
    for (const name of ['foos.company.com', 'bars.company.com', 'resources.mygroup.example.com'])
      await s.ok(['delete', `customresourcedefinitions/${name}`]);
    await until(async () => (await ids(['customresourcedefinitions'])) === '');
  });
});
