// The informer transform that makes cached objects cheaper: managedFields and kubectl's
// last-applied copy go, everything else stays as it was (values unchanged), and the pool that
// shares strings stays bounded.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/client.js';
import {
  LAST_APPLIED_ANNOTATION,
  leanObject,
  leanWithoutStatus,
  metadataOnly,
  StringPool,
} from '../../../src/kube/lean.js';

const parsed = (name: string): KubeObject =>
  JSON.parse(
    JSON.stringify({
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'Service',
      metadata: {
        name,
        namespace: 'team-a',
        uid: `uid-${name}`,
        resourceVersion: '7',
        creationTimestamp: '2026-01-01T00:00:00Z',
        labels: { 'app.kubernetes.io/managed-by': 'nrn-operator' },
        annotations: { [LAST_APPLIED_ANNOTATION]: '{"big":"copy"}', keep: 'this' },
        finalizers: ['platform.nrn.dev/service-cleanup'],
        managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }],
      },
      spec: { name, type: 'dependency', attributes: { size: 'small', nested: [{ a: 'b' }] } },
      status: {
        status: 'pending',
        conditions: [{ type: 'Ready', status: 'False', reason: 'Waiting', message: 'waits' }],
      },
    }),
  ) as KubeObject;

describe('leanObject', () => {
  it('drops managedFields and the last-applied annotation, and changes no other value', () => {
    const object = parsed('a');
    const expected = parsed('a');
    delete expected.metadata.managedFields;
    delete (expected.metadata.annotations as Record<string, string>)[LAST_APPLIED_ANNOTATION];
    expect(leanObject(object)).toBe(object);
    expect(object).toEqual(expected);
  });

  it('drops managedFields in place: deleted when last (as kube-apiserver writes a built-in kind), else left undefined', () => {
    const last = parsed('a');
    const metadata = last.metadata;
    expect(leanObject(last).metadata).toBe(metadata);
    expect('managedFields' in metadata).toBe(false);

    const first = parsed('b');
    const { managedFields, ...rest } = first.metadata;
    first.metadata = { managedFields, ...rest };
    const before = first.metadata;
    const lean = leanObject(first);
    expect(lean.metadata).toBe(before);
    expect(lean.metadata.managedFields).toBeUndefined();
    expect(JSON.parse(JSON.stringify(lean.metadata))).toEqual(
      JSON.parse(JSON.stringify(leanObject(parsed('b')).metadata)),
    );
  });

  it('leanWithoutStatus drops the status too, and nothing else', () => {
    const object = parsed('c');
    const expected = leanObject(parsed('c'));
    const lean = leanWithoutStatus(object);
    expect(lean.status).toBeUndefined();
    const { status: _status, ...kept } = expected;
    expect(JSON.parse(JSON.stringify(lean))).toEqual(JSON.parse(JSON.stringify(kept)));
  });

  it('drops annotations altogether when the last-applied copy was the only one', () => {
    const object = parsed('a');
    object.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: '{}' };
    expect(leanObject(object).metadata.annotations).toBeUndefined();
  });

  it('leaves an object without metadata extras, spec or status alone', () => {
    const object: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } };
    expect(leanObject(object)).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'x' },
    });
  });
});

describe('metadataOnly', () => {
  it('keeps apiVersion, kind and the lean metadata, nothing else', () => {
    const object = metadataOnly(parsed('a'));
    expect(Object.keys(object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(object.metadata.managedFields).toBeUndefined();
    expect(object.metadata).toMatchObject({
      name: 'a',
      namespace: 'team-a',
      labels: { 'app.kubernetes.io/managed-by': 'nrn-operator' },
      annotations: { keep: 'this' },
    });
  });
});

describe('StringPool', () => {
  it('hands back the first copy of an equal string', () => {
    const pool = new StringPool();
    const first = ['shared', 'value'].join('-');
    const second = ['shared', 'value'].join('-');
    expect(pool.share(first)).toBe(first);
    expect(pool.share(second)).toBe(first);
    expect(pool.size).toBe(1);
  });

  it('starts over once full, so it never holds more than its capacity', () => {
    const pool = new StringPool(3);
    for (let i = 0; i < 10; i++) pool.share(`s${i}`);
    expect(pool.size).toBeLessThanOrEqual(3);
    expect(pool.share('s9')).toBe('s9');
  });

  it('does not hold long strings', () => {
    const pool = new StringPool();
    pool.share('x'.repeat(10_000));
    expect(pool.size).toBe(0);
  });
});
