// meta.k8s.io/v1 Table responses, as the API server's CRD and default table convertors build them.

import { compileJsonPathTemplate, printJsonPathValue } from './jsonpath.js';
import { badRequest, type KubeObject } from './types.js';

/** A CRD version's `additionalPrinterColumns[]` entry. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: string;
  readonly format?: string;
  readonly description?: string;
  readonly priority?: number;
  readonly jsonPath: string;
}

/** `TableColumnDefinition`: every field is always present on the wire. */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableColumns {
  readonly definitions: TableColumnDefinition[];
  /** A row's cells, already formatted as the server sends them (ages relative to `now`). */
  cells(object: KubeObject, now: Date): unknown[];
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableOptions {
  /** What `rows[].object` carries; the server's default (kubectl sends none) is `Metadata`. */
  includeObject?: IncludeObject;
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
  now?: Date;
  /**
   * Leave out the column definitions, as a watch does after its first event: the server sets
   * `TableOptions.NoHeaders` once it has sent them.
   */
  omitHeaders?: boolean;
  /** The Table version the client asked for; `PartialObjectMetadata` takes the same one. */
  groupVersion?: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';
}

/** `metav1.ObjectMeta{}.SwaggerDoc()["name"]`, which the Name column carries. */
export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

/** `metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]`. */
export const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

const NAME_COLUMN: TableColumnDefinition = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: NAME_DESCRIPTION,
  priority: 0,
};

// A CRD version without printer columns is served with this one (serveDefaultColumnsIfEmpty).
const DEFAULT_CRD_COLUMNS: PrinterColumn[] = [
  {
    name: 'Age',
    type: 'date',
    description: CREATION_TIMESTAMP_DESCRIPTION,
    jsonPath: '.metadata.creationTimestamp',
  },
];

// ---------------------------------------------------------------------------------------------
// Time

/** `duration.HumanDuration`, the age kubectl shows: `45s`, `3m20s`, `5h7m`, `3d4h`, `2y10d`. */
export function humanDuration(ms: number): string {
  // Up to two seconds in the future is clock skew, not an error.
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(ms / 3_600_000);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) {
    const dy = days % 365;
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${years}y`;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysInMonth = (y: number, m: number) =>
  m === 2 ? (isLeap(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;

/** Days since 1970-01-01 of a proleptic Gregorian date (Date.UTC maps years 0-99 to 19xx). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}

/** Go's zero `time.Time`, 0001-01-01T00:00:00Z, in milliseconds since the epoch. */
const ZERO_TIME_MS = daysFromCivil(1, 1, 1) * 86_400_000;

/** `time.Parse(time.RFC3339, s)` as milliseconds since the epoch, or undefined. */
export function parseRfc3339(s: string): number | undefined {
  const m = RFC3339.exec(s);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (m[8] !== undefined) {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (m[8] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const fraction = m[7] === undefined ? 0 : Number(`0.${m[7]}`) * 1000;
  const local =
    daysFromCivil(year, month, day) * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000;
  return local - offsetMinutes * 60_000 + fraction;
}

/** `t.UTC().Format(time.RFC3339)`: whole seconds, `Z`. */
function formatRfc3339(ms: number): string {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}Z`
  );
}

/** metav1.Time's IsZero of a timestamp as JSON holds it: absent, null, empty or Go's zero time. */
export function isZeroTime(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  return typeof value === 'string' && parseRfc3339(value) === ZERO_TIME_MS;
}

/**
 * The printers' translateTimestampSince (pkg/printers/internalversion): how long ago, as
 * `HumanDuration` words it, and `<unknown>` for the zero time.
 */
export function ageSince(value: unknown, now: Date): string {
  if (isZeroTime(value)) return '<unknown>';
  return typeof value === 'string' ? dateCell(value, now) : '<unknown>';
}

/** A `date` cell: what `metav1.Time.UnmarshalQueryParameter` then `HumanDuration` make of it. */
function dateCell(value: string, now: Date): string {
  // An empty or `null` timestamp is the zero time, which the server prints as unknown.
  if (value === '' || value === 'null') return '<unknown>';
  const t = parseRfc3339(value);
  if (t === undefined) return '<invalid>';
  if (t === ZERO_TIME_MS) return '<unknown>';
  return humanDuration(now.getTime() - t);
}

// ---------------------------------------------------------------------------------------------
// Columns

/** `cellForJSONValue`: a non-string column keeps its JSON value when the type fits, else null. */
function cellFor(type: string, value: unknown, now: Date): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
      // The server converts a float to int64, which truncates.
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return typeof value === 'string' ? dateCell(value, now) : null;
    default:
      return null;
  }
}

/**
 * The columns of a resource's Table. With printer columns (a CRD version's, even none) this is
 * the CRD convertor: Name, then each column, and a lone `Age` when there are none. Without
 * (`undefined`) it is the default convertor of built-in kinds: Name and `Created At`, the
 * latter an RFC 3339 timestamp rather than an age.
 *
 * A column whose path does not compile ends the list there, as the server falls back to the
 * columns it built before the bad one.
 */
export function tableColumns(columns: readonly PrinterColumn[] | undefined): TableColumns {
  if (columns === undefined) return BUILTIN_TABLE_COLUMNS;
  const printers: Array<{ type: string; find: (o: unknown) => unknown[][] }> = [];
  const definitions: TableColumnDefinition[] = [NAME_COLUMN];
  for (const column of columns.length > 0 ? columns : DEFAULT_CRD_COLUMNS) {
    let find: (o: unknown) => unknown[][];
    try {
      find = compileJsonPathTemplate(`{${column.jsonPath}}`);
    } catch {
      break;
    }
    printers.push({ type: column.type, find });
    definitions.push({
      name: column.name,
      type: column.type,
      format: column.format ?? '',
      description:
        column.description !== undefined && column.description !== ''
          ? column.description
          : `Custom resource definition column (in JSONPath format): ${column.jsonPath}`,
      priority: column.priority ?? 0,
    });
  }
  return {
    definitions,
    cells(object, now) {
      const cells: unknown[] = [object.metadata.name ?? ''];
      for (const { type, find } of printers) {
        let first: unknown[] | undefined;
        try {
          first = find(object)[0];
        } catch {
          first = undefined;
        }
        // Only the first value of the first result counts, even when the path finds several.
        if (first === undefined || first.length === 0) cells.push(null);
        else if (type === 'string') cells.push(printJsonPathValue(first[0]));
        else cells.push(cellFor(type, first[0], now));
      }
      return cells;
    },
  };
}

/** The default table convertor's columns (`rest.NewDefaultTableConvertor`). */
export const BUILTIN_TABLE_COLUMNS: TableColumns = {
  definitions: [
    NAME_COLUMN,
    {
      name: 'Created At',
      type: 'date',
      format: '',
      description: CREATION_TIMESTAMP_DESCRIPTION,
      priority: 0,
    },
  ],
  cells(object) {
    const created = object.metadata.creationTimestamp;
    const t = created === undefined ? undefined : parseRfc3339(created);
    return [object.metadata.name ?? '', formatRfc3339(t ?? ZERO_TIME_MS)];
  },
};

// ---------------------------------------------------------------------------------------------
// The Table

/**
 * The `includeObject` query parameter, validated as the server does before converting to a
 * Table; absent or empty means `Metadata`.
 */
export function parseIncludeObject(raw: string | null | undefined): IncludeObject {
  if (raw === null || raw === undefined || raw === '') return 'Metadata';
  if (raw === 'None' || raw === 'Metadata' || raw === 'Object') return raw;
  throw badRequest(
    `Unable to convert to Table as requested: includeObject: Invalid value: ${JSON.stringify(raw)}: must be 'Metadata', 'Object', 'None', or empty`,
  );
}

const isTableColumns = (c: readonly PrinterColumn[] | TableColumns): c is TableColumns =>
  !Array.isArray(c);

/**
 * A Table of `objects`, one row each. `columns` is a CRD version's printer columns (`[]` for a
 * CRD without any), `undefined` for a built-in kind, or columns made by `tableColumns`. A watch
 * sends one such Table per event, with `omitHeaders` after the first.
 */
export function toTable(
  objects: readonly KubeObject[],
  columns: readonly PrinterColumn[] | TableColumns | undefined,
  options: TableOptions = {},
): Record<string, unknown> {
  const table = columns !== undefined && isTableColumns(columns) ? columns : tableColumns(columns);
  const groupVersion = options.groupVersion ?? 'meta.k8s.io/v1';
  const includeObject = options.includeObject ?? 'Metadata';
  const now = options.now ?? new Date();
  const rowObject = (object: KubeObject): Record<string, unknown> => {
    if (includeObject === 'None') return {};
    if (includeObject === 'Object') return { object };
    const partial = {
      kind: 'PartialObjectMetadata',
      apiVersion: groupVersion,
      metadata: object.metadata,
    };
    return { object: partial };
  };
  const rows = objects.map((object) => ({ cells: table.cells(object, now), ...rowObject(object) }));
  return {
    kind: 'Table',
    apiVersion: groupVersion,
    metadata: {
      ...(options.resourceVersion ? { resourceVersion: options.resourceVersion } : {}),
      ...(options.continue ? { continue: options.continue } : {}),
      ...(options.remainingItemCount !== undefined
        ? { remainingItemCount: options.remainingItemCount }
        : {}),
    },
    columnDefinitions: options.omitHeaders ? [] : table.definitions,
    rows,
  };
}
