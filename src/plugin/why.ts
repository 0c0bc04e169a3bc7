// `kubectl nrn why <kind>/<name>`: why one of our objects is not active — its lifecycle word,
// the conditions that say why, its last Events, the children of a scope that are not ready
// (each judged by kstatus), what the operator waits for, and the command that retries it —
// or, plainly, that nothing is wrong.
import { KINDS } from '../api/index.js';
import { computeKStatus, type KStatusObject } from '../domain/kstatus.js';
import { RECONCILE_ANNOTATION, RETRY_ANNOTATION } from '../domain/names.js';
import { Events, isNotFound, type Kube, KubeApiError } from '../kube/index.js';
import { type KindName, listAll, resourceOf } from './cluster.js';
import {
  age,
  conditionOf,
  conditionsOf,
  healthOf,
  isPaused,
  type Obj,
  oneLine,
  type Painter,
  reasonOf,
  statusWord,
} from './status.js';

/** Events shown, the latest; kubectl describe shows them all, but the last say why now. */
const EVENTS_SHOWN = 5;
/** Events read about one object at most (its name's, all pages). */
const EVENTS_READ = 1_000;
/** Children of a scope read and judged at most: a class makes a handful (its bound is 64). */
const CHILDREN_READ = 100;

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export interface WhyTarget {
  readonly kind: KindName;
  readonly name: string;
  /** Ignored for a cluster-scoped kind (ScopeClass). */
  readonly namespace: string;
}

/** `scopes.platform.nrn.dev/NAME`: kubectl's `service` alone is the core Service. */
const qualified = (kind: KindName, name: string) =>
  `${KINDS[kind].plural}.platform.nrn.dev/${name}`;

const namespaced = (kind: KindName) =>
  (KINDS[kind] as { namespaced?: boolean }).namespaced !== false;

/** The object, or a one-line refusal when it does not exist. */
export async function readTarget(kube: Kube, target: WhyTarget): Promise<Obj | string> {
  try {
    return (await kube.resource(resourceOf(target.kind)).get({
      namespace: namespaced(target.kind) ? target.namespace : '',
      name: target.name,
    })) as unknown as Obj;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    const what = `${KINDS[target.kind].singular} "${target.name}"`;
    return namespaced(target.kind)
      ? `${what} not found in namespace "${target.namespace}"`
      : `${what} not found`;
  }
}

export async function explain(
  kube: Kube,
  kind: KindName,
  object: Obj,
  paint: Painter,
  now: number,
): Promise<string> {
  const out: string[] = [];
  const { name, namespace } = object.metadata;
  const title = `${KINDS[kind].kind} ${namespace !== undefined ? `${namespace}/` : ''}${name}`;
  const health = healthOf(object);
  const children = kind === 'Scope' ? await unreadyChildren(kube, object) : [];
  const word = paint(statusWord(object), health);
  if (health === 'ok' && children.length === 0) {
    const ready = conditionOf(object, 'Ready')?.message;
    out.push(`${title} is ${word}: nothing is wrong.${ready ? ` (${oneLine(ready)})` : ''}`);
    return `${out.join('\n')}\n`;
  }
  out.push(`${title} is ${word}.`);
  const reason = reasonOf(object);
  if (reason !== undefined) {
    out.push(
      `Reason: ${reason.reason}${reason.message !== '' ? `: ${oneLine(reason.message, 500)}` : ''}`,
    );
  }
  const conditions = conditionsOf(object);
  if (conditions.length > 0) {
    out.push('', 'Conditions:');
    for (const c of conditions.slice(0, 20)) {
      const said = [c.reason ?? '', c.message ? oneLine(c.message, 300) : '']
        .filter((s) => s !== '')
        .join(': ');
      out.push(`  ${c.type}=${c.status}${said !== '' ? `  ${said}` : ''}`);
    }
  }
  const messages = Array.isArray(object.status?.messages)
    ? (object.status.messages as unknown[])
    : [];
  const worded = messages.flatMap((m) => {
    const item = m as { level?: unknown; message?: unknown };
    return typeof item.message === 'string'
      ? [`  ${str(item.level) ?? 'info'}: ${oneLine(item.message, 300)}`]
      : [];
  });
  if (worded.length > 0) out.push('', 'Messages:', ...worded.slice(0, 10));
  out.push('', ...(await lastEvents(kube, kind, object, now)));
  if (children.length > 0) out.push('', 'Children not ready:', ...children);
  const waits = await waitsFor(kube, kind, object);
  if (waits !== undefined) out.push('', `Waits for: ${waits}`);
  const next = nextStep(kind, object);
  if (next !== undefined) out.push('', next);
  return `${out.join('\n')}\n`;
}

async function lastEvents(kube: Kube, kind: KindName, object: Obj, now: number): Promise<string[]> {
  const selector = `involvedObject.kind=${KINDS[kind].kind},involvedObject.name=${object.metadata.name}`;
  let items: Obj[];
  try {
    ({ items } = await listAll(kube, Events, {
      namespace: object.metadata.namespace,
      fieldSelector: selector,
      max: EVENTS_READ,
    }));
  } catch (error) {
    if (error instanceof KubeApiError && error.code === 403)
      return ['Events: not allowed to list Events here'];
    throw error;
  }
  const uid = object.metadata.uid;
  const at = (e: Obj) =>
    str(e.lastTimestamp) ??
    str(e.eventTime) ??
    str(e.firstTimestamp) ??
    e.metadata.creationTimestamp ??
    '';
  const mine = items
    .filter((e) => {
      const involved = e.involvedObject as { uid?: unknown } | undefined;
      // An Event of an earlier object of the same name is not about this one.
      return uid === undefined || involved?.uid === undefined || involved.uid === uid;
    })
    .sort((a, b) => Date.parse(at(a)) - Date.parse(at(b)));
  if (mine.length === 0) return ['Events: none'];
  return [
    `Events (the last ${Math.min(EVENTS_SHOWN, mine.length)} of ${mine.length}):`,
    ...mine
      .slice(-EVENTS_SHOWN)
      .map(
        (e) =>
          `  ${age(at(e), now)} ago  ${str(e.type) ?? ''}  ${str(e.reason) ?? ''}  ${oneLine(str(e.message) ?? '', 300)}`,
      ),
  ];
}

/** Each child of `status.inventory` that kstatus does not find Current, with why. */
async function unreadyChildren(kube: Kube, scope: Obj): Promise<string[]> {
  const inventory = Array.isArray(scope.status?.inventory)
    ? (scope.status.inventory as unknown[])
    : [];
  const lines: string[] = [];
  for (const entry of inventory.slice(0, CHILDREN_READ)) {
    const ref = entry as {
      apiVersion?: unknown;
      kind?: unknown;
      name?: unknown;
      namespace?: unknown;
    };
    const apiVersion = str(ref.apiVersion);
    const kind = str(ref.kind);
    const name = str(ref.name);
    if (apiVersion === undefined || kind === undefined || name === undefined) continue;
    const namespace = str(ref.namespace);
    const label = `${kind} ${namespace !== undefined ? `${namespace}/` : ''}${name}`;
    let child: Obj | undefined;
    try {
      const type = await kube.mapper.resourceFor(apiVersion, kind);
      if (type === undefined) {
        lines.push(`  ${label}: the API server serves no ${kind} of ${apiVersion}`);
        continue;
      }
      child = (await kube
        .resource(type)
        .get({ namespace: namespace ?? '', name })) as unknown as Obj;
    } catch (error) {
      if (isNotFound(error)) child = undefined;
      else if (error instanceof KubeApiError) {
        lines.push(`  ${label}: cannot read it (${error.code} ${error.reason})`);
        continue;
      } else throw error;
    }
    const judged = computeKStatus(child as KStatusObject | undefined);
    if (judged.status !== 'Current')
      lines.push(`  ${label}: ${judged.status}: ${oneLine(judged.message)}`);
  }
  if (inventory.length > CHILDREN_READ)
    lines.push(`  (${inventory.length - CHILDREN_READ} more not read)`);
  return lines;
}

/** What the operator waits for before it can go on, from the reason it gives. */
async function waitsFor(kube: Kube, kind: KindName, object: Obj): Promise<string | undefined> {
  const generation = object.metadata.generation;
  const observed = object.status?.observedGeneration;
  if (typeof generation === 'number' && (typeof observed !== 'number' || observed < generation)) {
    return `the operator to observe generation ${generation}${typeof observed === 'number' ? ` (its status is of ${observed})` : ''}: is the operator running?`;
  }
  if (isPaused(object)) {
    return `the ${RECONCILE_ANNOTATION} annotation to be removed: kubectl annotate -n ${object.metadata.namespace} ${qualified(kind, object.metadata.name)} ${RECONCILE_ANNOTATION}-`;
  }
  const reconciling = conditionOf(object, 'Reconciling');
  if (reconciling?.status !== 'True') return undefined;
  switch (reconciling.reason) {
    case 'WaitingForScopeClass': {
      const type = str(object.spec?.type) ?? '?';
      return `a ScopeClass serving scopes of type ${type} (kubectl get scopeclasses.platform.nrn.dev); ${await classesOfType(kube, type)}`;
    }
    case 'WaitingForApplication': {
      const id = object.spec?.application_id;
      return `application ${String(id)}: an Application with spec.id ${String(id)} that is ready (kubectl get applications.platform.nrn.dev -A)`;
    }
    case 'ApplicationNotGranted': {
      const id = object.spec?.application_id;
      return `application ${String(id)} to grant namespace ${object.metadata.namespace}: ${oneLine(reconciling.message ?? '', 300)}`;
    }
    case 'WaitingForSpecification':
      return `servicespecification ${str(object.spec?.specification_id) ?? '?'}: a ServiceSpecification with that spec.id that is ready (kubectl get servicespecifications.platform.nrn.dev -A)`;
    case 'WaitingForSecret':
    case 'WaitingForSigningSecret':
      return `a Secret: ${oneLine(reconciling.message ?? '')}`;
    default: {
      const via = kind === 'Scope' ? str(object.status?.scopeClass) : undefined;
      const agent =
        kind === 'Scope'
          ? `the provisioner${via !== undefined ? ` of ScopeClass ${via}` : ''}`
          : kind === 'Service'
            ? `the provisioner of ServiceSpecification ${str(object.spec?.specification_id) ?? '?'}`
            : 'the operator';
      return `${agent} (${reconciling.reason ?? 'Reconciling'}): ${oneLine(reconciling.message ?? '')}`;
    }
  }
}

async function classesOfType(kube: Kube, type: string): Promise<string> {
  try {
    const { items } = await listAll(kube, resourceOf('ScopeClass'), { max: 1_000 });
    const serving = items.filter((c) => c.spec?.scope_type === type);
    if (serving.length === 0) return `none of the ${items.length} installed serves ${type}`;
    return `installed for ${type}: ${serving.map((c) => `${c.metadata.name} (${statusWord(c)})`).join(', ')}; none matches this scope's labels`;
  } catch (error) {
    if (error instanceof KubeApiError)
      return `the ScopeClasses cannot be read (${error.code} ${error.reason})`;
    throw error;
  }
}

/** Failures of a scope's own making: no class change lifts them (ADR 0032). */
const SCOPE_OWN_FAILURES: readonly string[] = ['InvalidSpec', 'DuplicateSlug'];

/** The command that makes the operator try again, or what to change. */
function nextStep(kind: KindName, object: Obj): string | undefined {
  if (healthOf(object) !== 'failed') return undefined;
  const name = object.metadata.name;
  if ((kind === 'Scope' || kind === 'Service') && object.status?.status === 'failed') {
    const lines = [
      'Retry (after fixing the cause):',
      `  kubectl annotate -n ${object.metadata.namespace} ${qualified(kind, name)} ${RETRY_ANNOTATION}="$(date +%s)" --overwrite`,
    ];
    // A failure of the class's doing is lifted by the class's next generation (ADR 0032).
    const scopeClass = kind === 'Scope' ? str(object.status?.scopeClass) : undefined;
    const reason = reasonOf(object)?.reason ?? '';
    if (scopeClass !== undefined && !SCOPE_OWN_FAILURES.includes(reason)) {
      lines.push(
        `Or fix ScopeClass ${scopeClass}: its next generation tries the scopes it failed again, unasked.`,
      );
    }
    return lines.join('\n');
  }
  return `Fix: change its spec (kubectl edit ${namespaced(kind) ? `-n ${object.metadata.namespace} ` : ''}${qualified(kind, name)}); the operator tries again on every change.`;
}
