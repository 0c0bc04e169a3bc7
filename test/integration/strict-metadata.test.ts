// Unknown fields under `metadata`, as kube-apiserver treats them: metadata is decoded into
// metav1.ObjectMeta (objectmeta.GetObjectMetaWithOptions for custom resources, the typed
// decoder for built-in kinds), so a field it has not is refused under fieldValidation=Strict
// (kubectl's default since 1.27), warned of under Warn and dropped under Ignore; create and
// update words it as create.go/update.go do ("X in version "v1" cannot be handled as a X:
// strict decoding error: ..."), a patch as patch.go does, and server-side apply refuses it
// whatever the validation, as structured-merge-diff types the applied configuration. Driven
// with kubectl (create, apply, replace, edit through KUBE_EDITOR, apply --server-side) and raw
// HTTPS, against a custom resource and a ConfigMap. Also the CRD of point 1:
// `additionalProperties: true` beside properties, which apiextensions-apiserver takes.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { type Fetch, fetchTrusting } from '../support/https.js';

const run = promisify(execFile);

let plane: ControlPlane;
let dataDir: string;
let fetch: Fetch;

interface Answer {
  status: number;
  warning: string | null;
  json: Record<string, any>;
}

async function call(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<Answer> {
  const response = await fetch(`${plane.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${plane.token}`, 'Content-Type': contentType },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    warning: response.headers.get('warning'),
    json: text ? JSON.parse(text) : {},
  };
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The real kubectl, `input` on stdin, `env` added to ours (KUBE_EDITOR). */
async function kubectl(
  args: string[],
  input?: string,
  env: Record<string, string> = {},
): Promise<Run> {
  const child = run('kubectl', ['--kubeconfig', plane.kubeconfigPath, ...args], {
    timeout: 30_000,
    env: { ...process.env, ...env },
  });
  if (input !== undefined) child.child.stdin?.end(input);
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; code?: number };
    return {
      code: typeof e.code === 'number' ? e.code : 1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    };
  }
}

const GROUP = 'strict.example.com';
const WIDGETS = `/apis/${GROUP}/v1/namespaces/default/widgets`;
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

const widgetCrd = (spec: Record<string, unknown>) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
      },
    ],
  },
});

// Point 1's CRD: a typed `size`, a closed `inner`, and anything else kept beside them.
const SPEC = {
  type: 'object',
  additionalProperties: true,
  properties: {
    size: { type: 'integer' },
    inner: { type: 'object', properties: { a: { type: 'string' } } },
  },
};

/** A Widget whose metadata holds a misspelt `labels`. */
const widget = (name: string, metadata: Record<string, unknown> = { lables: { app: 'x' } }) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Widget',
  metadata: { name, namespace: 'default', ...metadata },
  spec: { size: 1, extra: 'kept' },
});

const configMap = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', lables: { app: 'x' } },
  data: { a: 'b' },
});

const STRICT_CREATE = (kind: string) =>
  `${kind} in version "v1" cannot be handled as a ${kind}: strict decoding error: unknown field "metadata.lables"`;

let editor: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-strict-meta-'));
  plane = await startControlPlane({ dataDir, fsync: false });
  fetch = fetchTrusting(plane.ca);
  // What a person does in `kubectl edit`: a `lables:` typed under the object's metadata.
  editor = join(dataDir, 'editor.sh');
  await writeFile(
    editor,
    `#!/bin/sh\nsed -i 's/^  namespace: default$/  namespace: default\\n  lables:\\n    app: x/' "$1"\n`,
  );
  await chmod(editor, 0o755);
  const created = await kubectl(['apply', '-f', '-'], stringify(widgetCrd(SPEC)));
  expect(created).toMatchObject({ code: 0, stderr: '' });
  const established = await kubectl([
    'wait',
    '--for=condition=established',
    '--timeout=30s',
    `crd/widgets.${GROUP}`,
  ]);
  expect(established.code).toBe(0);
}, 60_000);

afterAll(async () => {
  await plane?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('a CRD with additionalProperties: true beside properties (point 1)', () => {
  it('is taken by kubectl apply, and its objects keep the fields beside the typed ones', async () => {
    const made = await kubectl(['apply', '-f', '-'], stringify(widget('open', {})));
    expect(made).toMatchObject({ code: 0, stderr: '' });
    const stored = await call('GET', `${WIDGETS}/open`);
    expect(stored.json.spec).toEqual({ size: 1, extra: 'kept' });
  });
});

describe('a CRD kube-apiserver refuses (point 1)', () => {
  it('is refused by kubectl apply with each cause where the server puts it', async () => {
    const bad = widgetCrd({
      type: 'object',
      properties: {
        size: {},
        inner: {
          type: 'object',
          properties: { a: { type: 'string' } },
          additionalProperties: false,
        },
      },
    });
    bad.metadata.name = `gadgets.${GROUP}`;
    bad.spec.names = { plural: 'gadgets', kind: 'Gadget' };
    const refused = await kubectl(['apply', '-f', '-'], stringify(bad));
    expect(refused.code).not.toBe(0);
    // One version: its schema is reported at spec.validation (v1 conversion); the structural
    // causes come sorted, the rest after them.
    expect(refused.stderr.trim()).toBe(
      [
        `The CustomResourceDefinition "gadgets.${GROUP}" is invalid: `,
        '* spec.validation.openAPIV3Schema.properties[spec].properties[size].type: Required value: must not be empty for specified object fields',
        '* spec.validation.openAPIV3Schema.properties[spec].properties[inner].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive',
      ].join('\n'),
    );
  });
});

describe('kubectl and an unknown field under metadata', () => {
  it.each([
    ['create', ['create', '-f', '-'], 'error when creating "STDIN"'],
    ['client-side apply', ['apply', '-f', '-'], 'error when creating "STDIN"'],
  ])(
    '%s refuses it by default (--validate=strict), in create.go words, and stores nothing',
    async (_, args, where) => {
      for (const [object, kind] of [
        [widget('typo'), 'Widget'],
        [configMap('typo'), 'ConfigMap'],
      ] as const) {
        const refused = await kubectl(args, stringify(object));
        expect(refused.code).not.toBe(0);
        expect(refused.stderr.trim()).toBe(
          `Error from server (BadRequest): ${where}: ${STRICT_CREATE(kind)}`,
        );
      }
      expect((await call('GET', `${WIDGETS}/typo`)).status).toBe(404);
      expect((await call('GET', `${CONFIGMAPS}/typo`)).status).toBe(404);
    },
  );

  it('warns of it under --validate=warn, and drops it', async () => {
    for (const [object, path] of [
      [widget('warned'), `${WIDGETS}/warned`],
      [configMap('warned'), `${CONFIGMAPS}/warned`],
    ] as const) {
      const made = await kubectl(['create', '--validate=warn', '-f', '-'], stringify(object));
      expect(made.code).toBe(0);
      expect(made.stderr.trim()).toBe('Warning: unknown field "metadata.lables"');
      const stored = await call('GET', path);
      expect(stored.json.metadata).not.toHaveProperty('lables');
      expect(stored.json.metadata.name).toBe('warned');
    }
  });

  it('drops it silently under --validate=ignore', async () => {
    const made = await kubectl(
      ['create', '--validate=ignore', '-f', '-'],
      stringify(widget('ignored')),
    );
    expect(made).toMatchObject({ code: 0, stderr: '' });
    expect((await call('GET', `${WIDGETS}/ignored`)).json.metadata).not.toHaveProperty('lables');
  });

  it('refuses it on replace, in update.go words', async () => {
    const current = await call('GET', `${WIDGETS}/ignored`);
    const replaced = await kubectl(
      ['replace', '-f', '-'],
      stringify({ ...current.json, metadata: { ...current.json.metadata, lables: { app: 'x' } } }),
    );
    expect(replaced.code).not.toBe(0);
    expect(replaced.stderr.trim()).toBe(
      `Error from server (BadRequest): error when replacing "STDIN": ${STRICT_CREATE('Widget')}`,
    );
  });

  it('refuses a typo made in kubectl edit, as a patch is refused, and leaves the object as it was', async () => {
    for (const [target, path] of [
      [`widgets.${GROUP}/ignored`, `${WIDGETS}/ignored`],
      ['configmap/warned', `${CONFIGMAPS}/warned`],
    ] as const) {
      const before = await call('GET', path);
      const edited = await kubectl(['edit', target, '-n', 'default'], undefined, {
        KUBE_EDITOR: editor,
      });
      expect(edited.code).not.toBe(0);
      const resource = target.split('/')[0] === 'configmap' ? 'configmaps' : `widgets.${GROUP}`;
      expect(edited.stderr).toContain(
        `error: ${resource} "${target.split('/')[1]}" could not be patched: strict decoding error: unknown field "metadata.lables"`,
      );
      const after = await call('GET', path);
      expect(after.json.metadata.resourceVersion).toBe(before.json.metadata.resourceVersion);
    }
  });

  it('refuses it through server-side apply whatever --validate says, as structured-merge-diff types it', async () => {
    for (const validate of ['--validate=strict', '--validate=ignore']) {
      const widgetApply = await kubectl(
        ['apply', '--server-side', validate, '-f', '-'],
        stringify(widget('applied')),
      );
      expect(widgetApply.code).not.toBe(0);
      expect(widgetApply.stderr.trim()).toBe(
        `Error from server (BadRequest): failed to create typed patch object (default/applied; ${GROUP}/v1, Kind=Widget): .metadata.lables: field not declared in schema`,
      );
      const configMapApply = await kubectl(
        ['apply', '--server-side', validate, '-f', '-'],
        stringify(configMap('applied')),
      );
      expect(configMapApply.stderr.trim()).toBe(
        'Error from server (BadRequest): failed to create typed patch object (default/applied; /v1, Kind=ConfigMap): .metadata.lables: field not declared in schema',
      );
    }
    expect((await call('GET', `${WIDGETS}/applied`)).status).toBe(404);
  });
});

describe('the API, request by request', () => {
  it('names every unknown field in one error: metadata first (as ObjectMeta decodes it), then pruning', async () => {
    const body = widget('many', {
      zeta: 1,
      lables: { app: 'x' },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u', contoller: true },
      ],
    });
    (body.spec as Record<string, unknown>).inner = { a: 'x', b: 'y' };
    const strict = await call('POST', `${WIDGETS}?fieldValidation=Strict`, body);
    expect(strict.status).toBe(400);
    expect(strict.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect(strict.json.message).toBe(
      'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "metadata.lables", unknown field "metadata.ownerReferences[0].contoller", unknown field "metadata.zeta", unknown field "spec.inner.b"',
    );
    const warned = await call('POST', `${WIDGETS}?fieldValidation=Warn`, body);
    expect(warned.status).toBe(201);
    expect(warned.warning).toContain('unknown field \\"metadata.ownerReferences[0].contoller\\"');
    expect(warned.json.metadata).not.toHaveProperty('zeta');
    expect(warned.json.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u' },
    ]);
    expect(warned.json.spec.inner).toEqual({ a: 'x' });
  });

  it('words a patch strict error as patch.go does, without the create prefix', async () => {
    for (const [path, type] of [
      [`${WIDGETS}/many`, 'application/merge-patch+json'],
      [`${CONFIGMAPS}/warned`, 'application/strategic-merge-patch+json'],
    ] as const) {
      const strict = await call(
        'PATCH',
        `${path}?fieldValidation=Strict`,
        { metadata: { lables: { a: 'b' } } },
        type,
      );
      expect(strict.status).toBe(400);
      expect(strict.json.message).toBe('strict decoding error: unknown field "metadata.lables"');
      const json = await call(
        'PATCH',
        `${path}?fieldValidation=Strict`,
        [{ op: 'add', path: '/metadata/lables', value: {} }],
        'application/json-patch+json',
      );
      expect(json.json.message).toBe('strict decoding error: unknown field "metadata.lables"');
      const ignored = await call(
        'PATCH',
        `${path}?fieldValidation=Ignore`,
        { metadata: { lables: { a: 'b' } } },
        type,
      );
      expect(ignored.status).toBe(200);
      expect(ignored.warning).toBeNull();
      expect(ignored.json.metadata).not.toHaveProperty('lables');
    }
  });

  it('patches an object as the server reads it: a field a newer schema dropped is not the patch’s unknown field', async () => {
    const crd = await call(
      'GET',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${GROUP}`,
    );
    const narrower = structuredClone(crd.json);
    narrower.spec.versions[0].schema.openAPIV3Schema.properties.spec = {
      type: 'object',
      properties: { size: { type: 'integer' } },
    };
    try {
      const updated = await call(
        'PUT',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${GROUP}`,
        narrower,
      );
      expect(updated.status).toBe(200);
      // `open` still holds spec.extra, which the schema no longer has.
      const patched = await call(
        'PATCH',
        `${WIDGETS}/open?fieldValidation=Strict`,
        { spec: { size: 2 } },
        'application/merge-patch+json',
      );
      expect(patched.status).toBe(200);
      expect(patched.json.spec).toEqual({ size: 2 });
    } finally {
      const current = await call(
        'GET',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${GROUP}`,
      );
      current.json.spec.versions[0].schema.openAPIV3Schema.properties.spec = SPEC;
      await call(
        'PUT',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${GROUP}`,
        current.json,
      );
    }
  });

  it('drops an embedded resource’s unknown metadata fields and reports them after pruning’s (objectmeta.Coerce)', async () => {
    const crd = widgetCrd({
      type: 'object',
      properties: {
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
        },
      },
    });
    crd.metadata.name = `templates.${GROUP}`;
    crd.spec.names = { plural: 'templates', kind: 'Template' };
    expect(
      (await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status,
    ).toBe(201);
    const body = {
      apiVersion: `${GROUP}/v1`,
      kind: 'Template',
      metadata: { name: 't', lables: {} },
      spec: {
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', anotations: {} } },
        other: 1,
      },
    };
    const strict = await call(
      'POST',
      `/apis/${GROUP}/v1/namespaces/default/templates?fieldValidation=Strict`,
      body,
    );
    expect(strict.json.message).toBe(
      'Template in version "v1" cannot be handled as a Template: strict decoding error: unknown field "metadata.lables", unknown field "spec.other", unknown field "spec.template.metadata.anotations"',
    );
    const ignored = await call(
      'POST',
      `/apis/${GROUP}/v1/namespaces/default/templates?fieldValidation=Ignore`,
      body,
    );
    expect(ignored.status).toBe(201);
    expect(ignored.json.spec).toEqual({
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
    });
  });
});
