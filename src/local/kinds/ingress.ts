// Ingress (networking.k8s.io/v1): stored with its official schema; no controller serves it, its
// status (load balancer addresses) stays as written.
import { ATOMIC, STRUCT } from '../patch/field-types.js';
import {
  inline,
  list,
  MessageSpec,
  objectMeta,
  one,
  typedLocalObjectReference,
} from '../protobuf-messages.js';
import { withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = {
  spec: STRUCT,
  'spec.rules': ATOMIC,
  'spec.tls': ATOMIC,
  status: STRUCT,
  'status.loadBalancer.ingress': ATOMIC,
};

const ingressBackend = new MessageSpec([
  [
    4,
    one(
      'service',
      new MessageSpec([
        [1, one('name', 'string', true)],
        [
          2,
          one(
            'port',
            new MessageSpec([
              [1, one('name', 'string')],
              [2, one('number', 'int32')],
            ]),
          ),
        ],
      ]),
    ),
  ],
  [3, one('resource', typedLocalObjectReference)],
]);

/** Its generated.proto message (k8s.io/api/networking/v1), field by field. */
const ingressMessage = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [
    2,
    one(
      'spec',
      new MessageSpec([
        [4, one('ingressClassName', 'string', true)],
        [1, one('defaultBackend', ingressBackend)],
        [
          2,
          list(
            'tls',
            new MessageSpec([
              [1, list('hosts', 'string')],
              [2, one('secretName', 'string')],
            ]),
          ),
        ],
        [
          3,
          list(
            'rules',
            new MessageSpec([
              [1, one('host', 'string')],
              [
                2,
                inline(
                  'ingressRuleValue',
                  new MessageSpec([
                    [
                      1,
                      one(
                        'http',
                        new MessageSpec([
                          [
                            1,
                            list(
                              'paths',
                              new MessageSpec([
                                [1, one('path', 'string')],
                                [3, one('pathType', 'string', true)],
                                [2, one('backend', ingressBackend)],
                              ]),
                            ),
                          ],
                        ]),
                      ),
                    ],
                  ]),
                ),
              ],
            ]),
          ),
        ],
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
      ]),
    ),
  ],
]);

export const ingressStrategy: KindStrategy = {
  countsGeneration: true,
  type: withSchema(
    builtinType('networking.k8s.io', 'v1', 'Ingress', 'ingresses', {
      shortNames: ['ing'],
      hasStatus: true,
    }),
    fieldTypes,
  ),
  fieldTypes,
  protobuf: ingressMessage,
  prepare(object, old) {
    if (old === undefined) object.status = { loadBalancer: {} };
  },
};
