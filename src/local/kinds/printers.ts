// The Tables of built-in kinds, as kube-apiserver's printers make them for `kubectl get`
// (pkg/printers/internalversion/printers.go, AddHandlers and print<Kind>): each kind's column
// definitions, names, types, descriptions and priorities as there, and its cells computed from
// the object as there. The server always prints wide (pkg/printers/storage/storage.go's
// TableConvertor passes GenerateOptions{Wide: true}), so a row carries the priority-1 cells too
// and kubectl leaves them out unless `-o wide`. A kind without a printer there (LimitRange,
// CustomResourceDefinition) keeps the default convertor (table.ts' BUILTIN_TABLE_COLUMNS).
import {
  ageSince,
  CREATION_TIMESTAMP_DESCRIPTION,
  isZeroTime,
  NAME_DESCRIPTION,
  type TableColumnDefinition,
  type TableColumns,
} from '../table.js';
import type { KubeObject } from '../types.js';
import { toCoreEvent } from './event-conversion.js';

// Descriptions the printers take from SwaggerDoc() of the Go types (types_swagger_doc_generated.go
// of k8s.io/api core/v1 and coordination/v1), word for word.
const CONFIG_MAP_DATA =
  "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.";
const SECRET_TYPE =
  'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types';
const SECRET_DATA =
  "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";
const SERVICE_ACCOUNT_SECRETS =
  'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". The "kubernetes.io/enforce-mountable-secrets" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret';
const LEASE_HOLDER =
  'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.';
const EVENT_DOCS = {
  lastTimestamp: 'The time at which the most recent occurrence of this event was recorded.',
  type: 'Type of this event (Normal, Warning), new types could be added in the future',
  reason:
    "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
  involvedObject: 'The object that this event is about.',
  fieldPath:
    'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
  source: 'The component reporting this event. Should be a short machine understandable string.',
  message: 'A human-readable description of the status of this operation.',
  firstTimestamp:
    'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
  count: 'The number of times this event has occurred.',
};

function column(
  name: string,
  description: string,
  options: { format?: string; priority?: number } = {},
): TableColumnDefinition {
  return {
    name,
    type: 'string',
    format: options.format ?? '',
    description,
    priority: options.priority ?? 0,
  };
}

const POD_IP =
  'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.';
const NODE_NAME =
  'NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName.';
const NOMINATED_NODE_NAME =
  'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.';
const READINESS_GATES =
  'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True"';

const NAME = column('Name', NAME_DESCRIPTION, { format: 'name' });
const AGE = column('Age', CREATION_TIMESTAMP_DESCRIPTION);

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
/** `len()` of a Go map or slice: what a missing or null field has is zero. */
const size = (value: unknown): number =>
  Array.isArray(value)
    ? value.length
    : typeof value === 'object' && value !== null
      ? Object.keys(value).length
      : 0;
const nameOf = (o: KubeObject) => o.metadata.name ?? '';
const age = (o: KubeObject, now: Date) => ageSince(o.metadata.creationTimestamp, now);

const printer = (
  definitions: TableColumnDefinition[],
  cells: (object: KubeObject, now: Date) => unknown[],
): TableColumns => ({ definitions, cells });

/** printConfigMap: its Data cell counts binaryData's keys too. */
export const CONFIG_MAP_TABLE = printer([NAME, column('Data', CONFIG_MAP_DATA), AGE], (o, now) => [
  nameOf(o),
  size(o.data) + size(o.binaryData),
  age(o, now),
]);

/**
 * printPod, as far as a pod that never runs goes: no container is ready or restarted, its
 * status is its phase (or reason), Terminating once deleted.
 */
export const POD_TABLE = printer(
  [
    NAME,
    column('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'The aggregate status of the containers in this pod.'),
    column(
      'Restarts',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    AGE,
    column('IP', POD_IP, { priority: 1 }),
    column('Node', NODE_NAME, { priority: 1 }),
    column('Nominated Node', NOMINATED_NODE_NAME, { priority: 1 }),
    column('Readiness Gates', READINESS_GATES, { priority: 1 }),
  ],
  (o, now) => {
    const spec = record(o.spec);
    const status = record(o.status);
    const statuses = Array.isArray(status.containerStatuses) ? status.containerStatuses : [];
    const ready = statuses.filter((s) => record(s).ready === true).length;
    const restarts = statuses.reduce<number>((n, s) => n + Number(record(s).restartCount ?? 0), 0);
    const reason =
      o.metadata.deletionTimestamp !== undefined
        ? 'Terminating'
        : text(status.reason) || text(status.phase);
    const gates = Array.isArray(spec.readinessGates) ? spec.readinessGates.length : 0;
    return [
      nameOf(o),
      `${ready}/${size(spec.containers)}`,
      reason,
      String(restarts),
      age(o, now),
      text(status.podIP) || '<none>',
      text(spec.nodeName) || '<none>',
      text(status.nominatedNodeName) || '<none>',
      gates === 0 ? '<none>' : `0/${gates}`,
    ];
  },
);

export const SECRET_TABLE = printer(
  [NAME, column('Type', SECRET_TYPE), column('Data', SECRET_DATA), AGE],
  (o, now) => [nameOf(o), text(o.type), size(o.data), age(o, now)],
);

export const NAMESPACE_TABLE = printer(
  [NAME, column('Status', 'The status of the namespace'), AGE],
  (o, now) => [nameOf(o), text(record(o.status).phase), age(o, now)],
);

export const SERVICE_ACCOUNT_TABLE = printer(
  [NAME, column('Secrets', SERVICE_ACCOUNT_SECRETS), AGE],
  (o, now) => [nameOf(o), size(o.secrets), age(o, now)],
);

export const LEASE_TABLE = printer([NAME, column('Holder', LEASE_HOLDER), AGE], (o, now) => [
  nameOf(o),
  text(record(o.spec).holderIdentity),
  age(o, now),
]);

/**
 * printScale, for a GET of a scale subresource (scale.ts): its Name column has no `name` format,
 * and Desired and Available are integers (scaleColumnDefinitions).
 */
export const SCALE_TABLE = printer(
  [
    column('Name', NAME_DESCRIPTION),
    {
      ...column('Desired', 'replicas is the desired number of instances for the scaled object.'),
      type: 'integer',
    },
    {
      ...column(
        'Available',
        'replicas is the actual number of observed instances of the scaled object.',
      ),
      type: 'integer',
    },
    AGE,
  ],
  (o, now) => [
    nameOf(o),
    record(o.spec).replicas ?? 0,
    record(o.status).replicas ?? 0,
    age(o, now),
  ],
);

/**
 * printResourceQuota: each resource of status.hard, in name order, as `name: used/hard`, in
 * Limit when its name begins with `limits.`, otherwise in Request. A resource without a used
 * value is used 0. The quantities are printed as stored, where the server prints them in
 * canonical form (Quantity.String); they are the same for quantities written canonically.
 */
export const RESOURCE_QUOTA_TABLE = printer(
  [
    NAME,
    column(
      'Request',
      'Request represents a minimum amount of cpu/memory that a container may consume.',
    ),
    column(
      'Limit',
      'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.',
    ),
    AGE,
  ],
  (o, now) => {
    const status = record(o.status);
    const hard = record(status.hard);
    const used = record(status.used);
    const request: string[] = [];
    const limit: string[] = [];
    // Go sorts the names by bytes; for the ASCII names resources have, so does sort().
    for (const resource of Object.keys(hard).sort()) {
      const pieces = resource.split('.');
      const into = pieces.length > 1 && pieces[0] === 'limits' ? limit : request;
      into.push(`${resource}: ${quantity(used[resource])}/${quantity(hard[resource])}`);
    }
    return [nameOf(o), request.join(', '), limit.join(', '), age(o, now)];
  },
);

/** A Quantity as the printer writes it; the zero Quantity (a missing one) is `0`. */
function quantity(value: unknown): string {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value !== '' ? value : '0';
}

const EVENT_COLUMNS: TableColumnDefinition[] = [
  column('Last Seen', EVENT_DOCS.lastTimestamp),
  column('Type', EVENT_DOCS.type),
  column('Reason', EVENT_DOCS.reason),
  column('Object', EVENT_DOCS.involvedObject),
  column('Subobject', EVENT_DOCS.fieldPath, { priority: 1 }),
  column('Source', EVENT_DOCS.source, { priority: 1 }),
  column('Message', EVENT_DOCS.message),
  column('First Seen', EVENT_DOCS.firstTimestamp, { priority: 1 }),
  column('Count', EVENT_DOCS.count, { priority: 1 }),
  column('Name', NAME_DESCRIPTION, { format: 'name', priority: 1 }),
];

/** printEvent, wide, of a core/v1 Event. */
function eventCells(o: KubeObject, now: Date): unknown[] {
  let first = ageSince(o.firstTimestamp, now);
  if (isZeroTime(o.firstTimestamp)) first = ageSince(o.eventTime, now);
  let last = isZeroTime(o.lastTimestamp) ? first : ageSince(o.lastTimestamp, now);
  let count = typeof o.count === 'number' ? o.count : 0;
  const series = o.series;
  if (typeof series === 'object' && series !== null) {
    const s = record(series);
    last = ageSince(s.lastObservedTime, now);
    count = typeof s.count === 'number' ? s.count : 0;
  } else if (count === 0) {
    // Singleton events don't have a count set in the new API.
    count = 1;
  }
  const involved = record(o.involvedObject);
  const kind = text(involved.kind).toLowerCase();
  const name = text(involved.name);
  const source = record(o.source);
  const component = text(source.component) || text(o.reportingComponent);
  const instance = text(source.host) || text(o.reportingInstance);
  return [
    last,
    text(o.type),
    text(o.reason),
    name.length > 0 ? `${kind}/${name}` : kind,
    text(involved.fieldPath),
    instance.length === 0 ? component : `${component}, ${instance}`,
    text(o.message).trim(),
    first,
    count,
    nameOf(o),
  ];
}

export const EVENT_TABLE = printer(EVENT_COLUMNS, eventCells);

/**
 * events.k8s.io/v1 Events are printed by the same printer, from the core Event they are stored
 * as (pkg/registry/events/rest serves core's event storage, TableConvertor and all).
 */
export const EVENTS_V1_EVENT_TABLE = printer(EVENT_COLUMNS, (o, now) =>
  eventCells(toCoreEvent(o), now),
);
