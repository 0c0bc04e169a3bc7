// A ScopeClass checked against the cluster it is applied to (ADR 0031): every resource names a
// kind the API server serves (discovery, through the REST mapper), its manifest fits the
// OpenAPI v3 schema the API server publishes for that kind (domain/scope-classes/
// manifest-schema.ts), and a child two scopes would share is warned about
// (domain/scope-classes/child-names.ts). What cannot be asked refuses the class with what
// failed: the webhook's failurePolicy decides what the API server does when the webhook itself
// cannot answer.
import type { ScopeClassSpec } from '../api/index.js';
import { sharedChildNameWarnings } from '../domain/scope-classes/child-names.js';
import { manifestSchemaProblems } from '../domain/scope-classes/manifest-schema.js';
import { placeholdersOf, type TemplateProblem } from '../domain/scope-classes/template.js';
import { type Kube, KubeApiError, KubeTransportError, type RestMapping } from '../kube/index.js';
import { refuse, type Verdict } from './review.js';

/** Problems named in one refusal; the rest are counted. */
const MAX_LISTED = 10;
/** A kind deleted is refused within this long; discovery costs a request per group-version per it. */
const DISCOVERY_MAX_AGE_MS = 5_000;
/** All of it well within kube's default webhook timeout (10 s). */
const DEADLINE_MS = 8_000;

export type ClusterView = Pick<Kube, 'mapper' | 'openapi'>;

interface Target {
  readonly index: number;
  readonly path: string;
  readonly manifest: Record<string, unknown>;
  readonly apiVersion: string;
  readonly kind: string;
}

type Outcome =
  | { readonly mapping: RestMapping; readonly problems: readonly TemplateProblem[] }
  | { readonly unserved: TemplateProblem }
  | { readonly failed: string };

/** The class's resources against the cluster: a refusal, or admission with any warnings. */
export async function checkClassAgainstCluster(
  spec: ScopeClassSpec,
  cluster: ClusterView,
): Promise<Verdict> {
  const targets: Target[] = [];
  const warnings: string[] = [];
  for (const [index, resource] of (spec.resources ?? []).entries()) {
    const path = `spec.resources[${index}].manifest`;
    const manifest = resource.manifest as Record<string, unknown>;
    const { apiVersion, kind } = manifest as { apiVersion?: unknown; kind?: unknown };
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') continue;
    if (placeholdersOf(apiVersion).form !== 'none' || placeholdersOf(kind).form !== 'none') {
      warnings.push(
        `${path}: its apiVersion or kind is a placeholder, not checked against the cluster`,
      );
      continue;
    }
    targets.push({ index, path, manifest, apiVersion, kind });
  }
  let outcomes: Outcome[];
  try {
    outcomes = await withDeadline(Promise.all(targets.map((t) => checkOne(t, cluster))));
  } catch (error) {
    return refuse(
      'ClusterUnavailable',
      `cannot check the class against the API server: ${messageOf(error)}`,
    );
  }
  const failed = outcomes.find((o): o is { failed: string } => 'failed' in o);
  if (failed !== undefined) return refuse('ClusterUnavailable', failed.failed);
  const unserved = outcomes.flatMap((o) => ('unserved' in o ? [o.unserved] : []));
  if (unserved.length > 0) return refuse('KindNotServed', listed(unserved));
  const invalid = outcomes.flatMap((o) => ('problems' in o ? o.problems : []));
  if (invalid.length > 0) return refuse('SchemaInvalid', listed(invalid));
  const namespaced = new Map<number, boolean>();
  for (const [i, outcome] of outcomes.entries()) {
    const target = targets[i];
    if (target !== undefined && 'mapping' in outcome) {
      namespaced.set(target.index, outcome.mapping.namespaced);
    }
  }
  warnings.push(...sharedChildNameWarnings(spec, (index) => namespaced.get(index)));
  return warnings.length > 0 ? { allowed: true, warnings } : { allowed: true };
}

async function checkOne(target: Target, cluster: ClusterView): Promise<Outcome> {
  const { path, apiVersion, kind } = target;
  let mapping: RestMapping | undefined;
  try {
    mapping = await cluster.mapper.mappingFor(apiVersion, kind, undefined, {
      maxAgeMs: DISCOVERY_MAX_AGE_MS,
    });
  } catch (error) {
    // A malformed apiVersion or kind throws before any request: the class's error.
    if (!(error instanceof KubeApiError) && !(error instanceof KubeTransportError)) {
      return { unserved: { path, message: messageOf(error) } };
    }
    return { failed: `cannot read API discovery for ${apiVersion} (${path}): ${messageOf(error)}` };
  }
  if (mapping === undefined) {
    return {
      unserved: { path, message: `the API server serves no kind ${kind} in ${apiVersion}` },
    };
  }
  let published: Awaited<ReturnType<ClusterView['openapi']['kindSchema']>>;
  try {
    published = await cluster.openapi.kindSchema(mapping.group, mapping.version, mapping.kind);
  } catch (error) {
    return {
      failed: `cannot read the OpenAPI schema of ${apiVersion} from the API server (${path}): ${messageOf(error)}`,
    };
  }
  // A kind the server publishes no schema for is checked by the server alone, at apply.
  const problems =
    published === undefined ? [] : manifestSchemaProblems(target.manifest, published, path);
  return { mapping, problems };
}

function listed(problems: readonly TemplateProblem[]): string {
  const shown = problems.slice(0, MAX_LISTED).map((p) => `${p.path}: ${p.message}`);
  const more = problems.length - shown.length;
  return `${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

function withDeadline<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
