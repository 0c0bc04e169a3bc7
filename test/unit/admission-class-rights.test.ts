// The webhook's review of a ScopeClass's author (ADR 0029) where the API server cannot be made
// to misbehave on purpose: which questions it asks (each once, where each kind lands), how many
// at a time, and what it answers when the API server fails or is slow. The answers through a
// real API server and kubectl: test/integration/scope-class-authors.test.ts.
import { describe, expect, it } from 'vitest';
import { reviewClassRights } from '../../src/admission/class-rights.js';
import { ScopeClassSpec } from '../../src/api/index.js';
import { kindAllowlist } from '../../src/domain/scope-classes/kinds.js';
import type { ResourceType, ReviewAttributes } from '../../src/kube/index.js';
import { KubeApiError } from '../../src/kube/index.js';

const TYPES: Record<string, ResourceType> = {
  'v1/ConfigMap': {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
  },
  'v1/Namespace': {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
  },
  'apps/v1/Deployment': {
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
  },
};
const mapper = {
  resourceFor: async (apiVersion: string, kind: string) => TYPES[`${apiVersion}/${kind}`],
};
const user = { username: 'alice', groups: ['team'] };
const spec = (resources: unknown[], extra: Record<string, unknown> = {}) =>
  ScopeClassSpec.parse({
    scope_type: 'web_pool',
    resources: resources.map((manifest, i) => ({ name: `r${i}`, manifest })),
    ...extra,
  });
const configMap = (namespace?: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c-${scope.id}', ...(namespace !== undefined ? { namespace } : {}) },
});

/** Answers every question with `allowed`, recording it; at most how many were in flight. */
function recorder(allowed: (a: ReviewAttributes) => boolean = () => true) {
  const asked: ReviewAttributes[] = [];
  let inFlight = 0;
  let most = 0;
  return {
    asked,
    most: () => most,
    reviews: {
      async subjectAccessReview(_user: unknown, attributes: ReviewAttributes) {
        asked.push(attributes);
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 2));
        inFlight--;
        return allowed(attributes);
      },
    },
  };
}

describe('the review of a class author', () => {
  it('asks each verb once per kind and place: a fixed namespace there, else cluster-wide', async () => {
    const r = recorder();
    const verdict = await reviewClassRights(
      { mapper, reviews: r.reviews, kinds: kindAllowlist(undefined, 'Namespace'), concurrency: 3 },
      spec([
        configMap(),
        configMap(),
        configMap('team-a'),
        configMap('${scope.namespace}'),
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', namespace: 'ignored' } },
      ]),
      user,
    );
    expect(verdict).toEqual({ allowed: true });
    const places = new Set(r.asked.map((a) => `${a.resource}@${a.namespace ?? '*'}:${a.verb}`));
    expect(places.size).toBe(r.asked.length);
    expect([...places].sort()).toEqual(
      [
        ...['create', 'update', 'patch', 'delete'].flatMap((verb) => [
          `namespaces@*:${verb}`,
          `configmaps@*:${verb}`,
          `configmaps@team-a:${verb}`,
        ]),
      ].sort(),
    );
    expect(r.most()).toBeLessThanOrEqual(3);
  });

  it('refuses naming the first right missing, in the class order', async () => {
    const r = recorder(
      (a) => !(a.resource === 'deployments' && a.verb === 'delete') && a.resource !== 'configmaps',
    );
    const verdict = await reviewClassRights(
      { mapper, reviews: r.reviews, kinds: kindAllowlist() },
      spec([
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } },
        configMap('team-a'),
      ]),
      user,
    );
    expect(verdict).toEqual({
      allowed: false,
      reason: 'AuthorLacksRight',
      message:
        'spec.resources[0].manifest: user alice may not delete deployments.apps (cluster-wide); a class may make only what its author could make',
    });
  });

  it('an API error, or no answer in time, refuses saying so', async () => {
    const failing = {
      subjectAccessReview: async () => {
        throw new KubeApiError(500, 'InternalError', 'etcd is gone');
      },
    };
    const failed = await reviewClassRights(
      { mapper, reviews: failing, kinds: kindAllowlist() },
      spec([]),
      user,
    );
    expect(failed).toMatchObject({ allowed: false, reason: 'RightsUnchecked' });
    expect((failed as { message: string }).message).toBe(
      'cannot check the rights of user alice to what the class makes: etcd is gone; try again',
    );
    const silent = {
      subjectAccessReview: (_u: unknown, _a: unknown, options?: { signal?: AbortSignal }) =>
        new Promise<boolean>((_, reject) =>
          options?.signal?.addEventListener('abort', () => reject(options.signal?.reason)),
        ),
    };
    const slow = await reviewClassRights(
      { mapper, reviews: silent, kinds: kindAllowlist(), timeoutMs: 50 },
      spec([]),
      user,
    );
    expect(slow).toEqual({
      allowed: false,
      reason: 'RightsUnchecked',
      message:
        'cannot check the rights of user alice to what the class makes: the API server did not answer in time; try again',
    });
  });

  it('a templated kind is refused; an unserved one is left to the schema check', async () => {
    const r = recorder();
    const templated = await reviewClassRights(
      { mapper, reviews: r.reviews, kinds: kindAllowlist() },
      spec([{ apiVersion: 'v1', kind: '${scope.labels.kind}', metadata: { name: 'x' } }]),
      user,
    );
    expect(templated).toMatchObject({ allowed: false, reason: 'TemplateInvalid' });
    expect((templated as { message: string }).message).toMatch(
      /^spec\.resources\[0\]\.manifest\.kind: must be written out, not a \$\{\.\.\.\} placeholder/,
    );
    const unserved = await reviewClassRights(
      { mapper, reviews: r.reviews, kinds: kindAllowlist() },
      spec([{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'x' } }]),
      user,
    );
    expect(unserved).toEqual({ allowed: true });
  });

  it('no user, no review: refused; a webhook class, which unmakes, takes the envelope rights', async () => {
    const r = recorder();
    expect(
      await reviewClassRights(
        { mapper, reviews: r.reviews, kinds: kindAllowlist() },
        spec([]),
        undefined,
      ),
    ).toMatchObject({ allowed: false, reason: 'AuthorUnknown' });
    const webhook = spec([], {
      provisioner: { type: 'webhook', url: 'https://agent.example/scopes' },
    });
    expect(
      await reviewClassRights(
        { mapper, reviews: r.reviews, kinds: kindAllowlist() },
        webhook,
        undefined,
      ),
    ).toMatchObject({ allowed: false, reason: 'AuthorUnknown' });
    expect(
      await reviewClassRights(
        { mapper, reviews: r.reviews, kinds: kindAllowlist() },
        webhook,
        user,
      ),
    ).toEqual({ allowed: true });
    expect(r.asked.some((question) => question.resource === 'namespaces')).toBe(true);
  });

  it('a child whose namespace a scope field would choose is refused; the scope namespace may be named', async () => {
    const r = recorder();
    const deps = { mapper, reviews: r.reviews, kinds: kindAllowlist() };
    const child = (namespace: string) => spec([configMap(namespace)]);
    const chosen = await reviewClassRights(deps, child('${scope.dimensions.env}'), user);
    expect(chosen).toMatchObject({ allowed: false, reason: 'TemplateInvalid' });
    expect((chosen as { message: string }).message).toContain(
      'spec.resources[0].manifest.metadata.namespace',
    );
    expect(await reviewClassRights(deps, child('${scope.namespace}'), user)).toEqual({
      allowed: true,
    });
  });
});
