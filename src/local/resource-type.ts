// What the server knows of one resource type (a built-in kind's, or one version of a CRD's) and
// the names it is known by: in URLs, in the store, in apiVersion fields and in errors.
import type { PrinterColumn } from './table.js';

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
  /** Name rule: most kinds take an RFC 1123 subdomain, namespaces a label. */
  readonly nameRule: 'subdomain' | 'label';
}

export const apiVersionOf = (t: Pick<ResourceType, 'group' | 'version'>): string =>
  t.group === '' ? t.version : `${t.group}/${t.version}`;

/** Where a type's objects live in the store. */
export const storageKeyOf = (t: Pick<ResourceType, 'group' | 'resource'>): string =>
  `${t.group === '' ? 'core' : t.group}/${t.resource}`;

/** `scopes.platform.nrn.dev`, the way errors name a resource. */
export const qualifiedResource = (t: Pick<ResourceType, 'group' | 'resource'>): string =>
  t.group === '' ? t.resource : `${t.resource}.${t.group}`;
