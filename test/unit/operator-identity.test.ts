// What `nrn-operator local` installs as the operator's identity (src/operator-identity.ts, ADR
// 0030): deploy/'s identity files, the ones of deploy/kustomization.yaml that grant the operator
// anything, shipped in the package; moved to another namespace as kustomize would; the
// kubeconfig copy that carries only the token. The default classes need no right beyond them.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  DEPLOY_DIR,
  IDENTITY_FILES,
  kubeconfigWithToken,
  operatorIdentityManifests,
  operatorUsername,
} from '../../src/operator-identity.js';
import { loadDefaultScopeClasses } from '../../src/scope-classes-install.js';

const ROOT = join(import.meta.dirname, '../..');
const IDENTITY_KINDS = [
  'Namespace',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
];

describe('the identity local installs', () => {
  it('is every file of deploy/kustomization.yaml that grants the operator anything, shipped', async () => {
    expect(join(DEPLOY_DIR)).toBe(join(ROOT, 'deploy/'));
    const kustomization = parse(await readFile(join(ROOT, 'deploy/kustomization.yaml'), 'utf8'));
    const resources = kustomization.resources as string[];
    for (const file of IDENTITY_FILES) expect(resources).toContain(file);
    for (const file of resources.filter(
      (f) => !(IDENTITY_FILES as readonly string[]).includes(f),
    )) {
      const kinds = parseAllDocuments(await readFile(join(ROOT, 'deploy', file), 'utf8')).map(
        (doc) => (doc.toJS() as { kind: string }).kind,
      );
      expect(
        kinds.filter((kind) => IDENTITY_KINDS.includes(kind)),
        file,
      ).toEqual([]);
    }
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      files: string[];
    };
    for (const file of IDENTITY_FILES) expect(pkg.files).toContain(`deploy/${file}`);
  });

  it('the default classes make only the envelope: deploy/scope-class-kinds.yaml is not needed', async () => {
    const classes = await loadDefaultScopeClasses();
    expect(classes.length).toBeGreaterThan(0);
    for (const scopeClass of classes) {
      expect(scopeClass.spec.resources ?? [], scopeClass.metadata.name).toEqual([]);
    }
  });

  it("is deploy/'s as written in nrn-system, and moved whole to another namespace", async () => {
    const shipped = await operatorIdentityManifests();
    expect(shipped.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual([
      'Namespace/nrn-system',
      'ServiceAccount/nrn-operator',
      'ClusterRole/nrn-operator',
      'ClusterRole/nrn-operator-core',
      'ClusterRoleBinding/nrn-operator',
      'Role/nrn-operator',
      'RoleBinding/nrn-operator',
    ]);
    expect(operatorUsername()).toBe('system:serviceaccount:nrn-system:nrn-operator');

    const moved = await operatorIdentityManifests('ops');
    const find = (kind: string) => moved.find((m) => m.kind === kind);
    expect(find('Namespace')?.metadata.name).toBe('ops');
    expect(find('ServiceAccount')?.metadata.namespace).toBe('ops');
    expect(find('Role')?.metadata.namespace).toBe('ops');
    expect(find('ClusterRoleBinding')?.metadata.name).toBe('nrn-operator-ops');
    for (const binding of moved.filter((m) => m.subjects !== undefined)) {
      expect(binding.subjects).toEqual([
        { kind: 'ServiceAccount', name: 'nrn-operator', namespace: 'ops' },
      ]);
    }
    expect(operatorUsername('ops')).toBe('system:serviceaccount:ops:nrn-operator');
  });

  it("the operator's kubeconfig is the admin's with the token as every user's only credential", () => {
    const admin = `
apiVersion: v1
kind: Config
clusters:
  - name: local
    cluster: {server: 'https://127.0.0.1:6443', certificate-authority-data: Q0E=}
users:
  - name: admin
    user: {token: admin-secret, client-certificate-data: Q0VSVA==}
contexts:
  - name: local
    context: {cluster: local, user: admin}
current-context: local
`;
    const copy = parse(kubeconfigWithToken(admin, 'sa-token')) as Record<string, unknown>;
    const original = parse(admin) as Record<string, unknown>;
    expect(copy.users).toEqual([{ name: 'admin', user: { token: 'sa-token' } }]);
    expect({ ...copy, users: undefined }).toEqual({ ...original, users: undefined });
    expect(() => kubeconfigWithToken('', 't')).toThrow(/not a mapping/);
  });
});
