// The status calls of the facade (GET /status/tree, /status/resources, /status/resources/{kind}/
// {namespace}/{name}, /watch): their query strings and the shapes they answer with, one scope or
// service summarised as the status page and `kubectl nrn` list it.
import { z } from 'zod';
import { MessageItem, NrnString } from './common.js';

/** Longest value any status filter may have: far past a real one, short enough to scan cheaply. */
export const MAX_FILTER_LENGTH = 256;
/** Longest cursor accepted; the facade's own are far shorter. */
export const MAX_CURSOR_LENGTH = 1024;
export const DEFAULT_STATUS_PAGE = 100;
export const MAX_STATUS_PAGE = 500;

export const STATUS_KINDS = ['scope', 'service'] as const;
export const StatusKind = z.enum(STATUS_KINDS);
export type StatusKind = z.infer<typeof StatusKind>;

const filter = (what: string) =>
  z.string().min(1).max(MAX_FILTER_LENGTH).describe(`${what} At most 256 characters.`);

/** The filters every status call shares; unknown parameters are refused, so a typo never widens a result. */
export const statusFilterFields = {
  kind: StatusKind.optional().describe('Only scopes or only services; both when left out.'),
  nrn: NrnString.max(MAX_FILTER_LENGTH)
    .optional()
    .describe('An NRN prefix: what is at or under it, e.g. organization=1:account=2.'),
  type: filter('Scope type, or service type.').optional(),
  status: filter('Lifecycle value (`unknown` before the operator wrote one).').optional(),
  q: filter('Case-insensitive text in name, slug, NRN or message.').optional(),
};

export const StatusFilters = z.object(statusFilterFields).strict();
export type StatusFilters = z.infer<typeof StatusFilters>;

export const StatusResourcesQuery = z
  .object({
    ...statusFilterFields,
    limit: z
      .string()
      .regex(/^[0-9]{1,4}$/, { error: 'must be an integer from 1 to 500' })
      .transform(Number)
      .pipe(z.number().int().min(1).max(MAX_STATUS_PAGE))
      .optional()
      .describe('Page size, 1 to 500; default 100.'),
    cursor: z
      .string()
      .min(1)
      .max(MAX_CURSOR_LENGTH)
      .optional()
      .describe('Opaque: the next_cursor of the previous page.'),
  })
  .strict();
export type StatusResourcesQuery = z.output<typeof StatusResourcesQuery>;

const ConditionStatus = z.enum(['True', 'False', 'Unknown']);

export const ResourceSummary = z
  .object({
    kind: StatusKind,
    namespace: z.string(),
    name: z.string(),
    id: z.number().int().optional().describe("A scope's numeric id."),
    slug: z.string().optional(),
    nrn: z.string().describe('Where it sits; empty when not yet known.'),
    application_id: z.number().int().optional(),
    type: z.string(),
    status: z.string().describe('Lifecycle value; `unknown` before the operator wrote one.'),
    ready: ConditionStatus,
    reason: z.string().optional(),
    message: z
      .string()
      .optional()
      .describe("Ready's message, or Stalled's when Stalled is True; at most 1024 characters."),
    stalled: z.boolean(),
    paused: z.boolean(),
    reconciling: z.boolean(),
    stale: z.boolean().describe('observedGeneration is behind metadata.generation.'),
    since: z.string().optional().describe("RFC 3339: Ready's lastTransitionTime."),
  })
  .strict();
export type ResourceSummary = z.infer<typeof ResourceSummary>;

const StatusCounts = z
  .record(z.string(), z.number().int().nonnegative())
  .describe('How many, by lifecycle value.');
export const KindCounts = z.object({ scope: StatusCounts, service: StatusCounts }).strict();
export type KindCounts = z.infer<typeof KindCounts>;

export const NRN_TREE_LEVELS = ['organization', 'account', 'namespace', 'application'] as const;

export const StatusTree = z
  .object({
    nodes: z.array(
      z
        .object({
          nrn: z.string(),
          level: z.enum(NRN_TREE_LEVELS),
          name: z.string().optional().describe("An application's name."),
          counts: KindCounts,
        })
        .strict(),
    ),
    counts: KindCounts,
  })
  .strict();
export type StatusTree = z.infer<typeof StatusTree>;

export const ResourcePage = z
  .object({
    results: z.array(ResourceSummary),
    next_cursor: z.string().optional(),
    total: z.number().int().nonnegative().describe('How many match, on every page.'),
  })
  .strict();
export type ResourcePage = z.infer<typeof ResourcePage>;

export const ResourceEvent = z
  .object({
    type: z.string(),
    reason: z.string(),
    message: z.string(),
    count: z.number().int().optional(),
    last_seen: z.string(),
    source: z.string(),
  })
  .strict();
export type ResourceEvent = z.infer<typeof ResourceEvent>;

export const ResourceDetail = z
  .object({
    summary: ResourceSummary,
    conditions: z.array(
      z
        .object({
          type: z.string(),
          status: ConditionStatus,
          reason: z.string().optional(),
          message: z.string().optional(),
          lastTransitionTime: z.string().optional(),
          observedGeneration: z.number().int().optional(),
        })
        .strict(),
    ),
    messages: z.array(MessageItem),
    children: z.array(
      z
        .object({
          apiVersion: z.string(),
          kind: z.string(),
          namespace: z.string().optional(),
          name: z.string(),
        })
        .strict(),
    ),
    events: z.array(ResourceEvent).describe('The last 10 Events about it, newest first.'),
  })
  .strict();
export type ResourceDetail = z.infer<typeof ResourceDetail>;
