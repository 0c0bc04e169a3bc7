// Admission webhooks of the local control plane (Validating/MutatingWebhookConfiguration),
// called in its writes as kube-apiserver calls them: see dispatch.ts.

export { MAX_RESPONSE_BYTES } from './call.js';
export {
  ADMISSION_DEADLINE_MS,
  Admission,
  AdmissionPending,
  MAX_WEBHOOK_CALLS,
  type RequestContext,
} from './dispatch.js';
