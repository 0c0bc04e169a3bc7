// The CEL module of the repository (one owner for CEL: ScopeClass templates and the local
// control plane's CRD validation rules both evaluate here): the environment, compiling, the
// JSON <-> CEL mapping, the cost meter and the static cost estimate, with Kubernetes' limits for
// CRD rules.
export {
  type CelProgram,
  type Compiled,
  compileCel,
  type Shape,
  variableNameProblem,
} from './compile.js';
export { CostLimitExceeded, charge, type Metered, metered } from './cost.js';
export { celString, ENV } from './env.js';
export { estimateCost, MAX_ESTIMATE, type SizedType, type SizeOracle } from './estimate.js';
export { celTypeName, setKey, toCel, toJson, ValueProblem } from './values.js';

/**
 * kube-apiserver's CEL limits (k8s.io/apiserver/pkg/apis/cel/config.go): `PerCallLimit`, the cost
 * one evaluation of one expression may reach, and `RuntimeCELCostBudget`, what all the rules of
 * one request may spend together.
 */
export const PER_CALL_LIMIT = 1_000_000;
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;
