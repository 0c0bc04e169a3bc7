// The protobuf messages of a pod's description in core/v1 (PodTemplateSpec, PodSpec, Container
// and what they hold, PersistentVolumeClaim for StatefulSets' claim templates), in the vocabulary
// of protobuf-messages.ts: what every workload kind's message (kinds/) embeds, so that kubectl's
// protobuf bodies of Deployments, Jobs, CronJobs... decode whole.

/*
 * Field numbers are those of staging/src/k8s.io/api/core/v1/generated.proto in kubernetes/
 * kubernetes, field by field, in the Go struct's order (which is also the order Go's JSON
 * writes). `keepZero` (the third argument of `one`) is set where the Go field is a pointer or
 * has no `omitempty`, so that a zero kubectl set is kept as Go's JSON would keep it.
 *
 * Volume sources: the in-tree cloud and network drivers that kube deprecated and no kubectl
 * generator fills (awsElasticBlockStore, azureDisk, azureFile, cephfs, cinder, fc, flexVolume,
 * flocker, gcePersistentDisk, glusterfs, iscsi, photonPersistentDisk, portworxVolume, quobyte,
 * rbd, scaleIO, storageos, vsphereVolume) are not described: their fields are skipped as unknown
 * ones. Every other volume source is.
 */
import {
  inline,
  labelSelector,
  list,
  localObjectReference,
  MessageSpec,
  map,
  objectMeta,
  one,
  typedLocalObjectReference,
} from './protobuf-messages.js';

const objectFieldSelector = new MessageSpec([
  [1, one('apiVersion', 'string')],
  [2, one('fieldPath', 'string', true)],
]);

const resourceFieldSelector = new MessageSpec([
  [1, one('containerName', 'string')],
  [2, one('resource', 'string', true)],
  [3, one('divisor', 'quantity')],
]);

/** ConfigMapKeySelector and SecretKeySelector: {LocalObjectReference inline=1, key=2, optional=3}. */
const keySelector = new MessageSpec([
  [1, inline('localObjectReference', localObjectReference)],
  [2, one('key', 'string', true)],
  [3, one('optional', 'bool', true)],
]);

const envVar = new MessageSpec([
  [1, one('name', 'string', true)],
  [2, one('value', 'string')],
  [
    3,
    one(
      'valueFrom',
      new MessageSpec([
        [1, one('fieldRef', objectFieldSelector)],
        [2, one('resourceFieldRef', resourceFieldSelector)],
        [3, one('configMapKeyRef', keySelector)],
        [4, one('secretKeyRef', keySelector)],
        [
          5,
          one(
            'fileKeyRef',
            new MessageSpec([
              [1, one('volumeName', 'string', true)],
              [2, one('path', 'string', true)],
              [3, one('key', 'string', true)],
              [4, one('optional', 'bool', true)],
            ]),
          ),
        ],
      ]),
    ),
  ],
]);

/** ConfigMapEnvSource and SecretEnvSource: {LocalObjectReference inline=1, optional=2}. */
const envSource = new MessageSpec([
  [1, inline('localObjectReference', localObjectReference)],
  [2, one('optional', 'bool', true)],
]);

const envFromSource = new MessageSpec([
  [1, one('prefix', 'string')],
  [2, one('configMapRef', envSource)],
  [3, one('secretRef', envSource)],
]);

export const resourceRequirements = new MessageSpec([
  [1, map('limits', 'quantity')],
  [2, map('requests', 'quantity')],
  [
    3,
    list(
      'claims',
      new MessageSpec([
        [1, one('name', 'string', true)],
        [2, one('request', 'string')],
      ]),
    ),
  ],
]);

const containerPort = new MessageSpec([
  [1, one('name', 'string')],
  [2, one('hostPort', 'int32')],
  [3, one('containerPort', 'int32', true)],
  [4, one('protocol', 'string')],
  [5, one('hostIP', 'string')],
]);

const execAction = new MessageSpec([[1, list('command', 'string')]]);

const httpGetAction = new MessageSpec([
  [1, one('path', 'string')],
  [2, one('port', 'intOrString', true)],
  [3, one('host', 'string')],
  [4, one('scheme', 'string')],
  [
    5,
    list(
      'httpHeaders',
      new MessageSpec([
        [1, one('name', 'string', true)],
        [2, one('value', 'string', true)],
      ]),
    ),
  ],
]);

const tcpSocketAction = new MessageSpec([
  [1, one('port', 'intOrString', true)],
  [2, one('host', 'string')],
]);

const probe = new MessageSpec([
  [
    1,
    inline(
      'handler',
      new MessageSpec([
        [1, one('exec', execAction)],
        [2, one('httpGet', httpGetAction)],
        [3, one('tcpSocket', tcpSocketAction)],
        [
          4,
          one(
            'grpc',
            new MessageSpec([
              [1, one('port', 'int32', true)],
              [2, one('service', 'string', true)],
            ]),
          ),
        ],
      ]),
    ),
  ],
  [2, one('initialDelaySeconds', 'int32')],
  [3, one('timeoutSeconds', 'int32')],
  [4, one('periodSeconds', 'int32')],
  [5, one('successThreshold', 'int32')],
  [6, one('failureThreshold', 'int32')],
  [7, one('terminationGracePeriodSeconds', 'int64', true)],
]);

const lifecycleHandler = new MessageSpec([
  [1, one('exec', execAction)],
  [2, one('httpGet', httpGetAction)],
  [3, one('tcpSocket', tcpSocketAction)],
  [4, one('sleep', new MessageSpec([[1, one('seconds', 'int64', true)]]))],
]);

const seLinuxOptions = new MessageSpec([
  [1, one('user', 'string')],
  [2, one('role', 'string')],
  [3, one('type', 'string')],
  [4, one('level', 'string')],
]);

const windowsOptions = new MessageSpec([
  [1, one('gmsaCredentialSpecName', 'string', true)],
  [2, one('gmsaCredentialSpec', 'string', true)],
  [3, one('runAsUserName', 'string', true)],
  [4, one('hostProcess', 'bool', true)],
]);

/** SeccompProfile and AppArmorProfile: {type=1, localhostProfile=2}. */
const profile = new MessageSpec([
  [1, one('type', 'string', true)],
  [2, one('localhostProfile', 'string', true)],
]);

const securityContext = new MessageSpec([
  [
    1,
    one(
      'capabilities',
      new MessageSpec([
        [1, list('add', 'string')],
        [2, list('drop', 'string')],
      ]),
    ),
  ],
  [2, one('privileged', 'bool', true)],
  [3, one('seLinuxOptions', seLinuxOptions)],
  [10, one('windowsOptions', windowsOptions)],
  [4, one('runAsUser', 'int64', true)],
  [8, one('runAsGroup', 'int64', true)],
  [5, one('runAsNonRoot', 'bool', true)],
  [6, one('readOnlyRootFilesystem', 'bool', true)],
  [7, one('allowPrivilegeEscalation', 'bool', true)],
  [9, one('procMount', 'string', true)],
  [11, one('seccompProfile', profile)],
  [12, one('appArmorProfile', profile)],
  [
    13,
    list(
      'ulimits',
      new MessageSpec([
        [1, one('name', 'string', true)],
        [2, one('hard', 'int64', true)],
        [3, one('soft', 'int64', true)],
      ]),
    ),
  ],
]);

/** Container's fields, which EphemeralContainerCommon repeats with the same numbers. */
const containerFields = [
  [1, one('name', 'string', true)],
  [2, one('image', 'string')],
  [3, list('command', 'string')],
  [4, list('args', 'string')],
  [5, one('workingDir', 'string')],
  [6, list('ports', containerPort)],
  [19, list('envFrom', envFromSource)],
  [7, list('env', envVar)],
  [8, one('resources', resourceRequirements)],
  [
    23,
    list(
      'resizePolicy',
      new MessageSpec([
        [1, one('resourceName', 'string', true)],
        [2, one('restartPolicy', 'string', true)],
      ]),
    ),
  ],
  [24, one('restartPolicy', 'string', true)],
  [
    25,
    list(
      'restartPolicyRules',
      new MessageSpec([
        [1, one('action', 'string', true)],
        [
          2,
          one(
            'exitCodes',
            new MessageSpec([
              [1, one('operator', 'string', true)],
              [2, list('values', 'int32')],
            ]),
          ),
        ],
      ]),
    ),
  ],
  [
    9,
    list(
      'volumeMounts',
      new MessageSpec([
        [1, one('name', 'string', true)],
        [2, one('readOnly', 'bool')],
        [7, one('recursiveReadOnly', 'string', true)],
        [3, one('mountPath', 'string', true)],
        [4, one('subPath', 'string')],
        [5, one('mountPropagation', 'string', true)],
        [6, one('subPathExpr', 'string')],
      ]),
    ),
  ],
  [
    21,
    list(
      'volumeDevices',
      new MessageSpec([
        [1, one('name', 'string', true)],
        [2, one('devicePath', 'string', true)],
      ]),
    ),
  ],
  [10, one('livenessProbe', probe)],
  [11, one('readinessProbe', probe)],
  [22, one('startupProbe', probe)],
  [
    12,
    one(
      'lifecycle',
      new MessageSpec([
        [1, one('postStart', lifecycleHandler)],
        [2, one('preStop', lifecycleHandler)],
        [3, one('stopSignal', 'string', true)],
      ]),
    ),
  ],
  [13, one('terminationMessagePath', 'string')],
  [20, one('terminationMessagePolicy', 'string')],
  [14, one('imagePullPolicy', 'string')],
  [15, one('securityContext', securityContext)],
  [16, one('stdin', 'bool')],
  [17, one('stdinOnce', 'bool')],
  [18, one('tty', 'bool')],
] as const;

const container = new MessageSpec(containerFields);

const ephemeralContainer = new MessageSpec([
  [1, inline('ephemeralContainerCommon', new MessageSpec(containerFields))],
  [2, one('targetContainerName', 'string')],
]);

const keyToPath = new MessageSpec([
  [1, one('key', 'string', true)],
  [2, one('path', 'string', true)],
  [3, one('mode', 'int32', true)],
]);

const downwardApiFile = new MessageSpec([
  [1, one('path', 'string', true)],
  [2, one('fieldRef', objectFieldSelector)],
  [3, one('resourceFieldRef', resourceFieldSelector)],
  [4, one('mode', 'int32', true)],
]);

/** ConfigMapProjection and SecretProjection: {LocalObjectReference inline=1, items=2, optional=4}. */
const keysProjection = new MessageSpec([
  [1, inline('localObjectReference', localObjectReference)],
  [2, list('items', keyToPath)],
  [4, one('optional', 'bool', true)],
]);

const volumeProjection = new MessageSpec([
  [1, one('secret', keysProjection)],
  [2, one('downwardAPI', new MessageSpec([[1, list('items', downwardApiFile)]]))],
  [3, one('configMap', keysProjection)],
  [
    4,
    one(
      'serviceAccountToken',
      new MessageSpec([
        [1, one('audience', 'string')],
        [2, one('expirationSeconds', 'int64', true)],
        [3, one('path', 'string', true)],
      ]),
    ),
  ],
  [
    5,
    one(
      'clusterTrustBundle',
      new MessageSpec([
        [1, one('name', 'string', true)],
        [2, one('signerName', 'string', true)],
        [3, one('labelSelector', labelSelector)],
        [5, one('optional', 'bool', true)],
        [4, one('path', 'string', true)],
      ]),
    ),
  ],
  [
    6,
    one(
      'podCertificate',
      new MessageSpec([
        [1, one('signerName', 'string', true)],
        [2, one('keyType', 'string', true)],
        [3, one('maxExpirationSeconds', 'int32', true)],
        [4, one('credentialBundlePath', 'string')],
        [5, one('keyPath', 'string')],
        [6, one('certificateChainPath', 'string')],
        [7, map('userAnnotations', 'string')],
      ]),
    ),
  ],
]);

export const persistentVolumeClaimSpec = new MessageSpec([
  [1, list('accessModes', 'string')],
  [4, one('selector', labelSelector)],
  [
    2,
    one(
      'resources',
      new MessageSpec([
        [1, map('limits', 'quantity')],
        [2, map('requests', 'quantity')],
      ]),
    ),
  ],
  [3, one('volumeName', 'string')],
  [5, one('storageClassName', 'string', true)],
  [6, one('volumeMode', 'string', true)],
  [7, one('dataSource', typedLocalObjectReference)],
  [
    8,
    one(
      'dataSourceRef',
      new MessageSpec([
        [1, one('apiGroup', 'string', true)],
        [2, one('kind', 'string', true)],
        [3, one('name', 'string', true)],
        [4, one('namespace', 'string', true)],
      ]),
    ),
  ],
  [9, one('volumeAttributesClassName', 'string', true)],
]);

const volumeSource = new MessageSpec([
  [
    1,
    one(
      'hostPath',
      new MessageSpec([
        [1, one('path', 'string', true)],
        [2, one('type', 'string', true)],
      ]),
    ),
  ],
  [
    2,
    one(
      'emptyDir',
      new MessageSpec([
        [1, one('medium', 'string')],
        [2, one('sizeLimit', 'quantity')],
      ]),
    ),
  ],
  [
    5,
    one(
      'gitRepo',
      new MessageSpec([
        [1, one('repository', 'string', true)],
        [2, one('revision', 'string')],
        [3, one('directory', 'string')],
      ]),
    ),
  ],
  [
    6,
    one(
      'secret',
      new MessageSpec([
        [1, one('secretName', 'string')],
        [2, list('items', keyToPath)],
        [3, one('defaultMode', 'int32', true)],
        [4, one('optional', 'bool', true)],
      ]),
    ),
  ],
  [
    7,
    one(
      'nfs',
      new MessageSpec([
        [1, one('server', 'string', true)],
        [2, one('path', 'string', true)],
        [3, one('readOnly', 'bool')],
      ]),
    ),
  ],
  [
    10,
    one(
      'persistentVolumeClaim',
      new MessageSpec([
        [1, one('claimName', 'string', true)],
        [2, one('readOnly', 'bool')],
      ]),
    ),
  ],
  [
    16,
    one(
      'downwardAPI',
      new MessageSpec([
        [1, list('items', downwardApiFile)],
        [2, one('defaultMode', 'int32', true)],
      ]),
    ),
  ],
  [
    19,
    one(
      'configMap',
      new MessageSpec([
        [1, inline('localObjectReference', localObjectReference)],
        [2, list('items', keyToPath)],
        [3, one('defaultMode', 'int32', true)],
        [4, one('optional', 'bool', true)],
      ]),
    ),
  ],
  [
    26,
    one(
      'projected',
      new MessageSpec([
        [1, list('sources', volumeProjection)],
        [2, one('defaultMode', 'int32', true)],
      ]),
    ),
  ],
  [
    28,
    one(
      'csi',
      new MessageSpec([
        [1, one('driver', 'string', true)],
        [2, one('readOnly', 'bool', true)],
        [3, one('fsType', 'string', true)],
        [4, map('volumeAttributes', 'string')],
        [5, one('nodePublishSecretRef', localObjectReference)],
      ]),
    ),
  ],
  [
    29,
    one(
      'ephemeral',
      new MessageSpec([
        [
          1,
          one(
            'volumeClaimTemplate',
            new MessageSpec([
              [1, one('metadata', objectMeta)],
              [2, one('spec', persistentVolumeClaimSpec)],
            ]),
          ),
        ],
      ]),
    ),
  ],
  [
    30,
    one(
      'image',
      new MessageSpec([
        [1, one('reference', 'string')],
        [2, one('pullPolicy', 'string')],
      ]),
    ),
  ],
]);

const volume = new MessageSpec([
  [1, one('name', 'string', true)],
  [2, inline('volumeSource', volumeSource)],
]);

const nodeSelectorRequirement = new MessageSpec([
  [1, one('key', 'string', true)],
  [2, one('operator', 'string', true)],
  [3, list('values', 'string')],
]);

const nodeSelectorTerm = new MessageSpec([
  [1, list('matchExpressions', nodeSelectorRequirement)],
  [2, list('matchFields', nodeSelectorRequirement)],
]);

const podAffinityTerm = new MessageSpec([
  [1, one('labelSelector', labelSelector)],
  [2, list('namespaces', 'string')],
  [3, one('topologyKey', 'string', true)],
  [4, one('namespaceSelector', labelSelector)],
  [5, list('matchLabelKeys', 'string')],
  [6, list('mismatchLabelKeys', 'string')],
]);

/** PodAffinity and PodAntiAffinity: {required=1 []PodAffinityTerm, preferred=2 []Weighted...}. */
const podAffinity = new MessageSpec([
  [1, list('requiredDuringSchedulingIgnoredDuringExecution', podAffinityTerm)],
  [
    2,
    list(
      'preferredDuringSchedulingIgnoredDuringExecution',
      new MessageSpec([
        [1, one('weight', 'int32', true)],
        [2, one('podAffinityTerm', podAffinityTerm)],
      ]),
    ),
  ],
]);

const affinity = new MessageSpec([
  [
    1,
    one(
      'nodeAffinity',
      new MessageSpec([
        [
          1,
          one(
            'requiredDuringSchedulingIgnoredDuringExecution',
            new MessageSpec([[1, list('nodeSelectorTerms', nodeSelectorTerm)]]),
          ),
        ],
        [
          2,
          list(
            'preferredDuringSchedulingIgnoredDuringExecution',
            new MessageSpec([
              [1, one('weight', 'int32', true)],
              [2, one('preference', nodeSelectorTerm)],
            ]),
          ),
        ],
      ]),
    ),
  ],
  [2, one('podAffinity', podAffinity)],
  [3, one('podAntiAffinity', podAffinity)],
]);

const podSecurityContext = new MessageSpec([
  [1, one('seLinuxOptions', seLinuxOptions)],
  [8, one('windowsOptions', windowsOptions)],
  [2, one('runAsUser', 'int64', true)],
  [6, one('runAsGroup', 'int64', true)],
  [3, one('runAsNonRoot', 'bool', true)],
  [4, list('supplementalGroups', 'int64')],
  [12, one('supplementalGroupsPolicy', 'string', true)],
  [5, one('fsGroup', 'int64', true)],
  [
    7,
    list(
      'sysctls',
      new MessageSpec([
        [1, one('name', 'string', true)],
        [2, one('value', 'string', true)],
      ]),
    ),
  ],
  [9, one('fsGroupChangePolicy', 'string', true)],
  [10, one('seccompProfile', profile)],
  [11, one('appArmorProfile', profile)],
  [13, one('seLinuxChangePolicy', 'string', true)],
]);

export const podSpec = new MessageSpec([
  [1, list('volumes', volume)],
  [20, list('initContainers', container)],
  [2, list('containers', container)],
  [34, list('ephemeralContainers', ephemeralContainer)],
  [3, one('restartPolicy', 'string')],
  [4, one('terminationGracePeriodSeconds', 'int64', true)],
  [5, one('activeDeadlineSeconds', 'int64', true)],
  [6, one('dnsPolicy', 'string')],
  [7, map('nodeSelector', 'string')],
  [8, one('serviceAccountName', 'string')],
  [9, one('serviceAccount', 'string')],
  [21, one('automountServiceAccountToken', 'bool', true)],
  [10, one('nodeName', 'string')],
  [11, one('hostNetwork', 'bool')],
  [12, one('hostPID', 'bool')],
  [13, one('hostIPC', 'bool')],
  [27, one('shareProcessNamespace', 'bool', true)],
  [14, one('securityContext', podSecurityContext)],
  [15, list('imagePullSecrets', localObjectReference)],
  [16, one('hostname', 'string')],
  [17, one('subdomain', 'string')],
  [18, one('affinity', affinity)],
  [19, one('schedulerName', 'string')],
  [
    22,
    list(
      'tolerations',
      new MessageSpec([
        [1, one('key', 'string')],
        [2, one('operator', 'string')],
        [3, one('value', 'string')],
        [4, one('effect', 'string')],
        [5, one('tolerationSeconds', 'int64', true)],
      ]),
    ),
  ],
  [
    23,
    list(
      'hostAliases',
      new MessageSpec([
        [1, one('ip', 'string', true)],
        [2, list('hostnames', 'string')],
      ]),
    ),
  ],
  [24, one('priorityClassName', 'string')],
  [25, one('priority', 'int32', true)],
  [
    26,
    one(
      'dnsConfig',
      new MessageSpec([
        [1, list('nameservers', 'string')],
        [2, list('searches', 'string')],
        [
          3,
          list(
            'options',
            new MessageSpec([
              [1, one('name', 'string')],
              [2, one('value', 'string', true)],
            ]),
          ),
        ],
      ]),
    ),
  ],
  [28, list('readinessGates', new MessageSpec([[1, one('conditionType', 'string', true)]]))],
  [29, one('runtimeClassName', 'string', true)],
  [30, one('enableServiceLinks', 'bool', true)],
  [31, one('preemptionPolicy', 'string', true)],
  [32, map('overhead', 'quantity')],
  [
    33,
    list(
      'topologySpreadConstraints',
      new MessageSpec([
        [1, one('maxSkew', 'int32', true)],
        [2, one('topologyKey', 'string', true)],
        [3, one('whenUnsatisfiable', 'string', true)],
        [4, one('labelSelector', labelSelector)],
        [5, one('minDomains', 'int32', true)],
        [6, one('nodeAffinityPolicy', 'string', true)],
        [7, one('nodeTaintsPolicy', 'string', true)],
        [8, list('matchLabelKeys', 'string')],
      ]),
    ),
  ],
  [35, one('setHostnameAsFQDN', 'bool', true)],
  [36, one('os', new MessageSpec([[1, one('name', 'string', true)]]))],
  [37, one('hostUsers', 'bool', true)],
  [38, list('schedulingGates', new MessageSpec([[1, one('name', 'string', true)]]))],
  [
    39,
    list(
      'resourceClaims',
      new MessageSpec([
        [1, one('name', 'string', true)],
        [3, one('resourceClaimName', 'string', true)],
        [4, one('resourceClaimTemplateName', 'string', true)],
      ]),
    ),
  ],
  [40, one('resources', resourceRequirements)],
  [41, one('hostnameOverride', 'string', true)],
]);

export const podTemplateSpec = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, one('spec', podSpec)],
]);

/** A StatefulSet's claim template: the claim's metadata, spec and (unused here) status. */
export const persistentVolumeClaim = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [2, one('spec', persistentVolumeClaimSpec)],
  [
    3,
    one(
      'status',
      new MessageSpec([
        [1, one('phase', 'string')],
        [2, list('accessModes', 'string')],
        [3, map('capacity', 'quantity')],
      ]),
    ),
  ],
]);
