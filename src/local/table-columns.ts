// Which columns a served type's Tables have, made once per type: its kind's printer (a built-in
// kind's strategy), else its printer columns (a CRD version's), else the default convertor's.
// A list, a GET of one object and a watch of a type all print with the same columns.
import { strategyOf } from './kinds/index.js';
import type { ResourceType } from './resource-type.js';
import { type TableColumns, tableColumns } from './table.js';

// By the type object itself: a CRD change makes a new ResourceType, and the old one's compiled
// columns go with it.
const byType = new WeakMap<ResourceType, TableColumns>();

export function tableColumnsOf(type: ResourceType): TableColumns {
  let columns = byType.get(type);
  if (columns === undefined) {
    columns = strategyOf(type)?.table ?? tableColumns(type.printerColumns);
    byType.set(type, columns);
  }
  return columns;
}
