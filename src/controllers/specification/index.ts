// The ServiceSpecification kind, as the Service controller's wiring and the services that
// name a specification use it.
export { SpecificationReconciler } from './reconciler.js';
export {
  indexSpecifications,
  RawSpecifications,
  type SpecificationInformer,
  type SpecificationObject,
  specificationById,
  specificationUsable,
} from './resources.js';
