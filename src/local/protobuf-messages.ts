// The protobuf messages of the Kubernetes API types, described by field number: the vocabulary a
// kind's strategy (kinds/) writes its own message in, and the messages of meta/v1 and core/v1
// that many kinds share. protobuf.ts decodes a body with them.

/*
 * Field numbers come from the generated.proto files of kubernetes/kubernetes:
 *   staging/src/k8s.io/apimachinery/pkg/runtime/generated.proto        (Unknown, TypeMeta)
 *   staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto   (ObjectMeta, OwnerReference,
 *                                                  ManagedFieldsEntry, FieldsV1, Time, MicroTime)
 *   staging/src/k8s.io/apimachinery/pkg/api/resource/generated.proto   (Quantity)
 *   staging/src/k8s.io/apimachinery/pkg/util/intstr/generated.proto    (IntOrString)
 *   staging/src/k8s.io/api/core/v1/generated.proto                     (the core/v1 kinds: kinds/)
 *   staging/src/k8s.io/api/coordination/v1/generated.proto            (Lease: kinds/lease.ts)
 *
 * Go's protobuf code writes every non-pointer field, zero or not (kubectl sends `generateName: ""`,
 * `generation: 0`), while Go's JSON drops zero values of `omitempty` fields. To produce the JSON
 * kubectl would have sent, a present zero scalar is dropped unless the Go field is a pointer or has
 * no `omitempty` (`keepZero`); an absent field is always left out; a present message is kept even
 * when empty (`spec: {}`), as Go's JSON never omits a struct value.
 */

export type Scalar =
  | 'string'
  | 'bytes'
  | 'bool'
  | 'int32'
  | 'int64'
  | 'time'
  | 'microTime'
  | 'quantity'
  | 'fieldsV1'
  /** IntOrString{type=1, intVal=2, strVal=3}: a JSON number or string, as its MarshalJSON writes. */
  | 'intOrString';

export interface FieldSpec {
  readonly name: string;
  readonly type: Scalar | MessageSpec;
  /**
   * `one` is a plain field, `list` a repeated one, `map` a map<string, type>; `inline` is an
   * embedded Go struct (`json:",inline"`: Volume's VolumeSource, Probe's ProbeHandler), a message
   * of its own in protobuf whose fields JSON writes into the parent's.
   */
  readonly shape: 'one' | 'list' | 'map' | 'inline';
  readonly keepZero: boolean;
}

export class MessageSpec {
  readonly byNumber: ReadonlyMap<number, FieldSpec>;
  /** Go struct order, so the JSON reads as Go would write it. */
  readonly order: readonly FieldSpec[];

  constructor(fields: readonly (readonly [number, FieldSpec])[]) {
    this.byNumber = new Map(fields);
    this.order = fields.map(([, field]) => field);
  }
}

export const one = (name: string, type: Scalar | MessageSpec, keepZero = false): FieldSpec => ({
  name,
  type,
  shape: 'one',
  keepZero,
});
export const list = (name: string, type: Scalar | MessageSpec): FieldSpec => ({
  name,
  type,
  shape: 'list',
  keepZero: false,
});
/** An embedded struct's message, its fields written into the parent's (see FieldSpec.shape). */
export const inline = (name: string, type: MessageSpec): FieldSpec => ({
  name,
  type,
  shape: 'inline',
  keepZero: false,
});
export const map = (name: string, type: Scalar): FieldSpec => ({
  name,
  type,
  shape: 'map',
  keepZero: false,
});

// meta/v1

const ownerReference = new MessageSpec([
  [5, one('apiVersion', 'string', true)],
  [1, one('kind', 'string', true)],
  [3, one('name', 'string', true)],
  [4, one('uid', 'string', true)],
  [6, one('controller', 'bool', true)],
  [7, one('blockOwnerDeletion', 'bool', true)],
]);

const managedFieldsEntry = new MessageSpec([
  [1, one('manager', 'string')],
  [2, one('operation', 'string')],
  [3, one('apiVersion', 'string')],
  [4, one('time', 'time')],
  [6, one('fieldsType', 'string')],
  [7, one('fieldsV1', 'fieldsV1')],
  [8, one('subresource', 'string')],
]);

export const objectMeta = new MessageSpec([
  [1, one('name', 'string')],
  [2, one('generateName', 'string')],
  [3, one('namespace', 'string')],
  [4, one('selfLink', 'string')],
  [5, one('uid', 'string')],
  [6, one('resourceVersion', 'string')],
  [7, one('generation', 'int64')],
  [8, one('creationTimestamp', 'time')],
  [9, one('deletionTimestamp', 'time')],
  [10, one('deletionGracePeriodSeconds', 'int64', true)],
  [11, map('labels', 'string')],
  [12, map('annotations', 'string')],
  [13, list('ownerReferences', ownerReference)],
  [14, list('finalizers', 'string')],
  [17, list('managedFields', managedFieldsEntry)],
]);

/** LabelSelector{matchLabels=1, matchExpressions=2}; a requirement is {key=1, operator=2, values=3}. */
export const labelSelector = new MessageSpec([
  [1, map('matchLabels', 'string')],
  [
    2,
    list(
      'matchExpressions',
      new MessageSpec([
        [1, one('key', 'string', true)],
        [2, one('operator', 'string', true)],
        [3, list('values', 'string')],
      ]),
    ),
  ],
]);

/** metav1.Condition, whose fields but observedGeneration JSON always writes. */
export const metaCondition = new MessageSpec([
  [1, one('type', 'string', true)],
  [2, one('status', 'string', true)],
  [3, one('observedGeneration', 'int64')],
  [4, one('lastTransitionTime', 'time', true)],
  [5, one('reason', 'string', true)],
  [6, one('message', 'string', true)],
]);

// core/v1

export const objectReference = new MessageSpec([
  [1, one('kind', 'string')],
  [2, one('namespace', 'string')],
  [3, one('name', 'string')],
  [4, one('uid', 'string')],
  [5, one('apiVersion', 'string')],
  [6, one('resourceVersion', 'string')],
  [7, one('fieldPath', 'string')],
]);

export const localObjectReference = new MessageSpec([[1, one('name', 'string')]]);

export const typedLocalObjectReference = new MessageSpec([
  [1, one('apiGroup', 'string', true)],
  [2, one('kind', 'string', true)],
  [3, one('name', 'string', true)],
]);
