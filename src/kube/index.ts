// The public face of src/kube: everything else reaches the cluster through these names only.
export { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF } from './backoff.js';
export { type CacheDiff, type IndexFunction, NAMESPACE_INDEX, ObjectCache } from './cache.js';
export {
  type ApplyOptions,
  apiVersionOf,
  type DeleteOptions,
  defineResource,
  type JsonPatchOperation,
  type KubeObject,
  keyOf,
  type ListOptions,
  type ListResult,
  type ObjectInput,
  type ObjectMeta,
  type ObjectRef,
  type OwnerReference,
  type PatchOptions,
  type PatchType,
  ResourceClient,
  type ResourceType,
  type WriteOptions,
} from './client.js';
export type { LoadKubeConfigOptions } from './config.js';
export {
  isAlreadyExists,
  isConflict,
  isNotFound,
  isTransient,
  KubeApiError,
  KubeSchemaError,
  KubeTransportError,
  type StatusDetails,
} from './errors.js';
export { Informer, type InformerListeners, type InformerOptions } from './informer.js';
export { type ConnectOptions, connect, type Kube } from './kube.js';
export {
  LAST_APPLIED_ANNOTATION,
  leanObject,
  leanWithoutStatus,
  metadataOnly,
  StringPool,
} from './lean.js';
export {
  type KindSchema,
  type OpenApiSchema,
  OpenApiSchemas,
  type OpenApiSchemasOptions,
} from './openapi-schemas.js';
export * from './resources.js';
export {
  type DiscoveryTransport,
  RestMapper,
  type RestMapperOptions,
  type RestMapperStats,
  type RestMapping,
} from './rest-mapper.js';
export type { ReviewAttributes, ReviewedUser, Reviews } from './reviews.js';
export type {
  ServiceAccountToken,
  TokenRequestOptions,
  TokenRequests,
} from './token-request.js';
export type { RequestSample, TransportStats } from './transport.js';
