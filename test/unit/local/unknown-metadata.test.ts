// The fields under metadata that metav1.ObjectMeta has not, as the API server's strict decoder
// names them (sigs.k8s.io/json): at every depth ObjectMeta's Go type goes, dropped as decoding
// drops them, in the order the decoder meets them, and no more than 100 of them.
import { describe, expect, it } from 'vitest';
import { decodeMetadata, unknownMetadataFields } from '../../../src/local/meta.js';

describe('unknownMetadataFields', () => {
  it('names unknown fields of ObjectMeta, an owner reference and a managedFields entry', () => {
    const meta: Record<string, unknown> = {
      name: 'x',
      zeta: 1,
      labels: { anything: 'goes' },
      ownerReferences: [{ uid: 'u', name: 'o', contoller: true }],
      managedFields: [{ manager: 'm', fieldsV1: { 'f:any': {} }, extra: 1 }],
      alpha: 2,
    };
    expect(unknownMetadataFields(meta, 'metadata', false, false)).toEqual([
      'metadata.zeta',
      'metadata.ownerReferences[0].contoller',
      'metadata.managedFields[0].extra',
      'metadata.alpha',
    ]);
    // A custom resource's metadata reaches the decoder re-encoded, its keys sorted.
    expect(unknownMetadataFields(meta, 'metadata', false, true)).toEqual([
      'metadata.alpha',
      'metadata.managedFields[0].extra',
      'metadata.ownerReferences[0].contoller',
      'metadata.zeta',
    ]);
    expect(meta).toHaveProperty('zeta');
  });

  it('drops what it names when asked, leaving ObjectMeta’s fields', () => {
    const meta: Record<string, unknown> = {
      name: 'x',
      constructor: 'not a field',
      ownerReferences: [{ uid: 'u', extra: 1 }],
    };
    expect(unknownMetadataFields(meta, 'spec.template.metadata', true)).toEqual([
      'spec.template.metadata.constructor',
      'spec.template.metadata.ownerReferences[0].extra',
    ]);
    expect(meta).toEqual({ name: 'x', ownerReferences: [{ uid: 'u' }] });
  });

  it('names at most 100, as the strict decoder keeps at most 100 errors, and drops them all', () => {
    const meta: Record<string, unknown> = Object.fromEntries(
      Array.from({ length: 150 }, (_, i) => [`f${String(i).padStart(3, '0')}`, i]),
    );
    expect(unknownMetadataFields(meta, 'metadata', true)).toHaveLength(100);
    expect(meta).toEqual({});
  });

  it('leaves `constructor` and the like to be decoded as unknown, not as ObjectMeta fields', () => {
    const meta: Record<string, unknown> = { toString: 5, name: 'x' };
    expect(() => decodeMetadata(meta)).not.toThrow();
    expect(unknownMetadataFields(meta, 'metadata', true)).toEqual(['metadata.toString']);
  });
});
