// Service (core/v1): stored with its official schema, defaulted as SetDefaults_Service (type
// ClusterIP, sessionAffinity None, ports' protocol TCP and targetPort the port,
// internalTrafficPolicy Cluster) with the single-stack IPv4 family the registry's allocator
// sets, and checked as ValidateService's first rules. A cluster IP is allocated from
// 10.96.0.0/12 as the default service CIDR; no proxy routes to it.
import { createHash } from 'node:crypto';
import { ATOMIC, byKey, byPortAndProtocol, MAP, STRUCT } from '../patch/field-types.js';
import { list, MessageSpec, map, metaCondition, objectMeta, one } from '../protobuf-messages.js';
import type { StatusCause } from '../types.js';
import {
  invalidValue,
  isJson,
  itemsOf,
  notSupported,
  orDefault,
  refuse,
  required,
  struct,
  withSchema,
} from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = {
  spec: STRUCT,
  'spec.ports': byPortAndProtocol('port'),
  'spec.selector': MAP,
  'spec.externalIPs': ATOMIC,
  'spec.clusterIPs': ATOMIC,
  'spec.ipFamilies': ATOMIC,
  'spec.loadBalancerSourceRanges': ATOMIC,
  status: STRUCT,
  'status.conditions': byKey('type'),
  'status.loadBalancer.ingress': ATOMIC,
};

const type = withSchema(
  {
    ...builtinType('', 'v1', 'Service', 'services', { shortNames: ['svc'], hasStatus: true }),
    categories: ['all'],
  },
  fieldTypes,
);

const TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

/**
 * An address of 10.96.0.0/12 picked by the service's namespace and name (10.96.0.1 is the
 * kubernetes service's): stable across restarts without an allocator's own state. Two services
 * may, rarely, get the same one; nothing routes to either.
 */
function clusterIpOf(namespace: string, name: string): string {
  const n =
    2 + (createHash('sha256').update(`${namespace}/${name}`).digest().readUInt32BE(0) % 0xffffd);
  return `10.${96 + (n >> 16)}.${(n >> 8) & 0xff}.${n & 0xff}`;
}

/** Its generated.proto message (k8s.io/api/core/v1), field by field. */
const serviceMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [
    2,
    one(
      'spec',
      new MessageSpec([
        [
          1,
          list(
            'ports',
            new MessageSpec([
              [1, one('name', 'string')],
              [2, one('protocol', 'string')],
              [6, one('appProtocol', 'string', true)],
              [3, one('port', 'int32', true)],
              [4, one('targetPort', 'intOrString', true)],
              [5, one('nodePort', 'int32')],
            ]),
          ),
        ],
        [2, map('selector', 'string')],
        [3, one('clusterIP', 'string')],
        [18, list('clusterIPs', 'string')],
        [4, one('type', 'string')],
        [5, list('externalIPs', 'string')],
        [7, one('sessionAffinity', 'string')],
        [8, one('loadBalancerIP', 'string')],
        [9, list('loadBalancerSourceRanges', 'string')],
        [10, one('externalName', 'string')],
        [11, one('externalTrafficPolicy', 'string')],
        [12, one('healthCheckNodePort', 'int32')],
        [13, one('publishNotReadyAddresses', 'bool')],
        [
          14,
          one(
            'sessionAffinityConfig',
            new MessageSpec([
              [1, one('clientIP', new MessageSpec([[1, one('timeoutSeconds', 'int32', true)]]))],
            ]),
          ),
        ],
        [19, list('ipFamilies', 'string')],
        [17, one('ipFamilyPolicy', 'string', true)],
        [20, one('allocateLoadBalancerNodePorts', 'bool', true)],
        [21, one('loadBalancerClass', 'string', true)],
        [22, one('internalTrafficPolicy', 'string', true)],
        [23, one('trafficDistribution', 'string', true)],
      ]),
    ),
  ],
  [
    3,
    one(
      'status',
      new MessageSpec([
        [
          1,
          one(
            'loadBalancer',
            new MessageSpec([
              [
                1,
                list(
                  'ingress',
                  new MessageSpec([
                    [1, one('ip', 'string')],
                    [2, one('hostname', 'string')],
                    [3, one('ipMode', 'string', true)],
                    [
                      4,
                      list(
                        'ports',
                        new MessageSpec([
                          [1, one('port', 'int32', true)],
                          [2, one('protocol', 'string', true)],
                          [3, one('error', 'string', true)],
                        ]),
                      ),
                    ],
                  ]),
                ),
              ],
            ]),
          ),
        ],
        [2, list('conditions', metaCondition)],
      ]),
    ),
  ],
]);

export const serviceStrategy: KindStrategy = {
  type,
  fieldTypes,
  protobuf: serviceMessage,
  prepare(object, old) {
    const spec = struct(object, 'spec');
    orDefault(spec, 'type', 'ClusterIP');
    orDefault(spec, 'sessionAffinity', 'None');
    for (const p of itemsOf(spec.ports)) {
      orDefault(p, 'protocol', 'TCP');
      if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '')
        p.targetPort = p.port;
    }
    if (spec.type !== 'ExternalName') {
      orDefault(spec, 'internalTrafficPolicy', 'Cluster');
      const oldSpec = old !== undefined && isJson(old.spec) ? old.spec : undefined;
      // An update that leaves the address out keeps the allocated one (patchAllocatedValues).
      if (oldSpec !== undefined) {
        orDefault(spec, 'clusterIP', oldSpec.clusterIP);
        orDefault(spec, 'clusterIPs', oldSpec.clusterIPs);
      }
      orDefault(
        spec,
        'clusterIP',
        clusterIpOf(object.metadata.namespace ?? '', object.metadata.name ?? ''),
      );
      if (spec.clusterIP !== 'None') orDefault(spec, 'clusterIPs', [spec.clusterIP]);
      else orDefault(spec, 'clusterIPs', ['None']);
      orDefault(spec, 'ipFamilies', ['IPv4']);
      orDefault(spec, 'ipFamilyPolicy', 'SingleStack');
    }
    if (spec.type === 'LoadBalancer' || spec.type === 'NodePort')
      orDefault(spec, 'externalTrafficPolicy', 'Cluster');
    if (old === undefined && !isJson(object.status)) object.status = { loadBalancer: {} };
    refuse(type, object, serviceCauses(spec));
  },
};

function serviceCauses(spec: Record<string, unknown>): StatusCause[] {
  const causes: StatusCause[] = [];
  if (!TYPES.includes(String(spec.type))) causes.push(notSupported('spec.type', spec.type, TYPES));
  const ports = itemsOf(spec.ports);
  if (ports.length === 0 && spec.clusterIP !== 'None' && spec.type !== 'ExternalName')
    causes.push(required('spec.ports'));
  ports.forEach((p, i) => {
    if (ports.length > 1 && (typeof p.name !== 'string' || p.name === ''))
      causes.push(required(`spec.ports[${i}].name`));
    if (typeof p.port !== 'number' || p.port < 1 || p.port > 65535)
      causes.push(
        invalidValue(
          `spec.ports[${i}].port`,
          p.port ?? 0,
          'must be between 1 and 65535, inclusive',
        ),
      );
  });
  return causes;
}
