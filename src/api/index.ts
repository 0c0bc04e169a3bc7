// The public face of src/api: schemas, NRN and the CRD generator.
export * from './common.js';
export * from './crd.js';
export * from './error.js';
export * from './issues.js';
export * from './nrn.js';
export * from './resources.js';
export * from './scope.js';
export * from './scope-class.js';
export * from './service.js';
export * from './status.js';
