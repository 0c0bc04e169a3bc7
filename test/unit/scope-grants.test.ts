// The rule of which Scopes may attach to an Application (domain/scopes/grants.ts), the
// Application field that grants (spec.scope_namespaces: names, no wildcard), and the Scope
// admission review that calls the rule at create.
import { describe, expect, it } from 'vitest';
import { ADMIT } from '../../src/admission/review.js';
import { reviewScope } from '../../src/admission/scope.js';
import {
  type ApplicationSpec,
  ApplicationSpec as ApplicationSpecSchema,
  type ApplicationStatus,
  type ScopeSpec,
  type ScopeStatus,
} from '../../src/api/index.js';
import type { ApplicationObject } from '../../src/domain/applications.js';
import { attachmentRefusal, grantsScopeNamespace } from '../../src/domain/scopes/index.js';
import type { Informer, KubeObject } from '../../src/kube/index.js';
import type { Obj } from '../../src/plugin/status.js';
import { buildTree, renderTree } from '../../src/plugin/tree.js';

const app = (namespace: string, grants?: string[]): ApplicationObject => ({
  apiVersion: 'platform.nrn.dev/v1alpha1',
  kind: 'Application',
  metadata: { name: 'shop', namespace, creationTimestamp: '2026-01-01T00:00:00Z', uid: 'u1' },
  spec: {
    id: 10,
    name: 'shop',
    nrn: 'organization=1:account=2:application=10',
    ...(grants !== undefined ? { scope_namespaces: grants } : {}),
  },
});

/** Only what the review reads of an informer: its indexes, over a fixed list. */
function informerOf<Spec, Status>(
  objects: KubeObject<Spec, Status>[],
  index: (o: KubeObject<Spec, Status>) => string[],
): Informer<Spec, Status> {
  return {
    byIndex: (_name: string, value: string) => objects.filter((o) => index(o).includes(value)),
  } as unknown as Informer<Spec, Status>;
}

const applications = (apps: ApplicationObject[]) =>
  informerOf<ApplicationSpec, ApplicationStatus>(apps, (a) =>
    a.spec !== undefined ? [String(a.spec.id)] : [],
  );
const noScopes = informerOf<ScopeSpec, ScopeStatus>([], () => []);

const create = (namespace: string) => ({
  uid: 'r1',
  kind: { group: 'platform.nrn.dev', version: 'v1alpha1', kind: 'Scope' },
  operation: 'CREATE' as const,
  namespace,
  name: 'web',
  object: {
    apiVersion: 'platform.nrn.dev/v1alpha1',
    kind: 'Scope',
    metadata: { name: 'web', namespace },
    spec: { name: 'web', type: 'web_pool', application_id: 10 },
  },
});

describe('which scopes may attach to an application', () => {
  it('a scope of its own namespace always; another namespace only when granted by name', () => {
    expect(grantsScopeNamespace(app('team-a'), 'team-a')).toBe(true);
    expect(grantsScopeNamespace(app('team-a'), 'evil')).toBe(false);
    expect(grantsScopeNamespace(app('team-a', []), 'evil')).toBe(false);
    expect(grantsScopeNamespace(app('team-a', ['team-b']), 'evil')).toBe(false);
    expect(grantsScopeNamespace(app('team-a', ['team-b', 'evil']), 'evil')).toBe(true);
  });

  it('the refusal names the application, its namespace and how its owners grant', () => {
    expect(attachmentRefusal(app('team-a', ['evil']), 'evil')).toBeUndefined();
    expect(attachmentRefusal(app('team-a'), 'evil')).toBe(
      "application 10 does not grant namespace evil: a Scope attaches only to an application of its own namespace, or to one whose spec.scope_namespaces lists the Scope's namespace (its owners add evil there)",
    );
  });

  it('spec.scope_namespaces holds namespace names only: no wildcard, no pattern', () => {
    const spec = (grants: unknown) =>
      ApplicationSpecSchema.safeParse({
        id: 10,
        name: 'shop',
        nrn: 'organization=1:account=2:application=10',
        scope_namespaces: grants,
      }).success;
    expect(spec(['evil', 'team-b'])).toBe(true);
    expect(spec(['*'])).toBe(false);
    expect(spec(['team-*'])).toBe(false);
    expect(spec(['Team'])).toBe(false);
    expect(spec(Array.from({ length: 65 }, (_, i) => `ns-${i}`))).toBe(false);
  });
});

describe('the Scope admission review', () => {
  it('refuses a scope naming an application of another namespace that does not grant it', () => {
    const verdict = reviewScope(noScopes, applications([app('team-a')]), create('evil'));
    expect(verdict).toEqual({
      allowed: false,
      reason: 'ApplicationNotGranted',
      message: expect.stringMatching(
        /^spec\.application_id: application 10 does not grant namespace evil: /,
      ),
    });
  });

  it('admits the application’s own namespace, a granted one, and an application not there yet', () => {
    expect(reviewScope(noScopes, applications([app('team-a')]), create('team-a')).allowed).toBe(
      true,
    );
    expect(
      reviewScope(noScopes, applications([app('team-a', ['evil'])]), create('evil')).allowed,
    ).toBe(true);
    expect(reviewScope(noScopes, applications([]), create('evil')).allowed).toBe(true);
  });

  it('a scope of another namespace holds a slug of the application only once attached', () => {
    const squatter = (status?: ScopeStatus): KubeObject<ScopeSpec, ScopeStatus> => ({
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'Scope',
      metadata: { name: 'web', namespace: 'evil', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { name: 'web', type: 'web_pool', application_id: 10 } as ScopeSpec,
      ...(status !== undefined ? { status } : {}),
    });
    const holding = (scope: KubeObject<ScopeSpec, ScopeStatus>) =>
      informerOf<ScopeSpec, ScopeStatus>([scope], (s) => [`${s.spec?.application_id}/web`]);
    const ownCreate = create('team-a');
    expect(reviewScope(holding(squatter()), applications([app('team-a')]), ownCreate)).toBe(ADMIT);
    const attached = squatter({
      status: 'active',
      id: 7,
      slug: 'web',
      domain: 'web-shop.example.com',
      nrn: 'organization=1:account=2:application=10:scope=7',
    });
    expect(reviewScope(holding(attached), applications([app('team-a')]), ownCreate)).toMatchObject({
      allowed: false,
      reason: 'DuplicateSlug',
    });
    // Granted but not attached yet: its slug is taken when it attaches, if still free.
    expect(
      reviewScope(holding(squatter()), applications([app('team-a', ['evil'])]), ownCreate),
    ).toBe(ADMIT);
  });

  it('admits any update: application_id is fixed, and a scope must keep losing its finalizer', () => {
    const request = {
      ...create('evil'),
      operation: 'UPDATE' as const,
      oldObject: create('evil').object,
    };
    expect(reviewScope(noScopes, applications([app('team-a')]), request).allowed).toBe(true);
  });
});

describe('kubectl nrn tree', () => {
  const scope = (namespace: string, name: string) =>
    ({
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'Scope',
      metadata: { name, namespace },
      spec: { name, type: 'web_pool', application_id: 10 },
    }) as unknown as Obj;
  const render = (grants?: string[]) =>
    renderTree(
      buildTree({
        applications: [app('team-a', grants) as unknown as Obj],
        scopes: [scope('team-a', 'api'), scope('evil', 'web')],
        services: [],
      }),
      (text) => text,
    );

  it('places a scope not yet given an id under its application only when the application lets it in', () => {
    const [under, outside] = render().split('(no NRN)');
    expect(under).toContain('team-a/api');
    expect(under).not.toContain('evil/web');
    expect(outside).toContain('evil/web');
    expect(render(['evil'])).not.toContain('(no NRN)');
  });
});
