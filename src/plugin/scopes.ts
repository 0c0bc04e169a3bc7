// `kubectl nrn scopes --app ID`: an application's scopes as `kubectl get` prints a table
// (NAME, ID, TYPE, STATUS, CLASS, AGE, REASON; NAMESPACE first with -A; DOMAIN and NRN with
// -o wide), or the objects as a kubectl List in JSON or YAML. Pure: the scopes are given.
import { stringify } from 'yaml';
import type { Output } from './command-line.js';
import { age, healthOf, type Obj, oneLine, type Painter, reasonOf, statusWord } from './status.js';

const str = (value: unknown): string =>
  typeof value === 'string' && value !== '' ? value : '<none>';

export function scopesOfApplication(scopes: readonly Obj[], app: number): Obj[] {
  return scopes
    .filter((s) => s.spec?.application_id === app)
    .sort((a, b) => {
      const ka = `${a.metadata.namespace ?? ''}/${a.metadata.name}`;
      const kb = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
}

export interface ScopesView {
  readonly output: Output;
  /** Read across namespaces (-A): the table names each scope's namespace. */
  readonly allNamespaces: boolean;
  readonly now: number;
  readonly paint: Painter;
}

export function renderScopes(scopes: readonly Obj[], view: ScopesView): string {
  if (view.output === 'json' || view.output === 'yaml') {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      metadata: { resourceVersion: '' },
      items: scopes,
    };
    return view.output === 'json'
      ? `${JSON.stringify(list, null, 4)}\n`
      : stringify(list, { lineWidth: 0 });
  }
  const wide = view.output === 'wide';
  const header = [
    ...(view.allNamespaces ? ['NAMESPACE'] : []),
    'NAME',
    'ID',
    'TYPE',
    'STATUS',
    'CLASS',
    'AGE',
    ...(wide ? ['DOMAIN', 'NRN'] : []),
    'REASON',
  ];
  const rows = scopes.map((s) => {
    const reason = reasonOf(s);
    const id = s.status?.id;
    return {
      health: healthOf(s),
      cells: [
        ...(view.allNamespaces ? [str(s.metadata.namespace)] : []),
        s.metadata.name,
        typeof id === 'number' ? String(id) : '<none>',
        str(s.spec?.type),
        statusWord(s),
        str(s.status?.scopeClass),
        age(s.metadata.creationTimestamp, view.now),
        ...(wide ? [str(s.status?.domain), str(s.status?.nrn)] : []),
        reason === undefined
          ? ''
          : `${reason.reason}${reason.message !== '' ? `: ${oneLine(reason.message, wide ? 300 : 80)}` : ''}`,
      ],
    };
  });
  const status = header.indexOf('STATUS');
  // kubectl's printer: columns three spaces apart, the last one not padded.
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (r.cells[i] ?? '').length)),
  );
  const line = (cells: readonly string[], paintAt?: (text: string) => string) =>
    cells
      .map((cell, i) => {
        const padded = i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0);
        return i === status && paintAt !== undefined ? paintAt(padded) : padded;
      })
      .join('   ')
      .trimEnd();
  return `${[line(header), ...rows.map((r) => line(r.cells, (t) => view.paint(t, r.health)))].join('\n')}\n`;
}
