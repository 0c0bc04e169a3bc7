// What a ScopeClass makes for one scope (docs/adr/0020-scope-classes.md): the class compiled
// once per generation (every placeholder parsed and checked, so a broken class is reported
// before any scope uses it), then rendered per scope into the objects to apply — the namespace
// envelope and the class's resources — each labelled and annotated as the scope's.
import { RequestedSpec, type ScopeClassSpec, type ScopeSpec } from '../../api/index.js';
import type { Shape } from '../../cel/index.js';
import {
  labelValue,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  NRN_ANNOTATION,
  NRN_LABEL,
  nrnLabelValue,
  SCOPE_ANNOTATION,
  SCOPE_ID_LABEL,
  SCOPE_NAME_LABEL,
  SCOPE_NAMESPACE_LABEL,
  SCOPE_UID_LABEL,
} from '../names.js';
import type { Identity } from '../scopes/index.js';
import {
  type CompiledTemplate,
  compileTemplate,
  DEFAULT_TEMPLATE_LIMITS,
  type TemplateProblem,
  type TemplateVariables,
} from './template.js';

/**
 * The names a placeholder may use. The envelope's namespace is `scope.namespace` (CEL
 * reserves the word `namespace` itself).
 */
export const TEMPLATE_VARIABLES = ['scope', 'application'] as const;

const VALUE: Shape = { fields: {} };
const SCOPE_FIELDS: Record<string, Shape> = {
  id: VALUE,
  name: VALUE,
  slug: VALUE,
  nrn: VALUE,
  domain: VALUE,
  type: VALUE,
  tier: VALUE,
  dimensions: 'open',
  labels: 'open',
  requested_spec: {
    fields: Object.fromEntries(Object.keys(RequestedSpec.shape).map((field) => [field, VALUE])),
  },
};
/**
 * What the variables hold (scopeVariables): a placeholder selecting a field they lack
 * (`scope.requested_spec.memroy`) does not compile, so the class is refused or Stalled naming
 * it, instead of failing every scope it serves. The namespace's name cannot use itself.
 */
const TEMPLATE_SHAPES: Readonly<Record<string, Shape>> = {
  scope: { fields: { ...SCOPE_FIELDS, namespace: VALUE } },
  application: { fields: { id: VALUE, name: VALUE, slug: VALUE, nrn: VALUE } },
};
const NAMESPACE_NAME_SHAPES: Readonly<Record<string, Shape>> = {
  ...TEMPLATE_SHAPES,
  scope: { fields: SCOPE_FIELDS },
};
export const QUOTA_NAME = 'scope-quota';
export const LIMIT_RANGE_NAME = 'scope-limits';
export const NETWORK_POLICY_NAME = 'scope-default-deny';
const POD_SECURITY_MODES = ['enforce', 'warn', 'audit'] as const;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A manifest as rendered: a JSON object with apiVersion, kind and metadata.name. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** One object a scope's class makes. */
export interface Child {
  readonly manifest: Manifest;
  /** `namespace`, `namespace.quota`..., or `resources.<name>`: for messages. */
  readonly entry: string;
  /** The scope is active only once this object is Current by kstatus rules. */
  readonly waitFor: boolean;
  /** Belongs in the envelope namespace when its kind is namespaced and it names none. */
  readonly inScopeNamespace: boolean;
}

/** What rendering knows of a scope. */
export interface ScopeFacts {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly identity: Identity;
  readonly spec: ScopeSpec;
  readonly labels: Readonly<Record<string, string>>;
  /**
   * The namespace the scope was given when first provisioned: it stays the scope's whatever
   * the name pattern renders now, unless the class says `on_rename: move` (ADR 0028).
   */
  readonly assignedNamespace?: string | undefined;
  readonly application: {
    readonly id: number;
    readonly name: string;
    readonly slug: string;
    readonly nrn: string;
  };
}

export type Rendered =
  | { readonly ok: true; readonly namespace: string; readonly children: readonly Child[] }
  | { readonly ok: false; readonly problem: TemplateProblem };

interface CompiledResource {
  readonly name: string;
  readonly template: CompiledTemplate;
  readonly waitFor: boolean;
}

/** A class, every placeholder compiled: render() per scope. */
export class CompiledClass {
  private constructor(
    readonly spec: ScopeClassSpec,
    private readonly namespaceName: CompiledTemplate,
    private readonly labels: CompiledTemplate,
    private readonly annotations: CompiledTemplate,
    private readonly resources: readonly CompiledResource[],
  ) {}

  /** Compiles `spec`; the problems of every placeholder that does not compile, with paths. */
  static compile(spec: ScopeClassSpec): CompiledClass | { problems: TemplateProblem[] } {
    const problems: TemplateProblem[] = [];
    const compile = (value: unknown, path: string): CompiledTemplate | undefined => {
      const result = compileTemplate(
        value,
        path,
        TEMPLATE_VARIABLES,
        DEFAULT_TEMPLATE_LIMITS,
        TEMPLATE_SHAPES,
      );
      if ('problems' in result) {
        problems.push(...result.problems);
        return undefined;
      }
      return result;
    };
    // The namespace name may not name itself.
    const name = compileTemplate(
      spec.namespace.name,
      'spec.namespace.name',
      TEMPLATE_VARIABLES,
      DEFAULT_TEMPLATE_LIMITS,
      NAMESPACE_NAME_SHAPES,
    );
    if ('problems' in name) problems.push(...name.problems);
    const labels = compile(spec.namespace.labels ?? {}, 'spec.namespace.labels');
    const annotations = compile(spec.namespace.annotations ?? {}, 'spec.namespace.annotations');
    const resources: CompiledResource[] = [];
    for (const [index, resource] of (spec.resources ?? []).entries()) {
      const path = `spec.resources[${index}].manifest`;
      const shape = manifestShape(resource.manifest, path);
      if (shape !== undefined) problems.push(shape);
      const template = compile(resource.manifest, path);
      if (template !== undefined) {
        resources.push({ name: resource.name, template, waitFor: resource.wait_for });
      }
    }
    if (
      problems.length > 0 ||
      'problems' in name ||
      labels === undefined ||
      annotations === undefined
    ) {
      return { problems };
    }
    return new CompiledClass(spec, name, labels, annotations, resources);
  }

  /** The objects the class makes for this scope, or the first problem met. */
  render(facts: ScopeFacts): Rendered {
    const scopeVars = scopeVariables(facts);
    const kept =
      facts.assignedNamespace !== undefined && this.spec.namespace.on_rename !== 'move'
        ? { ok: true as const, value: facts.assignedNamespace }
        : undefined;
    const name = kept ?? this.namespaceName.render(scopeVars);
    if (!name.ok) return name;
    if (typeof name.value !== 'string' || !DNS_LABEL.test(name.value)) {
      return {
        ok: false,
        problem: {
          path: 'spec.namespace.name',
          message: `renders to ${JSON.stringify(name.value)}, not a DNS label (at most 63 lowercase letters, digits and dashes)`,
        },
      };
    }
    const namespace = name.value;
    const variables: TemplateVariables = {
      ...scopeVars,
      scope: { ...(scopeVars.scope as object), namespace },
    };
    const labels = this.labels.render(variables);
    if (!labels.ok) return labels;
    const annotations = this.annotations.render(variables);
    if (!annotations.ok) return annotations;
    const stamp = stamper(facts);
    const children: Child[] = [];
    for (const child of envelope(this.spec, facts.spec.requested_spec, namespace, {
      labels: labels.value as Record<string, string>,
      annotations: annotations.value as Record<string, string>,
    })) {
      children.push({ ...child, manifest: stamp(child.manifest) });
    }
    for (const resource of this.resources) {
      const rendered = resource.template.render(variables);
      if (!rendered.ok) return rendered;
      const path = `spec.resources[${resource.name}].manifest`;
      const shape = manifestShape(rendered.value, path);
      if (shape !== undefined) return { ok: false, problem: shape };
      const manifest = rendered.value as Manifest;
      children.push({
        manifest: stamp(manifest),
        entry: `resources.${resource.name}`,
        waitFor: resource.waitFor,
        inScopeNamespace: manifest.metadata.namespace === undefined,
      });
    }
    return { ok: true, namespace, children };
  }
}

/** `scope` and `application` as expressions see them: plain JSON, absent fields absent. */
function scopeVariables(facts: ScopeFacts): TemplateVariables {
  const { spec, identity } = facts;
  return {
    scope: {
      id: identity.id,
      name: spec.name,
      slug: identity.slug,
      nrn: identity.nrn,
      domain: identity.domain,
      type: spec.type,
      ...(spec.tier !== undefined ? { tier: spec.tier } : {}),
      dimensions: spec.dimensions ?? {},
      requested_spec: spec.requested_spec,
      labels: facts.labels,
    },
    application: facts.application,
  };
}

/** Why `value` cannot be applied as an object, if it cannot. */
function manifestShape(value: unknown, path: string): TemplateProblem | undefined {
  const object = value as Partial<Manifest> | null;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) {
    return { path, message: 'must be an object' };
  }
  for (const field of ['apiVersion', 'kind'] as const) {
    if (typeof object[field] !== 'string' || object[field] === '') {
      return { path: `${path}.${field}`, message: 'required' };
    }
  }
  if (typeof object.metadata?.name !== 'string' || object.metadata.name === '') {
    return { path: `${path}.metadata.name`, message: 'required' };
  }
  return undefined;
}

/** Puts the scope's labels and annotations (and the content hash) on a manifest. */
function stamper(facts: ScopeFacts): (manifest: Manifest) => Manifest {
  const labels = {
    [MANAGED_BY_LABEL]: MANAGED_BY,
    [SCOPE_ID_LABEL]: String(facts.identity.id),
    [SCOPE_UID_LABEL]: facts.uid,
    [SCOPE_NAMESPACE_LABEL]: facts.namespace,
    [SCOPE_NAME_LABEL]: labelValue(facts.name),
    [NRN_LABEL]: nrnLabelValue(facts.identity.nrn),
  };
  const annotations = {
    [NRN_ANNOTATION]: facts.identity.nrn,
    [SCOPE_ANNOTATION]: facts.key,
  };
  return (manifest) => {
    const metadata = manifest.metadata;
    return {
      ...manifest,
      metadata: {
        ...metadata,
        labels: { ...metadata.labels, ...labels },
        annotations: { ...metadata.annotations, ...annotations },
      },
    };
  };
}

const gib = (gb: number) => `${Math.round(gb * 1024)}Mi`;

/** The namespace and what the class puts in it around the scope's workloads. */
function envelope(
  spec: ScopeClassSpec,
  requested: RequestedSpec,
  namespace: string,
  meta: { labels: Record<string, string>; annotations: Record<string, string> },
): Child[] {
  const env = spec.namespace;
  const podSecurity: Record<string, string> = {};
  if (env.pod_security !== undefined) {
    for (const mode of POD_SECURITY_MODES) {
      podSecurity[`pod-security.kubernetes.io/${mode}`] = env.pod_security;
    }
  }
  const out: Child[] = [];
  const add = (entry: string, manifest: Manifest) =>
    out.push({ manifest, entry, waitFor: false, inScopeNamespace: entry !== 'namespace' });
  add('namespace', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: namespace,
      labels: { ...meta.labels, ...podSecurity },
      ...(Object.keys(meta.annotations).length > 0 ? { annotations: meta.annotations } : {}),
    },
  });
  const cpu =
    requested.cpu_profile !== undefined ? env.cpu_profiles?.[requested.cpu_profile] : undefined;
  const quota = env.quota;
  if (quota !== undefined) {
    const hard: Record<string, string> = {};
    if (quota.memory && requested.memory_in_gb !== undefined) {
      hard['limits.memory'] = gib(requested.memory_in_gb);
      hard['requests.memory'] = gib(requested.memory_in_gb);
    }
    if (quota.cpu && cpu !== undefined) {
      hard['limits.cpu'] = cpu.limit;
      hard['requests.cpu'] = cpu.request;
    }
    if (quota.local_storage && requested.local_storage_in_gb !== undefined) {
      hard['limits.ephemeral-storage'] = gib(requested.local_storage_in_gb);
      hard['requests.ephemeral-storage'] = gib(requested.local_storage_in_gb);
    }
    add('namespace.quota', {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: QUOTA_NAME, namespace },
      spec: { hard },
    });
  }
  if (env.limit_range !== undefined) {
    add('namespace.limit_range', {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: LIMIT_RANGE_NAME, namespace },
      spec: { limits: [containerLimits(spec, requested, cpu)] },
    });
  }
  if (env.network_policy === 'default_deny') {
    // Traffic from the scope's own namespace only: what a scope's workloads need to talk to
    // each other, and nothing from elsewhere until the platform team's class says so.
    add('namespace.network_policy', {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: NETWORK_POLICY_NAME, namespace },
      spec: {
        podSelector: {},
        policyTypes: ['Ingress'],
        ingress: [{ from: [{ podSelector: {} }] }],
      },
    });
  }
  if (env.service_account !== undefined) {
    add('namespace.service_account', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: env.service_account, namespace },
    });
  }
  return out;
}

/**
 * A quota on limits.* makes pods without limits fail admission; the LimitRange gives every
 * container defaults so they still start, and caps one container at the whole quota.
 */
function containerLimits(
  spec: ScopeClassSpec,
  requested: RequestedSpec,
  cpu: NonNullable<ScopeClassSpec['namespace']['cpu_profiles']>['standard'] | undefined,
): Record<string, unknown> {
  const limits = spec.namespace.limit_range ?? {};
  const max: Record<string, string> = {};
  const defaults: Record<string, string> = {};
  const requests: Record<string, string> = {};
  const memory = requested.memory_in_gb;
  if (memory !== undefined) {
    max.memory = gib(memory);
    if (limits.default_memory_gb !== undefined) {
      defaults.memory = gib(Math.min(memory, limits.default_memory_gb));
    }
    if (limits.default_request_memory_gb !== undefined) {
      requests.memory = gib(Math.min(memory, limits.default_request_memory_gb));
    }
  }
  if (cpu !== undefined) {
    max.cpu = cpu.limit;
    defaults.cpu = cpu.default_limit;
    requests.cpu = cpu.default_request;
  }
  if (requested.local_storage_in_gb !== undefined) {
    max['ephemeral-storage'] = gib(requested.local_storage_in_gb);
  }
  return {
    type: 'Container',
    ...(Object.keys(max).length > 0 ? { max } : {}),
    ...(Object.keys(defaults).length > 0 ? { default: defaults } : {}),
    ...(Object.keys(requests).length > 0 ? { defaultRequest: requests } : {}),
  };
}
