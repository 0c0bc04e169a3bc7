// Which ScopeClass serves a scope (docs/adr/0020-scope-classes.md): among the classes of the
// scope's type whose match holds, the most specific; a tie goes to a default class, then to the
// first name. A class without a match serves every scope of its type, at specificity zero.
import type { ScopeClassSpec, ScopeSpec } from '../../api/index.js';

/** What selection reads of a class: its name and spec. */
export interface ClassCandidate {
  readonly metadata: { readonly name: string };
  readonly spec?: ScopeClassSpec | undefined;
}

/** What selection reads of a scope. */
export interface ScopeFacts {
  readonly spec: Pick<ScopeSpec, 'type' | 'tier' | 'dimensions'>;
  readonly labels: Readonly<Record<string, string>> | undefined;
}

/** How many criteria of the class's match hold for the scope; -1 when one does not. */
export function specificity(spec: ScopeClassSpec, scope: ScopeFacts): number {
  if (spec.scope_type !== scope.spec.type) return -1;
  const match = spec.match;
  if (match === undefined) return 0;
  let count = 0;
  if (match.tiers !== undefined) {
    if (scope.spec.tier === undefined || !match.tiers.includes(scope.spec.tier)) return -1;
    count += 1;
  }
  for (const [key, value] of Object.entries(match.dimensions ?? {})) {
    if (scope.spec.dimensions?.[key] !== value) return -1;
    count += 1;
  }
  for (const [key, value] of Object.entries(match.labels ?? {})) {
    if (scope.labels?.[key] !== value) return -1;
    count += 1;
  }
  return count;
}

/** The class serving the scope, or undefined when none of its type matches. */
export function selectClass<C extends ClassCandidate>(
  classes: Iterable<C>,
  scope: ScopeFacts,
): C | undefined {
  let best: C | undefined;
  let bestScore = -1;
  for (const candidate of classes) {
    if (candidate.spec === undefined) continue;
    const score = specificity(candidate.spec, scope);
    if (score < 0) continue;
    if (best === undefined || better(candidate, score, best, bestScore)) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

function better(a: ClassCandidate, aScore: number, b: ClassCandidate, bScore: number): boolean {
  if (aScore !== bScore) return aScore > bScore;
  const aDefault = a.spec?.default === true;
  const bDefault = b.spec?.default === true;
  if (aDefault !== bDefault) return aDefault;
  return a.metadata.name < b.metadata.name;
}
