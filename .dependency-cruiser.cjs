// The layering rules of ADR 0015 (docs/architecture.md draws them), checked in CI as kopf does with import-linter.
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
      from: { path: '^src/(controllers|domain|facade|runtime)/' },
      to: { path: '^src/local/' },
    },
    {
      name: 'facade-does-not-import-controllers',
      comment:
        'The facade and the reconcilers share what they both need through src/domain, never each other (ADR 0015).',
      severity: 'error',
      from: { path: '^src/facade/' },
      to: { path: '^src/(controllers|runtime)/' },
    },
    {
      name: 'controllers-do-not-import-the-facade',
      severity: 'error',
      from: { path: '^src/(controllers|runtime|domain)/' },
      to: { path: '^src/facade/' },
    },
    {
      name: 'domain-is-below-controllers',
      comment:
        'src/domain holds the rules both callers apply (scope identity and acceptance, status, names): it knows no caller.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/(controllers|runtime|local)/' },
    },
    {
      name: 'admission-is-beside-the-facade',
      comment:
        "The operator's admission webhook applies src/domain's rules to reviews: it knows neither the reconcilers nor the facade.",
      severity: 'error',
      from: { path: '^src/admission/' },
      to: { path: '^src/(controllers|facade|runtime|local)/' },
    },
    {
      name: 'plugin-is-a-client',
      comment:
        'kubectl-nrn reads the API server as any client does: through src/kube, judging with src/domain; it runs none of the operator, facade or local plane.',
      severity: 'error',
      from: { path: '^src/plugin/' },
      to: { path: '^src/(controllers|facade|admission|runtime|local)/' },
    },
    {
      name: 'runtime-knows-no-kind',
      comment: 'src/runtime is controller machinery: it knows no kind of ours.',
      severity: 'error',
      from: { path: '^src/runtime/' },
      to: { path: '^src/(controllers|domain|api)/' },
    },
    {
      name: 'local-is-a-server-only',
      comment: 'The local control plane stands alone: it knows nothing of the operator.',
      severity: 'error',
      from: { path: '^src/local/' },
      to: { path: '^src/(controllers|domain|facade|runtime|kube)/' },
    },
    {
      name: 'cel-imports-nothing-of-ours',
      comment:
        'src/cel owns CEL for the whole repository (ScopeClass templates in src/domain, CRD rules in src/local): it depends on no other layer, so both may use it.',
      severity: 'error',
      from: { path: '^src/cel/' },
      to: { path: '^src/', pathNot: '^src/cel/' },
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
      // A cycle is one the program runs: an edge made only of `import type` is erased when
      // compiled, and cannot order module initialisation (ADR 0018).
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
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
