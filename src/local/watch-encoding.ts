// How a watcher's events go on the wire, as objects or as one-row Tables: each change's line is
// built once per shape and shared by every watcher that would send the same bytes.
import { apiVersionOf, type ResourceType, servedAs } from './resource-type.js';
import { type IncludeObject, type TableColumns, toTable } from './table.js';
import { tableColumnsOf } from './table-columns.js';
import type { KubeObject } from './types.js';
import type { ChangeEvent } from './watch.js';

interface TableShape {
  readonly columns: TableColumns;
  /** Names the type in line keys: a CRD change makes a new ResourceType, so a new id. */
  readonly id: number;
}

// By the type object itself, so that watchers of one type share compiled columns, and a type
// replaced by a CRD update is dropped with its last watcher.
const shapes = new WeakMap<ResourceType, TableShape>();
let shapeIds = 0;

function shapeOf(type: ResourceType): TableShape {
  let shape = shapes.get(type);
  if (shape === undefined) {
    shape = { columns: tableColumnsOf(type), id: ++shapeIds };
    shapes.set(type, shape);
  }
  return shape;
}

const wireLine = (kind: string, object: string) => `{"type":"${kind}","object":${object}}\n`;

/**
 * The lines of one watcher. A Table watch sends its column definitions with its first event
 * only (kube-apiserver sets `NoHeaders` once it has), so a change's Table line has two forms,
 * each shared: with headers for watchers that have sent nothing yet, without for the rest.
 */
export class WatchEncoder {
  private readonly apiVersion: string;
  private readonly shape: TableShape | undefined;
  private headersSent = false;

  constructor(
    private readonly type: ResourceType,
    /** Undefined for a watch of objects; what rows carry for a watch of Tables. */
    private readonly table: IncludeObject | undefined,
  ) {
    this.apiVersion = apiVersionOf(type);
    this.shape = table === undefined ? undefined : shapeOf(type);
  }

  /** A change as `kind` (selectors turn a MODIFIED into an ADDED or DELETED for some watchers). */
  change(kind: string, event: ChangeEvent): Buffer {
    if (this.shape === undefined) {
      if (event.apiVersion === this.apiVersion) return event.line(kind);
      return event.encoded(`json|${this.apiVersion}|${kind}`, () =>
        wireLine(kind, JSON.stringify(this.reshaped(event))),
      );
    }
    const shape = this.shape;
    const headers = this.takeHeaders();
    return event.encoded(`table|${shape.id}|${this.table}|${headers ? 'h' : '-'}|${kind}`, () =>
      wireLine(kind, JSON.stringify(this.tableOf(this.reshaped(event), headers))),
    );
  }

  /** An object that is not a change (a watch's initial events): for this watcher alone. */
  object(kind: string, object: KubeObject): string {
    const own = { ...object, apiVersion: this.apiVersion };
    if (this.shape === undefined) return wireLine(kind, JSON.stringify(own));
    return wireLine(kind, JSON.stringify(this.tableOf(own, this.takeHeaders())));
  }

  private takeHeaders(): boolean {
    const headers = !this.headersSent;
    this.headersSent = true;
    return headers;
  }

  /** The changed object as this watcher's version shows it; the shared parse when it is the same. */
  private reshaped(event: ChangeEvent): KubeObject {
    if (event.apiVersion === this.apiVersion) return event.object();
    return servedAs(this.type, event.object());
  }

  private tableOf(object: KubeObject, headers: boolean): Record<string, unknown> {
    return toTable([object], this.shape?.columns, {
      includeObject: this.table ?? 'Metadata',
      resourceVersion: object.metadata.resourceVersion ?? '',
      omitHeaders: !headers,
    });
  }
}
