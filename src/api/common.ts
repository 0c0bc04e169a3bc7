// Building blocks shared by the spec's DTOs and the custom resources: the lifecycle enums,
// the message item, NRN and id types, free-form objects, and Kubernetes conditions.
import { z } from 'zod';
import { CONCRETE_NRN_PATTERN, NRN_PATTERN } from './nrn.js';

// A missing field says so, rather than zod's "expected number, received undefined".
z.config({
  customError: (issue) =>
    issue.input === undefined && (issue.code === 'invalid_type' || issue.code === 'invalid_value')
      ? 'required'
      : undefined,
});

/** Service lifecycle values, exactly as the spec lists them. */
export const SERVICE_PHASES = [
  'pending_create',
  'pending',
  'creating',
  'updating',
  'deleting',
  'active',
  'deleted',
  'failed',
] as const;
export const ServicePhase = z.enum(SERVICE_PHASES);
export type ServicePhase = z.infer<typeof ServicePhase>;

/** Scope lifecycle values, exactly as the spec lists them. */
export const SCOPE_PHASES = [
  'pending',
  'creating',
  'active',
  'updating',
  'deleting',
  'deleted',
  'failed',
] as const;
export const ScopePhase = z.enum(SCOPE_PHASES);
export type ScopePhase = z.infer<typeof ScopePhase>;

export const ServiceType = z.enum(['dependency', 'scope']);
export type ServiceType = z.infer<typeof ServiceType>;

export const ScopeType = z.enum(['web_pool', 'scheduled_tasks', 'serverless']);
export type ScopeType = z.infer<typeof ScopeType>;

export const ScopeTier = z.enum(['testing', 'non_critical', 'important', 'critical']);
export type ScopeTier = z.infer<typeof ScopeTier>;

export const MESSAGE_LEVELS = [
  'debug',
  'info',
  'information',
  'warn',
  'warning',
  'error',
  'fatal',
] as const;
export const MessageLevel = z.enum(MESSAGE_LEVELS);

export const MessageItem = z
  .object({
    level: MessageLevel.default('info').describe('Severity; defaults to info.'),
    message: z.string().describe('The message content.'),
  })
  .strict();
export type MessageItem = z.infer<typeof MessageItem>;

/** The spec's NRN; `parseNrn` accepts exactly these strings (see its property test). */
export const NrnString = z
  .string()
  .regex(new RegExp(NRN_PATTERN), { error: 'must be an NRN such as organization=1:account=2' })
  .describe('Resource name (NRN), e.g. organization=1:account=2:namespace=3:application=4.');

/** An NRN naming one stored thing: digits only, no wildcards. */
export const ConcreteNrnString = z
  .string()
  .regex(new RegExp(CONCRETE_NRN_PATTERN), {
    error: 'must be an NRN of digits only, such as organization=1:account=2',
  })
  .describe('Resource name (NRN) with no wildcards.');

export const Uuid = z.guid({ error: 'must be a UUID' });

/** Integer ids, as they appear in NRNs (`[0-9]+`), kept within JSON's exact range. */
export const IntegerId = z.number().int().nonnegative();

/** Kubernetes object name (RFC 1123 subdomain). */
export const ObjectName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
    error: 'must be a lowercase RFC 1123 name',
  });

/** A slug: a DNS label of at most 60 characters (the spec's bound). */
export const Slug = z
  .string()
  .min(1)
  .max(60)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, {
    error: 'must be lowercase letters, digits and dashes, starting and ending alphanumeric',
  });

/** Any JSON object; the CRD keeps its unknown fields instead of pruning them. */
export const FreeObject = z
  .record(z.string(), z.unknown())
  .meta({ 'x-kubernetes-preserve-unknown-fields': true });

/** Key-value pairs whose values are strings. */
export const StringMap = z.record(z.string(), z.string());

export const LocalObjectReference = z
  .object({ name: ObjectName.describe('Name of an object in the same namespace.') })
  .strict();

/** metav1.Condition, with the bounds the API server enforces on it. */
export const Condition = z
  .object({
    type: z
      .string()
      .min(1)
      .max(316)
      .regex(
        /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/,
      ),
    status: z.enum(['True', 'False', 'Unknown']),
    reason: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/),
    message: z.string().max(32768),
    lastTransitionTime: z.iso.datetime({ offset: true }),
    observedGeneration: z.number().int().nonnegative().optional(),
  })
  .strict();
export type Condition = z.infer<typeof Condition>;

export const Conditions = z
  .array(Condition)
  .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });

/** The status fields every kind shares: what kstatus, Flux and Argo CD look for. */
export const CommonStatus = {
  observedGeneration: z.number().int().nonnegative().optional(),
  conditions: Conditions.optional(),
};

/** A CEL rule of the CRD (`x-kubernetes-validations`), which the API server checks on writes. */
export interface CelRule {
  readonly rule: string;
  readonly message: string;
  readonly messageExpression?: string;
  readonly fieldPath?: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired';
}

/** `schema` with CEL rules for the CRD, its description kept. */
export function withRules<T extends z.ZodType>(schema: T, ...rules: CelRule[]): T {
  return schema.meta({
    ...(schema.description !== undefined ? { description: schema.description } : {}),
    'x-kubernetes-validations': rules,
  }) as T;
}

/**
 * A field that keeps the value it was created with: a transition rule the API server checks
 * on every update (`oldSelf`), so `kubectl apply` of a change is refused before it is stored.
 */
export function immutable<T extends z.ZodType>(schema: T, field: string): T {
  return withRules(schema, { rule: 'self == oldSelf', message: `${field} is immutable` });
}
