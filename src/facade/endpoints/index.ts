// The facade's endpoints, in the order they are served and documented: a new endpoint is a
// folder beside these (route.ts, openapi.ts, index.ts) and a line here.
import { createScope } from './create-scope/index.js';
import type { Endpoint } from './endpoint.js';
import { getScope } from './get-scope/index.js';
import { listServices } from './list-services/index.js';
import { statusResource } from './status-resource/index.js';
import { statusResources } from './status-resources/index.js';
import { statusTree } from './status-tree/index.js';
import { uiAsset, uiPage } from './ui/index.js';
import { watch } from './watch/index.js';

export const ENDPOINTS: readonly Endpoint[] = [
  listServices,
  createScope,
  getScope,
  statusTree,
  statusResources,
  statusResource,
  watch,
  uiPage,
  uiAsset,
];
