// What the scope-class tests read back through kubectl: the fields of a Scope, ScopeClass or
// child they look at, kubectl bound to a cluster (throwing on a refusal, or reading an object
// as JSON with NotFound as undefined), and a poll until a read meets a check.
import { kubectl, type TestCluster } from './cluster.js';
import { sleep } from './wait.js';

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

/** A Scope, a ScopeClass or a child, as `kubectl get -o json` shows the fields tests read. */
export interface View {
  metadata: {
    name: string;
    generation?: number;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  status?: {
    status?: string;
    id?: number;
    scopeClass?: string;
    scopeClassGeneration?: number;
    scopes?: number;
    upToDate?: number;
    inventory?: { kind: string; name: string; namespace?: string }[];
    observedRetry?: string;
    observedGeneration?: number;
    conditions?: Condition[];
  };
}

export const conditionOf = (view: View, type: string): Condition | undefined =>
  view.status?.conditions?.find((c) => c.type === type);

/** Reads `read` until `check` holds, every 100 ms; throws with the last value after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  read: () => Promise<T>,
  check: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    }
    await sleep(100);
  }
}

/** kubectl against `cluster()` (read when called: the cluster starts in beforeAll). */
export function kubectlViews(cluster: () => TestCluster) {
  /** kubectl's stdout; a non-zero exit throws with its stderr. */
  const k = async (args: string[], input?: string): Promise<string> => {
    const result = await kubectl(cluster(), args, input !== undefined ? { input } : {});
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  /** `kubectl get what -o json`; undefined when NotFound. */
  const get = async (what: string, namespace?: string): Promise<View | undefined> => {
    const result = await kubectl(cluster(), [
      'get',
      what,
      ...(namespace !== undefined ? ['-n', namespace] : []),
      '-o',
      'json',
    ]);
    if (result.code !== 0) {
      if (result.stderr.includes('NotFound')) return undefined;
      throw new Error(result.stderr);
    }
    return JSON.parse(result.stdout) as View;
  };
  return { k, get };
}
