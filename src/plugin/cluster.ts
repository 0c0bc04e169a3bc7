// What the plugin reads from the API server, through src/kube as the operator does: the
// connection from kubectl's flags, the namespace kubectl would use, bounded paged lists, and
// errors turned into the one line a user reads instead of a stack trace.
import { pino } from 'pino';
import { KINDS } from '../api/index.js';
import {
  connect,
  type Kube,
  KubeApiError,
  KubeTransportError,
  type ResourceType,
  rawResource,
} from '../kube/index.js';
import type { Connection } from './command-line.js';
import type { Obj } from './status.js';

export type KindName = keyof typeof KINDS;

/** A page of a list: what kubectl asks for (`--chunk-size` 500). */
const PAGE = 500;
/** Objects read of one kind at most: past it the answer says it is cut, the process stays small. */
export const MAX_OBJECTS = 100_000;
/** Deadline of one request; an unreachable cluster is reported within it. */
const TIMEOUT_MS = 15_000;

export interface Cluster {
  readonly kube: Kube;
  /** The namespace to read; undefined: every namespace (-A). */
  readonly namespace: string | undefined;
  close(): void;
}

export async function openCluster(connection: Connection): Promise<Cluster> {
  const kube = await connect({
    // Failures reach the user as one line from here, not as log records.
    log: pino({ level: 'silent' }),
    timeoutMs: TIMEOUT_MS,
    userAgent: 'kubectl-nrn',
    ...(connection.kubeconfig !== undefined ? { kubeconfigPath: connection.kubeconfig } : {}),
    ...(connection.context !== undefined ? { context: connection.context } : {}),
  });
  const namespace = connection.allNamespaces
    ? undefined
    : (connection.namespace ?? kube.namespace ?? 'default');
  return { kube, namespace, close: () => kube.close() };
}

export const resourceOf = (kind: KindName): ResourceType => rawResource(kind);

/** Every object of a kind (in `namespace`, or all), page by page, up to MAX_OBJECTS. */
export async function listAll(
  kube: Kube,
  type: ResourceType,
  options: { namespace?: string | undefined; fieldSelector?: string; max?: number } = {},
): Promise<{ items: Obj[]; truncated: boolean }> {
  const client = kube.resource(type);
  const max = options.max ?? MAX_OBJECTS;
  const items: Obj[] = [];
  let next: string | undefined;
  do {
    const page = await client.listRaw({
      ...(type.namespaced && options.namespace !== undefined
        ? { namespace: options.namespace }
        : {}),
      ...(options.fieldSelector !== undefined ? { fieldSelector: options.fieldSelector } : {}),
      limit: Math.min(PAGE, max - items.length),
      ...(next !== undefined ? { continue: next } : {}),
    });
    for (const item of page.items) if (isObj(item)) items.push(item);
    next = page.continue;
  } while (next !== undefined && items.length < max);
  return { items, truncated: next !== undefined };
}

function isObj(value: unknown): value is Obj {
  if (typeof value !== 'object' || value === null) return false;
  const metadata = (value as { metadata?: unknown }).metadata;
  return (
    typeof metadata === 'object' &&
    metadata !== null &&
    typeof (metadata as { name?: unknown }).name === 'string'
  );
}

/** The kind a user typed (`scope`, `scopes`, `nscope`, `Scope`, `scopes.platform.nrn.dev`). */
export function kindOf(typed: string): KindName | undefined {
  const word = typed.toLowerCase().replace(/\.platform\.nrn\.dev$/, '');
  for (const [name, info] of Object.entries(KINDS)) {
    const names: readonly string[] = [
      info.kind.toLowerCase(),
      info.plural,
      info.singular,
      ...info.shortNames,
    ];
    if (names.includes(word)) return name as KindName;
  }
  return undefined;
}

/** An error as one line: the API server's own message for a refusal, the cause for the rest. */
export function explainError(error: unknown, server: string | undefined): string {
  if (error instanceof KubeApiError) {
    if (error.code === 401)
      return `the API server did not accept the credentials (401 Unauthorized): ${error.message}`;
    if (error.code === 403) return `forbidden (403): ${error.message}`;
    return `the API server answered ${error.code} ${error.reason}: ${error.message}`;
  }
  if (error instanceof KubeTransportError) {
    return `cannot reach the API server${server !== undefined ? ` at ${server.replace(/\/$/, '')}` : ''}: ${error.message}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*\n\s*/g, '; ');
}
