// Whether the API server still serves every kind a ScopeClass's resources name (ADR 0031): a
// CRD deleted after the class was admitted makes the class Stalled (KindNotServed), and its
// return makes it Ready again. Discovery is read through the REST mapper with a bound on its
// age, so that a kind that went is seen within KIND_RECHECK_MS while each group-version costs
// one discovery request per interval however many classes name it.
import type { ScopeClassSpec } from '../../api/index.js';
import { placeholdersOf } from '../../domain/scope-classes/template.js';
import { type Kube, KubeApiError, KubeTransportError } from '../../kube/index.js';

/** How often a class's kinds are asked of discovery again while it is Ready. */
export const KIND_RECHECK_MS = 15_000;
/** How often while one is missing: a CRD re-created is seen soon after. */
export const KIND_MISSING_RECHECK_MS = 5_000;

export interface UnservedKind {
  /** `resources.<name>`, as a scope's messages name the entry. */
  readonly entry: string;
  readonly message: string;
}

/**
 * The first resource of `spec` whose kind the API server does not serve, or undefined. Throws
 * what discovery threw when it could not answer (the controller retries with backoff).
 */
export async function firstUnservedKind(
  mapper: Kube['mapper'],
  spec: Pick<ScopeClassSpec, 'resources'>,
  signal?: AbortSignal,
  maxAgeMs = KIND_RECHECK_MS,
): Promise<UnservedKind | undefined> {
  for (const [index, resource] of (spec.resources ?? []).entries()) {
    const { apiVersion, kind } = resource.manifest as { apiVersion?: unknown; kind?: unknown };
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') continue;
    // A templated apiVersion or kind is known only per scope: the scope reports it.
    if (placeholdersOf(apiVersion).form !== 'none' || placeholdersOf(kind).form !== 'none') {
      continue;
    }
    const entry = `resources.${resource.name}`;
    const where = `${entry} (spec.resources[${index}].manifest)`;
    try {
      const mapping = await mapper.mappingFor(apiVersion, kind, signal, { maxAgeMs });
      if (mapping === undefined) {
        return {
          entry,
          message: `${where}: the API server serves no kind ${kind} in ${apiVersion}`,
        };
      }
    } catch (error) {
      if (error instanceof KubeApiError || error instanceof KubeTransportError) throw error;
      if (signal?.aborted) throw error;
      return {
        entry,
        message: `${where}: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }
  return undefined;
}
