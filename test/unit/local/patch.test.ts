// The PATCH engines: the Content-Type dispatch, JSON merge patch (RFC 7386), JSON patch
// (RFC 6902, with the API server's status codes) and strategic merge patch on the built-in
// kinds' merge lists. No input is ever modified: inputs are deep-frozen.
import { describe, expect, it } from 'vitest';
import {
  applyJsonPatch,
  applyMergePatch,
  applyPatch,
  applyStrategicMergePatch,
  patchTypeOf,
} from '../../../src/local/patch/index.js';
import { ApiError } from '../../../src/local/types.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The ApiError a call throws, as the Status body the client would get. */
function statusOf(fn: () => unknown): Record<string, unknown> {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return (err as ApiError).toStatus();
  }
  throw new Error('expected an ApiError');
}

const REJECTED = {
  code: 422,
  reason: 'Invalid',
  message: 'the server rejected our request due to an error in our request',
};

describe('patchTypeOf', () => {
  it('maps the four patch media types, ignoring parameters', () => {
    expect(patchTypeOf('application/json-patch+json')).toBe('json');
    expect(patchTypeOf('application/merge-patch+json; charset=utf-8')).toBe('merge');
    expect(patchTypeOf('application/strategic-merge-patch+json')).toBe('strategic');
    expect(patchTypeOf('application/apply-patch+yaml')).toBe('apply');
  });

  it('answers 415 with the accepted list for anything else, CBOR apply included', () => {
    for (const type of ['application/json', 'application/apply-patch+cbor', undefined, '']) {
      expect(statusOf(() => patchTypeOf(type))).toMatchObject({
        code: 415,
        reason: 'UnsupportedMediaType',
        message:
          'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
      });
    }
  });

  it('answers 415 to strategic merge patch where it is not served (custom resources)', () => {
    expect(
      statusOf(() => patchTypeOf('application/strategic-merge-patch+json', { strategic: false })),
    ).toMatchObject({
      code: 415,
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    });
  });
});

describe('JSON merge patch (RFC 7386)', () => {
  // RFC 7386 Appendix A, the cases whose target is an object.
  const cases: [object, unknown, object][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  it.each(cases)('%j + %j = %j', (target, patch, result) => {
    expect(applyMergePatch(deepFreeze(target), deepFreeze(patch))).toEqual(result);
  });

  it('merges into a Kubernetes object: labels added and removed, lists replaced', () => {
    const live = deepFreeze({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', labels: { a: '1', b: '2' }, finalizers: ['x', 'y'] },
      data: { k: 'v' },
    });
    expect(
      applyMergePatch(live, { metadata: { labels: { a: null, c: '3' }, finalizers: ['z'] } }),
    ).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', labels: { b: '2', c: '3' }, finalizers: ['z'] },
      data: { k: 'v' },
    });
  });

  it('refuses a patch that is not an object as the server does', () => {
    for (const patch of [null, 'bar', 1, true]) {
      expect(statusOf(() => applyMergePatch({ a: 'foo' }, patch))).toMatchObject({
        code: 400,
        reason: 'BadRequest',
        message: 'Invalid JSON Patch',
      });
    }
    // An array merges into an array, which no object decodes from.
    expect(statusOf(() => applyMergePatch({ a: 'b' }, ['c']))).toMatchObject({
      code: 422,
      reason: 'Invalid',
    });
  });
});

describe('JSON patch (RFC 6902)', () => {
  const live = () =>
    deepFreeze({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', labels: { app: 'web' }, finalizers: ['a', 'b', 'c'] },
      data: { 'a/b': 'slash', 'm~n': 'tilde', k: 'v' },
    });

  it('adds, removes, replaces, moves, copies and tests', () => {
    const ops = deepFreeze([
      { op: 'test', path: '/metadata/labels/app', value: 'web' },
      { op: 'add', path: '/metadata/labels/tier', value: 'front' },
      { op: 'add', path: '/metadata/finalizers/1', value: 'x' },
      { op: 'add', path: '/metadata/finalizers/-', value: 'z' },
      { op: 'remove', path: '/metadata/finalizers/0' },
      { op: 'replace', path: '/data/k', value: 'w' },
      { op: 'move', from: '/data/a~1b', path: '/data/moved' },
      { op: 'copy', from: '/data/m~0n', path: '/data/copied' },
      { op: 'test', path: '/data/copied', value: 'tilde' },
    ]);
    expect(applyJsonPatch(live(), ops)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'c',
        labels: { app: 'web', tier: 'front' },
        finalizers: ['x', 'b', 'c', 'z'],
      },
      data: { 'm~n': 'tilde', k: 'w', moved: 'slash', copied: 'tilde' },
    });
  });

  it('copies by value, so later operations do not reach the source', () => {
    const out = applyJsonPatch(deepFreeze({ a: { b: 1 } }), [
      { op: 'copy', from: '/a', path: '/c' },
      { op: 'replace', path: '/c/b', value: 2 },
    ]);
    expect(out).toEqual({ a: { b: 1 }, c: { b: 2 } });
  });

  it('keeps the quirks of the server library: replace of a missing member adds it; negative indexes', () => {
    expect(
      applyJsonPatch(live(), [{ op: 'replace', path: '/data/new', value: 'n' }]),
    ).toMatchObject({
      data: { new: 'n' },
    });
    expect(
      applyJsonPatch(live(), [{ op: 'remove', path: '/metadata/finalizers/-1' }]),
    ).toMatchObject({
      metadata: { finalizers: ['a', 'b'] },
    });
  });

  it.each([
    ['a failed test', [{ op: 'test', path: '/metadata/labels/app', value: 'api' }]],
    ['a test of a missing member', [{ op: 'test', path: '/metadata/labels/none', value: 'x' }]],
    ['removing a missing member', [{ op: 'remove', path: '/metadata/annotations' }]],
    ['removing past the end', [{ op: 'remove', path: '/metadata/finalizers/3' }]],
    ['adding under a missing parent', [{ op: 'add', path: '/spec/replicas', value: 1 }]],
    ['adding past the end', [{ op: 'add', path: '/metadata/finalizers/5', value: 'q' }]],
    [
      'an index that is not a number',
      [{ op: 'replace', path: '/metadata/finalizers/x', value: 'q' }],
    ],
    ['moving from a missing member', [{ op: 'move', from: '/nope', path: '/data/x' }]],
    ['an unknown operation', [{ op: 'increment', path: '/data/k' }]],
    ['an operation without a path', [{ op: 'add', value: 1 }]],
    ['a path without a slash', [{ op: 'add', path: 'data', value: 1 }]],
    ['replacing the whole object by a scalar', [{ op: 'replace', path: '', value: 1 }]],
  ])('%s is 422 Invalid and leaves the object alone', (_name, ops) => {
    const before = live();
    const copy = structuredClone(before);
    expect(statusOf(() => applyJsonPatch(before, deepFreeze(ops)))).toMatchObject(REJECTED);
    expect(before).toEqual(copy);
  });

  it('fails as a whole: an operation after a failed one is not applied', () => {
    const ops = [
      { op: 'add', path: '/data/first', value: '1' },
      { op: 'test', path: '/data/k', value: 'other' },
    ];
    expect(statusOf(() => applyJsonPatch(live(), ops))).toMatchObject(REJECTED);
  });

  it('guards against prototype pollution', () => {
    const ops = [{ op: 'add', path: '/__proto__', value: { polluted: true } }];
    expect(statusOf(() => applyJsonPatch({ a: 1 }, ops))).toMatchObject(REJECTED);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses what does not decode as a patch with 400, and more than 10000 operations with 413', () => {
    expect(statusOf(() => applyJsonPatch(live(), { op: 'add' }))).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
    });
    expect(statusOf(() => applyJsonPatch(live(), ['add']))).toMatchObject({
      code: 400,
      message: 'json: cannot unmarshal string into Go value of type jsonpatch.Operation',
    });
    const many = Array.from({ length: 10_001 }, () => ({
      op: 'test',
      path: '/kind',
      value: 'ConfigMap',
    }));
    expect(statusOf(() => applyJsonPatch(live(), many))).toMatchObject({
      code: 413,
      reason: 'RequestEntityTooLarge',
      message:
        'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
    });
  });

  it('never mutates the operations either', () => {
    const value = { nested: { deep: 1 } };
    const ops = deepFreeze([{ op: 'add', path: '/data/obj', value }]);
    const out = applyJsonPatch(live(), ops) as { data: { obj: { nested: { deep: number } } } };
    out.data.obj.nested.deep = 2;
    expect(value.nested.deep).toBe(1);
  });
});

describe('strategic merge patch on the built-in kinds', () => {
  const owner = (uid: string) => ({
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'Scope',
    name: `s-${uid}`,
    uid,
  });
  const serviceAccount = () =>
    deepFreeze({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: {
        name: 'runner',
        namespace: 'team',
        labels: { a: '1', b: '2' },
        finalizers: ['x', 'y'],
        ownerReferences: [owner('1'), owner('2')],
      },
      secrets: [{ name: 'token-a' }],
      imagePullSecrets: [{ name: 'pull-a' }],
    });

  it('merges metadata.ownerReferences by uid', () => {
    const out = applyStrategicMergePatch(serviceAccount(), {
      metadata: { ownerReferences: [{ ...owner('2'), controller: true }, owner('3')] },
    });
    expect(out).toMatchObject({
      // Live-only items keep their place before merged ones; new items follow the patch.
      metadata: { ownerReferences: [owner('1'), { ...owner('2'), controller: true }, owner('3')] },
    });
  });

  it('deletes a merge-list element with $patch: delete', () => {
    const out = applyStrategicMergePatch(serviceAccount(), {
      metadata: { ownerReferences: [{ uid: '1', $patch: 'delete' }] },
    });
    expect(out).toMatchObject({ metadata: { ownerReferences: [owner('2')] } });
  });

  it('merges metadata.finalizers as a set, new values first (as the library orders them)', () => {
    const out = applyStrategicMergePatch(serviceAccount(), {
      metadata: { finalizers: ['z', 'x'] },
    });
    expect(out).toMatchObject({ metadata: { finalizers: ['z', 'x', 'y'] } });
  });

  it('honours $deleteFromPrimitiveList and $setElementOrder, as client-side kubectl apply sends', () => {
    const out = applyStrategicMergePatch(serviceAccount(), {
      metadata: {
        '$setElementOrder/finalizers': ['y', 'w'],
        finalizers: ['w'],
        '$deleteFromPrimitiveList/finalizers': ['x'],
      },
    });
    expect(out).toMatchObject({ metadata: { finalizers: ['y', 'w'] } });
  });

  it('merges ServiceAccount.secrets by name but replaces imagePullSecrets (no patch strategy there)', () => {
    const out = applyStrategicMergePatch(serviceAccount(), {
      secrets: [{ name: 'token-b' }],
      imagePullSecrets: [{ name: 'pull-b' }],
    });
    expect(out).toMatchObject({
      secrets: [{ name: 'token-b' }, { name: 'token-a' }],
      imagePullSecrets: [{ name: 'pull-b' }],
    });
  });

  it('replaces an atomic list whole (LimitRange.spec.limits)', () => {
    const limitRange = deepFreeze({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'l' },
      spec: {
        limits: [
          { type: 'Container', max: { cpu: '2' } },
          { type: 'Pod', max: { cpu: '4' } },
        ],
      },
    });
    const out = applyStrategicMergePatch(limitRange, {
      spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] },
    });
    expect(out).toEqual({
      ...limitRange,
      spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] },
    });
  });

  it('merges Namespace.status.conditions by type', () => {
    const ns = deepFreeze({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'n' },
      status: {
        phase: 'Active',
        conditions: [
          { type: 'A', status: 'True' },
          { type: 'B', status: 'True' },
        ],
      },
    });
    const out = applyStrategicMergePatch(ns, {
      status: { conditions: [{ type: 'B', status: 'False' }] },
    });
    expect(out).toMatchObject({
      status: {
        phase: 'Active',
        conditions: [
          { type: 'A', status: 'True' },
          { type: 'B', status: 'False' },
        ],
      },
    });
  });

  it('merges maps like merge patch, with $patch: replace and $retainKeys', () => {
    const sa = serviceAccount();
    expect(
      applyStrategicMergePatch(sa, { metadata: { labels: { a: null, c: '3' } } }),
    ).toMatchObject({
      metadata: { labels: { b: '2', c: '3' } },
    });
    expect(
      (
        applyStrategicMergePatch(sa, {
          metadata: { labels: { $patch: 'replace', only: 'me' } },
        }) as typeof sa
      ).metadata.labels,
    ).toEqual({ only: 'me' });
    const cm = deepFreeze({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { a: '1', b: '2', c: '3' },
    });
    expect(applyStrategicMergePatch(cm, { data: { $retainKeys: ['a', 'b'], b: '20' } })).toEqual({
      ...cm,
      data: { a: '1', b: '20' },
    });
  });

  it('strips directives from values that land where nothing was', () => {
    const bare = deepFreeze({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'r' } });
    const out = applyStrategicMergePatch(bare, {
      metadata: {
        ownerReferences: [owner('1'), { uid: '2', $patch: 'delete' }],
        labels: { a: '1', b: null },
      },
    });
    expect(out).toEqual({
      ...bare,
      metadata: { name: 'r', ownerReferences: [owner('1')], labels: { a: '1' } },
    });
  });

  it('answers malformed patches with the server codes', () => {
    const sa = serviceAccount();
    expect(statusOf(() => applyStrategicMergePatch(sa, ['x']))).toMatchObject({
      code: 400,
      message: 'json: cannot unmarshal array into Go value of type map[string]interface {}',
    });
    expect(
      statusOf(() => applyStrategicMergePatch(sa, { metadata: { $retainKeys: 'name' } })),
    ).toMatchObject({
      code: 400,
      message: 'invalid patch format of retainKeys',
    });
    expect(
      statusOf(() =>
        applyStrategicMergePatch(sa, { metadata: { $retainKeys: ['name'], labels: {} } }),
      ),
    ).toMatchObject({
      code: 400,
      message: 'invalid patch format of retainKeys',
    });
    expect(
      statusOf(() => applyStrategicMergePatch(sa, { secrets: [{ namespace: 'x' }] })),
    ).toMatchObject({
      code: 400,
      message: 'map: map[namespace:x] does not contain declared merge key: name',
    });
    expect(
      statusOf(() => applyStrategicMergePatch(sa, { metadata: { finalizers: [['x']] } })),
    ).toMatchObject({
      code: 400,
      message: 'list element types are not identical: [[x y] [[x]]]',
    });
    const bare = {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'r', finalizers: [] },
    };
    expect(
      statusOf(() => applyStrategicMergePatch(bare, { metadata: { finalizers: [['x']] } })),
    ).toMatchObject(REJECTED);
  });

  it('is reachable through applyPatch with the other engines', () => {
    expect(
      applyPatch('strategic', serviceAccount(), { metadata: { finalizers: ['x'] } }),
    ).toMatchObject({
      metadata: { finalizers: ['x', 'y'] },
    });
    expect(
      applyPatch('merge', serviceAccount(), { metadata: { finalizers: ['q'] } }),
    ).toMatchObject({
      metadata: { finalizers: ['q'] },
    });
    expect(
      applyPatch('json', serviceAccount(), [{ op: 'remove', path: '/secrets' }]),
    ).not.toHaveProperty('secrets');
  });
});
