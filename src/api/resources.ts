// The custom resources: spec and status of Application, Scope, Service and
// ServiceSpecification, and the table of kinds the CRD generator and the clients share.
import { z } from 'zod';
import {
  CommonStatus,
  ConcreteNrnString,
  FreeObject,
  IntegerId,
  immutable,
  LocalObjectReference,
  MessageItem,
  NrnString,
  ScopePhase,
  ServicePhase,
  ServiceType,
  Slug,
  StringMap,
  Uuid,
  withRules,
} from './common.js';
import { CreateScopeRequest, ScopeExtras } from './scope.js';
import { MAX_CLASS_RESOURCES, ScopeClassSpec, ScopeClassStatus } from './scope-class.js';
import { Selectors } from './service.js';

export const GROUP = 'platform.nrn.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const CATEGORY = 'nrn';

const NonEmpty = z.string().min(1);
const Messages = z.array(MessageItem).describe('Messages in the spec shape.');
/** Longest retry annotation value recorded as it is; longer ones are recorded as a digest. */
export const MAX_OBSERVED_RETRY = 256;
const ObservedRetry = z
  .string()
  .max(MAX_OBSERVED_RETRY)
  .describe('The platform.nrn.dev/retry annotation value last acted on.');

// --- Application -------------------------------------------------------------------------

/** Namespaces an Application may grant to: named one by one, each a grant a reviewer reads. */
export const MAX_SCOPE_NAMESPACES = 64;
/** A namespace's name: a DNS label (RFC 1123), so no `*` nor any other pattern. */
const NamespaceName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, {
    error: 'must be a namespace name (a lowercase RFC 1123 label); wildcards are not allowed',
  });

export const ApplicationSpec = withRules(
  z
    .object({
      id: immutable(IntegerId.describe('Application id, unique across namespaces.'), 'id'),
      name: NonEmpty,
      nrn: z
        .string()
        .regex(/^organization=[0-9]+(:account=[0-9]+)?(:namespace=[0-9]+)?:application=[0-9]+$/, {
          error: 'must be an application NRN such as organization=1:account=2:application=3',
        })
        .describe('The application NRN; ends in application=<id>.'),
      slug: Slug.optional().describe('Derived from name when absent.'),
      scope_namespaces: z
        .array(NamespaceName)
        .max(MAX_SCOPE_NAMESPACES)
        .optional()
        .describe(
          "Namespaces besides the application's own whose Scopes may attach to it (consent on the referenced side, as Gateway API's ReferenceGrant); each named, no wildcard.",
        ),
    })
    .strict()
    .superRefine((spec, ctx) => {
      if (!spec.nrn.endsWith(`:application=${spec.id}`)) {
        ctx.addIssue({
          code: 'custom',
          path: ['nrn'],
          message: `must end in application=${spec.id}`,
        });
      }
    }),
  // The same rule as the refinement above, for the API server to refuse at apply.
  {
    rule: "self.nrn.endsWith(':application=' + string(self.id))",
    message: 'must end in application=<id>',
    messageExpression: "'must end in application=' + string(self.id)",
    fieldPath: '.nrn',
  },
);
export type ApplicationSpec = z.infer<typeof ApplicationSpec>;

export const ApplicationStatus = z
  .object({ slug: Slug.optional(), messages: Messages.optional(), ...CommonStatus })
  .strict();
export type ApplicationStatus = z.infer<typeof ApplicationStatus>;

// --- Scope -------------------------------------------------------------------------------

/** One object the operator made for a scope. */
export const ChildReference = z
  .object({
    apiVersion: z.string().min(1).max(316),
    kind: z.string().min(1).max(63),
    namespace: z.string().min(1).max(63).optional(),
    name: z.string().min(1).max(253),
  })
  .strict();
export type ChildReference = z.infer<typeof ChildReference>;

export const ScopeSpec = CreateScopeRequest.extend({
  // A scope's application and type are what its identity and class come from: fixed at create.
  application_id: immutable(CreateScopeRequest.shape.application_id, 'application_id'),
  type: immutable(CreateScopeRequest.shape.type, 'type'),
  ...ScopeExtras,
}).strict();
export type ScopeSpec = z.infer<typeof ScopeSpec>;

export const ScopeStatus = z
  .object({
    status: ScopePhase.optional().describe('Lifecycle value of the spec.'),
    id: IntegerId.optional().describe('System-wide unique scope id.'),
    slug: Slug.optional().describe('Unique within the application.'),
    domain: z.string().max(60).optional(),
    nrn: ConcreteNrnString.optional(),
    messages: Messages.optional(),
    observedRetry: ObservedRetry.optional(),
    scopeClass: z.string().max(253).optional().describe('The ScopeClass serving the scope.'),
    scopeClassGeneration: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('The generation of that class the scope was last provisioned from.'),
    inventory: z
      .array(ChildReference)
      .max(MAX_CLASS_RESOURCES + 8)
      .optional()
      .describe('What the operator made for the scope: removed on delete, pruned on change.'),
    ...CommonStatus,
  })
  .strict();
export type ScopeStatus = z.infer<typeof ScopeStatus>;

// --- Service -----------------------------------------------------------------------------

export const ServiceSpec = z
  .object({
    name: NonEmpty,
    type: immutable(ServiceType, 'type'),
    specification_id: immutable(
      Uuid.describe('The ServiceSpecification (spec.id) this service follows.'),
      'specification_id',
    ),
    desired_specification_id: Uuid.optional(),
    entity_nrn: immutable(NrnString.describe('NRN of the owning entity.'), 'entity_nrn'),
    linkable_to: z.array(NrnString).optional().describe('NRNs that can see this service.'),
    dimensions: StringMap.optional(),
    selectors: Selectors.optional(),
    attributes: FreeObject.optional().describe('Plain attributes; secret ones go in the Secret.'),
    provider: NonEmpty.optional(),
    category: NonEmpty.optional(),
    sub_category: NonEmpty.optional(),
    imported: z.boolean().optional().describe('True when provisioned elsewhere.'),
    secret_attributes_ref: LocalObjectReference.optional().describe(
      'Secret whose keys hold the values of secret attributes.',
    ),
  })
  .strict();
export type ServiceSpec = z.infer<typeof ServiceSpec>;

export const ServiceStatus = z
  .object({
    status: ServicePhase.optional().describe('Lifecycle value of the spec.'),
    slug: Slug.optional(),
    messages: Messages.optional(),
    updated_at: z.iso.datetime({ offset: true }).optional(),
    observedRetry: ObservedRetry.optional(),
    secretAttributesHash: z
      .string()
      .regex(/^hmac-sha256:[0-9a-f]{64}$/)
      .optional()
      .describe(
        'Keyed digest of the secret attributes last validated (never the values): a change of the Secret re-provisions.',
      ),
    ...CommonStatus,
  })
  .strict();
export type ServiceStatus = z.infer<typeof ServiceStatus>;

// --- ServiceSpecification ----------------------------------------------------------------

export const DEFAULT_PROVISION_DEADLINE_SECONDS = 1800;

export const Provisioner = withRules(
  z
    .object({
      type: z.enum(['webhook', 'none']).describe('webhook: POST to url; none: nothing to run.'),
      url: z
        .url({ protocol: /^https?$/ })
        .optional()
        .describe('Endpoint of a webhook provisioner.'),
      signing_secret_ref: LocalObjectReference.optional().describe(
        'Secret whose key "key" signs webhook calls (HMAC-SHA256).',
      ),
      deadline_seconds: z
        .number()
        .int()
        .min(1)
        .default(DEFAULT_PROVISION_DEADLINE_SECONDS)
        .describe('How long transient provider failures are retried.'),
    })
    .strict()
    .superRefine((p, ctx) => {
      if (p.type === 'webhook' && p.url === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: 'a webhook provisioner needs a url',
        });
      }
    }),
  {
    rule: "self.type != 'webhook' || has(self.url)",
    message: 'a webhook provisioner needs a url',
    fieldPath: '.url',
    reason: 'FieldValueRequired',
  },
);

export const ServiceSpecificationSpec = z
  .object({
    id: immutable(Uuid.describe('What a service names as specification_id.'), 'id'),
    name: NonEmpty,
    type: immutable(ServiceType, 'type'),
    attributes: z
      .object({
        schema: FreeObject.describe('JSON Schema of attributes; secret: true marks a secret one.'),
      })
      .strict(),
    selectors: Selectors.optional(),
    provisioner: Provisioner.default({
      type: 'none',
      deadline_seconds: DEFAULT_PROVISION_DEADLINE_SECONDS,
    }),
  })
  .strict();
export type ServiceSpecificationSpec = z.infer<typeof ServiceSpecificationSpec>;

export const ServiceSpecificationStatus = z
  .object({ messages: Messages.optional(), ...CommonStatus })
  .strict();

// --- The kinds ---------------------------------------------------------------------------

export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  readonly priority?: number;
}

export interface KindInfo {
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly description: string;
  readonly spec: z.ZodType;
  readonly status: z.ZodType;
  readonly printerColumns: readonly PrinterColumn[];
  /** Cluster-scoped when false; namespaced when absent. */
  readonly namespaced?: boolean;
}

const ready: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
};
const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const KINDS = {
  Application: {
    kind: 'Application',
    plural: 'applications',
    singular: 'application',
    shortNames: ['napp'],
    description: 'An application of the platform: the owner of scopes.',
    spec: ApplicationSpec,
    status: ApplicationStatus,
    printerColumns: [
      { name: 'ID', type: 'integer', jsonPath: '.spec.id' },
      { name: 'NRN', type: 'string', jsonPath: '.spec.nrn' },
      ready,
      age,
    ],
  },
  Scope: {
    kind: 'Scope',
    plural: 'scopes',
    singular: 'scope',
    shortNames: ['nscope'],
    description: 'A scope of an application: where it runs, with its requested spec.',
    spec: ScopeSpec,
    status: ScopeStatus,
    printerColumns: [
      { name: 'ID', type: 'integer', jsonPath: '.status.id' },
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Status', type: 'string', jsonPath: '.status.status' },
      ready,
      { name: 'Class', type: 'string', jsonPath: '.status.scopeClass' },
      { name: 'App', type: 'integer', jsonPath: '.spec.application_id', priority: 1 },
      { name: 'Domain', type: 'string', jsonPath: '.status.domain', priority: 1 },
      age,
    ],
  },
  Service: {
    kind: 'Service',
    plural: 'services',
    singular: 'service',
    shortNames: ['nsvc'],
    description: 'A catalog service, linked to a ServiceSpecification and owned by an NRN.',
    spec: ServiceSpec,
    status: ServiceStatus,
    printerColumns: [
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Status', type: 'string', jsonPath: '.status.status' },
      ready,
      { name: 'Entity', type: 'string', jsonPath: '.spec.entity_nrn', priority: 1 },
      age,
    ],
  },
  ServiceSpecification: {
    kind: 'ServiceSpecification',
    plural: 'servicespecifications',
    singular: 'servicespecification',
    shortNames: ['nspec'],
    description: 'What a service of a kind looks like: its attribute schema and provisioner.',
    spec: ServiceSpecificationSpec,
    status: ServiceSpecificationStatus,
    printerColumns: [
      { name: 'ID', type: 'string', jsonPath: '.spec.id' },
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Provisioner', type: 'string', jsonPath: '.spec.provisioner.type' },
      ready,
      age,
    ],
  },
  ScopeClass: {
    kind: 'ScopeClass',
    plural: 'scopeclasses',
    singular: 'scopeclass',
    shortNames: ['nsc'],
    description: 'What a scope of a type becomes on this cluster: its namespace and resources.',
    spec: ScopeClassSpec,
    status: ScopeClassStatus,
    namespaced: false,
    printerColumns: [
      { name: 'Scope-Type', type: 'string', jsonPath: '.spec.scope_type' },
      { name: 'Default', type: 'boolean', jsonPath: '.spec.default' },
      { name: 'Provisioner', type: 'string', jsonPath: '.spec.provisioner.type' },
      { name: 'Scopes', type: 'integer', jsonPath: '.status.scopes' },
      { name: 'Up-to-date', type: 'integer', jsonPath: '.status.upToDate' },
      ready,
      age,
    ],
  },
} as const satisfies Record<string, KindInfo>;
