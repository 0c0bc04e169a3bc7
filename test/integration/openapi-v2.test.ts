// /openapi/v2 and the metadata of custom resources' schemas, as kubectl uses them: kubectl
// reads the v2 document (gnostic protobuf) to validate a `kind: List` file and custom resources
// the v3 index does not know yet, to pick a patch type, for `explain --output
// plaintext-openapiv2`, and always before 1.29. The document itself is checked over raw HTTPS
// (Swagger 2.0 validity, content negotiation, ETag), so this file runs against the local control
// plane only.
import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { type Fetch, fetchTrusting } from '../support/https.js';

const CRDS = join(import.meta.dirname, '../../crds');
const PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

let plane: ControlPlane;
let dataDir: string;
let fetch: Fetch;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl (or another build of it) against the plane, with a cache of this file's own. */
function kubectl(
  args: string[],
  options: { input?: string; env?: Record<string, string>; binary?: string } = {},
): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      options.binary ?? 'kubectl',
      ['--kubeconfig', plane.kubeconfigPath, '--cache-dir', join(dataDir, 'kube-cache'), ...args],
      { timeout: 30_000, env: { ...process.env, ...options.env }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}

async function ok(args: string[], options: Parameters<typeof kubectl>[1] = {}): Promise<Run> {
  const run = await kubectl(args, options);
  if (run.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${run.stderr}`);
  return run;
}

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${plane.url}${path}`, { headers: { Authorization: `Bearer ${plane.token}`, ...headers } });

const yamlList = (items: object[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });

const scope = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'platform.nrn.dev/v1alpha1',
  kind: 'Scope',
  metadata: { name, namespace: 'default', labels: { team: 'a' } },
  spec: {
    name,
    type: 'web_pool',
    application_id: 10,
    requested_spec: { memory_in_gb: 1, cpu_profile: 'standard' },
    ...spec,
  },
});

const configMap = (name: string, data: Record<string, string>, labels = { v: '1' }) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', labels },
  data,
});

const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  size: { type: 'integer' },
                  port: { 'x-kubernetes-int-or-string': true },
                  note: { type: 'string', nullable: true },
                },
              },
            },
          },
        },
      },
    ],
  },
};
const widget = (name: string) => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'default' },
  spec: { size: 3, port: 'http' },
});

/** A kubectl older than 1.29 beside the one on the PATH (the gcloud SDK ships them), if any. */
function oldKubectl(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const onPath = join(dir, 'kubectl');
    if (!existsSync(onPath)) continue;
    for (const version of ['1.28', '1.27']) {
      const candidate = join(dirname(realpathSync(onPath)), `kubectl.${version}`);
      if (existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-openapi-v2-'));
  plane = await startControlPlane({ dataDir, fsync: false });
  fetch = fetchTrusting(plane.ca);
  await ok(['apply', '-f', CRDS]);
  await ok(['wait', '--for=condition=Established', '--timeout=30s', 'crd/scopes.platform.nrn.dev']);
}, 60_000);

afterAll(async () => {
  await plane?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('kubectl with /openapi/v2', () => {
  it('applies a kind: List file, validating its items against the v2 models', async () => {
    const list = yamlList([scope('listed'), configMap('listed', { a: '1' })]);
    const created = await ok(['apply', '-f', '-'], { input: list });
    expect(created.stdout.trim().split('\n')).toEqual([
      'scope.platform.nrn.dev/listed created',
      'configmap/listed created',
    ]);
    // kubectl checks a List itself, with the v2 model the Scope's GVK names: this is its own
    // message, not the server's.
    const bad = yamlList([scope('listed-bad', { bogus: 1 })]);
    const refused = await kubectl(['apply', '-f', '-'], { input: bad });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'ValidationError(Scope.spec): unknown field "bogus" in dev.nrn.platform.v1alpha1.Scope.spec',
    );
    expect((await kubectl(['get', 'scope', 'listed-bad'])).code).not.toBe(0);
  });

  it('applies a file holding a CRD and its custom resource, as on a cluster', async () => {
    const file = [widgetCrd, widget('w1')].map((o) => stringify(o)).join('---\n');
    // The kind cannot be mapped before its CRD exists: kubectl creates the CRD and says so for
    // the resource, as against kube-apiserver; it no longer stops at validating it.
    const first = await kubectl(['apply', '-f', '-'], { input: file });
    expect(first.stdout).toContain(
      'customresourcedefinition.apiextensions.k8s.io/widgets.example.com created',
    );
    expect(first.stderr).toContain('ensure CRDs are installed first');
    expect(first.stderr).not.toContain('error validating');
    await ok(['wait', '--for=condition=Established', '--timeout=30s', 'crd/widgets.example.com']);
    const second = await ok(['apply', '-f', '-'], { input: file });
    expect(second.stdout.trim().split('\n')).toEqual([
      'customresourcedefinition.apiextensions.k8s.io/widgets.example.com unchanged',
      'widget.example.com/w1 created',
    ]);
  });

  it('explains a custom resource with its metadata, from v3 and from v2', async () => {
    const kind = (await ok(['explain', 'scopes'])).stdout;
    expect(kind).toMatch(/^ {2}apiVersion\t<string>$/m);
    expect(kind).toMatch(/^ {2}kind\t<string>$/m);
    expect(kind).toMatch(/^ {2}metadata\t<ObjectMeta>$/m);
    const metadata = (await ok(['explain', 'scopes.metadata'])).stdout;
    for (const field of [
      'labels\t<map[string]string>',
      'annotations\t<map[string]string>',
      'finalizers\t<[]string>',
      'ownerReferences\t<[]OwnerReference>',
      'creationTimestamp\t<string>',
      'generation\t<integer>',
    ]) {
      expect(metadata).toContain(field);
    }
    const owner = (await ok(['explain', 'scopes.metadata.ownerReferences'])).stdout;
    expect(owner).toMatch(/^ {2}uid\t<string> -required-$/m);
    const v2 = (await ok(['explain', 'scopes.metadata', '--output', 'plaintext-openapiv2'])).stdout;
    expect(v2).toContain('RESOURCE: metadata <Object>');
    expect(v2).toContain('labels\t<map[string]string>');
    // Built-in kinds show their metadata too (v3).
    expect((await ok(['explain', 'configmaps'])).stdout).toMatch(/^ {2}metadata\t<ObjectMeta>$/m);
  });

  it('computes client-side apply patches from v2 when told to use it (KUBECTL_OPENAPIV3_PATCH=false)', async () => {
    const env = { KUBECTL_OPENAPIV3_PATCH: 'false' };
    // -v=6 logs each request: kubectl reads v2 to choose the patch type, and warns of nothing
    // (a v2 model of a built-in kind would make it warn and fall back to its compiled types).
    const apply = (object: object) =>
      ok(['apply', '-f', '-', '-v=6'], { input: JSON.stringify(object), env });
    const v2Read = /GET https:\/\/\S+\/openapi\/v2\S* 200 OK/;
    await apply(configMap('v2-patch', { a: '1' }));
    const changed = await apply(configMap('v2-patch', { a: '2', b: '3' }, { v: '2' }));
    expect(changed.stdout).toBe('configmap/v2-patch configured\n');
    expect(changed.stderr).toMatch(v2Read);
    expect(changed.stderr).not.toContain('warning');
    await apply(scope('v2-patch'));
    const scopeChanged = await apply(
      scope('v2-patch', { requested_spec: { memory_in_gb: 2, cpu_profile: 'standard' } }),
    );
    expect(scopeChanged.stdout).toBe('scope.platform.nrn.dev/v2-patch configured\n');
    expect(scopeChanged.stderr).toMatch(v2Read);
    expect(scopeChanged.stderr).not.toContain('warning');
    const cm = JSON.parse((await ok(['get', 'configmap', 'v2-patch', '-o', 'json'])).stdout);
    expect(cm.data).toEqual({ a: '2', b: '3' });
    expect(cm.metadata.labels).toEqual({ v: '2' });
    const got = JSON.parse((await ok(['get', 'scope', 'v2-patch', '-o', 'json'])).stdout);
    expect(got.spec.requested_spec.memory_in_gb).toBe(2);
  });

  it('applies a metadata change to a built-in object without the openapi v3 warning', async () => {
    const apply = (object: object) => ok(['apply', '-f', '-'], { input: JSON.stringify(object) });
    await apply(configMap('labelled', { a: '1' }));
    const relabelled = await apply(configMap('labelled', { a: '1' }, { v: '2' }));
    expect(relabelled.stdout).toBe('configmap/labelled configured\n');
    expect(relabelled.stderr).toBe('');
  });

  const old = oldKubectl();
  it.skipIf(old === undefined)('serves kubectl before 1.29, which reads v2', async () => {
    const binary = old as string;
    const list = yamlList([scope('old-kubectl'), widget('old-kubectl')]);
    const created = await ok(['apply', '-f', '-'], { input: list, binary });
    expect(created.stdout.trim().split('\n')).toEqual([
      'scope.platform.nrn.dev/old-kubectl created',
      'widget.example.com/old-kubectl created',
    ]);
    const explained = await ok(['explain', 'widgets.spec'], { binary });
    expect(explained.stdout).toContain('size\t<integer>');
  });
});

describe('the /openapi/v2 document', () => {
  it('is valid Swagger 2.0, with each kind tagged and metadata a $ref to ObjectMeta', async () => {
    const res = await get('/openapi/v2');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const doc = (await res.json()) as Record<string, any>;
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('2.0');

    const scopeSchema = doc.definitions['dev.nrn.platform.v1alpha1.Scope'];
    expect(scopeSchema['x-kubernetes-group-version-kind']).toEqual([
      { group: 'platform.nrn.dev', kind: 'Scope', version: 'v1alpha1' },
    ]);
    expect(scopeSchema.properties.metadata.$ref).toBe(
      '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    );
    expect(scopeSchema.properties.apiVersion.type).toBe('string');
    expect(scopeSchema.properties.kind.type).toBe('string');
    const objectMeta = doc.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'];
    expect(objectMeta.properties.ownerReferences).toMatchObject({
      'x-kubernetes-patch-merge-key': 'uid',
      'x-kubernetes-patch-strategy': 'merge',
    });
    // Every $ref resolves (kubectl refuses the whole document otherwise).
    const refs = JSON.stringify(doc).match(/"\$ref":"#\/definitions\/[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) {
      expect(doc.definitions).toHaveProperty([ref.slice('"$ref":"#/definitions/'.length, -1)]);
    }
    // Swagger 2.0 has no anyOf/nullable: the CRD's int-or-string and nullable fields lose them,
    // as apiextensions-apiserver's v2 conversion does; no defaults are served in v2.
    const widgetSpec = doc.definitions['com.example.v1.Widget'].properties.spec.properties;
    expect(widgetSpec.port).toEqual({ 'x-kubernetes-int-or-string': true });
    expect(widgetSpec.note).toEqual({});
    expect(JSON.stringify(doc.definitions)).not.toMatch(/"(anyOf|oneOf|nullable)":/);

    const patch =
      doc.paths['/apis/platform.nrn.dev/v1alpha1/namespaces/{namespace}/scopes/{name}'].patch;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({
      group: 'platform.nrn.dev',
      kind: 'Scope',
      version: 'v1alpha1',
    });
    expect(patch.consumes).not.toContain('application/strategic-merge-patch+json');
    expect(patch.parameters.map((p: { name: string }) => p.name)).toContain('fieldValidation');
    const builtinPatch = doc.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].patch;
    expect(builtinPatch.consumes).toContain('application/strategic-merge-patch+json');
  });

  it('answers kubectl in protobuf, JSON by default, 406 to anything else; one ETag, and 304', async () => {
    const json = await get('/openapi/v2', { Accept: 'application/json' });
    const etag = json.headers.get('etag');
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    expect(json.headers.get('vary')).toBe('Accept');
    await json.arrayBuffer();

    const pb = await get('/openapi/v2', { Accept: PROTOBUF });
    expect(pb.status).toBe(200);
    expect(pb.headers.get('content-type')).toBe(
      'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
    );
    expect(pb.headers.get('etag')).toBe(etag);
    const bytes = Buffer.from(await pb.arrayBuffer());
    // Document.swagger (field 1) = "2.0" comes first.
    expect(bytes.subarray(0, 5)).toEqual(Buffer.from([0x0a, 0x03, 0x32, 0x2e, 0x30]));

    const preferred = await get('/openapi/v2', {
      Accept: `application/json;q=0.5, ${PROTOBUF}`,
    });
    expect(preferred.headers.get('content-type')).toContain('protobuf');
    await preferred.arrayBuffer();

    const refused = await get('/openapi/v2', { Accept: 'text/html' });
    expect(refused.status).toBe(406);
    expect(await refused.text()).toBe('');

    const cached = await get('/openapi/v2', { Accept: PROTOBUF, 'If-None-Match': etag as string });
    expect(cached.status).toBe(304);
    expect(await cached.text()).toBe('');

    // A new kind is a new document.
    await ok(['apply', '-f', '-'], {
      input: JSON.stringify({
        ...widgetCrd,
        metadata: { name: 'gadgets.example.com' },
        spec: {
          ...widgetCrd.spec,
          names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
        },
      }),
    });
    const changed = await get('/openapi/v2', { 'If-None-Match': etag as string });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(((await changed.json()) as any).definitions).toHaveProperty(['com.example.v1.Gadget']);
  });

  it('has v3 documents that are valid OpenAPI 3.0, with metadata in the custom resources', async () => {
    const root = (await (await get('/openapi/v3')).json()) as {
      paths: Record<string, { serverRelativeURL: string }>;
    };
    for (const { serverRelativeURL } of Object.values(root.paths)) {
      const doc = (await (await get(serverRelativeURL)).json()) as Record<string, any>;
      const result = await new Validator().validate(doc);
      expect(result.errors, serverRelativeURL).toBeUndefined();
    }
    const url = root.paths['apis/platform.nrn.dev/v1alpha1']?.serverRelativeURL as string;
    const doc = (await (await get(url)).json()) as Record<string, any>;
    const schemas = doc.components.schemas;
    expect(schemas['dev.nrn.platform.v1alpha1.Scope'].properties.metadata.$ref).toBe(
      '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    );
    expect(schemas).toHaveProperty(['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']);
    expect(schemas['dev.nrn.platform.v1alpha1.ScopeList'].properties.items.items.$ref).toBe(
      '#/components/schemas/dev.nrn.platform.v1alpha1.Scope',
    );
  });
});
