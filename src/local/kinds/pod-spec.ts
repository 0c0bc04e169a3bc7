// What every kind holding a PodSpec shares (Pod, PodTemplate and the workloads' templates): its
// merge keys (k8s.io/api/core/v1/types.go's patchStrategy/patchMergeKey tags and listType
// markers), its defaults (pkg/apis/core/v1/defaults.go: SetDefaults_PodSpec, _Container,
// _Probe, _Volume, _SecretVolumeSource... as zz_generated.defaults.go calls them for a
// PodTemplateSpec) and the checks of pkg/apis/core/validation's ValidatePodTemplateSpec that
// clients meet first. No pod runs here: nothing else of a pod is acted on.
import {
  ATOMIC,
  byKey,
  byPortAndProtocol,
  type FieldType,
  MAP,
  SET,
  STRUCT,
} from '../patch/field-types.js';
import type { StatusCause } from '../types.js';
import { isJson, itemsOf, orDefault, required, struct } from './stored-kind.js';

type Json = Record<string, unknown>;

const CONTAINER: Record<string, FieldType> = {
  ports: byPortAndProtocol('containerPort'),
  env: byKey('name'),
  envFrom: ATOMIC,
  volumeMounts: byKey('mountPath'),
  volumeDevices: byKey('devicePath'),
  args: ATOMIC,
  command: ATOMIC,
  resizePolicy: ATOMIC,
  'resources.limits': MAP,
  'resources.requests': MAP,
  'resources.claims': byKey('name'),
};

/** A PodSpec's field types, at `prefix` (`spec`, `spec.template.spec`...). */
export function podSpecFieldTypes(prefix: string): Record<string, FieldType> {
  const out: Record<string, FieldType> = {
    [prefix]: STRUCT,
    [`${prefix}.containers`]: byKey('name'),
    [`${prefix}.initContainers`]: byKey('name'),
    [`${prefix}.ephemeralContainers`]: byKey('name'),
    [`${prefix}.volumes`]: byKey('name'),
    [`${prefix}.imagePullSecrets`]: byKey('name'),
    [`${prefix}.hostAliases`]: byKey('ip'),
    [`${prefix}.tolerations`]: ATOMIC,
    [`${prefix}.readinessGates`]: ATOMIC,
    [`${prefix}.topologySpreadConstraints`]: byKey('topologyKey', 'whenUnsatisfiable'),
    [`${prefix}.resourceClaims`]: byKey('name'),
    [`${prefix}.schedulingGates`]: byKey('name'),
    [`${prefix}.nodeSelector`]: MAP,
    [`${prefix}.overhead`]: MAP,
    [`${prefix}.securityContext.supplementalGroups`]: ATOMIC,
    [`${prefix}.securityContext.sysctls`]: ATOMIC,
    [`${prefix}.dnsConfig.nameservers`]: ATOMIC,
    [`${prefix}.dnsConfig.searches`]: ATOMIC,
    [`${prefix}.dnsConfig.options`]: ATOMIC,
  };
  for (const list of ['containers', 'initContainers']) {
    for (const [path, t] of Object.entries(CONTAINER)) out[`${prefix}.${list}[].${path}`] = t;
  }
  return out;
}

/** A PodTemplateSpec's, at `prefix` (`spec.template`): its metadata's maps, then the spec's. */
export function podTemplateFieldTypes(prefix: string): Record<string, FieldType> {
  return {
    [prefix]: STRUCT,
    [`${prefix}.metadata.labels`]: MAP,
    [`${prefix}.metadata.annotations`]: MAP,
    [`${prefix}.metadata.finalizers`]: SET,
    [`${prefix}.metadata.ownerReferences`]: byKey('uid'),
    ...podSpecFieldTypes(`${prefix}.spec`),
  };
}

/** A LabelSelector's, at `prefix`. */
export const selectorFieldTypes = (prefix: string): Record<string, FieldType> => ({
  [`${prefix}.matchLabels`]: MAP,
  [`${prefix}.matchExpressions`]: ATOMIC,
});

/** `status.conditions` merged by type (patchMergeKey:"type", listMapKey=type). */
export const CONDITIONS_BY_TYPE = byKey('type');

/** SetDefaults_PodSpec and what the generated defaulter calls below it. */
export function defaultPodSpec(spec: Json): void {
  orDefault(spec, 'dnsPolicy', 'ClusterFirst');
  orDefault(spec, 'restartPolicy', 'Always');
  if (!isJson(spec.securityContext)) spec.securityContext = {};
  orDefault(spec, 'terminationGracePeriodSeconds', 30);
  orDefault(spec, 'schedulerName', 'default-scheduler');
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const c of itemsOf(spec[list])) defaultContainer(c, spec.hostNetwork === true);
  }
  for (const v of itemsOf(spec.volumes)) defaultVolume(v);
}

/** SetDefaults_PodTemplateSpec's part: the template's spec. */
export function defaultPodTemplate(template: Json): void {
  defaultPodSpec(struct(template, 'spec'));
}

function defaultContainer(c: Json, hostNetwork: boolean): void {
  if (c.imagePullPolicy === undefined || c.imagePullPolicy === '') {
    c.imagePullPolicy =
      tagOf(typeof c.image === 'string' ? c.image : '') === 'latest' ? 'Always' : 'IfNotPresent';
  }
  orDefault(c, 'terminationMessagePath', '/dev/termination-log');
  orDefault(c, 'terminationMessagePolicy', 'File');
  for (const p of itemsOf(c.ports)) {
    orDefault(p, 'protocol', 'TCP');
    // defaultHostNetworkPorts: on the host's network the host port is the container's.
    if (hostNetwork && p.hostPort === undefined) p.hostPort = p.containerPort;
  }
  for (const e of itemsOf(c.env)) {
    const ref = isJson(e.valueFrom) ? e.valueFrom.fieldRef : undefined;
    if (isJson(ref)) orDefault(ref, 'apiVersion', 'v1');
  }
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    const p = c[probe];
    if (!isJson(p)) continue;
    orDefault(p, 'timeoutSeconds', 1);
    orDefault(p, 'periodSeconds', 10);
    orDefault(p, 'successThreshold', 1);
    orDefault(p, 'failureThreshold', 3);
    if (isJson(p.httpGet)) orDefault(p.httpGet, 'scheme', 'HTTP');
  }
}

/**
 * parseImageName's tag: what follows the last `:` after the last `/`, none with a digest. No
 * tag reads as `latest` (IfNotPresent only for a named tag or a digest).
 */
function tagOf(image: string): string {
  if (image.includes('@')) return '';
  const last = image.slice(image.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  return colon < 0 ? 'latest' : last.slice(colon + 1);
}

function defaultVolume(v: Json): void {
  const sources = Object.keys(v).filter((k) => k !== 'name');
  if (sources.length === 0) v.emptyDir = {};
  for (const key of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const source = v[key];
    // SecretVolumeSourceDefaultMode and the others: 0644.
    if (isJson(source)) orDefault(source, 'defaultMode', 420);
  }
}

/** ValidatePodTemplateSpec's first checks: containers, their names and images. */
export function podTemplateCauses(template: unknown, at: string): StatusCause[] {
  const spec = isJson(template) && isJson(template.spec) ? template.spec : {};
  return podSpecCauses(spec, `${at}.spec`);
}

/** ValidatePodSpec's: at least one container, each with a name and an image. */
export function podSpecCauses(spec: Json, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const containers = itemsOf(spec.containers);
  if (containers.length === 0) causes.push(required(`${at}.containers`));
  containers.forEach((c, i) => {
    if (typeof c.name !== 'string' || c.name === '')
      causes.push(required(`${at}.containers[${i}].name`));
    if (typeof c.image !== 'string' || c.image === '')
      causes.push(required(`${at}.containers[${i}].image`));
  });
  return causes;
}
