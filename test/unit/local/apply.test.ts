// Server-side apply and field ownership: what each apply or update leaves in
// metadata.managedFields (in the real FieldsV1 encoding), pruning of fields a manager stops
// applying, shared ownership, conflicts with the server's wording, force, list types, the
// status subresource and the takeover from client-side `kubectl apply`.
import { describe, expect, it } from 'vitest';
import { FieldSet } from '../../../src/local/patch/fields.js';
import {
  type ApplyOptions,
  fieldTypesFromSchema,
  type ListTypeInfo,
  recordUpdate,
  serverSideApply,
} from '../../../src/local/patch/index.js';
import { ApiError, type KubeObject, type ManagedFieldsEntry } from '../../../src/local/types.js';

const GV = 'platform.nrn.dev/v1alpha1';
const T0 = '2026-11-22T10:00:00Z';
const T1 = '2026-11-22T10:00:01Z';
const T2 = '2026-11-22T10:00:02Z';
const T3 = '2026-11-22T10:00:03Z';

const scope = (
  spec: Record<string, unknown>,
  metadata: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion: GV,
  kind: 'Scope',
  metadata: { name: 'web', namespace: 'team', ...metadata },
  spec,
});

const apply = (
  live: KubeObject | undefined,
  applied: KubeObject,
  manager: string,
  extra: Partial<ApplyOptions> = {},
) => serverSideApply(live, applied, { manager, force: false, apiVersion: GV, now: T0, ...extra });

/** The server assigns these on create; ownership never covers them. */
const stored = (o: KubeObject): KubeObject => ({
  ...o,
  metadata: {
    ...o.metadata,
    uid: 'u-1',
    resourceVersion: '1',
    creationTimestamp: T0,
    generation: 1,
  },
});

const entry = (
  o: KubeObject,
  manager: string,
  operation = 'Apply',
): ManagedFieldsEntry | undefined =>
  o.metadata.managedFields?.find((e) => e.manager === manager && e.operation === operation);

const managersOf = (o: KubeObject) =>
  (o.metadata.managedFields ?? []).map((e) => `${e.manager}/${e.operation}`);

function statusOf(fn: () => unknown): Record<string, unknown> {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return (err as ApiError).toStatus();
  }
  throw new Error('expected an ApiError');
}

describe('server-side apply', () => {
  it('makes the applier own what it applied, in the FieldsV1 encoding', () => {
    const created = apply(
      undefined,
      scope({ name: 'web', size: 2 }, { labels: { app: 'web' } }),
      'kubectl',
    );
    expect(created.spec).toEqual({ name: 'web', size: 2 });
    expect(created.metadata.managedFields).toEqual([
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: GV,
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': { 'f:name': {}, 'f:size': {} },
        },
      },
    ]);
  });

  it('removes a field the same manager applied before and omits now', () => {
    const first = stored(
      apply(undefined, scope({ name: 'web', size: 2 }, { labels: { app: 'web' } }), 'kubectl'),
    );
    const second = apply(first, scope({ name: 'web' }), 'kubectl', { now: T1 });
    expect(second.spec).toEqual({ name: 'web' });
    expect(second.metadata.labels).toBeUndefined();
    expect(entry(second, 'kubectl')).toMatchObject({
      time: T1,
      fieldsV1: { 'f:spec': { 'f:name': {} } },
    });
  });

  it('keeps an omitted field another manager also owns', () => {
    const first = stored(apply(undefined, scope({ name: 'web', size: 2 }), 'kubectl'));
    const shared = apply(first, scope({ size: 2 }), 'scaler', { now: T1 });
    const after = apply(shared, scope({ name: 'web' }), 'kubectl', { now: T2 });
    expect(after.spec).toEqual({ name: 'web', size: 2 });
    expect(entry(after, 'scaler')?.fieldsV1).toEqual({ 'f:spec': { 'f:size': {} } });
    expect(entry(after, 'kubectl')?.fieldsV1).toEqual({ 'f:spec': { 'f:name': {} } });
  });

  it('shares a field two managers apply with the same value, without a conflict', () => {
    const first = stored(apply(undefined, scope({ name: 'web' }), 'kubectl'));
    const second = apply(first, scope({ name: 'web' }), 'platform-operator', { now: T1 });
    expect(second.spec).toEqual({ name: 'web' });
    expect(entry(second, 'kubectl')?.fieldsV1).toEqual({ 'f:spec': { 'f:name': {} } });
    expect(entry(second, 'platform-operator')?.fieldsV1).toEqual({ 'f:spec': { 'f:name': {} } });
    // Nothing changed, so the newcomer's entry carries no time, as the real server leaves it.
    expect(entry(second, 'platform-operator')).not.toHaveProperty('time');
  });

  it('refuses a different value for a field another applier owns with 409 and the server wording', () => {
    const first = stored(apply(undefined, scope({ name: 'web', size: 2 }), 'kubectl'));
    expect(statusOf(() => apply(first, scope({ name: 'api' }), 'platform-operator'))).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "kubectl": .spec.name',
      reason: 'Conflict',
      details: {
        causes: [
          {
            reason: 'FieldManagerConflict',
            message: 'conflict with "kubectl"',
            field: '.spec.name',
          },
        ],
      },
      code: 409,
    });
  });

  it('lists several conflicts by manager', () => {
    const first = stored(apply(undefined, scope({ name: 'web', size: 2 }), 'kubectl'));
    const status = statusOf(() =>
      apply(first, scope({ name: 'api', size: 3 }), 'platform-operator'),
    );
    expect(status.message).toBe(
      'Apply failed with 2 conflicts: conflicts with "kubectl":\n- .spec.name\n- .spec.size',
    );
    expect(status.details).toEqual({
      causes: [
        { reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.name' },
        { reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.size' },
      ],
    });
  });

  it('with force takes the field over: the other manager loses it', () => {
    const first = stored(apply(undefined, scope({ name: 'web', size: 2 }), 'kubectl'));
    const forced = apply(first, scope({ name: 'api' }), 'platform-operator', {
      force: true,
      now: T1,
    });
    expect(forced.spec).toEqual({ name: 'api', size: 2 });
    expect(entry(forced, 'kubectl')?.fieldsV1).toEqual({ 'f:spec': { 'f:size': {} } });
    expect(entry(forced, 'platform-operator')).toMatchObject({
      time: T1,
      fieldsV1: { 'f:spec': { 'f:name': {} } },
    });
    // And kubectl, applying its old value again, now conflicts with the new owner.
    expect(statusOf(() => apply(forced, scope({ name: 'web', size: 2 }), 'kubectl')).message).toBe(
      'Apply failed with 1 conflict: conflict with "platform-operator": .spec.name',
    );
  });

  it('conflicts with an updater: an Update by kubectl-client-side-apply, then an Apply by kubectl', () => {
    const created = recordUpdate(
      undefined,
      stored(scope({ name: 'web' })),
      'kubectl-client-side-apply',
      {
        apiVersion: GV,
        now: T0,
      },
    );
    const patched = recordUpdate(
      created,
      { ...created, spec: { name: 'web2' } },
      'kubectl-client-side-apply',
      {
        apiVersion: GV,
        now: T1,
      },
    );
    const status = statusOf(() => apply(patched, scope({ name: 'api' }), 'kubectl'));
    expect(status).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message:
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using platform.nrn.dev/v1alpha1: .spec.name',
      details: {
        causes: [
          {
            reason: 'FieldManagerConflict',
            message: 'conflict with "kubectl-client-side-apply" using platform.nrn.dev/v1alpha1',
            field: '.spec.name',
          },
        ],
      },
    });
  });

  it('lets kubectl take over from client-side apply where the last-applied annotation still matches', () => {
    const lastApplied = JSON.stringify({
      apiVersion: GV,
      kind: 'Scope',
      metadata: { name: 'web', namespace: 'team' },
      spec: { name: 'web' },
    });
    const annotated = scope(
      { name: 'web' },
      { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } },
    );
    const created = recordUpdate(undefined, stored(annotated), 'kubectl-client-side-apply', {
      apiVersion: GV,
      now: T0,
    });
    const migrated = apply(created, scope({ name: 'api' }), 'kubectl', { now: T1 });
    expect(migrated.spec).toEqual({ name: 'api' });
    expect(entry(migrated, 'kubectl')?.fieldsV1).toEqual({ 'f:spec': { 'f:name': {} } });
    // The annotation follows what kubectl applies: keys sorted, a trailing newline.
    expect(
      migrated.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'],
    ).toBe(
      '{"apiVersion":"platform.nrn.dev/v1alpha1","kind":"Scope","metadata":{"name":"web","namespace":"team"},"spec":{"name":"api"}}\n',
    );
    // Another manager gets no such pass.
    expect(statusOf(() => apply(created, scope({ name: 'api' }), 'helm')).code).toBe(409);
  });

  it('gives what an untracked object holds to before-first-apply', () => {
    const untracked = stored(scope({ name: 'web' }));
    expect(statusOf(() => apply(untracked, scope({ name: 'api' }), 'kubectl')).message).toBe(
      'Apply failed with 1 conflict: conflict with "before-first-apply" using platform.nrn.dev/v1alpha1: .spec.name',
    );
    const shared = apply(untracked, scope({ name: 'web' }), 'kubectl');
    expect(managersOf(shared)).toEqual(['kubectl/Apply', 'before-first-apply/Update']);
  });

  it('merges map lists per element and owns each element by its key', () => {
    const listTypes: ListTypeInfo = { 'status.conditions': { list: 'map', keys: ['type'] } };
    const base = stored(apply(undefined, scope({ name: 'web' }), 'kubectl'));
    const status = (conditions: object[]): KubeObject => ({
      apiVersion: GV,
      kind: 'Scope',
      metadata: { name: 'web' },
      status: { conditions },
    });
    const opts = { subresource: 'status', listTypes, force: true };
    const one = apply(base, status([{ type: 'Ready', status: 'False' }]), 'scope-controller', {
      ...opts,
      now: T1,
    });
    const two = apply(one, status([{ type: 'Provisioned', status: 'True' }]), 'provisioner', {
      ...opts,
      now: T2,
    });
    expect(two.status).toEqual({
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'Provisioned', status: 'True' },
      ],
    });
    expect(entry(two, 'scope-controller')).toEqual({
      manager: 'scope-controller',
      operation: 'Apply',
      apiVersion: GV,
      time: T1,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:status': {
          'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:status': {}, 'f:type': {} } },
        },
      },
      subresource: 'status',
    });
    // The controller updates its element and drops nothing of the other's.
    const three = apply(two, status([{ type: 'Ready', status: 'True' }]), 'scope-controller', {
      ...opts,
      now: T3,
    });
    expect(three.status).toEqual({
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'Provisioned', status: 'True' },
      ],
    });
    // Omitting its element removes it, and only it.
    const four = apply(three, status([]), 'scope-controller', opts);
    expect(four.status).toEqual({ conditions: [{ type: 'Provisioned', status: 'True' }] });
    expect(managersOf(four)).toEqual(['kubectl/Apply', 'provisioner/Apply']);
    // The spec manager is untouched by status applies.
    expect(four.spec).toEqual({ name: 'web' });
  });

  it('owns set items by value and atomic lists whole', () => {
    const listTypes = fieldTypesFromSchema({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
            ports: { type: 'array', items: { type: 'integer' } },
          },
        },
      },
    });
    expect(listTypes).toEqual({ 'spec.tags': { list: 'set' }, 'spec.ports': { list: 'atomic' } });
    const first = stored(
      apply(undefined, scope({ tags: ['a', 'b'], ports: [80] }), 'kubectl', { listTypes }),
    );
    expect(entry(first, 'kubectl')?.fieldsV1).toEqual({
      'f:spec': { 'f:ports': {}, 'f:tags': { 'v:"a"': {}, 'v:"b"': {} } },
    });
    const second = apply(first, scope({ tags: ['c'], ports: [443] }), 'other', {
      listTypes,
      force: true,
    });
    expect(second.spec).toEqual({ tags: ['a', 'b', 'c'], ports: [443] });
    expect(entry(second, 'kubectl')?.fieldsV1).toEqual({
      'f:spec': { 'f:tags': { 'v:"a"': {}, 'v:"b"': {} } },
    });
  });

  it("keys a list item that omits a key field by that field's schema default (ports: TCP)", () => {
    const listTypes = fieldTypesFromSchema({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            ports: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['port', 'protocol'],
              items: {
                type: 'object',
                properties: {
                  port: { type: 'integer' },
                  protocol: { type: 'string', default: 'TCP' },
                },
              },
            },
          },
        },
      },
    });
    const made = apply(undefined, scope({ ports: [{ port: 80 }] }), 'kubectl', { listTypes });
    expect(entry(made, 'kubectl')?.fieldsV1).toEqual({
      'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} } } },
    });
  });

  it('tracks metadata lists: finalizers as a set, ownerReferences by uid', () => {
    const ref = { apiVersion: 'v1', kind: 'Namespace', name: 'team', uid: 'ns-1' };
    const created = apply(
      undefined,
      scope({}, { finalizers: ['platform.nrn.dev/cleanup'], ownerReferences: [ref] }),
      'op',
    );
    expect(entry(created, 'op')?.fieldsV1).toEqual({
      'f:metadata': {
        'f:finalizers': { 'v:"platform.nrn.dev/cleanup"': {} },
        'f:ownerReferences': {
          'k:{"uid":"ns-1"}': {
            '.': {},
            'f:apiVersion': {},
            'f:kind': {},
            'f:name': {},
            'f:uid': {},
          },
        },
      },
      'f:spec': {},
    });
  });

  it('checks the applied object the way the server does', () => {
    const live = stored(apply(undefined, scope({ name: 'web' }), 'kubectl'));
    expect(statusOf(() => apply(live, { ...scope({}), kind: 'Service' }, 'kubectl'))).toMatchObject(
      {
        code: 400,
        message: 'invalid object type: platform.nrn.dev/v1alpha1, Kind=Service',
      },
    );
    expect(
      statusOf(() => apply(live, { ...scope({}), apiVersion: 'v1' }, 'kubectl')),
    ).toMatchObject({
      code: 400,
      message: 'invalid object type: /v1, Kind=Scope',
    });
    expect(statusOf(() => apply(live, scope({}, { managedFields: [] }), 'kubectl'))).toMatchObject({
      code: 400,
      message: 'metadata.managedFields must be nil',
    });
    const listTypes: ListTypeInfo = { 'spec.items': { list: 'map', keys: ['name'] } };
    expect(
      statusOf(() => apply(live, scope({ items: [{ port: 1 }] }), 'kubectl', { listTypes })),
    ).toMatchObject({
      code: 400,
      message:
        'failed to create typed patch object (team/web; platform.nrn.dev/v1alpha1, Kind=Scope): .spec.items: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    });
  });

  it('does not take status through the main resource, nor spec through /status', () => {
    const live = stored(apply(undefined, scope({ name: 'web' }), 'kubectl'));
    const withStatus = { ...scope({ name: 'web' }), status: { phase: 'active' } };
    const main = apply(live, withStatus, 'kubectl');
    expect(main).not.toHaveProperty('status');
    expect(entry(main, 'kubectl')?.fieldsV1).toEqual({ 'f:spec': { 'f:name': {} } });
    const sub = apply(live, withStatus, 'ctrl', { subresource: 'status' });
    expect(sub.status).toEqual({ phase: 'active' });
    expect(entry(sub, 'ctrl')?.fieldsV1).toEqual({ 'f:status': { 'f:phase': {} } });
  });
});

describe('ownership of non-apply writes (recordUpdate)', () => {
  const configMap = (): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'settings',
      namespace: 'team',
      uid: 'u-1',
      resourceVersion: '7',
      labels: { app: 'web' },
      finalizers: ['platform.nrn.dev/keep'],
      ownerReferences: [
        { apiVersion: GV, kind: 'Scope', name: 'web', uid: 's-1', controller: true },
      ],
    },
    data: { mode: 'fast' },
  });

  it('records a create in the real encoding, with "." for maps and items the write created', () => {
    const created = recordUpdate(undefined, configMap(), 'kubectl-create', {
      apiVersion: 'v1',
      now: T0,
    });
    expect(created.metadata.managedFields).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:data': { '.': {}, 'f:mode': {} },
          'f:metadata': {
            'f:finalizers': { '.': {}, 'v:"platform.nrn.dev/keep"': {} },
            'f:labels': { '.': {}, 'f:app': {} },
            'f:ownerReferences': {
              '.': {},
              'k:{"uid":"s-1"}': {
                '.': {},
                'f:apiVersion': {},
                'f:controller': {},
                'f:kind': {},
                'f:name': {},
                'f:uid': {},
              },
            },
          },
        },
      },
    ]);
  });

  it('gives changed fields to the writer and takes them from everyone else', () => {
    const created = recordUpdate(undefined, configMap(), 'kubectl-create', {
      apiVersion: 'v1',
      now: T0,
    });
    const edited = recordUpdate(
      created,
      { ...created, metadata: { ...created.metadata, labels: { app: 'api' } } },
      'kubectl-edit',
      { apiVersion: 'v1', now: T1 },
    );
    expect(entry(edited, 'kubectl-edit', 'Update')).toMatchObject({
      time: T1,
      fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } } },
    });
    expect(entry(edited, 'kubectl-create', 'Update')?.fieldsV1).toMatchObject({
      'f:metadata': { 'f:labels': {} },
    });
    // A write that changes nothing leaves every entry as it was.
    const same = recordUpdate(edited, edited, 'noop', { apiVersion: 'v1', now: T2 });
    expect(same.metadata.managedFields).toEqual(edited.metadata.managedFields);
  });

  it('reads fieldsV1 in any key order as the same set, and writes it in the canonical one', () => {
    const scrambled = { 'f:metadata': { 'f:labels': { 'f:b': {}, '.': {}, 'f:a': {} } } };
    const canonical = { 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {}, 'f:b': {} } } };
    const read = FieldSet.fromFieldsV1(scrambled);
    expect(read.equals(FieldSet.fromFieldsV1(canonical))).toBe(true);
    expect(JSON.stringify(read.toFieldsV1())).toBe(JSON.stringify(canonical));
    // Sets are shared between objects, so their encodings are frozen.
    expect(Object.isFrozen(read.toFieldsV1()['f:metadata'])).toBe(true);
    expect(FieldSet.fromFieldsV1(scrambled)).toBe(read);
  });

  it('keeps the entry of a writer that rewrites only fields it owns', () => {
    const created = recordUpdate(undefined, configMap(), 'kubectl-create', {
      apiVersion: 'v1',
      now: T0,
    });
    const once = recordUpdate(created, { ...created, data: { mode: 'slow' } }, 'tuner', {
      apiVersion: 'v1',
      now: T1,
    });
    const twice = recordUpdate(once, { ...once, data: { mode: 'fast' } }, 'tuner', {
      apiVersion: 'v1',
      now: T2,
    });
    expect(entry(twice, 'tuner', 'Update')).toEqual({
      ...entry(once, 'tuner', 'Update'),
      time: T2,
    });
    expect(entry(twice, 'kubectl-create', 'Update')).toEqual(
      entry(once, 'kubectl-create', 'Update'),
    );
  });

  it('takes a removed field from its owner', () => {
    const created = recordUpdate(undefined, configMap(), 'kubectl-create', {
      apiVersion: 'v1',
      now: T0,
    });
    const { data: _gone, ...withoutData } = created;
    const removed = recordUpdate(created, withoutData as KubeObject, 'cleaner', {
      apiVersion: 'v1',
      now: T1,
    });
    expect(Object.keys(entry(removed, 'kubectl-create', 'Update')?.fieldsV1 ?? {})).toEqual([
      'f:metadata',
    ]);
    expect(entry(removed, 'cleaner', 'Update')).toBeUndefined();
  });

  it('keeps an existing untracked object untracked, and honours a client reset of managedFields', () => {
    const untracked = configMap();
    const next = recordUpdate(untracked, { ...untracked, data: { mode: 'slow' } }, 'm', {
      apiVersion: 'v1',
      now: T0,
    });
    expect(next.metadata).not.toHaveProperty('managedFields');
    const tracked = recordUpdate(undefined, configMap(), 'kubectl-create', {
      apiVersion: 'v1',
      now: T0,
    });
    const reset = recordUpdate(
      tracked,
      { ...tracked, metadata: { ...tracked.metadata, managedFields: [] } },
      'm',
      {
        apiVersion: 'v1',
        now: T1,
      },
    );
    expect(reset.metadata).not.toHaveProperty('managedFields');
  });

  it('records a status write as its own entry, reading ownership from the live object', () => {
    const ns: KubeObject = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team', uid: 'n-1', labels: { tier: 'apps' } },
      spec: {},
    };
    const created = recordUpdate(undefined, ns, 'kubectl-create', { apiVersion: 'v1', now: T0 });
    const withStatus = { ...created, status: { phase: 'Active' } };
    const updated = recordUpdate(created, withStatus, 'namespace-controller', {
      apiVersion: 'v1',
      now: T1,
      subresource: 'status',
    });
    expect(entry(updated, 'namespace-controller', 'Update')).toEqual({
      manager: 'namespace-controller',
      operation: 'Update',
      apiVersion: 'v1',
      time: T1,
      fieldsType: 'FieldsV1',
      // status is a struct of the Namespace kind: it is there even empty, so no ".".
      fieldsV1: { 'f:status': { 'f:phase': {} } },
      subresource: 'status',
    });
  });

  it('merges the oldest updaters into ancient-changes past ten', () => {
    let o = recordUpdate(undefined, configMap(), 'm0', {
      apiVersion: 'v1',
      now: '2026-11-22T10:00:00Z',
    });
    for (let i = 1; i <= 10; i++) {
      o = recordUpdate(
        o,
        { ...o, data: { ...(o.data as Record<string, string>), [`k${i}`]: 'v' } },
        `m${i}`,
        {
          apiVersion: 'v1',
          now: `2026-11-22T10:00:${String(i).padStart(2, '0')}Z`,
        },
      );
    }
    const names = managersOf(o);
    expect(names).toHaveLength(10);
    expect(names).toContain('ancient-changes/Update');
    expect(names).not.toContain('m0/Update');
    expect(names).not.toContain('m1/Update');
  });
});

describe('the FieldsV1 encoding', () => {
  it('reads and writes the real format, "." and all', () => {
    const fields = {
      'f:metadata': {
        'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
        'f:labels': { 'f:app': {} },
      },
      'f:spec': {
        'f:items': {
          'k:{"name":"a","port":80}': { '.': {}, 'f:name': {}, 'f:port': {} },
        },
        'f:tags': { 'v:"x"': {} },
      },
    };
    const set = FieldSet.fromFieldsV1(fields);
    expect(set.toFieldsV1()).toEqual(fields);
    expect(JSON.stringify(set.toFieldsV1())).toBe(JSON.stringify(fields));
    expect(set.size).toBe(7);
  });

  it('tells apart paths whose elements hold the characters its keys are joined with', () => {
    const paths = [
      ['f:a\0f:b'],
      ['f:a', 'f:b'],
      ['\u0001["f:a","f:b"]'],
      ['f:a\0', 'f:b'],
      ['f:a', '\0f:b'],
    ];
    const set = FieldSet.of(paths);
    expect(set.size).toBe(paths.length);
    for (const path of paths) expect(set.has(path)).toBe(true);
    expect(set.difference(FieldSet.of([['f:a', 'f:b']])).size).toBe(paths.length - 1);
  });

  it('encodes equal sets made apart once, and never lends one set the encoding of another', () => {
    const paths = [['f:spec', 'f:name'], ['f:status', 'f:id'], ['f:spec']];
    const first = FieldSet.of(paths).toFieldsV1();
    expect(FieldSet.of(paths).toFieldsV1()).toBe(first);
    expect(first).toEqual({ 'f:spec': { '.': {}, 'f:name': {} }, 'f:status': { 'f:id': {} } });
    // Member keys joined alike: one path of one element holding the separator, two paths.
    const one = FieldSet.of([['f:a\u0002f:b']]);
    const two = FieldSet.of([['f:a'], ['f:b']]);
    expect(one.toFieldsV1()).toEqual({ 'f:a\u0002f:b': {} });
    expect(two.toFieldsV1()).toEqual({ 'f:a': {}, 'f:b': {} });
  });
});
