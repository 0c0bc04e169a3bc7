// The layering rule of DESIGN.md ("Code shape"), checked in CI as kopf does with import-linter.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'kube-client-only-in-src-kube',
      comment: 'src/kube is the only importer of @kubernetes/client-node.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/kube/' },
      to: { path: 'node_modules/@kubernetes/client-node' },
    },
    {
      name: 'api-imports-nothing-of-ours',
      comment: 'src/api is the single source of truth: it depends on no other layer.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/', pathNot: '^src/api/' },
    },
    {
      name: 'controllers-and-facade-speak-through-kube',
      comment: 'The operator and the facade must work unchanged against a real cluster.',
      severity: 'error',
      from: { path: '^src/(controllers|facade|runtime)/' },
      to: { path: '^src/local/' },
    },
    {
      name: 'local-is-a-server-only',
      comment: 'The local control plane stands alone: it knows nothing of the operator.',
      severity: 'error',
      from: { path: '^src/local/' },
      to: { path: '^src/(controllers|facade|runtime|kube)/' },
    },
    {
      name: 'no-dev-dependencies-in-src',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
