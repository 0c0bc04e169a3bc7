// Scopes as one concept: identity, acceptance, indexes and ids, which the facade and the
// Scope reconciler both call, so a scope is accepted by one set of rules however it was made.
export * from './acceptance.js';
export * from './grants.js';
export * from './id-allocator.js';
export * from './identity.js';
export * from './indexes.js';
