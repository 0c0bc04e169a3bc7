// The operator's validating admission webhook: its server, its reviews, its registration.
export { loadOrCreateWebhookTls, type WebhookTls } from './certificates.js';
export {
  type ClusterWebhookOptions,
  clusterWebhookConfiguration,
  REVIEWED_RESOURCES,
  registerWebhook,
  UPDATE_WEBHOOK_NAME,
  WEBHOOK_CONFIGURATION_NAME,
  WEBHOOK_NAME,
  type WebhookClient,
  webhookConfiguration,
} from './registration.js';
export {
  type SelfManagedCertificate,
  type SelfManagedCertificateOptions,
  serviceDnsNames,
  startSelfManagedCertificate,
  WEBHOOK_TLS_SECRET,
} from './self-managed.js';
export {
  type AdmissionServer,
  type AdmissionServerOptions,
  DEFAULT_WEBHOOK_PORT,
  MAX_REVIEW_BYTES,
  MAX_REVIEW_DEPTH,
  startAdmissionServer,
  WEBHOOK_PATH,
} from './server.js';
