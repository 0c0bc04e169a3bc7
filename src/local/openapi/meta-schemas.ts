// The schemas every kind's document shares: TypeMeta's two fields, ObjectMeta and what it refers
// to, ListMeta, Status, DeleteOptions and Patch, named as kube-apiserver names them
// (io.k8s.apimachinery.pkg.apis.meta.v1.*) so that `$ref`s in a custom resource's schema, in
// list kinds and in operations resolve as clients expect. The field names, types and list and
// patch markers are apimachinery's (staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go);
// the descriptions are short ones of ours.

export type OpenApiVersion = 'v2' | 'v3';
type Schema = Record<string, unknown>;

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
export const OBJECT_META = `${META}.ObjectMeta`;
export const LIST_META = `${META}.ListMeta`;
export const STATUS = `${META}.Status`;
export const DELETE_OPTIONS = `${META}.DeleteOptions`;
export const PATCH = `${META}.Patch`;
const TIME = `${META}.Time`;
const FIELDS_V1 = `${META}.FieldsV1`;
const MANAGED_FIELDS_ENTRY = `${META}.ManagedFieldsEntry`;
const OWNER_REFERENCE = `${META}.OwnerReference`;
const STATUS_DETAILS = `${META}.StatusDetails`;
const STATUS_CAUSE = `${META}.StatusCause`;
const PRECONDITIONS = `${META}.Preconditions`;

/** Where a definition is in a document of this version. */
export const refTo = (version: OpenApiVersion, name: string): string =>
  version === 'v2' ? `#/definitions/${name}` : `#/components/schemas/${name}`;

/**
 * A field that is another definition. OpenAPI 3.0 ignores the siblings of a `$ref`, so v3 wraps
 * it in `allOf` (as kube-openapi's v3 definitions do); Swagger 2.0 documents keep them side by side.
 */
export function refField(version: OpenApiVersion, name: string, description: string): Schema {
  return version === 'v2'
    ? { $ref: refTo(version, name), description }
    : { allOf: [{ $ref: refTo(version, name) }], description };
}

const str = (description: string): Schema => ({ type: 'string', description });
const int = (format: 'int32' | 'int64', description: string): Schema => ({
  type: 'integer',
  format,
  description,
});
const bool = (description: string): Schema => ({ type: 'boolean', description });
const stringMap = (description: string): Schema => ({
  type: 'object',
  additionalProperties: { type: 'string', default: '' },
  description,
});
const stringList = (description: string, extra: Schema = {}): Schema => ({
  type: 'array',
  items: { type: 'string', default: '' },
  description,
  ...extra,
});

const API_VERSION =
  'APIVersion: the versioned schema of this representation of an object, as group/version (v1 for the core group).';
const KIND = 'Kind: the REST resource this object represents, in CamelCase. Cannot be updated.';

/** `apiVersion` and `kind` as a kind's schema lists them (TypeMeta's fields). */
export const TYPE_META_PROPERTIES: Readonly<Record<'apiVersion' | 'kind', Schema>> = {
  apiVersion: str(API_VERSION),
  kind: str(KIND),
};

/** The description of a kind's `metadata` field. */
export const METADATA_DESCRIPTION = "Standard object's metadata.";

/** Every shared definition, by name, as a document of this version writes it. */
export function metaDefinitions(version: OpenApiVersion): Record<string, Schema> {
  const ref = (name: string, description: string) => refField(version, name, description);
  const refList = (name: string, description: string, extra: Schema = {}): Schema => ({
    type: 'array',
    items: { $ref: refTo(version, name) },
    description,
    ...extra,
  });
  return {
    [OBJECT_META]: {
      description:
        'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
      type: 'object',
      properties: {
        annotations: stringMap(
          'Annotations: unstructured key/value data set by external tools, not queryable.',
        ),
        creationTimestamp: ref(TIME, 'When this object was created; set by the server, read-only.'),
        deletionGracePeriodSeconds: int(
          'int64',
          'Seconds allowed for this object to terminate gracefully; set with deletionTimestamp, read-only.',
        ),
        deletionTimestamp: ref(
          TIME,
          'When this object will be deleted; set by the server when a graceful deletion is requested, read-only.',
        ),
        finalizers: stringList(
          'Finalizers: what must be done before this object is removed from the registry. Each entry is an identifier of the component responsible for removing it.',
          { 'x-kubernetes-list-type': 'set', 'x-kubernetes-patch-strategy': 'merge' },
        ),
        generateName: str(
          'GenerateName: a prefix the server uses to generate a unique name when name is not provided.',
        ),
        generation: int(
          'int64',
          'A sequence number representing a specific generation of the desired state; set by the server, read-only.',
        ),
        labels: stringMap(
          'Labels: string keys and values used to organize and select objects (by label selectors).',
        ),
        managedFields: refList(
          MANAGED_FIELDS_ENTRY,
          'ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow. Mostly for internal housekeeping.',
          { 'x-kubernetes-list-type': 'atomic' },
        ),
        name: str(
          'Name must be unique within a namespace. Required when creating resources, although some resources may allow a client to request the generation of a name. Cannot be updated.',
        ),
        namespace: str(
          'Namespace defines the space within which each name must be unique. Empty for cluster-scoped objects. Cannot be updated.',
        ),
        ownerReferences: refList(
          OWNER_REFERENCE,
          'The objects this object depends on; when all of them are deleted, this object is garbage collected. At most one may be a controller.',
          {
            'x-kubernetes-list-map-keys': ['uid'],
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-patch-merge-key': 'uid',
            'x-kubernetes-patch-strategy': 'merge',
          },
        ),
        resourceVersion: str(
          'An opaque value that represents the internal version of this object, for optimistic concurrency, change detection and watches. Read-only.',
        ),
        selfLink: str('Deprecated: selfLink is a legacy read-only field that is no longer set.'),
        uid: str(
          'UID is the unique in time and space value for this object, set by the server. Read-only.',
        ),
      },
    },
    [TIME]: {
      description:
        'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON (RFC 3339, to the second).',
      type: 'string',
      format: 'date-time',
    },
    [FIELDS_V1]: {
      description:
        'FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.',
      type: 'object',
    },
    [MANAGED_FIELDS_ENTRY]: {
      description:
        'ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.',
      type: 'object',
      properties: {
        apiVersion: str('The version of this resource that this field set applies to.'),
        fieldsType: str('The discriminator for the different fields format and version: FieldsV1.'),
        fieldsV1: ref(
          FIELDS_V1,
          'The first JSON version format, as described in the FieldsV1 type.',
        ),
        manager: str('The identifier of the workflow managing these fields.'),
        operation: str('The type of operation which lead to this entry: Apply or Update.'),
        subresource: str('The name of the subresource used to update that object, or empty.'),
        time: ref(TIME, 'When the last change was made to these fields by this manager.'),
      },
    },
    [OWNER_REFERENCE]: {
      description:
        'OwnerReference contains enough information to let you identify an owning object. An owning object must be in the same namespace as the dependent, or be cluster-scoped.',
      type: 'object',
      required: ['apiVersion', 'kind', 'name', 'uid'],
      properties: {
        apiVersion: str('API version of the referent.'),
        blockOwnerDeletion: bool(
          'If true, and the owner has the "foregroundDeletion" finalizer, the owner cannot be deleted from the key-value store until this reference is removed.',
        ),
        controller: bool('If true, this reference points to the managing controller.'),
        kind: str('Kind of the referent.'),
        name: str('Name of the referent.'),
        uid: str('UID of the referent.'),
      },
      'x-kubernetes-map-type': 'atomic',
    },
    [LIST_META]: {
      description:
        'ListMeta describes metadata that synthetic resources must have, including lists and various status objects.',
      type: 'object',
      properties: {
        continue: str(
          'Set when the list was truncated by a limit: the value to send to get the next page.',
        ),
        remainingItemCount: int(
          'int64',
          'The number of subsequent items in the list which are not included in this list response, when known.',
        ),
        resourceVersion: str(
          "The server's internal version of this list, for change detection and watches. Read-only.",
        ),
        selfLink: str('Deprecated: selfLink is a legacy read-only field that is no longer set.'),
      },
    },
    [STATUS]: {
      description: 'Status is a return value for calls that do not return other objects.',
      type: 'object',
      properties: {
        apiVersion: str(API_VERSION),
        code: int('int32', 'Suggested HTTP return code for this status, 0 if not set.'),
        details: ref(
          STATUS_DETAILS,
          'Extended data associated with the reason; its fields depend on the reason.',
        ),
        kind: str(KIND),
        message: str('A human-readable description of the status of this operation.'),
        metadata: ref(LIST_META, 'Standard list metadata.'),
        reason: str(
          'A machine-readable description of why this operation is in the "Failure" status.',
        ),
        status: str('Status of the operation: "Success" or "Failure".'),
      },
      'x-kubernetes-group-version-kind': [{ group: '', kind: 'Status', version: 'v1' }],
    },
    [STATUS_DETAILS]: {
      description:
        'StatusDetails is a set of additional properties that may be set by the server to provide additional information about a response.',
      type: 'object',
      properties: {
        causes: refList(STATUS_CAUSE, 'The causes of a StatusReason error.', {
          'x-kubernetes-list-type': 'atomic',
        }),
        group: str('The group attribute of the resource associated with the status StatusReason.'),
        kind: str('The kind attribute of the resource associated with the status StatusReason.'),
        name: str('The name attribute of the resource associated with the status StatusReason.'),
        retryAfterSeconds: int(
          'int32',
          'The number of seconds before the client should retry, if set.',
        ),
        uid: str('UID of the resource, when there is a single resource which can be described.'),
      },
    },
    [STATUS_CAUSE]: {
      description:
        'StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.',
      type: 'object',
      properties: {
        field: str(
          'The field of the resource that has caused this error, as named by its JSON serialization.',
        ),
        message: str('A human-readable description of the cause of the error.'),
        reason: str('A machine-readable description of the cause of the error.'),
      },
    },
    [DELETE_OPTIONS]: {
      description: 'DeleteOptions may be provided when deleting an API object.',
      type: 'object',
      properties: {
        apiVersion: str(API_VERSION),
        dryRun: stringList('When present, modifications are not persisted. Valid value: All.', {
          'x-kubernetes-list-type': 'atomic',
        }),
        gracePeriodSeconds: int(
          'int64',
          'The duration in seconds before the object should be deleted.',
        ),
        ignoreStoreReadErrorWithClusterBreakingPotential: bool(
          'If set, the store deletes an object it cannot read (corrupt). Use with care.',
        ),
        kind: str(KIND),
        orphanDependents: bool(
          'Deprecated: use propagationPolicy. Whether the dependent objects should be orphaned.',
        ),
        preconditions: ref(PRECONDITIONS, 'Must be fulfilled before a deletion is carried out.'),
        propagationPolicy: str(
          "Whether and how garbage collection is performed: 'Orphan', 'Background' or 'Foreground'.",
        ),
      },
    },
    [PRECONDITIONS]: {
      description:
        'Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.',
      type: 'object',
      properties: {
        resourceVersion: str('Specifies the target ResourceVersion.'),
        uid: str('Specifies the target UID.'),
      },
    },
    [PATCH]: {
      description:
        'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
      type: 'object',
    },
  };
}
