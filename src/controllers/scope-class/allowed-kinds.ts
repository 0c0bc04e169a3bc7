// Whether every kind a ScopeClass's resources name is among those the operator's setting lets a
// class make (ADR 0029): a class applied while no webhook answered, or before the setting was
// narrowed, is Stalled KindNotAllowed, naming the entry and the setting, as its scopes fail.
import type { ScopeClassSpec } from '../../api/index.js';
import { type KindAllowlist, kindRefusal } from '../../domain/scope-classes/kinds.js';
import { placeholdersOf } from '../../domain/scope-classes/template.js';
import type { Kube } from '../../kube/index.js';

/**
 * Why the setting refuses the first resource it refuses, or undefined. A kind the mapper cannot
 * resolve is someone else's report (KindNotServed); a templated one is judged per scope.
 */
export async function firstKindNotAllowed(
  mapper: Kube['mapper'],
  kinds: KindAllowlist,
  spec: Pick<ScopeClassSpec, 'resources'>,
  signal?: AbortSignal,
): Promise<string | undefined> {
  for (const [index, resource] of (spec.resources ?? []).entries()) {
    const { apiVersion, kind } = resource.manifest as { apiVersion?: unknown; kind?: unknown };
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') continue;
    if (placeholdersOf(apiVersion).form !== 'none' || placeholdersOf(kind).form !== 'none') {
      continue;
    }
    const type = await mapper.resourceFor(apiVersion, kind, signal).catch(() => undefined);
    if (type === undefined) continue;
    const refused = kindRefusal(
      kinds,
      `resources.${resource.name} (spec.resources[${index}].manifest)`,
      type,
    );
    if (refused !== undefined) return refused;
  }
  return undefined;
}
