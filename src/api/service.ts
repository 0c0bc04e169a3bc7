// The spec's Service: the list item, the list-services query and the paging response.
import { z } from 'zod';
import {
  FreeObject,
  MessageItem,
  NrnString,
  ServicePhase,
  ServiceType,
  StringMap,
  Uuid,
} from './common.js';

const NonEmpty = z.string().min(1);

/** Instance selectors; `imported: true` marks a service provisioned elsewhere. */
export const Selectors = z
  .object({ imported: z.boolean().optional() })
  .catchall(z.union([z.string(), z.number(), z.boolean()]))
  .describe('Key-value instance selectors.');

/** A service as the list operation returns it: every field optional, none ever null. */
export const ServiceItem = z
  .object({
    id: Uuid.describe('Unique identifier of the service.'),
    name: NonEmpty,
    slug: NonEmpty.describe('Generated from name.'),
    specification_id: Uuid,
    desired_specification_id: Uuid,
    messages: z.array(MessageItem),
    created_at: z.iso.datetime({ offset: true }),
    updated_at: z.iso.datetime({ offset: true }),
    status: ServicePhase,
    linkable_to: z.array(NrnString),
    dimensions: StringMap,
    attributes: FreeObject,
    entity_nrn: NrnString,
    selectors: Selectors,
    imported: z.boolean(),
    provider: NonEmpty,
    category: NonEmpty,
    sub_category: NonEmpty,
    type: ServiceType,
  })
  .partial()
  .strict();
export type ServiceItem = z.infer<typeof ServiceItem>;

export const DEFAULT_PAGE_SIZE = 30;
export const MAX_PAGE_SIZE = 1500;

/** A query-string count: the spec's "string of length >= 1" that must hold an integer. */
const count = (min: number, max: number) =>
  z
    .string()
    .min(1)
    .regex(/^[0-9]+$/, { error: 'must be a non-negative integer' })
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const queryBoolean = z
  .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')], {
    error: 'must be true or false',
  })
  .describe('true or false');

/**
 * The list-services query as it arrives (strings), refusing unknown parameters so a typo
 * never widens a result; `nrn` is an alias of `id`.
 */
export const ListServicesQuery = z
  .object({
    id: NrnString.optional().describe('NRN filter: what is visible at this NRN.'),
    nrn: NrnString.optional().describe('Alias of id.'),
    limit: count(1, MAX_PAGE_SIZE).optional().describe('Page size, 1 to 1500; default 30.'),
    offset: count(0, Number.MAX_SAFE_INTEGER).optional().describe('Results to skip; default 0.'),
    status: ServicePhase.optional().describe('Filter by service status.'),
    entity_nrn: NrnString.optional().describe('Owner NRN; `*` matches any id at its level.'),
    type: ServiceType.optional().describe('Filter by service type.'),
    include_secret_attributes: queryBoolean
      .optional()
      .describe('When true, secret attribute values are shown to callers who may read them.'),
  })
  .strict()
  .refine((q) => q.id === undefined || q.nrn === undefined || q.id === q.nrn, {
    error: 'id and its alias nrn name different NRNs',
    path: ['nrn'],
  })
  .transform(({ nrn, ...q }) => ({
    ...q,
    id: q.id ?? nrn,
    limit: q.limit ?? DEFAULT_PAGE_SIZE,
    offset: q.offset ?? 0,
    include_secret_attributes: q.include_secret_attributes ?? false,
  }));
export type ListServicesQuery = z.output<typeof ListServicesQuery>;

export const Paging = z
  .object({
    limit: z.number().int().min(1).describe('Page size.'),
    offset: z.number().int().nonnegative().describe('Offset of the results.'),
  })
  .strict();

export const ServicePage = z.object({ paging: Paging, results: z.array(ServiceItem) }).strict();
export type ServicePage = z.infer<typeof ServicePage>;
