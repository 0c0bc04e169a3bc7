// What the server knows of one resource type (a built-in kind's, or one version of a CRD's) and
// the names it is known by: in URLs, in the store, in apiVersion fields and in errors.
import { createHash } from 'node:crypto';
import type { PrinterColumn } from './table.js';
import type { KubeObject } from './types.js';

/**
 * Where the objects of a type that is another API's view of them are kept, and how they are
 * converted: events.k8s.io/v1 Event is stored as core/v1 Event, one store for both, as
 * kube-apiserver keeps them (pkg/registry/events/rest/storage_events.go serves the core
 * registry's store). Each function returns a new object, or its argument when that is already
 * in the version asked for, and never changes its argument.
 */
export interface StoredAs {
  readonly group: string;
  readonly resource: string;
  /** A stored object in this type's version. */
  fromStorage(object: KubeObject): KubeObject;
  /** An object of this type's version as it is stored. */
  toStorage(object: KubeObject): KubeObject;
}

export interface ResourceType {
  readonly group: string; // '' for the core group
  readonly version: string;
  readonly resource: string; // plural, as in URLs
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly hasStatus: boolean;
  /** Built-ins here are schemaless; a custom resource carries its CRD's version schema. */
  readonly schema?: Record<string, unknown>;
  readonly printerColumns?: readonly PrinterColumn[];
  readonly custom: boolean;
  /**
   * Name rule: most kinds take an RFC 1123 subdomain, namespaces a label, RBAC kinds a path
   * segment (ValidateRBACName: `system:discovery`).
   */
  readonly nameRule: 'subdomain' | 'label' | 'path';
  /** Set when the type's objects are stored as another type's (see StoredAs). */
  readonly storedAs?: StoredAs;
  /** A CRD's storage version (the one marked `storage: true`); a built-in's is its own. */
  readonly storageVersion?: string;
}

export const apiVersionOf = (t: Pick<ResourceType, 'group' | 'version'>): string =>
  t.group === '' ? t.version : `${t.group}/${t.version}`;

/** Where a type's objects live in the store. */
export const storageKeyOf = (t: Pick<ResourceType, 'group' | 'resource' | 'storedAs'>): string => {
  const at = t.storedAs ?? t;
  return `${at.group === '' ? 'core' : at.group}/${at.resource}`;
};

/**
 * A stored object as `type` serves it: converted when the type is a view of another's objects,
 * otherwise the same object in the type's apiVersion (a CRD's versions differ in nothing else
 * here). `object` is not changed: it may be shared.
 */
export function servedAs(type: ResourceType, object: KubeObject): KubeObject {
  if (type.storedAs !== undefined) return type.storedAs.fromStorage(object);
  const apiVersion = apiVersionOf(type);
  return object.apiVersion === apiVersion ? object : { ...object, apiVersion };
}

/** An object of `type` as it is stored: the same object unless the type is stored as another. */
export const storedFormOf = (type: ResourceType, object: KubeObject): KubeObject =>
  type.storedAs?.toStorage(object) ?? object;

/**
 * Discovery's `storageVersionHash` (apiserver's discovery.StorageVersionHash): the first 8 bytes
 * of SHA-256 of `<group>/<version>/<kind>` of the version objects are stored in, base64. Clients
 * (the storage version migrator, kubectl's cache) compare it to notice a storage change.
 */
export function storageVersionHashOf(t: ResourceType): string {
  const group = t.storedAs?.group ?? t.group;
  const version = t.storedAs !== undefined ? 'v1' : (t.storageVersion ?? t.version);
  const digest = createHash('sha256').update(`${group}/${version}/${t.kind}`).digest();
  return digest.subarray(0, 8).toString('base64');
}

/** `scopes.platform.nrn.dev`, the way errors name a resource. */
export const qualifiedResource = (t: Pick<ResourceType, 'group' | 'resource'>): string =>
  t.group === '' ? t.resource : `${t.resource}.${t.group}`;
