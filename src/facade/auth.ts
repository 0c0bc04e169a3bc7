// Who may call the facade: the bearer token of a request turned into a caller (authentication)
// and a yes or no for each operation on a resource (authorization), in three modes — a static
// token file, the cluster's own TokenReview + SubjectAccessReview, or none (loopback only).
import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { GROUP } from '../api/index.js';

/** What a caller can be allowed to do; `secrets:get` guards include_secret_attributes. */
export const OPERATIONS = ['services:list', 'scopes:create', 'scopes:get', 'secrets:get'] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface Caller {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** One operation on one resource; namespace and name narrow it where the operation has them. */
export interface Access {
  readonly operation: Operation;
  readonly namespace?: string;
  readonly name?: string;
}

export interface Authenticator {
  readonly mode: AuthMode;
  /** The caller of a bearer token, or undefined when the token is missing or not valid (401). */
  authenticate(token: string | undefined): Promise<Caller | undefined>;
  /** Whether the caller may do this (403 when not). */
  authorize(caller: Caller, access: Access): Promise<boolean>;
}

export type AuthMode = 'kubernetes' | 'static' | 'none';

// --- static ------------------------------------------------------------------------------

const StaticTokenEntry = z
  .object({
    name: z.string().min(1).describe('Who holds the token; shown in logs instead of it.'),
    token: z.string().min(16).optional(),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional()
      .describe('The token hashed, so the file need not hold it.'),
    operations: z.array(z.union([z.enum(OPERATIONS), z.literal('*')])).min(1),
  })
  .strict()
  .refine((e) => (e.token === undefined) !== (e.sha256 === undefined), {
    error: 'give exactly one of token and sha256',
  });

export const StaticTokenFile = z.object({ tokens: z.array(StaticTokenEntry).min(1) }).strict();
export type StaticTokenFile = z.infer<typeof StaticTokenFile>;

/** One-shot hashing: it runs on every request, and a Hash object per call costs twice as much. */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/**
 * Tokens known up front, each with the operations it may perform (on any namespace). Tokens
 * are looked up by their SHA-256, so how long a lookup takes says nothing about a guess.
 */
export class StaticAuthenticator implements Authenticator {
  readonly mode = 'static';
  private readonly byHash = new Map<string, Caller>();
  private readonly operations = new WeakMap<Caller, ReadonlySet<string>>();

  constructor(file: StaticTokenFile) {
    for (const entry of file.tokens) {
      const caller: Caller = { username: entry.name };
      this.byHash.set(entry.sha256 ?? sha256Hex(entry.token ?? ''), caller);
      this.operations.set(caller, new Set(entry.operations));
    }
  }

  static async fromFile(path: string): Promise<StaticAuthenticator> {
    const text = await readFile(path, 'utf8');
    const parsed = StaticTokenFile.safeParse(parseYaml(text));
    if (!parsed.success) {
      throw new Error(`token file ${path} is not valid: ${z.prettifyError(parsed.error)}`);
    }
    return new StaticAuthenticator(parsed.data);
  }

  async authenticate(token: string | undefined): Promise<Caller | undefined> {
    if (token === undefined || token === '') return undefined;
    return this.byHash.get(sha256Hex(token));
  }

  async authorize(caller: Caller, access: Access): Promise<boolean> {
    const allowed = this.operations.get(caller);
    return allowed !== undefined && (allowed.has('*') || allowed.has(access.operation));
  }
}

// --- none --------------------------------------------------------------------------------

/** Everyone may do everything: only for a facade bound to loopback (checked where it listens). */
export class NoAuthenticator implements Authenticator {
  readonly mode = 'none';
  private static readonly anonymous: Caller = { username: 'system:anonymous' };

  async authenticate(): Promise<Caller | undefined> {
    return NoAuthenticator.anonymous;
  }

  async authorize(): Promise<boolean> {
    return true;
  }
}

// --- kubernetes --------------------------------------------------------------------------

/** The two reviews of the Kubernetes API, as src/kube sends them. */
export interface ReviewClient {
  tokenReview(token: string): Promise<Caller | undefined>;
  subjectAccessReview(caller: Caller, attributes: ResourceAttributes): Promise<boolean>;
}

export interface ResourceAttributes {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
  readonly namespace?: string;
  readonly name?: string;
}

/** The Kubernetes verb and resource each operation is checked as. */
export function resourceAttributes(access: Access): ResourceAttributes {
  const where = {
    ...(access.namespace !== undefined ? { namespace: access.namespace } : {}),
    ...(access.name !== undefined ? { name: access.name } : {}),
  };
  switch (access.operation) {
    case 'services:list':
      return { group: GROUP, resource: 'services', verb: 'list', ...where };
    case 'scopes:create':
      return { group: GROUP, resource: 'scopes', verb: 'create', ...where };
    case 'scopes:get':
      return { group: GROUP, resource: 'scopes', verb: 'get', ...where };
    case 'secrets:get':
      return { group: '', resource: 'secrets', verb: 'get', ...where };
  }
}

interface Cached<T> {
  readonly value: T;
  readonly until: number;
}

/**
 * The caller's own RBAC decides, as the API server's webhook authenticator and authorizer do;
 * answers are cached briefly (as kube-apiserver caches webhook answers) so a busy client costs
 * two reviews per TTL, not per request.
 */
export class KubernetesAuthenticator implements Authenticator {
  readonly mode = 'kubernetes';
  private readonly tokens = new Map<string, Cached<Caller | undefined>>();
  private readonly decisions = new Map<string, Cached<boolean>>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly reviews: ReviewClient,
    options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
  ) {
    this.ttlMs = options.ttlMs ?? 10_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  async authenticate(token: string | undefined): Promise<Caller | undefined> {
    if (token === undefined || token === '') return undefined;
    const key = sha256Hex(token);
    const hit = this.fresh(this.tokens, key);
    if (hit !== undefined) return hit.value;
    const caller = await this.reviews.tokenReview(token);
    this.remember(this.tokens, key, caller);
    return caller;
  }

  async authorize(caller: Caller, access: Access): Promise<boolean> {
    const attributes = resourceAttributes(access);
    const key = JSON.stringify([caller.username, caller.uid, caller.groups, attributes]);
    const hit = this.fresh(this.decisions, key);
    if (hit !== undefined) return hit.value;
    const allowed = await this.reviews.subjectAccessReview(caller, attributes);
    this.remember(this.decisions, key, allowed);
    return allowed;
  }

  private fresh<T>(map: Map<string, Cached<T>>, key: string): Cached<T> | undefined {
    const hit = map.get(key);
    if (hit === undefined) return undefined;
    if (hit.until > this.now()) return hit;
    map.delete(key);
    return undefined;
  }

  private remember<T>(map: Map<string, Cached<T>>, key: string, value: T): void {
    // Bounded: many distinct bad tokens must not grow memory; the oldest entry goes first.
    if (map.size >= this.maxEntries) {
      const oldest = map.keys().next();
      if (!oldest.done) map.delete(oldest.value);
    }
    map.set(key, { value, until: this.now() + this.ttlMs });
  }
}
