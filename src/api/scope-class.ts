// ScopeClass: what a platform team says a scope of a type becomes on its cluster (as a
// StorageClass says what a claim becomes): which scopes it serves, the namespace envelope, the
// manifests rendered per scope, or an external provisioner. The model of
// docs/adr/0020-scope-classes.md.
import { z } from 'zod';
import {
  CommonStatus,
  FreeObject,
  immutable,
  LocalObjectReference,
  ScopeTier,
  ScopeType,
  StringMap,
  withRules,
} from './common.js';

/** A bound on what one class may make per scope: each is applied, watched and removed. */
export const MAX_CLASS_RESOURCES = 64;
export const DEFAULT_SCOPE_NAMESPACE_PATTERN = 'nrn-scope-${scope.id}';
export const DEFAULT_SCOPE_DEADLINE_SECONDS = 1800;

const PodSecurityLevel = z.enum(['privileged', 'baseline', 'restricted']);

/** Which scopes of the type the class serves beyond its default: every criterion must hold. */
export const ScopeClassMatch = z
  .object({
    tiers: z.array(ScopeTier).min(1).optional().describe('The scope tier is one of these.'),
    dimensions: StringMap.optional().describe('Every pair is among the scope dimensions.'),
    labels: StringMap.optional().describe('Every pair is among the Scope object labels.'),
  })
  .strict()
  .describe('The most specific matching class wins (docs/adr/0020-scope-classes.md).');

/** A quantity as the API server writes it: ResourceQuota and LimitRange values. */
const Quantity = z
  .string()
  .regex(/^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/, {
    error: 'must be a Kubernetes quantity such as 500m, 2 or 512Mi',
  });

export const CpuProfile = z
  .object({
    limit: Quantity.describe('Quota limits.cpu, and the most one container may use.'),
    request: Quantity.describe('Quota requests.cpu.'),
    default_limit: Quantity.describe('Container default limit (LimitRange).'),
    default_request: Quantity.describe('Container default request (LimitRange).'),
  })
  .strict();

export const NamespaceEnvelope = z
  .object({
    name: z
      .string()
      .min(1)
      .max(253)
      .default(DEFAULT_SCOPE_NAMESPACE_PATTERN)
      .describe('Namespace name, with ${...} placeholders; must render to a DNS label.'),
    labels: StringMap.optional().describe('Values may hold ${...} placeholders.'),
    annotations: StringMap.optional().describe('Values may hold ${...} placeholders.'),
    pod_security: PodSecurityLevel.optional().describe(
      'Pod Security Admission level, enforced, warned and audited.',
    ),
    cpu_profiles: z
      .object({ standard: CpuProfile, intensive: CpuProfile })
      .strict()
      .optional()
      .describe('The requested_spec.cpu_profile table.'),
    quota: z
      .object({
        memory: z.boolean().default(false).describe('limits/requests.memory = memory_in_gb.'),
        cpu: z.boolean().default(false).describe('limits/requests.cpu from cpu_profiles.'),
        local_storage: z
          .boolean()
          .default(false)
          .describe('limits/requests.ephemeral-storage = local_storage_in_gb.'),
      })
      .strict()
      .optional()
      .describe('A ResourceQuota derived from requested_spec; absent: none.'),
    limit_range: z
      .object({
        default_memory_gb: z.number().positive().optional(),
        default_request_memory_gb: z.number().positive().optional(),
      })
      .strict()
      .optional()
      .describe(
        'A LimitRange: each container defaults to these (at most the quota) and to its cpu profile defaults, and is capped at the quota.',
      ),
    network_policy: z
      .enum(['none', 'default_deny'])
      .default('none')
      .describe('default_deny: a NetworkPolicy refusing traffic from outside the namespace.'),
    service_account: z
      .string()
      .min(1)
      .max(253)
      .optional()
      .describe('A ServiceAccount of this name in the namespace.'),
    on_rename: z
      .enum(['keep', 'move'])
      .default('keep')
      .describe(
        'An existing scope whose name pattern now renders another name (the pattern, or a field it uses, changed): keep its namespace (the default: a namespace is fixed once assigned), or move to the new one; the old one is then let go of, never deleted.',
      ),
  })
  .strict();
export type NamespaceEnvelope = z.infer<typeof NamespaceEnvelope>;

export const ClassResource = z
  .object({
    name: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { error: 'must be a DNS label' })
      .describe('Names the entry in messages; unique in the class.'),
    manifest: FreeObject.describe(
      'A Kubernetes object; string values may hold ${...} placeholders. Namespaced kinds default to the scope namespace.',
    ),
    wait_for: z
      .boolean()
      .default(false)
      .describe('The scope is active only once this object is Current (kstatus).'),
  })
  .strict();
export type ClassResource = z.infer<typeof ClassResource>;

export const ScopeClassProvisioner = withRules(
  z
    .object({
      type: z
        .enum(['namespace', 'webhook', 'none'])
        .default('namespace')
        .describe(
          'namespace: the envelope and resources; webhook: POST to url; none: provisioned outside.',
        ),
      url: z
        .url({ protocol: /^https?$/ })
        .optional()
        .describe('Endpoint of a webhook provisioner.'),
      signing_secret_ref: LocalObjectReference.optional().describe(
        'Secret in the operator\'s namespace whose key "key" signs webhook calls.',
      ),
      deadline_seconds: z.number().int().min(1).default(DEFAULT_SCOPE_DEADLINE_SECONDS),
    })
    .strict(),
  {
    rule: "self.type != 'webhook' || has(self.url)",
    message: 'a webhook provisioner needs a url',
    fieldPath: '.url',
    reason: 'FieldValueRequired',
  },
);

export const ScopeClassSpec = withRules(
  z
    .object({
      // The scopes a class serves are of its type: another type would be another class.
      scope_type: immutable(ScopeType.describe('The scope type this class serves.'), 'scope_type'),
      default: z
        .boolean()
        .default(false)
        .describe('Serves the scopes of its type that no more specific class matches.'),
      match: ScopeClassMatch.optional(),
      provisioner: ScopeClassProvisioner.default({
        type: 'namespace',
        deadline_seconds: DEFAULT_SCOPE_DEADLINE_SECONDS,
      }),
      namespace: NamespaceEnvelope.default({
        name: DEFAULT_SCOPE_NAMESPACE_PATTERN,
        network_policy: 'none',
        on_rename: 'keep',
      }),
      resources: z.array(ClassResource).max(MAX_CLASS_RESOURCES).optional(),
      deletion_policy: z
        .enum(['delete', 'orphan'])
        .default('delete')
        .describe(
          "What becomes of a scope's objects when the scope is deleted: delete them (its namespace with everything in it), or orphan them (kept, unmarked and labelled platform.nrn.dev/orphaned-from-scope; a webhook agent is not called). As Crossplane's deletionPolicy.",
        ),
    })
    .strict()
    .superRefine((spec, ctx) => {
      if (spec.provisioner.type === 'webhook' && spec.provisioner.url === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['provisioner', 'url'],
          message: 'a webhook provisioner needs a url',
        });
      }
      const seen = new Set<string>();
      for (const [index, resource] of (spec.resources ?? []).entries()) {
        if (seen.has(resource.name)) {
          ctx.addIssue({
            code: 'custom',
            path: ['resources', index, 'name'],
            message: `${resource.name} is already the name of another resource`,
          });
        }
        seen.add(resource.name);
      }
      if (spec.namespace.quota?.cpu === true && spec.namespace.cpu_profiles === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['namespace', 'cpu_profiles'],
          message: 'quota.cpu needs the cpu_profiles table',
        });
      }
    }),
  // The refinements above, for the API server to refuse at apply.
  {
    rule: '!has(self.resources) || self.resources.all(r, self.resources.exists_one(o, o.name == r.name))',
    message: 'resource names must be unique in the class',
    fieldPath: '.resources',
  },
  {
    rule: '!has(self.__namespace__) || !has(self.__namespace__.quota) || !has(self.__namespace__.quota.cpu) || !self.__namespace__.quota.cpu || has(self.__namespace__.cpu_profiles)',
    message: 'quota.cpu needs the cpu_profiles table',
    fieldPath: '.namespace.cpu_profiles',
    reason: 'FieldValueRequired',
  },
);
export type ScopeClassSpec = z.infer<typeof ScopeClassSpec>;

export const ScopeClassStatus = z
  .object({
    scopes: z.number().int().nonnegative().optional().describe('Scopes served by the class.'),
    upToDate: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('Of those, the ones provisioned from its current generation.'),
    ...CommonStatus,
  })
  .strict();
export type ScopeClassStatus = z.infer<typeof ScopeClassStatus>;
