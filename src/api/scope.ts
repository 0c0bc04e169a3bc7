// The spec's Scope: the create-scope request, the Scope object it answers with, and the
// parts they share (requested_spec, metadata).
import { z } from 'zod';
import { FreeObject, IntegerId, ScopePhase, ScopeTier, ScopeType, StringMap } from './common.js';

export const MAX_SCOPE_NAME = 60;

/**
 * Scope name: at most 60 characters (the spec), with a letter or a digit (of any script), since
 * the slug comes from it: a name of spaces or punctuation alone names nothing.
 */
export const ScopeName = z
  .string()
  .min(1)
  .max(MAX_SCOPE_NAME)
  .regex(/[\p{L}\p{N}]/u, { error: 'must contain a letter or a digit' });

const Quantity = z.number().nonnegative();

export const RequestedSpec = z
  .object({
    memory_in_gb: Quantity.optional().describe('Memory, in GiB.'),
    cpu_profile: z.enum(['standard', 'intensive']).optional(),
    local_storage_in_gb: Quantity.optional().describe('Local (ephemeral) storage, in GiB.'),
  })
  .strict()
  .describe('Technical specs; to be replaced by capabilities.');
export type RequestedSpec = z.infer<typeof RequestedSpec>;

export const ScopeMetadata = z
  .object({
    key: z.string(),
    value: z.string(),
    additional_properties: FreeObject,
    schemas: z.array(FreeObject).describe('JSON schemas of the metadata.'),
    tags: z.array(z.object({ key: z.string(), value: z.string() }).partial().strict()),
  })
  .partial()
  .strict()
  .describe('Metadata loaded through the metadata interface.');

/** The create-scope body. Unknown fields are refused, at every level the spec describes. */
export const CreateScopeRequest = z
  .object({
    name: ScopeName,
    type: ScopeType,
    application_id: IntegerId.describe('Identifier of the existing application that owns it.'),
    requested_spec: RequestedSpec,
    capabilities: FreeObject.optional().describe('Logs, auto scaling, spot instances and such.'),
    messages: FreeObject.optional(),
  })
  .strict();
export type CreateScopeRequest = z.infer<typeof CreateScopeRequest>;

/** Fields a Scope carries beyond the create body; a manifest may set them. */
export const ScopeExtras = {
  tier: ScopeTier.optional(),
  tags: z.array(z.string()).optional(),
  profiles: z.array(z.string()).optional().describe('NRN profiles applied to this scope.'),
  dimensions: StringMap.optional().describe('Runtime configuration dimensions.'),
  external_created: z
    .boolean()
    .optional()
    .describe('True when provisioned externally (e.g. by infrastructure as code).'),
  metadata: ScopeMetadata.optional(),
};

/** The Scope object of the spec, as create (and GET /scope/{id}) return it. */
export const Scope = z
  .object({
    id: IntegerId.describe('System-wide unique identifier.'),
    name: ScopeName,
    type: ScopeType,
    status: ScopePhase,
    slug: z.string().max(60),
    domain: z.string().max(60),
    application_id: IntegerId,
    requested_spec: RequestedSpec,
    capabilities: FreeObject,
    messages: FreeObject,
    runtime_configurations: z.array(IntegerId),
    ...ScopeExtras,
  })
  .partial()
  .strict();
export type Scope = z.infer<typeof Scope>;
