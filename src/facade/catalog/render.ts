// A Service resource as the spec's Service item, and as the entry a page holds (the item and its
// JSON, rendered once per change, secret attributes left out); and that JSON with a caller's
// secret values merged in, for include_secret_attributes. Which attributes are secret is
// secrets.ts's to say; this file applies it.
import type { ServiceItem, ServiceSpec, ServiceStatus } from '../../api/index.js';
import { slugify } from '../../domain/names.js';
import { placeAt } from '../../domain/services/attributes.js';
import type { KubeObject } from '../../kube/index.js';
import {
  type HiddenAttributes,
  NOTHING_HIDDEN,
  type SecretAttributes,
  type SpecSecrets,
} from './secrets.js';

export type ServiceObject = KubeObject<ServiceSpec, ServiceStatus>;

/** One service as a page holds it. Immutable: an update files a new one. */
export interface CatalogEntry {
  /** `item` serialised, secret attributes already left out. */
  readonly json: string;
  readonly item: Readonly<ServiceItem>;
  readonly namespace: string;
  readonly name: string;
  /** Present when the service names a Secret for its secret attributes. */
  readonly secret: SecretAttributes | undefined;
}

/** The entry of a service whose specification's secrets are `secrets`. */
export function entryOf(object: ServiceObject, secrets: SpecSecrets): CatalogEntry {
  const item = serviceItem(object, secrets.hidden);
  const ref = object.spec?.secret_attributes_ref;
  return {
    json: JSON.stringify(item),
    item,
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name,
    secret:
      ref === undefined
        ? undefined
        : {
            name: ref.name,
            keys: secrets.keys,
            paths: secrets.paths,
            jsonValued: secrets.jsonValued,
          },
  };
}

/**
 * The spec's Service item of a Service resource: snake_case names, no nulls (a field without
 * a value is left out), and none of the attributes `hidden` names, even one a user put in the
 * plain spec by mistake (the reconciler refuses it, but the resource still exists).
 */
export function serviceItem(
  object: ServiceObject,
  hidden: HiddenAttributes = NOTHING_HIDDEN,
): ServiceItem {
  const { metadata, spec, status } = object;
  const item: Record<string, unknown> = {};
  put(item, 'id', metadata.uid);
  put(item, 'name', spec?.name);
  put(item, 'slug', status?.slug ?? (spec?.name ? slugify(spec.name) : undefined));
  put(item, 'specification_id', spec?.specification_id);
  put(item, 'desired_specification_id', spec?.desired_specification_id);
  put(item, 'messages', status?.messages);
  put(item, 'created_at', metadata.creationTimestamp);
  put(item, 'updated_at', status?.updated_at ?? metadata.creationTimestamp);
  put(item, 'status', status?.status);
  put(item, 'linkable_to', spec?.linkable_to);
  put(item, 'dimensions', spec?.dimensions);
  put(item, 'attributes', plainAttributes(spec?.attributes, hidden));
  put(item, 'entity_nrn', spec?.entity_nrn);
  put(item, 'selectors', spec?.selectors);
  put(item, 'imported', spec?.imported ?? spec?.selectors?.imported);
  put(item, 'provider', spec?.provider);
  put(item, 'category', spec?.category);
  put(item, 'sub_category', spec?.sub_category);
  put(item, 'type', spec?.type);
  return item as ServiceItem;
}

function put(item: Record<string, unknown>, name: string, value: unknown): void {
  if (value !== undefined && value !== null) item[name] = value;
}

/**
 * The attributes object itself when nothing hidden is in it, so an item shares it with the
 * resource; else copies of it and of the objects on the way to what is left out.
 */
function plainAttributes(
  attributes: Readonly<Record<string, unknown>> | undefined,
  hidden: HiddenAttributes,
): Record<string, unknown> | undefined {
  if (attributes === undefined) return attributes;
  if (hidden === true) return {};
  return hidden.size === 0 ? attributes : without(attributes, hidden);
}

function without(
  value: Readonly<Record<string, unknown>>,
  hidden: ReadonlyMap<string, HiddenAttributes>,
): Record<string, unknown> {
  let changed = false;
  const kept: [string, unknown][] = [];
  for (const key of Object.keys(value)) {
    const rule = hidden.get(key);
    let inner = value[key];
    if (rule === true) {
      changed = true;
      continue;
    }
    if (rule !== undefined && isRecord(inner)) {
      const stripped = without(inner, rule);
      if (stripped !== inner) changed = true;
      inner = stripped;
    }
    kept.push([key, inner]);
  }
  // fromEntries defines own properties, so a `__proto__` attribute stays data.
  return changed ? Object.fromEntries(kept) : (value as Record<string, unknown>);
}

/**
 * The entry's JSON with the values of its secret attributes merged in (what
 * include_secret_attributes shows a caller allowed to read the Secret), each at its path.
 * `values` are the Secret's decoded strings; keys the specification does not mark secret are
 * ignored, and so is a value whose parent in the plain attributes is not an object.
 */
export function withSecretValues(
  entry: CatalogEntry,
  values: Readonly<Record<string, string>>,
): string {
  const secret = entry.secret;
  if (secret === undefined) return entry.json;
  const attributes: Record<string, unknown> = { ...(entry.item.attributes ?? {}) };
  let shown = false;
  for (const key of secret.keys) {
    const value = values[key];
    const path = secret.paths.get(key);
    if (!Object.hasOwn(values, key) || typeof value !== 'string' || path === undefined) continue;
    const typed = secret.jsonValued.has(key) ? parseOrKeep(value) : value;
    if (placeAt(attributes, path, typed)) shown = true;
  }
  if (!shown) return entry.json;
  return JSON.stringify({ ...entry.item, attributes });
}

function parseOrKeep(value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
