// The ScopeClass template renderer (ADR 0019): `${ <CEL> }` placeholders in string values, compiled
// once and rendered per scope. Driven through compileTemplate/render as the scope reconciler does.
import { describe, expect, it } from 'vitest';
import {
  type CompiledTemplate,
  compileTemplate,
  DEFAULT_TEMPLATE_LIMITS,
  type RenderResult,
  type TemplateProblem,
  type TemplateVariables,
} from '../../src/domain/scope-classes/template.js';

// `namespace` is a reserved word in CEL and cannot name a variable (see the test below).
const VARIABLES = ['scope', 'application', 'target'];

const scope = {
  name: 'web',
  slug: 'web-prod',
  replicas: 3,
  enabled: true,
  dimensions: { environment: 'production' },
  requested_spec: { memory_in_gb: 1.5, cpu_millicores: 500 },
  tags: ['blue', 'green'],
};
const variables: TemplateVariables = {
  scope,
  application: { name: 'shop', id: 42 },
  target: 'team-a',
};

function compiled(value: unknown, path = 'manifest'): CompiledTemplate {
  const result = compileTemplate(value, path, VARIABLES);
  if ('problems' in result)
    throw new Error(`unexpected problems: ${JSON.stringify(result.problems)}`);
  return result;
}

function problemsOf(
  value: unknown,
  path = 'manifest',
  limits = DEFAULT_TEMPLATE_LIMITS,
): TemplateProblem[] {
  const result = compileTemplate(value, path, VARIABLES, limits);
  if (!('problems' in result)) throw new Error(`expected problems for ${JSON.stringify(value)}`);
  return result.problems;
}

function rendered(value: unknown, input: TemplateVariables = variables): unknown {
  const result = compiled(value).render(input);
  if (!result.ok) throw new Error(`unexpected problem: ${JSON.stringify(result.problem)}`);
  return result.value;
}

function renderProblem(
  value: unknown,
  input: TemplateVariables = variables,
  limits = DEFAULT_TEMPLATE_LIMITS,
) {
  const template = compileTemplate(value, 'manifest', VARIABLES, limits);
  if ('problems' in template)
    throw new Error(`unexpected problems: ${JSON.stringify(template.problems)}`);
  const result: RenderResult = template.render(input);
  if (result.ok) throw new Error(`expected a render problem, got ${JSON.stringify(result.value)}`);
  return result.problem;
}

describe('a placeholder that is the whole string', () => {
  it('yields the value with its type', () => {
    expect(rendered('${scope.replicas}')).toBe(3);
    expect(rendered('${scope.enabled}')).toBe(true);
    expect(rendered('${scope.name}')).toBe('web');
    expect(rendered('${scope.dimensions}')).toEqual({ environment: 'production' });
    expect(rendered('${scope.tags}')).toEqual(['blue', 'green']);
    expect(rendered('${null}')).toBeNull();
    expect(rendered("${{'app': scope.name, 'size': [1, 2.5]}}")).toEqual({
      app: 'web',
      size: [1, 2.5],
    });
  });

  it('needs the placeholder to be exactly the string, as kro does', () => {
    expect(rendered(' ${scope.replicas}')).toBe(' 3');
  });

  it('runs the macros', () => {
    expect(rendered('${scope.tags.map(t, t.upperAscii())}')).toEqual(['BLUE', 'GREEN']);
    expect(rendered("${scope.tags.filter(t, t.startsWith('g'))}")).toEqual(['green']);
    expect(rendered("${scope.tags.exists(t, t == 'blue')}")).toBe(true);
    expect(rendered("${scope.tags.all(t, t != '')}")).toBe(true);
    expect(rendered("${scope.tags.join(',')}")).toBe('blue,green');
    expect(rendered('${strings.quote(scope.name)}')).toBe('"web"');
  });
});

describe('placeholders embedded in a longer string', () => {
  it('are converted to strings and concatenated', () => {
    expect(rendered('${target}-${scope.slug}')).toBe('team-a-web-prod');
    expect(
      rendered('r${scope.replicas} m${scope.requested_spec.memory_in_gb} on=${scope.enabled}'),
    ).toBe('r3 m1.5 on=true');
    expect(rendered("d=${duration('90s')}")).toBe('d=90s');
  });

  it('refuse lists, maps and null', () => {
    expect(renderProblem('tags: ${scope.tags}')).toEqual({
      path: 'manifest',
      message: expect.stringContaining('a list cannot be embedded in a string'),
    });
    expect(renderProblem('d: ${scope.dimensions}').message).toContain('a map cannot be embedded');
    expect(renderProblem('x${null}').message).toContain('null cannot be embedded');
  });
});

describe('escaping and literal text', () => {
  it('reads $${ as a literal ${', () => {
    const template = compiled('$${scope.name} is ${scope.name}');
    expect(template.placeholders).toBe(1);
    expect(template.render(variables)).toEqual({ ok: true, value: '${scope.name} is web' });
    expect(compiled('echo $${HOME}').placeholders).toBe(0);
    expect(rendered('echo $${HOME}')).toBe('echo ${HOME}');
  });

  it('leaves a lone $ or { alone', () => {
    expect(rendered('cost: $5 {braces} ${scope.name}')).toBe('cost: $5 {braces} web');
  });

  it('does not end an expression at a brace inside a CEL string literal', () => {
    expect(rendered("${'}' + scope.name}")).toBe('}web');
    expect(rendered('${"{" + scope.name + "}"}')).toBe('{web}');
    expect(rendered("${{'a': 1}['a']}")).toBe(1);
    expect(rendered("${r'\\}' + '\\''}")).toBe("\\}'");
    expect(rendered("${'''multi ' } line'''}")).toBe("multi ' } line");
    expect(rendered("${'${not.a.placeholder}'}")).toBe('${not.a.placeholder}');
  });
});

describe('compile problems', () => {
  it('name an unknown variable at its path', () => {
    expect(problemsOf({ spec: { replicas: '${replicas}' } })).toEqual([
      {
        path: 'manifest.spec.replicas',
        message: "in ${replicas}: unknown variable 'replicas' (known: scope, application, target)",
      },
    ]);
  });

  it('know the macros bind their own variables', () => {
    expect(rendered('${scope.tags.map(t, scope.tags.filter(u, u != t).size())}')).toEqual([1, 1]);
    expect(problemsOf('${scope.tags.map(t, u)}')[0]?.message).toContain("unknown variable 'u'");
  });

  it('name an unknown function', () => {
    expect(problemsOf('${lookup(scope.name)}')[0]?.message).toBe(
      "in ${lookup(scope.name)}: unknown function 'lookup'",
    );
  });

  it('report syntax errors, unterminated and empty placeholders, all of them, at their paths', () => {
    const problems = problemsOf({
      metadata: { name: '${scope.name +}', labels: { 'app.kubernetes.io/name': 'x-${scope.name' } },
      data: ['ok', '${}', '${scope.name}'],
    });
    expect(problems).toEqual([
      {
        path: 'manifest.metadata.name',
        message: expect.stringMatching(/^in \$\{scope\.name \+\}: syntax error: /),
      },
      {
        path: 'manifest.metadata.labels["app.kubernetes.io/name"]',
        message: 'unterminated placeholder: `${` at character 2 has no closing `}`',
      },
      { path: 'manifest.data[1]', message: 'empty placeholder `${}`' },
    ]);
  });

  it('report the optional syntax (.?key) as a syntax error: @bufbuild/cel 0.6 does not parse it', () => {
    expect(problemsOf("${scope.dimensions.?region.orValue('eu')}")[0]?.message).toContain(
      'syntax error',
    );
  });

  it('refuse variable names CEL reserves, while fields may use them', () => {
    const result = compileTemplate('${scope.namespace}', 'm', ['scope', 'namespace', 'a-b']);
    expect(result).toEqual({
      problems: [
        {
          path: 'm',
          message: "variable name 'namespace' is a reserved word in CEL; choose another",
        },
        { path: 'm', message: "variable name 'a-b' is not a CEL identifier" },
      ],
    });
    expect(rendered('${scope.namespace}', { ...variables, scope: { namespace: 'n' } })).toBe('n');
  });

  it('use the path prefix as given, and none when it is empty', () => {
    expect(problemsOf(['${x}'], 'resources[2].manifest')[0]?.path).toBe('resources[2].manifest[0]');
    expect(problemsOf({ a: '${x}' }, '')[0]?.path).toBe('a');
  });
});

describe('render problems', () => {
  it('name a key a scope lacks, at its path', () => {
    expect(renderProblem({ spec: { region: '${scope.dimensions.region}' } })).toEqual({
      path: 'manifest.spec.region',
      message: 'in ${scope.dimensions.region}: no such key: region',
    });
  });

  it('let has() test for a key, with a default', () => {
    const template = "${has(scope.dimensions.region) ? scope.dimensions.region : 'eu'}";
    expect(rendered(template)).toBe('eu');
    expect(
      rendered(template, { ...variables, scope: { ...scope, dimensions: { region: 'us' } } }),
    ).toBe('us');
  });

  it('report evaluation errors and missing variables', () => {
    expect(renderProblem('${scope.replicas / 0}').message).toBe(
      'in ${scope.replicas / 0}: int divide by zero',
    );
    expect(renderProblem('${scope.name}', { scope })).toEqual({
      path: 'manifest',
      message: "variable 'application' was not provided",
    });
  });

  it('never throw, whatever the variables hold', () => {
    const weird = { ...variables, scope: { name: () => 'x' } };
    expect(renderProblem('${scope.name}', weird).message).toContain('not a JSON value (function)');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(renderProblem('${scope.name}', { ...variables, scope: cyclic }).message).toContain(
      'nested too deeply',
    );
  });
});

describe('numbers', () => {
  it('bind whole numbers as int and fractional ones as double', () => {
    expect(rendered('${type(scope.replicas) == int}')).toBe(true);
    expect(rendered('${type(scope.requested_spec.memory_in_gb) == double}')).toBe(true);
    expect(rendered('${scope.replicas * 2}')).toBe(6);
    expect(renderProblem('${scope.replicas + 0.5}').message).toContain(
      "no matching overload for '_+_'",
    );
    expect(rendered('${double(scope.replicas) + 0.5}')).toBe(3.5);
  });

  it('convert between them as CEL does', () => {
    expect(rendered('${int(scope.requested_spec.memory_in_gb * 2.0)}')).toBe(3);
    expect(rendered("${string(scope.requested_spec.memory_in_gb * 1024.0) + 'Mi'}")).toBe('1536Mi');
    expect(rendered('${string(scope.requested_spec.cpu_millicores) + "m"}')).toBe('500m');
    expect(rendered('${uint(scope.replicas)}')).toBe(3);
  });

  it('render ints and whole doubles as JSON numbers, and refuse what JSON cannot hold exactly', () => {
    expect(rendered('${2.0}')).toBe(2);
    expect(renderProblem('${9007199254740993}').message).toContain(
      'outside the integers a JSON number holds exactly',
    );
    expect(renderProblem('${1.0 / 0.0}').message).toContain('Infinity is not a JSON number');
  });
});

describe('results that are not JSON', () => {
  it('become their CEL string form where there is one', () => {
    expect(rendered("${duration('1h')}")).toBe('3600s');
    expect(rendered("${timestamp('2024-01-02T03:04:05Z')}")).toBe('2024-01-02T03:04:05Z');
    expect(rendered("${b'abc'}")).toBe('abc');
  });

  it('are a problem where there is none', () => {
    expect(renderProblem('${type(1)}').message).toBe(
      'in ${type(1)}: a value of type type has no JSON form',
    );
    expect(renderProblem("${{1: 'a'}}").message).toContain('map key 1 is not a string');
  });
});

describe('keys and the input', () => {
  it('never template keys', () => {
    expect(rendered({ '${scope.name}': '${scope.name}' })).toEqual({ '${scope.name}': 'web' });
  });

  it('keep every key, __proto__ included', () => {
    const value = JSON.parse('{"__proto__": {"a": "${scope.name}"}, "b": {"__proto__": 1}}');
    const out = rendered(value) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'b']);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"a":"web"},"b":{"__proto__":1}}');
  });

  it('neither mutate the input nor share it with the output', () => {
    const manifest = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: '${scope.slug}-config', labels: { team: 'a' } },
      data: { replicas: '${string(scope.replicas)}', fixed: ['x', { y: 1 }] },
    };
    const before = structuredClone(manifest);
    const input = structuredClone(variables);
    const template = compiled(manifest);
    const first = template.render(input);
    const second = template.render(input);
    expect(manifest).toEqual(before);
    expect(input).toEqual(variables);
    expect(first).toEqual(second);
    expect(first.ok && (first.value as typeof manifest).data.fixed).not.toBe(manifest.data.fixed);
    expect(first.ok && (first.value as typeof manifest).metadata.labels).not.toBe(
      manifest.metadata.labels,
    );
  });

  it('copy a template without placeholders deeply', () => {
    const manifest = { kind: 'NetworkPolicy', spec: { podSelector: {}, policyTypes: ['Ingress'] } };
    const template = compiled(manifest);
    expect(template.placeholders).toBe(0);
    const result = template.render(variables);
    expect(result).toEqual({ ok: true, value: manifest });
    expect(result.ok && result.value).not.toBe(manifest);
    expect(result.ok && (result.value as typeof manifest).spec).not.toBe(manifest.spec);
  });
});

describe('bounds', () => {
  const limits = { ...DEFAULT_TEMPLATE_LIMITS };

  it('refuse an expression longer than the bound', () => {
    const long = `\${'${'a'.repeat(DEFAULT_TEMPLATE_LIMITS.maxExpressionLength)}'}`;
    expect(problemsOf({ data: long })[0]?.message).toMatch(
      /expression is 1002 characters long, more than 1000$/,
    );
  });

  it('refuse more placeholders than the bound, once', () => {
    const problems = problemsOf(['${target}', '${target}', '${target}'], 'm', {
      ...limits,
      maxPlaceholders: 2,
    });
    expect(problems).toEqual([
      { path: 'm[2]', message: 'more than 2 placeholders in one template' },
    ]);
  });

  it('refuse a template nested deeper than the bound', () => {
    let deep: unknown = '${target}';
    for (let i = 0; i < 10; i++) deep = [deep];
    expect(problemsOf(deep, 'm', { ...limits, maxDepth: 5 })[0]?.message).toBe(
      'nested deeper than 5 levels',
    );
  });

  it('refuse a rendered value larger than the bound', () => {
    const small = { ...limits, maxValueBytes: 100 };
    const input = {
      ...variables,
      scope: { ...scope, tags: Array.from({ length: 50 }, (_, i) => `tag-${i}`) },
    };
    expect(renderProblem('${scope.tags}', input, small).message).toContain('larger than the bound');
    expect(renderProblem("x${scope.tags.join('-')}", input, small).message).toContain(
      'longer than 100 characters',
    );
  });

  it('stop an evaluation that spends more than the cost bound', () => {
    const list = Array.from({ length: 100 }, (_, i) => i);
    const input = { ...variables, scope: { ...scope, list } };
    const nested = '${scope.list.map(a, scope.list.map(b, scope.list.map(c, c)))}';
    expect(renderProblem(nested, input).message).toMatch(/evaluation (cost|time) limit exceeded/);
    // Loops whose bodies call nothing are counted too, and `||` cannot swallow the stop.
    const silent =
      '${scope.list.exists(a, scope.list.exists(b, scope.list.exists(c, false))) || true}';
    expect(renderProblem(silent, input).message).toMatch(/evaluation (cost|time) limit exceeded/);
    // Large strings cost by their size.
    const text = { ...variables, scope: { ...scope, list, text: 'x'.repeat(60_000) } };
    expect(
      renderProblem('${scope.list.map(a, scope.text + scope.text).size()}', text).message,
    ).toMatch(/evaluation (cost|time) limit exceeded/);
  });

  it('let an ordinary template spend far less than the bound', () => {
    const input = {
      ...variables,
      scope: { ...scope, list: Array.from({ length: 1000 }, (_, i) => i) },
    };
    expect(rendered('${scope.list.map(x, x * 2).size()}', input)).toBe(1000);
  });

  it('bound the variables of one render', () => {
    const input = {
      ...variables,
      scope: { ...scope, list: Array.from({ length: 20 }, (_, i) => i) },
    };
    expect(
      renderProblem('${target}', input, { ...limits, maxVariableNodes: 10 }).message,
    ).toContain('too many values');
  });
});

describe('the examples of ADR 0019', () => {
  it('render as the ADR says', () => {
    const resources = [
      {
        manifest: {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          metadata: { name: 'quota', namespace: '${scope.namespace}' },
          spec: {
            hard: {
              'requests.memory':
                "${string(int(scope.requested_spec.memory_in_gb * 1024.0)) + 'Mi'}",
              pods: '${scope.replicas * 2}',
            },
          },
        },
      },
      {
        manifest: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: '${scope.slug}-settings',
            labels: { region: "${has(scope.dimensions.region) ? scope.dimensions.region : 'eu'}" },
          },
          data: { tags: "${scope.tags.join(',')}", script: 'echo $${HOME}' },
        },
      },
      {
        manifest: {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { name: 'allow-same-app', namespace: '${scope.namespace}' },
          spec: {
            podSelector: {},
            ingress: [
              {
                from: "${scope.peers.map(p, {'namespaceSelector': {'matchLabels': {'kubernetes.io/metadata.name': p}}})}",
              },
            ],
          },
        },
      },
    ];
    const input = {
      ...variables,
      scope: { ...scope, namespace: 'team-a-web', peers: ['team-a-api'] },
    };
    const result = compiled({ resources }, 'spec').render(input);
    expect(result).toEqual({
      ok: true,
      value: {
        resources: [
          {
            manifest: {
              apiVersion: 'v1',
              kind: 'ResourceQuota',
              metadata: { name: 'quota', namespace: 'team-a-web' },
              spec: { hard: { 'requests.memory': '1536Mi', pods: 6 } },
            },
          },
          {
            manifest: {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: 'web-prod-settings', labels: { region: 'eu' } },
              data: { tags: 'blue,green', script: 'echo ${HOME}' },
            },
          },
          {
            manifest: {
              apiVersion: 'networking.k8s.io/v1',
              kind: 'NetworkPolicy',
              metadata: { name: 'allow-same-app', namespace: 'team-a-web' },
              spec: {
                podSelector: {},
                ingress: [
                  {
                    from: [
                      {
                        namespaceSelector: {
                          matchLabels: { 'kubernetes.io/metadata.name': 'team-a-api' },
                        },
                      },
                    ],
                  },
                ],
              },
            },
          },
        ],
      },
    });
  });
});
