// `kubectl nrn tree`: the NRN hierarchy (organization > account > namespace > application >
// scope) built from Applications, Scopes and Services as read, each scope and service with its
// status word, counts per node, and the reason of each one that is not fine. Pure: the
// objects are given.
import { type Nrn, type NrnSegment, parseNrn, valuesOverlap } from '../api/index.js';
import type { ApplicationObject } from '../domain/applications.js';
import { grantsScopeNamespace } from '../domain/scopes/grants.js';
import {
  type Health,
  healthOf,
  type Obj,
  oneLine,
  type Painter,
  reasonOf,
  statusWord,
} from './status.js';

interface Node {
  /** `organization=1`, `application=12`; `(no NRN)` for what has none yet. */
  readonly segment: string;
  /** The Application or Scope the node is, once one is read. */
  object?: Obj;
  kind?: 'application' | 'scope';
  readonly children: Map<string, Node>;
  readonly services: Obj[];
}

const node = (segment: string): Node => ({ segment, children: new Map(), services: [] });

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export interface TreeInput {
  readonly applications: readonly Obj[];
  readonly scopes: readonly Obj[];
  readonly services: readonly Obj[];
  /** Only what lies at or below this NRN (a `*` matches any id). */
  readonly prefix?: Nrn;
}

/**
 * Where a scope sits: its own NRN, else its application's plus the scope id (when that
 * application lets the scope's namespace in: naming it is no claim to it), else nowhere.
 */
function scopeNrn(scope: Obj, appById: ReadonlyMap<number, Obj>): string | undefined {
  const own = str(scope.status?.nrn);
  if (own !== undefined) return own;
  const application = appById.get(Number(scope.spec?.application_id));
  if (
    application === undefined ||
    !grantsScopeNamespace(application as ApplicationObject, scope.metadata.namespace ?? '')
  ) {
    return undefined;
  }
  const app = str(application.spec?.nrn);
  if (app === undefined) return undefined;
  const id = scope.status?.id;
  return typeof id === 'number' ? `${app}:scope=${id}` : `${app}:scope=?${scope.metadata.name}`;
}

function under(prefix: Nrn | undefined, nrn: string | undefined): boolean {
  if (prefix === undefined) return true;
  // A scope not yet given an id is placed by its application; its own segment is not judged.
  const owned = nrn === undefined ? undefined : parseNrn(nrn.replace(/:scope=\?.*$/, ''));
  if (owned === undefined || owned.length < prefix.length) return false;
  return prefix.every((s, i) => {
    const o = owned[i] as NrnSegment;
    return s.level === o.level && valuesOverlap(s.value, o.value);
  });
}

export function buildTree(input: TreeInput): Node {
  const root = node('');
  const appById = new Map<number, Obj>();
  for (const app of input.applications) {
    const id = app.spec?.id;
    const nrn = str(app.spec?.nrn);
    if (typeof id === 'number' && nrn !== undefined && !appById.has(id)) appById.set(id, app);
  }
  const place = (nrn: string | undefined): Node => {
    let at = root;
    const segments = nrn === undefined ? ['(no NRN)'] : nrn.split(':');
    for (const segment of segments) {
      let next = at.children.get(segment);
      if (next === undefined) {
        next = node(segment);
        at.children.set(segment, next);
      }
      at = next;
    }
    return at;
  };
  const keep = (nrn: string | undefined) =>
    input.prefix === undefined || (nrn !== undefined && under(input.prefix, nrn));
  for (const app of input.applications) {
    const nrn = str(app.spec?.nrn);
    if (!keep(nrn)) continue;
    const at = place(nrn);
    // Two applications claiming one NRN: the second is shown beside it, not hidden.
    if (at.object !== undefined) {
      place(`${nrn}:(duplicate ${app.metadata.namespace}/${app.metadata.name})`).object = app;
      continue;
    }
    at.object = app;
    at.kind = 'application';
  }
  for (const scope of input.scopes) {
    const nrn = scopeNrn(scope, appById);
    if (!keep(nrn)) continue;
    const at = place(nrn);
    at.object = scope;
    at.kind = 'scope';
  }
  for (const service of input.services) {
    const nrn = str(service.spec?.entity_nrn);
    if (!keep(nrn)) continue;
    place(nrn).services.push(service);
  }
  return root;
}

interface Counts {
  scopes: Map<string, number>;
  services: Map<string, number>;
}

function countsOf(at: Node, memo: Map<Node, Counts>): Counts {
  const counts: Counts = { scopes: new Map(), services: new Map() };
  const add = (into: Map<string, number>, word: string, n = 1) =>
    into.set(word, (into.get(word) ?? 0) + n);
  if (at.kind === 'scope' && at.object !== undefined) add(counts.scopes, statusWord(at.object));
  for (const service of at.services) add(counts.services, statusWord(service));
  for (const child of at.children.values()) {
    const c = countsOf(child, memo);
    for (const [w, n] of c.scopes) add(counts.scopes, w, n);
    for (const [w, n] of c.services) add(counts.services, w, n);
  }
  memo.set(at, counts);
  return counts;
}

function summary(counts: Counts): string {
  const part = (name: string, of: Map<string, number>) => {
    const total = [...of.values()].reduce((a, b) => a + b, 0);
    if (total === 0) return undefined;
    const words = [...of.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([w, n]) => `${n} ${w}`);
    return `${total} ${total === 1 ? name : `${name}s`}: ${words.join(', ')}`;
  };
  const parts = [part('scope', counts.scopes), part('service', counts.services)].filter(
    (p) => p !== undefined,
  );
  return parts.length > 0 ? `[${parts.join('; ')}]` : '';
}

/** The NRN segments in id order (9 before 10), the `(no NRN)` group last. */
function ordered(children: Map<string, Node>): Node[] {
  const idOf = (s: string) => Number(s.slice(s.indexOf('=') + 1));
  return [...children.values()].sort((a, b) => {
    const an = Number.isNaN(idOf(a.segment));
    const bn = Number.isNaN(idOf(b.segment));
    if (an !== bn) return an ? 1 : -1;
    return (
      idOf(a.segment) - idOf(b.segment) ||
      (a.segment < b.segment ? -1 : a.segment > b.segment ? 1 : 0)
    );
  });
}

const where = (o: Obj) =>
  o.metadata.namespace !== undefined
    ? `${o.metadata.namespace}/${o.metadata.name}`
    : o.metadata.name;

/** ` — Reason: message` for what is not fine, nothing for what is. */
function why(o: Obj): string {
  const r = reasonOf(o);
  if (r === undefined) return '';
  return r.message !== '' ? ` — ${r.reason}: ${oneLine(r.message, 160)}` : ` — ${r.reason}`;
}

function status(o: Obj, paint: Painter): string {
  const health: Health = healthOf(o);
  return paint(statusWord(o), health);
}

export function renderTree(root: Node, paint: Painter): string {
  const memo = new Map<Node, Counts>();
  countsOf(root, memo);
  const lines: string[] = [];
  const label = (at: Node): string => {
    const counts = summary(memo.get(at) ?? { scopes: new Map(), services: new Map() });
    const o = at.object;
    if (o === undefined) return [at.segment, counts].filter((s) => s !== '').join('  ');
    if (at.kind === 'scope') {
      const type = str(o.spec?.type) ?? '?';
      return `${at.segment.startsWith('scope=?') ? 'scope (no id yet)' : at.segment} ${where(o)} ${type} ${status(o, paint)}${why(o)}`;
    }
    const name = str(o.spec?.name) ?? o.metadata.name;
    return [`${at.segment} ${name} (${where(o)}) ${status(o, paint)}${why(o)}`, counts]
      .filter((s) => s !== '')
      .join('  ');
  };
  const walk = (at: Node, indent: string) => {
    const services = [...at.services].sort((a, b) => (where(a) < where(b) ? -1 : 1));
    const kids = ordered(at.children);
    const total = services.length + kids.length;
    let i = 0;
    for (const service of services) {
      const last = ++i === total;
      const type = str(service.spec?.type) ?? '?';
      lines.push(
        `${indent}${last ? '└─ ' : '├─ '}service ${where(service)} ${type} ${status(service, paint)}${why(service)}`,
      );
    }
    for (const child of kids) {
      const last = ++i === total;
      lines.push(`${indent}${last ? '└─ ' : '├─ '}${label(child)}`);
      walk(child, `${indent}${last ? '   ' : '│  '}`);
    }
  };
  for (const top of ordered(root.children)) {
    lines.push(label(top));
    walk(top, '');
  }
  for (const service of root.services)
    lines.push(`service ${where(service)} ${status(service, paint)}${why(service)}`);
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
