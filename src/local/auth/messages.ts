// The protobuf messages of the review kinds and TokenRequest, which kubectl's typed clients send
// as protobuf (`kubectl auth can-i`, `auth whoami`, `create token`): field numbers from
// staging/src/k8s.io/api/authorization/v1 and authentication/v1 generated.proto.
import { list, MessageSpec, objectMeta, one } from '../protobuf-messages.js';

const resourceAttributes = new MessageSpec([
  [1, one('namespace', 'string')],
  [2, one('verb', 'string')],
  [3, one('group', 'string')],
  [4, one('version', 'string')],
  [5, one('resource', 'string')],
  [6, one('subresource', 'string')],
  [7, one('name', 'string')],
]);

const nonResourceAttributes = new MessageSpec([
  [1, one('path', 'string')],
  [2, one('verb', 'string')],
]);

const subjectAccessReview = new MessageSpec([
  [1, one('metadata', objectMeta)],
  [
    2,
    one(
      'spec',
      new MessageSpec([
        [1, one('resourceAttributes', resourceAttributes)],
        [2, one('nonResourceAttributes', nonResourceAttributes)],
        [3, one('user', 'string')],
        [4, list('groups', 'string')],
        [6, one('uid', 'string')],
      ]),
    ),
  ],
]);

/** By `apiVersion/kind`, for the protobuf decoder. */
export const AUTH_MESSAGES: ReadonlyMap<string, MessageSpec> = new Map([
  [
    'authorization.k8s.io/v1/SelfSubjectAccessReview',
    new MessageSpec([
      [1, one('metadata', objectMeta)],
      [
        2,
        one(
          'spec',
          new MessageSpec([
            [1, one('resourceAttributes', resourceAttributes)],
            [2, one('nonResourceAttributes', nonResourceAttributes)],
          ]),
        ),
      ],
    ]),
  ],
  ['authorization.k8s.io/v1/SubjectAccessReview', subjectAccessReview],
  // The same message: a LocalSubjectAccessReview's spec is a SubjectAccessReviewSpec.
  ['authorization.k8s.io/v1/LocalSubjectAccessReview', subjectAccessReview],
  [
    'authorization.k8s.io/v1/SelfSubjectRulesReview',
    new MessageSpec([
      [1, one('metadata', objectMeta)],
      [2, one('spec', new MessageSpec([[1, one('namespace', 'string')]]))],
    ]),
  ],
  [
    'authentication.k8s.io/v1/SelfSubjectReview',
    new MessageSpec([[1, one('metadata', objectMeta)]]),
  ],
  [
    'authentication.k8s.io/v1/TokenReview',
    new MessageSpec([
      [1, one('metadata', objectMeta)],
      [
        2,
        one(
          'spec',
          new MessageSpec([
            [1, one('token', 'string')],
            [2, list('audiences', 'string')],
          ]),
        ),
      ],
    ]),
  ],
  [
    'authentication.k8s.io/v1/TokenRequest',
    new MessageSpec([
      [1, one('metadata', objectMeta)],
      [
        2,
        one(
          'spec',
          new MessageSpec([
            [1, list('audiences', 'string')],
            [4, one('expirationSeconds', 'int64', true)],
            [
              3,
              one(
                'boundObjectRef',
                new MessageSpec([
                  [1, one('kind', 'string')],
                  [2, one('apiVersion', 'string')],
                  [3, one('name', 'string')],
                  [4, one('uid', 'string')],
                ]),
              ),
            ],
          ]),
        ),
      ],
    ]),
  ],
]);
