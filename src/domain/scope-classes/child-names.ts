// Whether a class's child names are unique per scope (issue 13, point 2; ADR 0031): a child
// in the scope's own namespace is (the envelope namespace is one scope's, NamespaceTaken
// guards it), but one in a fixed namespace (its manifest names `metadata.namespace`) or of a
// cluster-scoped kind is shared by every scope of the class unless its name, or its
// namespace's, uses a placeholder that differs per scope. Read from the placeholders' source:
// a heuristic on what the name is made of, so a class it flags is warned, not refused.
import type { ScopeClassSpec } from '../../api/index.js';
import { placeholdersOf } from './template.js';

/** `scope.<field>` or `application.<field>` in an expression's source (CEL's select or index). */
const field = (variable: string, name: string) =>
  new RegExp(`\\b${variable}\\s*(?:\\.\\s*${name}\\b|\\[\\s*(?:'${name}'|"${name}")\\s*\\])`);
const SCOPE_ID = field('scope', 'id');
const SCOPE_NRN = field('scope', 'nrn');
const SCOPE_SLUG = field('scope', 'slug');
const SCOPE_NAMESPACE = field('scope', 'namespace');
const APPLICATION_ID = field('application', 'id');
const APPLICATION_NRN = field('application', 'nrn');

/** What the placeholders of some template strings read of a scope and its application. */
function uses(values: readonly unknown[]): (pattern: RegExp) => boolean {
  const sources = values.flatMap((v) =>
    typeof v === 'string' ? placeholdersOf(v).expressions : [],
  );
  return (pattern) => sources.some((source) => pattern.test(source));
}

/**
 * Unique per scope: scope.id or scope.nrn; scope.slug with application.id or application.nrn
 * (a slug is unique only within its application); scope.namespace when the class's namespace
 * pattern is itself unique per scope.
 */
function perScope(values: readonly unknown[], namespacePerScope: boolean): boolean {
  const reads = uses(values);
  if (reads(SCOPE_ID) || reads(SCOPE_NRN)) return true;
  if (reads(SCOPE_SLUG) && (reads(APPLICATION_ID) || reads(APPLICATION_NRN))) return true;
  return namespacePerScope && reads(SCOPE_NAMESPACE);
}

/**
 * A warning per resource whose object two scopes of the class would share, naming its path.
 * `namespaced(index)` says whether resource `index`'s kind is namespaced (undefined: not known,
 * and only a fixed namespace is judged).
 */
export function sharedChildNameWarnings(
  spec: Pick<ScopeClassSpec, 'namespace' | 'resources'>,
  namespaced: (index: number) => boolean | undefined,
): string[] {
  const namespacePerScope = perScope([spec.namespace.name], false);
  const warnings: string[] = [];
  for (const [index, resource] of (spec.resources ?? []).entries()) {
    const metadata = (resource.manifest as { metadata?: { name?: unknown; namespace?: unknown } })
      .metadata;
    const name = metadata?.name;
    const fixedNamespace = metadata?.namespace;
    const scoped = namespaced(index);
    let where: string;
    if (scoped === false) where = 'a cluster-scoped kind';
    else if (fixedNamespace !== undefined) {
      where = `namespace ${JSON.stringify(fixedNamespace)}`;
    } else continue;
    const parts = scoped === false ? [name] : [name, fixedNamespace];
    if (perScope(parts, namespacePerScope)) continue;
    // kube-apiserver cuts each warning to 256 characters once all pass 4 KiB: the path first.
    warnings.push(
      `spec.resources[${index}].manifest.metadata.name: ${JSON.stringify(name)} in ${where} is the same for every scope of this class: use scope.id, scope.nrn, or scope.slug with application.id, or two scopes make one object`,
    );
  }
  return warnings;
}
