// The Service kind, as the operator wires it (setupServices) and tests read it (the raw
// kind, the default backoff of provider calls).
export { DEFAULT_PROVIDER_BACKOFF } from './pacing.js';
export { RawServices } from './resources.js';
export { setupServices } from './setup.js';
