// The local control plane as Debian's Python Kubernetes client (python3-kubernetes, run by
// /usr/bin/python3) sees it: each script in test/python/ drives one part of the API as users'
// scripts do and prints what every step answered; the assertions here are what kube-apiserver
// answers (its source is cited where a case is not obvious). Without the client installed the
// tests skip, and say why.
//
// `it.fails` marks a difference from kube-apiserver that is known and not yet mended: the
// comment above it names the difference and where it lives. Once mended, the test fails and
// becomes an `it`.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { kubectlAt } from '../support/cluster.js';

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const SCRIPTS = join(import.meta.dirname, '../python');
const CRDS = join(import.meta.dirname, '../../crds');
/** Changes the watch window holds: small, so that watch.py can outrun it and meet a 410. */
const WATCH_WINDOW = 50;
/** No script takes more than a few seconds; past this one is stuck, and is killed. */
const SCRIPT_TIMEOUT_MS = 90_000;

/** Why the Python client cannot run here, or undefined when it can. */
async function pythonClientMissing(): Promise<string | undefined> {
  try {
    await run(PYTHON, ['-c', 'import kubernetes'], { timeout: 30_000 });
    return undefined;
  } catch (error) {
    const e = error as { code?: string; stderr?: string; message: string };
    const why = e.code === 'ENOENT' ? `${PYTHON} not found` : (e.stderr || e.message).trim();
    return `${PYTHON} -c 'import kubernetes' failed (${why}); install python3-kubernetes`;
  }
}

const missing = await pythonClientMissing();
if (missing !== undefined) {
  console.error(`python-client.test.ts: skipped: ${missing}`);
}
const pyIt = it.skipIf(missing !== undefined);

interface StepError {
  /** An ApiException's HTTP status, reason phrase (or the watch's Status reason) and body. */
  status?: number;
  reason?: string;
  body?: Record<string, any> | string | null;
  /** Any other exception the step raised. */
  exception?: string;
  message?: string;
}
type Step = { value: any; error?: undefined } | { value?: undefined; error: StepError };
type Steps = Record<string, Step>;

let plane: ControlPlane | undefined;
let dataDir: string | undefined;
const results = new Map<string, Steps | Error>();

/** The namespace a script works in: its own. */
const namespaceOf = (script: string) => `py-${script.replaceAll('_', '-')}`;

/** Runs test/python/<script>.py against the plane, in a namespace of its own. */
async function runScript(script: string, ...args: string[]): Promise<void> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KUBECONFIG: plane?.kubeconfigPath,
    // No __pycache__ left in the source tree; nothing of another Python's set-up.
    PYTHONDONTWRITEBYTECODE: '1',
  };
  delete env.PYTHONPATH;
  delete env.PYTHONHOME;
  try {
    const { stdout } = await run(
      PYTHON,
      [join(SCRIPTS, `${script}.py`), namespaceOf(script), ...args],
      {
        env,
        cwd: SCRIPTS,
        timeout: SCRIPT_TIMEOUT_MS,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    results.set(script, JSON.parse(stdout) as Steps);
  } catch (error) {
    const e = error as { stderr?: string; message: string; killed?: boolean };
    const why = e.killed ? `killed after ${SCRIPT_TIMEOUT_MS} ms` : e.message;
    results.set(script, new Error(`${script}.py failed: ${why}\n${e.stderr ?? ''}`));
  }
}

function step(script: string, name: string): Step {
  const result = results.get(script);
  if (result === undefined) throw new Error(`${script}.py did not run`);
  if (result instanceof Error) throw result;
  const found = result[name];
  if (found === undefined) throw new Error(`${script}.py recorded no step "${name}"`);
  return found;
}

/** What a step answered; it fails with the error the step met instead. */
function value(script: string, name: string): any {
  const found = step(script, name);
  if (found.error !== undefined) {
    throw new Error(`${script}.py: "${name}" raised ${JSON.stringify(found.error, null, 1)}`);
  }
  return found.value;
}

/** The error a step met; it fails when the step succeeded. */
function failure(script: string, name: string): StepError {
  const found = step(script, name);
  if (found.error === undefined) {
    const shown = JSON.stringify(found.value)?.slice(0, 2000);
    throw new Error(`${script}.py: "${name}" succeeded where it should fail: ${shown}`);
  }
  return found.error;
}

/** The Status body of the ApiException a step raised. */
function status(script: string, name: string): Record<string, any> {
  const error = failure(script, name);
  if (typeof error.body !== 'object' || error.body === null) {
    throw new Error(`${script}.py: "${name}" raised no Status: ${JSON.stringify(error)}`);
  }
  return error.body;
}

const managers = (object: any) =>
  (object.metadata.managedFields ?? []).map((m: any) => [m.manager, m.operation]).sort();

beforeAll(async () => {
  if (missing !== undefined) return;
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-python-'));
  plane = await startControlPlane({ dataDir, port: 0, fsync: false, watchWindow: WATCH_WINDOW });
  const kubectl = kubectlAt(plane.kubeconfigPath);
  for (const args of [
    ['apply', '-f', CRDS],
    ['wait', '--for=condition=Established', '--timeout=30s', 'crd', '--all'],
  ]) {
    const result = await kubectl(args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  }
  // One at a time: watch.py counts on its own writes alone filling the watch window.
  await runScript('core_v1');
  await runScript('server_side_apply');
  await runScript('watch', String(WATCH_WINDOW));
  await runScript('custom_objects');
  await runScript('dynamic_client', join(dataDir, 'discovery-cache.json'));
  await runScript('secret_string_data');
  await runScript('events');
}, 600_000);

afterAll(async () => {
  await plane?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

describe('CoreV1Api (core_v1.py)', () => {
  const s = 'core_v1';

  pyIt('creates a namespace: 201, Active, with the kubernetes finalizer', () => {
    const created = value(s, 'create namespace');
    expect(created.code).toBe(201);
    expect(created.object).toMatchObject({
      kind: 'Namespace',
      metadata: { name: 'py-core-v1' },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
    expect(value(s, 'read namespace').metadata.uid).toBe(created.object.metadata.uid);
    const listed = value(s, 'list namespaces by name');
    expect(listed.items.map((n: any) => n.metadata.name)).toEqual(['py-core-v1']);
  });

  // src/local/kinds/namespace.ts: kube-apiserver's defaulting labels every named namespace
  // kubernetes.io/metadata.name=<name> (SetDefaults_Namespace, pkg/apis/core/v1/defaults.go).
  pyIt('labels a namespace with its name', () => {
    const created = value(s, 'create namespace').object;
    expect(created.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'py-core-v1' });
  });

  // Difference (src/local/objects.ts): managedFields are computed on the decoded, defaulted
  // object before the strategy's PrepareForCreate adds spec.finalizers, so on kube the client
  // owns the label and not the finalizer; here it is said to own both.
  pyIt.fails('gives the client only what it sent and the defaults of its decoding', () => {
    const created = value(s, 'create namespace').object;
    expect(created.metadata.managedFields[0].fieldsV1).toEqual({
      'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } },
    });
  });

  pyIt('creates a ConfigMap: 201, server-set metadata, the user agent as field manager', () => {
    const created = value(s, 'create');
    expect(created.code).toBe(201);
    const meta = created.object.metadata;
    expect(meta).toMatchObject({ name: 'web', namespace: 'py-core-v1' });
    expect(meta.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(meta.resourceVersion).toMatch(/^[0-9]+$/);
    expect(meta.creationTimestamp).toBeTruthy();
    // The generated client's User-Agent is OpenAPI-Generator/<version>/python: the manager
    // is what comes before the first '/'.
    expect(meta.managedFields).toEqual([
      {
        manager: 'OpenAPI-Generator',
        operation: 'Update',
        apiVersion: 'v1',
        time: expect.any(String),
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:data': { '.': {}, 'f:colour': {} },
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} } },
        },
      },
    ]);
    expect(value(s, 'read').data).toEqual({ colour: 'blue' });
  });

  // src/local/objects.ts, create and update: metadata.generation is set by the strategies of
  // kinds with a spec (Deployments, CRDs, custom resources: KindStrategy.countsGeneration);
  // ConfigMap's and Namespace's (pkg/registry/core/configmap/strategy.go,
  // .../namespace/strategy.go) never set it, so kube-apiserver returns none.
  pyIt('sets no metadata.generation on a ConfigMap or a Namespace', () => {
    expect(value(s, 'create').object.metadata.generation).toBeUndefined();
    expect(value(s, 'json patch').metadata.generation).toBeUndefined();
    expect(value(s, 'create namespace').object.metadata.generation).toBeUndefined();
  });

  pyIt('answers missing, duplicate and invalid objects with Status errors', () => {
    expect(failure(s, 'read missing')).toMatchObject({ status: 404, reason: 'Not Found' });
    expect(status(s, 'read missing')).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'NotFound',
      message: 'configmaps "missing" not found',
      details: { name: 'missing', kind: 'configmaps' },
      code: 404,
    });
    expect(status(s, 'create duplicate')).toMatchObject({
      reason: 'AlreadyExists',
      message: 'configmaps "web" already exists',
      details: { name: 'web', kind: 'configmaps' },
      code: 409,
    });
    const invalid = status(s, 'create invalid name');
    expect(invalid).toMatchObject({
      reason: 'Invalid',
      code: 422,
      details: { name: 'Not_A_Name', kind: 'ConfigMap' },
    });
    expect(invalid.message).toMatch(
      /^ConfigMap "Not_A_Name" is invalid: metadata\.name: Invalid value: "Not_A_Name": a lowercase RFC 1123 subdomain/,
    );
    expect(invalid.details.causes).toEqual([
      { reason: 'FieldValueInvalid', field: 'metadata.name', message: expect.any(String) },
    ]);
    expect(status(s, 'delete missing')).toMatchObject({ reason: 'NotFound', code: 404 });
  });

  // src/local/objects.ts, create: the etcd3 store refuses to create an object
  // that carries a resourceVersion (storage.ErrResourceVersionSetOnCreate,
  // apiserver/pkg/storage/errors.go), an error the registry passes on as it is: a 500 whose
  // message is the error's.
  pyIt('refuses to create an object that carries a resourceVersion', () => {
    expect(status(s, 'create with a resourceVersion').message).toBe(
      'resourceVersion should not be set on objects to be created',
    );
  });

  // src/local/kinds/configmap.ts: ValidateConfigMap and ValidateConfigMapUpdate
  // (pkg/apis/core/validation/validation.go) refuse a key that is not a config key, and any
  // change to the data of an immutable ConfigMap.
  pyIt('validates ConfigMap keys, and keeps an immutable ConfigMap as it is', () => {
    const badKey = status(s, 'create with an invalid key');
    expect(badKey).toMatchObject({ reason: 'Invalid', code: 422 });
    expect(badKey.message).toMatch(
      /^ConfigMap "badkey" is invalid: data\[bad key\]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '\.'/,
    );
    expect(value(s, 'create immutable').immutable).toBe(true);
    expect(status(s, 'patch immutable data')).toMatchObject({
      reason: 'Invalid',
      code: 422,
      message:
        'ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
    });
  });

  // The Status writer (src/local/types.ts): metav1.StatusDetails.Group is
  // `json:"group,omitempty"`, so for core kinds kube-apiserver sends no "group" key at all.
  pyIt('leaves the empty group of a core kind out of Status details', () => {
    expect(status(s, 'read missing')).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "missing" not found',
      reason: 'NotFound',
      details: { name: 'missing', kind: 'configmaps' },
      code: 404,
    });
  });

  pyIt('lists with label selectors, across namespaces by field, and in pages', () => {
    const list = value(s, 'list');
    expect(list).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1' });
    expect(list.metadata.resourceVersion).toMatch(/^[0-9]+$/);
    expect(list.items.map((i: any) => i.metadata.name)).toEqual(['db', 'web']);
    expect(value(s, 'list app=shop,tier=front')).toEqual(['web']);
    expect(value(s, 'list tier in (front,back)')).toEqual(['db', 'web']);
    expect(value(s, 'list tier!=front')).toEqual(['db']);
    expect(value(s, 'list !tier')).toEqual([]);
    expect(value(s, 'list all namespaces by field')).toEqual(['db', 'web']);
    expect(status(s, 'list bad label selector')).toMatchObject({ reason: 'BadRequest', code: 400 });
    const first = value(s, 'list page 1');
    expect(first.items).toHaveLength(1);
    expect(first.metadata).toMatchObject({ continue: expect.any(String), remainingItemCount: 1 });
    const second = value(s, 'list page 2');
    expect(second.items.map((i: any) => i.metadata.name)).toEqual(['web']);
    expect(second.metadata.continue ?? undefined).toBeUndefined();
  });

  // src/local/selectors.ts: ConfigMap registers no field label conversion, so
  // kube-apiserver answers with runtime.DefaultMetaV1FieldSelectorConversion's words
  // (apimachinery/pkg/runtime/conversion.go); "field label not supported: ..." is the text of
  // the kinds that register one (Event, Secret, Namespace... in pkg/apis/core/v1/conversion.go).
  pyIt('refuses a field ConfigMaps cannot be selected by, in kube-apiserver words', () => {
    expect(status(s, 'list unknown field')).toMatchObject({
      reason: 'BadRequest',
      code: 400,
      message:
        '"data.colour" is not a known field selector: only "metadata.name", "metadata.namespace"',
    });
  });

  pyIt('patches with a JSON patch, a strategic merge patch and a merge patch', () => {
    expect(value(s, 'json patch').data).toEqual({ colour: 'blue', size: 'L' });
    const strategic = value(s, 'strategic merge patch');
    expect(strategic.data).toEqual({ colour: 'blue', size: 'L', shape: 'round' });
    expect(strategic.metadata.labels).toEqual({ app: 'shop' });
    expect(value(s, 'merge patch').data).toEqual({ colour: 'green', shape: 'round' });
  });

  // kube-apiserver wraps the JSON patch library's error in NewGenericServerResponse(422),
  // whose message is fixed and whose details are empty (handlers/patch.go, applyJSPatch).
  pyIt('answers a JSON patch whose test fails with 422 Invalid', () => {
    expect(status(s, 'json patch failing test')).toMatchObject({
      reason: 'Invalid',
      code: 422,
      message: 'the server rejected our request due to an error in our request',
    });
  });

  // src/local/objects.ts (dropEmptyMetadata): kube-apiserver decodes the patched object into its
  // Go type, and an empty map under `omitempty` is not written, so a patch that removes the last
  // label leaves no labels at all.
  pyIt('drops a map a patch leaves empty, as the typed object kube-apiserver writes', () => {
    expect(value(s, 'strategic merge patch removing the last label').metadata).not.toHaveProperty(
      'labels',
    );
  });

  // src/local/server.ts, patch: ValidatePatchOptions (apimachinery/pkg/api/validation, called
  // by handlers/patch.go) refuses `force` on a non-apply patch as a field error:
  // NewInvalid(PatchOptions.meta.k8s.io), a 422.
  pyIt('refuses force on a non-apply patch: 422 Invalid PatchOptions', () => {
    expect(status(s, 'patch with force')).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
      reason: 'Invalid',
      details: {
        group: 'meta.k8s.io',
        kind: 'PatchOptions',
        causes: [
          {
            reason: 'FieldValueForbidden',
            message: 'Forbidden: may not be specified for non-apply patch',
            field: 'force',
          },
        ],
      },
      code: 422,
    });
  });

  pyIt('replaces, and refuses a stale resourceVersion with 409 Conflict', () => {
    expect(value(s, 'replace').data).toEqual({ colour: 'yellow', shape: 'round' });
    expect(status(s, 'replace stale')).toMatchObject({
      reason: 'Conflict',
      code: 409,
      message:
        'Operation cannot be fulfilled on configmaps "web": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'web', kind: 'configmaps' },
    });
  });

  // The ConfigMap store does not set ReturnDeletedObject
  // (pkg/registry/core/configmap/storage/storage.go), so an immediate delete answers
  // Store.finalizeDelete's Status {status: Success, details: {name, kind: <resource>, uid}}
  // (registry/generic/registry/store.go), which the client reads as its V1Status.
  pyIt('answers an immediate delete with a Success Status', () => {
    for (const name of ['delete', 'delete with propagation_policy=']) {
      expect(value(s, name)).toMatchObject({
        kind: 'Status',
        status: 'Success',
        details: { kind: 'configmaps', uid: expect.any(String) },
      });
    }
    expect(value(s, 'delete background')).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name: 'owner-background', kind: 'configmaps' },
    });
  });

  pyIt(
    'deletes in the foreground: the owner waits, with foregroundDeletion, for its dependents',
    () => {
      // Not deleted at once: the object comes back, being deleted (not a Status).
      expect(value(s, 'delete foreground')).toMatchObject({
        kind: 'ConfigMap',
        metadata: {
          name: 'owner-foreground',
          finalizers: ['foregroundDeletion'],
          deletionTimestamp: expect.any(String),
          deletionGracePeriodSeconds: 0,
        },
      });
      expect(value(s, 'delete foreground: child gone')).toBe(true);
      expect(value(s, 'delete foreground: owner gone')).toBe(true);
    },
  );

  pyIt('deletes in the background: the owner at once, its dependents after', () => {
    expect(value(s, 'delete background: owner gone')).toBe(true);
    expect(value(s, 'delete background: child gone')).toBe(true);
  });

  pyIt('orphans: the owner goes after its dependents lose the reference, and they stay', () => {
    expect(value(s, 'delete orphan')).toMatchObject({
      kind: 'ConfigMap',
      metadata: { finalizers: ['orphan'], deletionTimestamp: expect.any(String) },
    });
    expect(value(s, 'delete orphan: owner gone')).toBe(true);
    const child = value(s, 'delete orphan: child');
    expect(child.metadata.name).toBe('child-orphan');
    expect(child.metadata.ownerReferences ?? undefined).toBeUndefined();
  });

  // src/local/kinds/namespace.ts: the namespace storage's Delete answers a
  // namespace already being emptied with a Conflict (pkg/registry/core/namespace/storage).
  pyIt('refuses a second delete of a namespace being emptied: 409 Conflict', () => {
    expect(value(s, 'delete namespace')).toMatchObject({
      kind: 'Namespace',
      metadata: { deletionTimestamp: expect.any(String) },
      status: { phase: 'Terminating' },
    });
    expect(status(s, 'delete namespace again')).toMatchObject({
      reason: 'Conflict',
      code: 409,
      message:
        'Operation cannot be fulfilled on namespaces "py-core-v1-gone": The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.',
    });
  });

  pyIt('refuses a delete whose uid precondition does not hold: 409 Conflict', () => {
    const refused = status(s, 'delete with a stale uid precondition');
    expect(refused).toMatchObject({ reason: 'Conflict', code: 409 });
    expect(refused.message).toMatch(
      /^Operation cannot be fulfilled on configmaps "db": Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000, UID in object meta: [0-9a-f-]{36}$/,
    );
  });
});

describe('server-side apply (server_side_apply.py)', () => {
  const s = 'server_side_apply';

  pyIt('creates with 201, the applier owning what it applied', () => {
    const created = value(s, 'apply creates');
    expect(created.code).toBe(201);
    expect(created.object.data).toEqual({ colour: 'blue', size: 'L' });
    expect(created.object.metadata.managedFields).toEqual([
      {
        manager: 'first',
        operation: 'Apply',
        apiVersion: 'v1',
        time: expect.any(String),
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:data': { 'f:colour': {}, 'f:size': {} },
          'f:metadata': { 'f:labels': { 'f:owner': {} } },
        },
      },
    ]);
  });

  pyIt('answers an apply that changes nothing with 200 and the same resourceVersion', () => {
    const again = value(s, 'apply again');
    expect(again.code).toBe(200);
    expect(again.object.metadata.resourceVersion).toBe(
      value(s, 'apply creates').object.metadata.resourceVersion,
    );
  });

  // fieldmanager's conflict error (internal/conflict.go): "conflict with <manager>", where an
  // Update manager is named with its API version.
  pyIt('refuses another manager changing a field: 409 with the conflict, force=False too', () => {
    for (const name of ['apply conflicting', 'apply conflicting with force=False']) {
      expect(status(s, name)).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Apply failed with 1 conflict: conflict with "first": .data.colour',
        reason: 'Conflict',
        details: {
          causes: [
            {
              reason: 'FieldManagerConflict',
              message: 'conflict with "first"',
              field: '.data.colour',
            },
          ],
        },
        code: 409,
      });
    }
  });

  // The client sends force=True: kube-apiserver's query decoding takes any value but "false"
  // and "0" as true (Convert_Slice_string_To_bool, apimachinery/pkg/runtime/conversion.go).
  pyIt('takes the fields with force=True', () => {
    expect(value(s, 'apply with force=True').data).toEqual({ colour: 'red', size: 'L' });
    expect(value(s, 'managers after force')).toEqual([
      ['first', 'Apply'],
      ['second', 'Apply'],
    ]);
  });

  pyIt('removes what a manager stops applying when it alone owned it', () => {
    const dropped = value(s, 'apply dropping fields');
    expect(dropped.data).toEqual({ colour: 'red' });
    expect(managers(dropped)).toEqual([
      ['first', 'Apply'],
      ['second', 'Apply'],
    ]);
  });

  pyIt('moves a field to the client that updates it, named with its version in a conflict', () => {
    expect(managers(value(s, 'update by another client'))).toEqual([
      ['OpenAPI-Generator', 'Update'],
      ['first', 'Apply'],
    ]);
    expect(status(s, 'apply after an update')).toMatchObject({
      message:
        'Apply failed with 1 conflict: conflict with "OpenAPI-Generator" using v1: .data.colour',
      code: 409,
    });
  });

  // src/local/server.ts, patch: ValidatePatchOptions refuses an apply without a fieldManager as
  // a field error, NewInvalid(PatchOptions.meta.k8s.io): 422 with
  // "fieldManager: Required value: is required for apply patch".
  pyIt('refuses an apply without field_manager: 422 Invalid PatchOptions', () => {
    expect(status(s, 'apply without field_manager')).toMatchObject({
      reason: 'Invalid',
      code: 422,
      message:
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      details: {
        group: 'meta.k8s.io',
        kind: 'PatchOptions',
        causes: [
          {
            reason: 'FieldValueRequired',
            message: 'Required value: is required for apply patch',
            field: 'fieldManager',
          },
        ],
      },
    });
  });

  pyIt('applies a custom resource: created, conflicting, forced, validated', () => {
    expect(value(s, 'apply creates a scope').spec.tier).toBe('testing');
    expect(status(s, 'apply a scope conflicting')).toMatchObject({
      message: 'Apply failed with 1 conflict: conflict with "first": .spec.tier',
      code: 409,
    });
    const forced = value(s, 'apply a scope with force=True');
    expect(forced.spec.tier).toBe('critical');
    expect(managers(forced)).toEqual([
      ['first', 'Apply'],
      ['second', 'Apply'],
    ]);
    expect(status(s, 'apply an invalid scope')).toMatchObject({
      reason: 'Invalid',
      code: 422,
      message:
        'Scope.platform.nrn.dev "applied" is invalid: [spec.tier: Unsupported value: "sometimes": supported values: "testing", "non_critical", "important", "critical", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
    });
  });
});

describe('watch.Watch().stream (watch.py)', () => {
  const s = 'watch';

  // The client asks with watch=True: any value but "false" and "0" is true to kube-apiserver.
  pyIt('streams namespaces from a resourceVersion, and ends a watch at timeout_seconds', () => {
    expect(value(s, 'namespaces from a resourceVersion')).toEqual([['ADDED', 'py-watch-watched']]);
    // From no resourceVersion: every namespace first, as ADDED; then the timeout ends it.
    expect(value(s, 'namespaces until timeout_seconds')).toEqual(['py-watch', 'py-watch-watched']);
  });

  pyIt('streams ConfigMap changes since a list, and resumes where the Watch left off', () => {
    expect(value(s, 'configmaps from a resourceVersion')).toEqual([
      ['ADDED', 'a'],
      ['ADDED', 'b'],
      ['MODIFIED', 'a'],
      ['DELETED', 'b'],
    ]);
    expect(value(s, 'configmaps resumed')).toEqual([['MODIFIED', 'a']]);
  });

  pyIt('sends an object entering a label selection as ADDED, and leaving it as DELETED', () => {
    expect(value(s, 'configmaps by label')).toEqual([
      ['ADDED', 'a'],
      ['DELETED', 'a'],
    ]);
  });

  pyIt('streams custom objects, status writes included, and resumes', () => {
    expect(value(s, 'scopes from a resourceVersion')).toEqual([
      ['ADDED', 'watched'],
      ['MODIFIED', 'watched'],
    ]);
    expect(value(s, 'scopes resumed')).toEqual([['DELETED', 'watched']]);
  });

  // kube-apiserver answers a watch from before its window with 200 and an ERROR event holding
  // a 410 Expired Status (cacher.go: "once we have passed authn/authz/admission ... errors
  // must fail with a watch event of type ERROR"); the client raises it as ApiException(410,
  // "<reason>: <message>"), at once with timeout_seconds, after one retry without.
  pyIt('ends a watch from before the window with 410 Expired; a relist recovers', () => {
    for (const name of [
      'watch from before the window',
      'watch from before the window, retried by the client',
    ]) {
      const error = failure(s, name);
      expect(error.status).toBe(410);
      expect(error.reason).toMatch(/^Expired: too old resource version: [0-9]+ \([0-9]+\)$/);
    }
    expect(value(s, 'watch after relisting')).toEqual([['MODIFIED', 'a']]);
  });

  // src/local/watch.ts, WatchHub.subscribe: watch_cache.go refuses `resourceVersion < oldest-1`
  // and names oldest-1 in "too old resource version: %d (%d)", the oldest version a watch may
  // still start from.
  pyIt('names in the 410 the oldest resourceVersion a watch may resume from', () => {
    // Served: the changes after it, up to the timeout.
    expect(value(s, 'watch from the oldest resumable')).toContainEqual(['MODIFIED', 'a']);
    expect(failure(s, 'watch from just before it')).toMatchObject({ status: 410 });
  });
});

describe('CustomObjectsApi on platform.nrn.dev/v1alpha1 (custom_objects.py)', () => {
  const s = 'custom_objects';

  pyIt('serves the CRD as ApiextensionsV1Api reads it: names accepted, established', () => {
    const crd = value(s, 'read the CRD');
    expect(crd.status.acceptedNames).toMatchObject({ kind: 'Scope', plural: 'scopes' });
    expect(crd.status.storedVersions).toEqual(['v1alpha1']);
    expect(crd.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Established', status: 'True' }),
    );
  });

  // src/local/kinds/customresourcedefinition.ts: kube-apiserver's defaulting,
  // SetDefaults_CustomResourceDefinitionSpec (apiextensions-apiserver, pkg/apis/apiextensions/
  // v1/defaults.go), gives a CRD without one `conversion: {strategy: None}`.
  pyIt('defaults a CRD conversion strategy to None', () => {
    expect(value(s, 'read the CRD').spec.conversion).toEqual({ strategy: 'None' });
  });

  pyIt('creates Scopes and an Application: 201, generation 1', () => {
    const created = value(s, 'create');
    expect(created.code).toBe(201);
    expect(created.object).toMatchObject({
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'Scope',
      metadata: { name: 'web', namespace: 'py-custom-objects', generation: 1 },
    });
    expect(value(s, 'create application').spec.id).toBe(10);
    expect(value(s, 'get application').metadata.name).toBe('checkout');
  });

  pyIt('refuses what the schema refuses, and a duplicate, with Status errors', () => {
    expect(status(s, 'create invalid')).toMatchObject({
      reason: 'Invalid',
      code: 422,
      message:
        'Scope.platform.nrn.dev "bad" is invalid: [spec.application_id: Invalid value: -1: spec.application_id in body should be greater than or equal to 0, spec.type: Unsupported value: "mainframe": supported values: "web_pool", "scheduled_tasks", "serverless", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
      details: { name: 'bad', group: 'platform.nrn.dev', kind: 'Scope' },
    });
    expect(status(s, 'create duplicate')).toMatchObject({
      reason: 'AlreadyExists',
      code: 409,
      message: 'scopes.platform.nrn.dev "web" already exists',
      details: { name: 'web', group: 'platform.nrn.dev', kind: 'scopes' },
    });
  });

  pyIt('gets one, and answers a missing one with 404 NotFound', () => {
    expect(value(s, 'get').spec.requested_spec).toEqual({
      memory_in_gb: 2,
      cpu_profile: 'standard',
      local_storage_in_gb: 10,
    });
    expect(status(s, 'get missing')).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'scopes.platform.nrn.dev "missing" not found',
      reason: 'NotFound',
      details: { name: 'missing', group: 'platform.nrn.dev', kind: 'scopes' },
      code: 404,
    });
  });

  pyIt('lists with label selectors, in a namespace and across all, and by name', () => {
    const list = value(s, 'list');
    expect(list).toMatchObject({ kind: 'ScopeList', apiVersion: 'platform.nrn.dev/v1alpha1' });
    expect(list.items.map((i: any) => i.metadata.name)).toEqual(['db', 'web']);
    expect(value(s, 'list tier=front')).toEqual(['web']);
    expect(value(s, 'list team=a,tier!=front')).toEqual(['db']);
    expect(value(s, 'list tier in (front,back)')).toEqual(['db', 'web']);
    expect(value(s, 'list all namespaces tier=back')).toEqual([['py-custom-objects', 'db']]);
    expect(value(s, 'list by name')).toEqual(['db']);
    // A CRD without selectableFields: the custom resource field label converter's words.
    expect(status(s, 'list by an unknown field')).toMatchObject({
      reason: 'BadRequest',
      code: 400,
      message: 'field label not supported: spec.type',
    });
  });

  pyIt('patches spec with a merge patch: generation grows, status is left alone', () => {
    const patched = value(s, 'patch spec');
    expect(patched.spec.tier).toBe('critical');
    expect(patched.metadata.generation).toBe(2);
    expect(patched.status).toBeUndefined();
  });

  pyIt(
    'patches and replaces status through the subresource: spec left alone, generation kept',
    () => {
      const patched = value(s, 'patch status');
      expect(patched.status).toEqual({ status: 'active', id: 42 });
      expect(patched.spec.tier).toBe('critical');
      expect(patched.metadata.generation).toBe(2);
      expect(status(s, 'patch invalid status')).toMatchObject({
        reason: 'Invalid',
        code: 422,
        message:
          'Scope.platform.nrn.dev "web" is invalid: [status.status: Unsupported value: "sleeping": supported values: "pending", "creating", "active", "updating", "deleting", "deleted", "failed", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
      });
      const replaced = value(s, 'replace status');
      expect(replaced.status).toEqual({ status: 'active', id: 42, slug: 'web' });
      expect(replaced.metadata.generation).toBe(2);
    },
  );

  // src/local/objects.ts, update: custom resources do not allow unconditional
  // updates, and Store.Update words the refusal with the resource in the kind's place
  // (`schema.GroupKind{Group: qualifiedResource.Group, Kind: qualifiedResource.Resource}`,
  // registry/generic/registry/store.go): "scopes.platform.nrn.dev", not "Scope.platform.nrn.dev".
  pyIt('refuses a replace without resourceVersion in kube-apiserver words', () => {
    expect(status(s, 'replace without resourceVersion')).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'scopes.platform.nrn.dev "web" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
      reason: 'Invalid',
      details: {
        name: 'web',
        group: 'platform.nrn.dev',
        kind: 'scopes',
        causes: [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: 0x0: must be specified for an update',
            field: 'metadata.resourceVersion',
          },
        ],
      },
      code: 422,
    });
  });

  // Custom resources' store sets ReturnDeletedObject (apiextensions-apiserver,
  // registry/customresource/etcd.go): the deleted object comes back, not a Status.
  pyIt('deletes: the deleted object comes back, then 404', () => {
    expect(value(s, 'delete')).toMatchObject({ kind: 'Scope', metadata: { name: 'db' } });
    expect(status(s, 'delete missing')).toMatchObject({
      reason: 'NotFound',
      message: 'scopes.platform.nrn.dev "db" not found',
    });
  });
});

describe('kubernetes.dynamic.DynamicClient (dynamic_client.py)', () => {
  const s = 'dynamic_client';

  pyIt('reads the version', () => {
    expect(value(s, 'version').kubernetes).toMatchObject({ major: '1', minor: '32' });
  });

  // src/local/server.ts, version: /version's platform is Go's GOOS/GOARCH (runtime.GOOS + "/" +
  // runtime.GOARCH: linux/amd64, linux/arm64), not Node's process.arch (x64). (goVersion and
  // compiler say "n/a" where kube-apiserver says go1.23.x and gc: this server is not Go.)
  pyIt('names its platform as Go does', () => {
    expect(value(s, 'version').kubernetes.platform).toMatch(
      /^(linux|darwin|windows)\/(amd64|arm64|arm|386|ppc64le|s390x)$/,
    );
  });

  pyIt('discovers built-in kinds and the CRDs by api_version and kind', () => {
    const found = (key: string) => value(s, `discover ${key}`);
    expect(found('v1 ConfigMap')).toMatchObject({
      name: 'configmaps',
      namespaced: true,
      shortNames: ['cm'],
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    });
    expect(found('v1 Secret')).toMatchObject({ name: 'secrets', namespaced: true });
    expect(found('v1 Event').shortNames).toEqual(['ev']);
    expect(found('v1 ServiceAccount').shortNames).toEqual(['sa']);
    expect(found('coordination.k8s.io/v1 Lease')).toMatchObject({ name: 'leases' });
    expect(found('apiextensions.k8s.io/v1 CustomResourceDefinition')).toMatchObject({
      namespaced: false,
      shortNames: ['crd', 'crds'],
    });
    expect(found('platform.nrn.dev/v1alpha1 Scope')).toMatchObject({
      name: 'scopes',
      namespaced: true,
      shortNames: ['nscope'],
      categories: ['nrn'],
      subresources: { status: { verbs: ['get', 'patch', 'update'] } },
    });
    for (const kind of ['Application', 'Service', 'ServiceSpecification']) {
      expect(found(`platform.nrn.dev/v1alpha1 ${kind}`).kind).toBe(kind);
    }
    expect(failure(s, 'discover a kind not served')).toMatchObject({
      exception: 'ResourceNotFoundError',
    });
    expect(value(s, 'search by short name')).toContain('Scope');
  });

  // src/local/registry.ts, the kinds' discovery entries: kube-apiserver's namespaces storage has
  // no DeleteCollection, so discovery lists no deletecollection verb for namespaces; and the
  // finalize subresource it serves is listed (namespaces/finalize, verbs [update]).
  pyIt('discovers namespaces as kube-apiserver lists them', () => {
    const namespaces = value(s, 'discover v1 Namespace');
    expect(namespaces.verbs).toEqual([
      'create',
      'delete',
      'get',
      'list',
      'patch',
      'update',
      'watch',
    ]);
    expect(Object.keys(namespaces.subresources).sort()).toEqual(['finalize', 'status']);
  });

  pyIt('creates, gets, lists and patches a Scope', () => {
    expect(value(s, 'list empty')).toMatchObject({ kind: 'ScopeList', items: [] });
    expect(value(s, 'create').metadata.name).toBe('dynamic');
    expect(value(s, 'get').spec.type).toBe('serverless');
    expect(value(s, 'list by label')).toEqual(['dynamic']);
    expect(value(s, 'merge patch').spec.tier).toBe('important');
    expect(value(s, 'json patch').spec.tier).toBe('critical');
    expect(value(s, 'patch status').status).toEqual({ status: 'active' });
    expect(failure(s, 'get missing')).toMatchObject({ status: 404 });
  });

  // The dynamic client's patch defaults to a strategic merge patch, which custom resources do
  // not take (apiextensions-apiserver serves only JSON, merge and apply patches).
  pyIt('answers a strategic merge patch of a custom resource with 415', () => {
    expect(status(s, 'strategic merge patch')).toMatchObject({
      reason: 'UnsupportedMediaType',
      code: 415,
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    });
  });

  pyIt('applies server-side with force_conflicts, and deletes', () => {
    const applied = value(s, 'server side apply');
    expect(applied.data).toEqual({ applied: 'yes' });
    expect(managers(applied)).toEqual([['dynamic', 'Apply']]);
    expect(value(s, 'delete')).toMatchObject({ kind: 'Scope', metadata: { name: 'dynamic' } });
  });

  pyIt('watches from a resourceVersion until its timeout', () => {
    expect(value(s, 'watch')).toEqual([
      ['ADDED', 'dynamic'],
      ['MODIFIED', 'dynamic'],
      ['MODIFIED', 'dynamic'],
      ['MODIFIED', 'dynamic'],
      ['DELETED', 'dynamic'],
    ]);
  });
});

describe('Secrets (secret_string_data.py)', () => {
  const s = 'secret_string_data';
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

  // Convert_v1_Secret_To_core_Secret (pkg/apis/core/v1/conversion.go) writes each stringData
  // entry into data, over a key of the same name; stringData is never stored.
  pyIt('merges string_data into data on create, and never returns it', () => {
    for (const name of ['create', 'read']) {
      const secret = value(s, name);
      expect(secret.data).toEqual({
        user: b64('admin'),
        host: b64('db.local'),
        password: b64('pässwörd'),
      });
      expect(secret.stringData).toBeUndefined();
      expect(secret.type).toBe('Opaque');
    }
  });

  pyIt('merges stringData from a strategic merge patch, a merge patch and a replace', () => {
    expect(value(s, 'strategic merge patch').data.password).toBe(b64('rotated'));
    const merged = value(s, 'merge patch');
    expect(merged.data).toMatchObject({ password: b64('rotated'), port: b64('5432') });
    expect(merged.stringData).toBeUndefined();
    const replaced = value(s, 'replace');
    expect(replaced.data).toEqual({
      user: b64('admin'),
      host: b64('replica.local'),
      password: b64('rotated'),
      port: b64('5432'),
    });
    expect(replaced.stringData).toBeUndefined();
  });

  // src/local/typed-maps.ts: data is []byte in the Go type, and decoding a value that is not
  // base64 fails, so kube-apiserver answers 400 BadRequest ("Secret in version \"v1\" cannot be
  // handled as a Secret: illegal base64 data at input byte 3").
  pyIt('refuses data that is not base64: 400', () => {
    const refused = status(s, 'create with data that is not base64');
    expect(refused).toMatchObject({ reason: 'BadRequest', code: 400 });
    expect(refused.message).toContain('illegal base64 data at input byte 3');
  });

  pyIt('selects by type, and refuses other fields in the Secret converter words', () => {
    expect(value(s, 'create typed').data).toEqual({ token: b64('t') });
    expect(value(s, 'list type=Opaque')).toEqual(['db']);
    expect(status(s, 'list by an unknown field')).toMatchObject({
      reason: 'BadRequest',
      code: 400,
      message: 'field label not supported: data.user',
    });
  });
});

describe('Events (events.py)', () => {
  const s = 'events';
  const listed = (selector: string) => value(s, `list ${selector}`);

  pyIt('lists Events by involvedObject, reason, type and name', () => {
    expect(value(s, 'create').involvedObject).toMatchObject({ kind: 'ConfigMap', name: 'subject' });
    expect(listed('involvedObject.name=subject')).toEqual(['subject.1', 'subject.2']);
    expect(listed('involvedObject.kind=ConfigMap,involvedObject.name=subject')).toEqual([
      'subject.1',
      'subject.2',
    ]);
    const uid = value(s, 'create').involvedObject.uid;
    expect(listed(`involvedObject.uid=${uid}`)).toEqual(['subject.1', 'subject.2']);
    expect(listed('involvedObject.namespace=py-events')).toEqual([
      'other.1',
      'subject.1',
      'subject.2',
    ]);
    expect(listed('reason=Created')).toEqual(['other.1', 'subject.1']);
    expect(listed('type=Warning')).toEqual(['subject.2']);
    expect(listed('type!=Warning')).toEqual(['other.1', 'subject.1']);
    expect(listed('metadata.name=other.1')).toEqual(['other.1']);
    expect(listed('involvedObject.name=subject,reason!=Created')).toEqual(['subject.2']);
    expect(value(s, 'list all namespaces reason=Failed')).toEqual(['subject.2']);
  });

  // Event's selectable fields (pkg/registry/core/event/strategy.go, ToSelectableFields) also
  // hold involvedObject.apiVersion, reportingComponent, and source: source.component, or the
  // reportingController when there is none.
  pyIt('lists Events by source, reportingComponent and involvedObject.apiVersion', () => {
    expect(listed('involvedObject.apiVersion=v1')).toEqual(['other.1', 'subject.1', 'subject.2']);
    expect(listed('source=py-controller')).toEqual(['other.1', 'subject.1']);
    expect(listed('source=py-reporter')).toEqual(['subject.2']);
    expect(listed('reportingComponent=py-reporter')).toEqual(['subject.2']);
  });

  // src/local/kinds/event-times.ts: kube-apiserver stores an Event through its Go type, so
  // firstTimestamp and lastTimestamp (metav1.Time) come back in RFC 3339 to the second, in UTC
  // with a Z, and eventTime (a MicroTime, not omitted when empty) as null.
  pyIt('keeps Event times as kube-apiserver writes them', () => {
    expect(value(s, 'read times')).toEqual({
      firstTimestamp: '2026-01-02T03:04:05Z',
      lastTimestamp: '2026-01-02T03:04:05Z',
      eventTime: null,
    });
  });

  pyIt('refuses a field Events cannot be selected by', () => {
    expect(status(s, 'list by an unknown field')).toMatchObject({
      reason: 'BadRequest',
      code: 400,
      message: 'field label not supported: message',
    });
  });
});
