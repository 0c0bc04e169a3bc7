// The `webhook` provisioner of services, as the operator wires it (WebhookProvisioner), the
// specification checks its signing Secret (SIGNING_KEY), and a provider or a test speaks to it
// (signing, payload, how an answer reads).
export { interpret, retryAfter, webhookPayload } from './protocol.js';
export { WebhookProvisioner } from './provisioner.js';
export {
  SIGNATURE_HEADER,
  SIGNING_KEY,
  sign,
  TIMESTAMP_HEADER,
  verifySignature,
} from './signing.js';
