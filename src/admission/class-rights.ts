// A ScopeClass makes only what its author could make (docs/adr/0029-class-author-rights.md):
// every kind the class templates is admitted by the operator's kind setting, and the requesting
// user may create, update, patch and delete it where it can land, as the API server answers a
// SubjectAccessReview asked as that user. Kubernetes refuses a RoleBinding granting more than
// its author holds the same way (RBAC's escalation check); the refusal names the first right
// missing, with the path of what needs it.
import type { ScopeClassSpec } from '../api/index.js';
import { type KindAllowlist, kindRefusal } from '../domain/scope-classes/kinds.js';
import { placeholdersOf } from '../domain/scope-classes/template.js';
import {
  KubeApiError,
  KubeTransportError,
  type ResourceType,
  type RestMapper,
  type ReviewAttributes,
  type ReviewedUser,
  type Reviews,
} from '../kube/index.js';
import { ADMIT, refuse, type Verdict } from './review.js';

export interface ClassRightsDeps {
  readonly mapper: Pick<RestMapper, 'resourceFor'>;
  readonly reviews: Pick<Reviews, 'subjectAccessReview'>;
  readonly kinds: KindAllowlist;
  /** The whole check's deadline (ms): kube's call to the webhook gives up at 10 s. */
  readonly timeoutMs?: number;
  /** SubjectAccessReviews in flight at once, at most. */
  readonly concurrency?: number;
}

/** The verbs the operator uses on a child (apply is a patch; a create, an update on drift). */
export const CHILD_VERBS = ['create', 'update', 'patch', 'delete'] as const;
const DEFAULT_TIMEOUT_MS = 6000;
const DEFAULT_CONCURRENCY = 8;

/** One kind the class templates, and where: namespace '' is every namespace. */
interface Templated {
  readonly path: string;
  readonly group: string;
  readonly resource: string;
  readonly namespace: string;
}

/** The envelope's kinds: all in the scope's namespace, a pattern, so every namespace. */
function envelope(spec: ScopeClassSpec): Templated[] {
  const env = spec.namespace;
  const at = (path: string, group: string, resource: string): Templated => ({
    path,
    group,
    resource,
    namespace: '',
  });
  return [
    at('spec.namespace', '', 'namespaces'),
    ...(env.quota !== undefined ? [at('spec.namespace.quota', '', 'resourcequotas')] : []),
    ...(env.limit_range !== undefined ? [at('spec.namespace.limit_range', '', 'limitranges')] : []),
    ...(env.network_policy === 'default_deny'
      ? [at('spec.namespace.network_policy', 'networking.k8s.io', 'networkpolicies')]
      : []),
    ...(env.service_account !== undefined
      ? [at('spec.namespace.service_account', '', 'serviceaccounts')]
      : []),
  ];
}

const isPlaceholder = (value: unknown) =>
  typeof value === 'string' && placeholdersOf(value).form !== 'none';
/** `${scope.namespace}` alone: the envelope's name, which the class's own pattern makes. */
const SCOPE_NAMESPACE_PLACEHOLDER = /^\$\{\s*scope\.namespace\s*\}$/;

/**
 * The class's verdict on its author's rights. An apiVersion/kind the API server does not serve
 * is not judged here (the class's schema check refuses it); one the check cannot resolve for
 * an API error is refused, saying so: a class is not admitted unchecked.
 */
export async function reviewClassRights(
  deps: ClassRightsDeps,
  spec: ScopeClassSpec,
  user: ReviewedUser | undefined,
): Promise<Verdict> {
  // A webhook or none class makes nothing itself, but it unmakes: serving a scope another
  // class served, it has what that class made removed and its namespace let go of (ADR 0025,
  // 0028), and a webhook one hands scopes to an agent of its author's choosing. So it takes
  // the envelope's rights all the same (ADR 0029): a platform team's, not a tenant's.
  const signal = AbortSignal.timeout(deps.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const templated = envelope(spec);
  const resources = spec.provisioner.type === 'namespace' ? (spec.resources ?? []) : [];
  let types: (ResourceType | undefined)[];
  try {
    types = await Promise.all(
      resources.map(async ({ manifest }, index) => {
        const { apiVersion, kind } = manifest as { apiVersion?: unknown; kind?: unknown };
        if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
        // Not a kind yet: what the template computes is what the rights would have to follow.
        for (const [field, value] of [
          ['apiVersion', apiVersion],
          ['kind', kind],
        ] as const) {
          if (isPlaceholder(value)) {
            throw new Refusal(
              `spec.resources[${index}].manifest.${field}: must be written out, not a \${...} placeholder: the rights a kind needs are checked when the class is applied`,
            );
          }
        }
        try {
          return await deps.mapper.resourceFor(apiVersion, kind, signal);
        } catch (error) {
          if (
            signal.aborted ||
            error instanceof KubeApiError ||
            error instanceof KubeTransportError
          ) {
            throw error;
          }
          // A malformed apiVersion or kind: the class's schema check names it.
          return undefined;
        }
      }),
    );
  } catch (error) {
    if (error instanceof Refusal) return refuse('TemplateInvalid', error.message);
    return unchecked(user, error, signal);
  }
  for (const [index, { manifest }] of resources.entries()) {
    const path = `spec.resources[${index}].manifest`;
    // Where a child goes is the class's to say: a scope's author (its dimensions, labels,
    // name) must not choose it (kube-system, another team's namespace). Only the scope's own
    // namespace may be named by a placeholder.
    const where = (manifest as { metadata?: { namespace?: unknown } }).metadata?.namespace;
    if (isPlaceholder(where) && !SCOPE_NAMESPACE_PLACEHOLDER.test(where as string)) {
      return refuse(
        'TemplateInvalid',
        `${path}.metadata.namespace: a placeholder here may only be \${scope.namespace}: a scope's author must not choose where the class's objects go; write the namespace out, or leave it out for the scope's own`,
      );
    }
    const type = types[index];
    if (type === undefined) continue;
    const refused = kindRefusal(deps.kinds, path, type);
    if (refused !== undefined) return refuse('KindNotAllowed', refused);
    const fixed = (manifest as { metadata?: { namespace?: unknown } }).metadata?.namespace;
    templated.push({
      path,
      group: type.group,
      resource: type.plural,
      namespace:
        type.namespaced && typeof fixed === 'string' && fixed !== '' && !isPlaceholder(fixed)
          ? fixed
          : '',
    });
  }
  if (user === undefined) {
    return refuse(
      'AuthorUnknown',
      'the review names no user: the rights of the class author cannot be checked',
    );
  }
  const missing = await firstMissing(deps, user, templated, signal).catch((error: unknown) =>
    error instanceof Error ? error : new Error(String(error)),
  );
  if (missing instanceof Error) return unchecked(user, missing, signal);
  if (missing === undefined) return ADMIT;
  const { need, verb } = missing;
  const resource = need.group === '' ? need.resource : `${need.resource}.${need.group}`;
  const where = need.namespace === '' ? 'cluster-wide' : `in namespace ${need.namespace}`;
  return refuse(
    'AuthorLacksRight',
    `${need.path}: user ${user.username} may not ${verb} ${resource} (${where}); a class may make only what its author could make`,
  );
}

class Refusal extends Error {}

function unchecked(user: ReviewedUser | undefined, error: unknown, signal: AbortSignal): Verdict {
  const reason = signal.aborted
    ? 'the API server did not answer in time'
    : error instanceof Error
      ? error.message
      : String(error);
  return refuse(
    'RightsUnchecked',
    `cannot check the rights of ${user !== undefined ? `user ${user.username}` : 'the author'} to what the class makes: ${reason}; try again`,
  );
}

/**
 * Every right asked, CHILD_VERBS for each kind and place (each asked once), at most
 * `concurrency` at a time; the first denied in the class's order, or undefined.
 */
async function firstMissing(
  deps: ClassRightsDeps,
  user: ReviewedUser,
  templated: readonly Templated[],
  signal: AbortSignal,
): Promise<{ need: Templated; verb: string } | undefined> {
  const asks: { need: Templated; verb: string; key: string }[] = [];
  const answers = new Map<string, Promise<boolean>>();
  const queue: (() => void)[] = [];
  let running = 0;
  const limit = deps.concurrency ?? DEFAULT_CONCURRENCY;
  const ask = (attributes: ReviewAttributes): Promise<boolean> =>
    new Promise<void>((start) => {
      if (running < limit) {
        running++;
        start();
      } else {
        queue.push(() => start());
      }
    }).then(() =>
      deps.reviews.subjectAccessReview(user, attributes, { signal }).finally(() => {
        const next = queue.shift();
        if (next !== undefined) next();
        else running--;
      }),
    );
  for (const need of templated) {
    for (const verb of CHILD_VERBS) {
      const key = `${need.group}/${need.resource}/${need.namespace}/${verb}`;
      asks.push({ need, verb, key });
      if (!answers.has(key)) {
        answers.set(
          key,
          ask({
            group: need.group,
            resource: need.resource,
            verb,
            ...(need.namespace !== '' ? { namespace: need.namespace } : {}),
          }),
        );
      }
    }
  }
  // Settled together: one failure is the verdict, and none is left unhandled.
  const settled = new Map<string, boolean>();
  const results = await Promise.allSettled(
    [...answers].map(async ([key, answer]) => settled.set(key, await answer)),
  );
  const failed = results.find((r) => r.status === 'rejected');
  if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
  for (const { need, verb, key } of asks) {
    if (settled.get(key) !== true) return { need, verb };
  }
  return undefined;
}
