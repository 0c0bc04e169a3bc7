// Pod (core/v1): stored with its official schema and defaulted as SetDefaults_Pod and
// SetDefaults_PodSpec; its status starts Pending (PrepareForCreate). No scheduler or kubelet
// runs here: a pod is never bound, never runs, and is deleted at once (unscheduled pods skip
// graceful deletion in kube-apiserver too).
import { ATOMIC, byKey, STRUCT } from '../patch/field-types.js';
import { MessageSpec, objectMeta, one } from '../protobuf-messages.js';
import { podSpec } from '../protobuf-pod.js';
import { podQosClass } from './pod-qos.js';
import { defaultPodSpec, podSpecCauses, podSpecFieldTypes } from './pod-spec.js';
import { POD_TABLE } from './printers.js';
import { isJson, itemsOf, orDefault, refuse, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = {
  ...podSpecFieldTypes('spec'),
  status: STRUCT,
  'status.conditions': byKey('type'),
  'status.podIPs': byKey('ip'),
  'status.hostIPs': byKey('ip'),
  'status.containerStatuses': ATOMIC,
  'status.initContainerStatuses': ATOMIC,
};

const type = withSchema(
  {
    ...builtinType('', 'v1', 'Pod', 'pods', { shortNames: ['po'], hasStatus: true }),
    categories: ['all'],
  },
  fieldTypes,
);

/**
 * Its generated.proto message (k8s.io/api/core/v1): metadata and spec. A pod's status (3) is the
 * kubelet's to write, never a client's create: it is not described, and is skipped.
 */
const podMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, one('spec', podSpec)],
]);

export const podStrategy: KindStrategy = {
  type,
  fieldTypes,
  protobuf: podMessage,
  selectableFields: {
    'spec.nodeName': (o) => String((o.spec as { nodeName?: string } | undefined)?.nodeName ?? ''),
    'spec.restartPolicy': (o) =>
      String((o.spec as { restartPolicy?: string })?.restartPolicy ?? ''),
    'spec.schedulerName': (o) =>
      String((o.spec as { schedulerName?: string })?.schedulerName ?? ''),
    'spec.serviceAccountName': (o) =>
      String((o.spec as { serviceAccountName?: string })?.serviceAccountName ?? ''),
    'status.phase': (o) => String((o.status as { phase?: string } | undefined)?.phase ?? ''),
    'status.podIP': (o) => String((o.status as { podIP?: string } | undefined)?.podIP ?? ''),
  },
  prepare(object, old) {
    const spec = struct(object, 'spec');
    defaultPodSpec(spec);
    orDefault(spec, 'enableServiceLinks', true);
    // SetDefaults_Pod: requests default to limits.
    for (const c of [...itemsOf(spec.containers), ...itemsOf(spec.initContainers)]) {
      const resources = isJson(c.resources) ? c.resources : undefined;
      if (resources === undefined || !isJson(resources.limits)) continue;
      const requests = struct(resources, 'requests');
      for (const [k, v] of Object.entries(resources.limits)) if (!(k in requests)) requests[k] = v;
    }
    if (old === undefined) object.status = { phase: 'Pending', qosClass: podQosClass(spec) };
    refuse(type, object, podSpecCauses(spec, 'spec'));
  },
  returnsDeletedObject: true,
  table: POD_TABLE,
};
