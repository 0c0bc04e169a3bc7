// The clusterrole-aggregation controller (pkg/controller/clusterroleaggregation): a ClusterRole
// with an aggregationRule has as rules those of every other ClusterRole its selectors match, in
// name order, each rule once; rewritten whenever any ClusterRole changes.
import type { Logger } from 'pino';
import { CLUSTER_ROLE_TYPE } from '../kinds/clusterrole.js';
import type { Objects } from '../objects.js';
import { storageKeyOf } from '../resource-type.js';
import { parseLabelSelector } from '../selectors.js';
import type { KubeObject } from '../types.js';
import { asSystem } from './escalation.js';

const KEY = storageKeyOf(CLUSTER_ROLE_TYPE);
const MANAGER = 'clusterrole-aggregation-controller';

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export class ClusterRoleAggregator {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly objects: Objects,
    private readonly log: Logger,
  ) {
    objects.listen({
      committed: (event) => {
        if (event.resource === KEY) this.schedule();
      },
    });
  }

  /** Runs a pass soon: many changes in one tick make one pass. */
  schedule(): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // Its writes are the controller's own, not those of the request whose change woke it.
      asSystem(() => {
        this.running = this.running.then(() => this.sync());
      });
    }, 0);
  }

  /** Resolves once no pass is pending (for tests and close). */
  async idle(): Promise<void> {
    while (this.timer !== undefined) await new Promise((r) => setTimeout(r, 5));
    await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async sync(): Promise<void> {
    const roles = this.objects
      .list(CLUSTER_ROLE_TYPE, undefined)
      .items.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    const writes: Promise<void>[] = [];
    for (const role of roles) {
      const rule = role.aggregationRule as { clusterRoleSelectors?: LabelSelector[] } | undefined;
      if (rule === undefined || rule === null || role.metadata.deletionTimestamp !== undefined)
        continue;
      const matchers = (rule.clusterRoleSelectors ?? []).map((s) => matcherOf(s));
      const rules: unknown[] = [];
      const seen = new Set<string>();
      for (const other of roles) {
        if (other.metadata.name === role.metadata.name) continue;
        if (!matchers.some((m) => m?.(other.metadata.labels) === true)) continue;
        for (const r of Array.isArray(other.rules) ? other.rules : []) {
          const key = JSON.stringify(r);
          if (seen.has(key)) continue;
          seen.add(key);
          rules.push(r);
        }
      }
      if (JSON.stringify(role.rules ?? []) === JSON.stringify(rules)) continue;
      try {
        const written = this.objects.update(
          CLUSTER_ROLE_TYPE,
          '',
          role.metadata.name ?? '',
          { ...role, rules },
          { fieldManager: MANAGER, fieldValidation: 'Ignore', dryRun: false, warnings: [] },
        );
        if (written.durable) writes.push(written.durable);
      } catch (error) {
        // A conflict with a concurrent write: that write schedules another pass.
        this.log.debug({ err: error, name: role.metadata.name }, 'aggregation deferred');
      }
    }
    await Promise.all(writes);
  }
}

/** A LabelSelector as the selector text parseLabelSelector reads; undefined matches nothing. */
function matcherOf(
  selector: LabelSelector,
): ((labels: KubeObject['metadata']['labels']) => boolean) | undefined {
  const terms = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') terms.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') terms.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') terms.push(e.key);
    else if (e.operator === 'DoesNotExist') terms.push(`!${e.key}`);
    else return undefined;
  }
  try {
    return parseLabelSelector(terms.join(','));
  } catch {
    return undefined;
  }
}
