// The kinds any ScopeClass may template (ADR 0029): the setting's spelling (group/Kind, Kind
// alone for the core group, `*` and `?` globs, `!` refusals) and its matching, as Argo CD's
// AppProject resource lists match (filepath.Match on group and kind; a refusal wins).
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/command-line.js';
import {
  DEFAULT_NAMESPACED_KINDS,
  kindAllowlist,
  kindRefusal,
  parseKindList,
} from '../../src/domain/scope-classes/kinds.js';

const namespaced = (group: string, kind: string) => ({ group, kind, namespaced: true });
const cluster = (group: string, kind: string) => ({ group, kind, namespaced: false });

describe('the default setting', () => {
  const kinds = kindAllowlist();
  it('admits namespaced kinds but RBAC and admission ones', () => {
    for (const [group, kind] of [
      ['', 'ConfigMap'],
      ['', 'Secret'],
      ['apps', 'Deployment'],
      ['networking.k8s.io', 'NetworkPolicy'],
      ['platform.nrn.dev', 'Service'],
    ] as const) {
      expect(kindRefusal(kinds, 'x', namespaced(group, kind))).toBeUndefined();
    }
    expect(
      kindRefusal(
        kinds,
        'spec.resources[0].manifest',
        namespaced('rbac.authorization.k8s.io', 'Role'),
      ),
    ).toBe(
      `spec.resources[0].manifest: kind rbac.authorization.k8s.io/Role is not among the namespaced kinds a class may make (--scope-class-namespaced-kinds or NRN_SCOPE_CLASS_NAMESPACED_KINDS: "${DEFAULT_NAMESPACED_KINDS}")`,
    );
    expect(
      kindRefusal(kinds, 'x', namespaced('rbac.authorization.k8s.io', 'RoleBinding')),
    ).toBeDefined();
    expect(
      kindRefusal(kinds, 'x', namespaced('admissionregistration.k8s.io', 'Anything')),
    ).toBeDefined();
  });

  it('admits no cluster-scoped kind, naming the setting that would', () => {
    expect(kindRefusal(kinds, 'resources.ns', cluster('', 'Namespace'))).toBe(
      'resources.ns: kind Namespace is not among the cluster-scoped kinds a class may make (--scope-class-cluster-kinds or NRN_SCOPE_CLASS_CLUSTER_KINDS: none)',
    );
    expect(
      kindRefusal(kinds, 'x', cluster('rbac.authorization.k8s.io', 'ClusterRoleBinding')),
    ).toMatch(/kind rbac\.authorization\.k8s\.io\/ClusterRoleBinding is not among/);
  });
});

describe('a widened setting', () => {
  it('matches group and kind as globs; a refusal wins over an admission', () => {
    const kinds = kindAllowlist(
      'ConfigMap, apps/*, *.example.com/Widget?, rbac.authorization.k8s.io/Role*, !rbac.authorization.k8s.io/RoleBinding',
      'rbac.authorization.k8s.io/ClusterRole',
    );
    const admitted = (type: { group: string; kind: string; namespaced: boolean }) =>
      kindRefusal(kinds, 'x', type) === undefined;
    expect(admitted(namespaced('', 'ConfigMap'))).toBe(true);
    // Kind alone is the core group only, as apiVersion v1 is.
    expect(admitted(namespaced('', 'Secret'))).toBe(false);
    expect(admitted(namespaced('other.io', 'ConfigMap'))).toBe(false);
    expect(admitted(namespaced('apps', 'StatefulSet'))).toBe(true);
    expect(admitted(namespaced('a.example.com', 'Widgets'))).toBe(true);
    expect(admitted(namespaced('example.com', 'Widgets'))).toBe(false);
    expect(admitted(namespaced('a.example.com', 'Widget'))).toBe(false);
    expect(admitted(namespaced('rbac.authorization.k8s.io', 'Role'))).toBe(true);
    expect(admitted(namespaced('rbac.authorization.k8s.io', 'RoleBinding'))).toBe(false);
    expect(admitted(cluster('rbac.authorization.k8s.io', 'ClusterRole'))).toBe(true);
    expect(admitted(cluster('rbac.authorization.k8s.io', 'ClusterRoleBinding'))).toBe(false);
    // The lists are by scope: a namespaced entry never admits a cluster-scoped kind.
    expect(admitted(cluster('apps', 'Deployment'))).toBe(false);
  });

  it('*/* admits every group, the core one included', () => {
    const kinds = kindAllowlist('*/*', '*/*');
    expect(kindRefusal(kinds, 'x', cluster('', 'Namespace'))).toBeUndefined();
    expect(
      kindRefusal(kinds, 'x', namespaced('rbac.authorization.k8s.io', 'Role')),
    ).toBeUndefined();
    const none = kindAllowlist('!*/*', '');
    expect(kindRefusal(none, 'x', namespaced('', 'ConfigMap'))).toBeDefined();
  });

  it('a list that is not one is refused with the entry, by the flag and by its variable', () => {
    expect(parseKindList('apps/Deployment, Bad Kind')).toEqual({
      problem:
        '"Bad Kind" is not group/Kind (Kind alone for the core group; * and ? match, ! refuses)',
    });
    expect(parseKindList('Apps.IO/Thing')).toHaveProperty('problem');
    expect(parseKindList('')).toEqual({ text: '', entries: [] });
    const flag = parseCommandLine(['run', '--scope-class-cluster-kinds', 'rbac/ClusterRole/x']);
    expect(flag).toMatchObject({ outcome: 'refuse' });
    expect((flag as { text: string }).text).toContain(
      '--scope-class-cluster-kinds "rbac/ClusterRole/x": "rbac/ClusterRole/x" is not group/Kind',
    );
    const env = parseCommandLine(['local'], { NRN_SCOPE_CLASS_NAMESPACED_KINDS: '!' });
    expect((env as { text: string }).text).toContain(
      'NRN_SCOPE_CLASS_NAMESPACED_KINDS="!" (for --scope-class-namespaced-kinds)',
    );
    const good = parseCommandLine(['local', '--scope-class-namespaced-kinds', '*/*']);
    expect(good).toMatchObject({
      outcome: 'invoke',
      invocation: {
        flags: { 'scope-class-namespaced-kinds': '*/*', 'scope-class-cluster-kinds': '' },
      },
    });
  });
});
