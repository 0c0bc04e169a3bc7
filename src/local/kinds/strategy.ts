// The shape of a built-in kind's strategy: everything that sets one kind apart from the generic
// machinery that serves them all, in one object, as kube-apiserver keeps it per kind in
// pkg/registry/<group>/<kind>/strategy.go. The machinery (objects.ts, registry.ts, server.ts,
// the patch engines, the protobuf decoder) reads these fields and knows no kind by name.
import type { ListTypeInfo } from '../patch/field-types.js';
import type { MessageSpec } from '../protobuf-messages.js';
import type { ResourceType } from '../resource-type.js';
import type { PrinterColumn, TableColumns } from '../table.js';
import type { TypedMaps } from '../typed-maps.js';
import type { KubeObject } from '../types.js';
import type { ScaleStrategy } from './scale.js';

/** A field selector's value of an object: `GetAttrs`' fields.Set, one getter per field. */
export type SelectableFields = Readonly<Record<string, (object: KubeObject) => string | undefined>>;

/** What a strategy may ask of the server it runs in. */
export interface StrategyContext {
  /** Every type served now, the built-in ones and each CRD's. */
  servedTypes(): readonly ResourceType[];
}

/**
 * A subresource of a kind's own (beyond `status`, which `hasStatus` gives): it takes PUT only,
 * and makes the next state from the stored object and the body sent.
 */
export interface SubresourceStrategy {
  update(old: KubeObject, incoming: KubeObject): KubeObject;
}

export interface KindStrategy {
  /** Names, scope, status subresource, name rule, printer columns: what discovery shows. */
  readonly type: ResourceType;
  /**
   * Field selectors beyond `metadata.name` and `metadata.namespace` (`GetAttrs`,
   * `SelectableFields`); any other field is refused.
   */
  readonly selectableFields?: SelectableFields;
  /**
   * `PrepareForCreate`/`PrepareForUpdate` and `Validate`: defaults filled in and checks made on
   * every create and every update of the object itself (not of a subresource), before schema
   * and metadata checks; `old` is undefined on create. Throws an ApiError to refuse.
   */
  readonly prepare?: (
    object: KubeObject,
    old: KubeObject | undefined,
    context: StrategyContext,
  ) => void;
  /**
   * Its Go type's maps of typed values (map[string]string, map[string][]byte), in the struct's
   * order: a body whose values do not decode into them is refused as kube-apiserver's decoder
   * refuses it, before `prepare` (typed-maps.ts).
   */
  readonly typedMaps?: TypedMaps;
  /**
   * How its lists and maps merge (strategic merge patch) and are owned (server-side apply): its
   * Go type's `patchStrategy`/`patchMergeKey` tags and `listType` markers, by path. ObjectMeta's
   * are every kind's already.
   */
  readonly fieldTypes?: ListTypeInfo;
  /**
   * Its Go type's protobuf message (generated.proto), so that kubectl's protobuf bodies of it
   * decode; without one, such a body is refused with 415.
   */
  readonly protobuf?: MessageSpec;
  /**
   * Its `scale` subresource (autoscaling/v1 Scale over spec.replicas and status.replicas, with
   * GET, PUT and PATCH: scale.ts), and how its selector reads there.
   */
  readonly scale?: ScaleStrategy;
  /** Subresources of the kind's own, by name (namespaces' `finalize`). */
  readonly subresources?: Readonly<Record<string, SubresourceStrategy>>;
  /** What a delete that has to wait (for finalizers) changes on the object it keeps. */
  readonly beginDelete?: (object: KubeObject) => void;
  /**
   * Its strategy sets `metadata.generation` to 1 on create and bumps it when anything but
   * metadata and status changes (Deployment, CRD...); without, the server leaves it alone.
   */
  readonly countsGeneration?: boolean;
  /** Its registry has no DeleteCollection (namespaces): no such verb, a 405. */
  readonly noDeleteCollection?: boolean;
  /** A DELETE of an object already being deleted: throws an ApiError to refuse it. */
  readonly deleteAgain?: (object: KubeObject) => void;
  /** Whether something besides metadata.finalizers keeps an object being deleted. */
  readonly holdsDeletion?: (object: KubeObject) => boolean;
  /**
   * The registry's ReturnDeletedObject: a DELETE that removes the object at once answers with
   * the object rather than a `Status` (namespaces, service accounts, pods, custom resources).
   */
  readonly returnsDeletedObject?: boolean;
  /** apimachinery's BannedOwners: no object may name one of this kind as its owner. */
  readonly bannedAsOwner?: boolean;
  /**
   * Its Table (`kubectl get`): the columns and cells of its printer in kube's
   * pkg/printers/internalversion (printers.ts). Without one, the type's printerColumns, else
   * the default convertor's Name and Created At.
   */
  readonly table?: TableColumns;
}

/** The type entry of a built-in kind: the defaults that hold unless the kind says otherwise. */
export function builtinType(
  group: string,
  version: string,
  kind: string,
  resource: string,
  options: Partial<
    Pick<ResourceType, 'namespaced' | 'shortNames' | 'hasStatus' | 'nameRule'> & {
      /** Served with the CRD table convertor (Name, then these); without, Name and Created At. */
      printerColumns: readonly PrinterColumn[];
    }
  > = {},
): ResourceType {
  return {
    group,
    version,
    kind,
    resource,
    singular: kind.toLowerCase(),
    listKind: `${kind}List`,
    namespaced: options.namespaced ?? true,
    shortNames: options.shortNames ?? [],
    categories: [],
    hasStatus: options.hasStatus ?? false,
    custom: false,
    nameRule: options.nameRule ?? 'subdomain',
    ...(options.printerColumns !== undefined ? { printerColumns: options.printerColumns } : {}),
  };
}
