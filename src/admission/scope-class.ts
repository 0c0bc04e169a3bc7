// The ScopeClass review: its spec is valid and every `${CEL}` placeholder compiles. The rules
// are the ones the ScopeClass reconciler reports (InvalidSpec, TemplateInvalid): the spec's
// schema, and domain/scope-classes' CompiledClass.compile.
import { isDeepStrictEqual } from 'node:util';
import { ScopeClassSpec } from '../api/index.js';
import { specProblems } from '../domain/lifecycle.js';
import { CompiledClass } from '../domain/scope-classes/children.js';
import { type ClusterView, checkClassAgainstCluster } from './class-against-cluster.js';
import { type ClassRightsDeps, reviewClassRights } from './class-rights.js';
import { ADMIT, type AdmissionRequest, objectOf, refuse, type Verdict } from './review.js';

/** Problems named in one refusal; the rest are counted. */
const MAX_LISTED = 10;

/** With `cluster`, a class that compiles is then checked against it (class-against-cluster.ts). */
export function reviewScopeClass(
  request: AdmissionRequest,
  cluster?: ClusterView,
  rights?: ClassRightsDeps,
): Verdict | Promise<Verdict> {
  const object = objectOf(request.object);
  if (object === undefined || object.metadata.deletionTimestamp !== undefined) return ADMIT;
  if (
    request.operation === 'UPDATE' &&
    isDeepStrictEqual(object.spec, objectOf(request.oldObject)?.spec)
  ) {
    return ADMIT;
  }
  const parsed = ScopeClassSpec.safeParse(object.spec);
  if (!parsed.success) return refuse('InvalidSpec', specProblems(parsed.error));
  const compiled = CompiledClass.compile(parsed.data);
  if (!('problems' in compiled)) {
    const spec = parsed.data;
    const served = cluster === undefined ? ADMIT : checkClassAgainstCluster(spec, cluster);
    // Then its author's rights (class-rights.ts): only for a class the cluster can serve.
    return rights === undefined
      ? served
      : andThen(served, () => reviewClassRights(rights, spec, request.userInfo));
  }
  const listed = compiled.problems.slice(0, MAX_LISTED).map((p) => `${p.path}: ${p.message}`);
  const more = compiled.problems.length - listed.length;
  return refuse('TemplateInvalid', `${listed.join('; ')}${more > 0 ? `; and ${more} more` : ''}`);
}

/** `first`, and when it admits, `next`, their warnings together. */
async function andThen(
  first: Verdict | Promise<Verdict>,
  next: () => Promise<Verdict>,
): Promise<Verdict> {
  const verdict = await first;
  if (!verdict.allowed) return verdict;
  const after = await next();
  if (!after.allowed) return after;
  const warnings = [...(verdict.warnings ?? []), ...(after.warnings ?? [])];
  return warnings.length > 0 ? { allowed: true, warnings } : ADMIT;
}
